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

    /// Reads in the pieces it is given, as a pipe may deliver a share.
    final class PiecewiseSource: ByteSource {
        let bytes: [UInt8]
        var pieces: [Int]
        var offset = 0

        init(_ bytes: [UInt8], pieces: [Int]) {
            self.bytes = bytes
            self.pieces = pieces
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let piece = pieces.isEmpty ? buffer.count : pieces.removeFirst()
            let count = min(piece, buffer.count, bytes.count - offset)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.withUnsafeBytes { $0 }[offset..<(offset + count)]))
            offset += count
            return count
        }
    }

    /// Up to `count` bytes of `memory` from its start.
    static func contents(of memory: FileDescriptor, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while done < count {
                let read = try memory.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), atOffset: Int64(done))
                if read == 0 { break }
                done += read
            }
        }
        return Array(bytes[..<done])
    }

    /// A share read once: the memory file holds every byte, the staged copy is sealed and opens
    /// to them, its hash is theirs, and `stageFor` saw exactly the first 1024 bytes — whether
    /// they came in one read or in pieces, and whether the file is one chunk or several (the
    /// sealing thread starts at the second).
    @Test(arguments: [[Int](), [3, 5, 1000, 20], [1023, 1], [1024], [1025]])
    func aShareIsCopiedHashedAndSealedInOnePass(pieces: [Int]) throws {
        let fixture = try Fixture()
        for bytes in [Self.pdf, Self.pdf + Array(repeating: 0x25, count: 900_000), Array(Self.pdf.prefix(700))] {
            let memory = try FileDescriptor.memoryFile(name: "share-test")
            var seen: [([UInt8], Int64)] = []
            let staging = try fixture.files.stageShared(from: PiecewiseSource(bytes, pieces: pieces), sourceName: "source.pdf",
                                                        maximumBytes: 1 << 21, memory: memory) { head, count in
                seen.append((head, count))
                return try fixture.files.sealingStage(protection: .completeUnlessOpen, prefix: "import")
            }
            #expect(staging.byteCount == Int64(bytes.count))
            #expect(seen.count == 1 && seen[0].0 == Array(bytes.prefix(1024)) && seen[0].1 >= Int64(min(1024, bytes.count)))
            let staged = try staging.finish()
            #expect(staged.contentHash == Sodium.hexString(blake2b(bytes)))
            #expect(staged.byteCount == Int64(bytes.count) && staged.head == Array(bytes.prefix(1024)))
            #expect(try Self.contents(of: memory, count: bytes.count + 1) == bytes)
            let sealed = try fixture.fixture.temporary.bytes("container/tmp/" + staged.stagingName)
            #expect(SealedFile.isSealed(sealed) && Data(sealed).range(of: Data("%PDF".utf8)) == nil)
            let id = Identifier.make()
            let path = try fixture.files.publish(staged, id: id, fileExtension: "pdf")
            #expect(try fixture.files.open(relativePath: path).readToEnd(limit: 1 << 21) == bytes)
        }
        #expect(try fixture.stagingEntries().isEmpty)
    }

    /// Refused before the stage (by `stageFor`), past the size limit after the sealing thread
    /// has started, or dropped unfinished: nothing is left in `tmp/`.
    @Test func aRefusedOrAbandonedShareLeavesNothingStaged() throws {
        let fixture = try Fixture()
        struct NotWanted: Error {}
        let big = Self.pdf + Array(repeating: 0x25, count: 900_000)
        #expect(throws: NotWanted.self) {
            _ = try fixture.files.stageShared(from: PiecewiseSource(big, pieces: []), sourceName: "s", maximumBytes: 1 << 21,
                                              memory: try FileDescriptor.memoryFile(name: "share-test")) { _, _ in throw NotWanted() }
        }
        #expect(throws: AttachmentError.self) {
            _ = try fixture.files.stageShared(from: PiecewiseSource(big, pieces: []), sourceName: "s", maximumBytes: 800_000,
                                              memory: try FileDescriptor.memoryFile(name: "share-test")) { _, _ in
                try fixture.files.sealingStage(protection: .completeUnlessOpen, prefix: "import")
            }
        }
        #expect(try fixture.stagingEntries().isEmpty)
        do {
            let staging = try fixture.files.stageShared(from: PiecewiseSource(big, pieces: []), sourceName: "s", maximumBytes: 1 << 21,
                                                        memory: try FileDescriptor.memoryFile(name: "share-test")) { _, _ in
                try fixture.files.sealingStage(protection: .completeUnlessOpen, prefix: "import")
            }
            #expect(staging.byteCount == Int64(big.count))
        }
        #expect(try fixture.stagingEntries().isEmpty, "dropped unfinished: its sealed copy is removed")
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
