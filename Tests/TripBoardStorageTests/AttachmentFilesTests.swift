import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport
import TripBoardDevice

/// The file side of attachments: staged with a hash, published durably, checked, removed.
struct AttachmentFilesTests {
    struct Fixture {
        let fixture: StoreFixture
        let files: AttachmentFiles

        init() throws {
            fixture = try StoreFixture()
            files = try AttachmentFiles(container: fixture.container)
        }

        func source(_ bytes: [UInt8]) throws -> FileDescriptor {
            try fixture.temporary.write(bytes, to: "source.pdf")
            return try FileDescriptor.openForReading(path: fixture.temporary.child("source.pdf"))
        }

        func stagingEntries() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: fixture.temporary.child("container/tmp"))
        }
    }

    static let pdf = Array("%PDF-1.7\n".utf8) + (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    @Test func stagingStreamsHashesAndKeepsTheHead() throws {
        let fixture = try Fixture()
        let staged = try fixture.files.stage(from: try fixture.source(Self.pdf), sourceName: "source.pdf", maximumBytes: 1 << 20, protection: .completeUnlessOpen)
        #expect(staged.byteCount == Int64(Self.pdf.count))
        #expect(staged.contentHash == Sodium.hexString(blake2b(Self.pdf)))
        #expect(staged.head == Array(Self.pdf.prefix(1024)))
        // Sealed on the way: no byte of the ticket in the staged file, which opens to exactly it.
        let sealed = try fixture.fixture.temporary.bytes("container/tmp/" + staged.stagingName)
        #expect(SealedFile.isSealed(sealed))
        #expect(Data(sealed).range(of: Data("%PDF".utf8)) == nil)
        #expect(Int64(sealed.count) == SealedFile.sealedLength(plaintextLength: Int64(Self.pdf.count), protection: .completeUnlessOpen))
        #expect(staged.protection == .completeUnlessOpen)
    }

    @Test func tooLargeLeavesNothingStaged() throws {
        let fixture = try Fixture()
        #expect(throws: AttachmentError.self) {
            try fixture.files.stage(from: try fixture.source(Self.pdf), sourceName: "source.pdf", maximumBytes: 1000, protection: .completeUnlessOpen)
        }
        #expect(try fixture.stagingEntries().isEmpty)
    }

    @Test func publishedFilesAreShardedPrivateAndVerifiable() throws {
        let fixture = try Fixture()
        let staged = try fixture.files.stage(from: try fixture.source(Self.pdf), sourceName: "source.pdf", maximumBytes: 1 << 20, protection: .completeUnlessOpen)
        let id = Identifier.make()
        let path = try fixture.files.publish(staged, id: id, fileExtension: "pdf")
        #expect(path == "attachments/\(id.prefix(2))/\(id).pdf")
        #expect(try fixture.stagingEntries().isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.fixture.temporary.child("container/" + path))
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(try fixture.files.check(relativePath: path, byteCount: staged.byteCount, contentHash: .verified(staged.contentHash)) == .ok)
        #expect(try fixture.files.check(relativePath: path, byteCount: staged.byteCount + 1, contentHash: .verified(staged.contentHash)) == .wrongSize)
        #expect(try fixture.files.check(relativePath: path, byteCount: staged.byteCount, contentHash: .verified(String(repeating: "0", count: 64))) == .wrongHash)
        #expect(try fixture.files.allFiles().map(\.relativePath) == [path])
        #expect(try fixture.files.open(relativePath: path).readToEnd(limit: 1 << 20) == Self.pdf)
        #expect(try fixture.files.sealedClass(relativePath: path) == .completeUnlessOpen)
        try fixture.files.remove(relativePath: path)
        #expect(try fixture.files.check(relativePath: path, byteCount: staged.byteCount, contentHash: .verified(staged.contentHash)) == .missing)
    }

    @Test(arguments: ["attachments/../store/TripBoard.sqlite", "store/TripBoard.sqlite", "attachments/ab", "attachments/./x/y"])
    func pathsOutsideTheAttachmentsAreRefused(path: String) throws {
        let fixture = try Fixture()
        #expect(throws: AttachmentError.invalidPath(path)) { try fixture.files.remove(relativePath: path) }
    }

    @Test func attachmentRowsFindTheSameBytesForABooking() throws {
        let fixture = try Fixture()
        let store = fixture.fixture.store
        let trip = try fixture.fixture.addTrip()
        let booking = try store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))
        let hash = String(repeating: "ab", count: 32)
        let attachment = Attachment(id: .make(), bookingId: booking.id, originalFilename: "ticket.pdf",
                                    contentType: "application/pdf", byteCount: 10, contentHash: .verified(hash), pageCount: 1,
                                    relativePath: "attachments/aa/x.pdf", state: .present, createdAt: Timestamp(stored: "2026-01-01T00:00:00.000Z"),
                                    syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: "2026-01-01T00:00:00.000Z"))
        try store.connection.writeTransaction { try store.insert(attachment) }
        #expect(try store.attachment(bookingId: booking.id, contentHash: hash) == attachment)
        #expect(try store.attachment(bookingId: booking.id, contentHash: "other") == nil)
        #expect(try store.allAttachments() == [attachment])
    }
}
