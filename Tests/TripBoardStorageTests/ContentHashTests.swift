import Foundation
import TripBoardSystem
import Testing
@testable import TripBoardStorage

/// `ContentHash`: the store's text and the JSON contract's value for a verified and a pending
/// hash, and what each admits.
struct ContentHashTests {
    static let hex = String(repeating: "0f", count: 32)

    @Test func theStoresTextRoundTrips() {
        #expect(ContentHash(stored: "") == .pending && ContentHash.pending.stored.isEmpty)
        #expect(ContentHash(stored: Self.hex) == .verified(Self.hex) && ContentHash.verified(Self.hex).stored == Self.hex)
        #expect(ContentHash.pending.hex == nil && ContentHash.verified(Self.hex).hex == Self.hex)
    }

    /// A verified hash admits its own bytes only; a pending one any (the size is then all a file
    /// is held to), yet it matches no file in `AttachmentFiles.check`.
    @Test func aPendingHashAdmitsAnyBytesAndAVerifiedOneItsOwn() {
        #expect(ContentHash.verified(Self.hex).admits(Self.hex))
        #expect(!ContentHash.verified(Self.hex).admits(String(repeating: "ab", count: 32)))
        #expect(ContentHash.pending.admits(Self.hex))
    }

    /// The JSON contract: a file not hashed yet has `null`; a lost file never hashed keeps the
    /// empty text, as it always has.
    @Test func theJSONContractSaysNullForAFileNotHashedYet() throws {
        var attachment = Attachment(id: "7a1c0000-0000-4000-8000-000000000004", bookingId: "7a1c0000-0000-4000-8000-000000000003",
                                    originalFilename: "ticket.pdf", contentType: "application/pdf", byteCount: 3, contentHash: .pending,
                                    pageCount: nil, relativePath: "attachments/7a/x.pdf", state: .present,
                                    createdAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"), syncState: .pendingUpload, remoteVersion: nil,
                                    updatedAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"))
        func member() throws -> Any? {
            try (JSONSerialization.jsonObject(with: JSONEncoder().encode(attachment)) as? [String: Any])?["contentHash"]
        }
        #expect(try member() is NSNull)
        #expect(try JSONDecoder().decode(Attachment.self, from: JSONEncoder().encode(attachment)) == attachment)
        attachment.state = .missing
        #expect(try member() as? String == "")
        attachment.contentHash = .verified(Self.hex)
        #expect(try member() as? String == Self.hex)
        #expect(try JSONDecoder().decode(Attachment.self, from: JSONEncoder().encode(attachment)) == attachment)
    }
}
