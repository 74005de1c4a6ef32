@testable import TripBoardDevice
import Foundation
import Testing
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

struct SealedFileTests {
    static func seal(_ bytes: [UInt8], _ protection: ProtectionClass, keys: some FileKeys, in temporary: TemporaryDirectory,
                     name: String = "sealed", pieces: Int = 3) throws -> String {
        let directory = try Directory.open(path: temporary.path)
        let file = try directory.openFile(name, .writeOnly, creating: .newFile, mode: 0o600)
        let writer = try SealedFileWriter(output: file, key: try keys.sealingKey(protection))
        // Written in uneven pieces: the messages do not follow the writes.
        var offset = 0
        let step = max(1, bytes.count / pieces + 7)
        while offset < bytes.count {
            let end = min(bytes.count, offset + step)
            try writer.write(Array(bytes[offset..<end]))
            offset = end
        }
        try writer.finish()
        #expect(writer.sealedLength == SealedFile.sealedLength(plaintextLength: Int64(bytes.count), protection: protection))
        return temporary.child(name)
    }

    static func open(_ path: String, keys: some FileKeys) throws -> [UInt8] {
        let reader = try SealedFileReader(input: try FileDescriptor.openForReading(path: path), path: path, keys: keys)
        return try reader.readToEnd(limit: 1 << 30)
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 200_000])
    func everyClassRoundTripsAndSizeIsExact(length: Int) throws {
        let temporary = try TemporaryDirectory()
        let keys = try MemoryFileKeys()
        let bytes = Sodium.randomBytes(count: length)
        for protection in ProtectionClass.allCases {
            let path = try Self.seal(bytes, protection, keys: keys, in: temporary, name: protection.rawValue)
            let size = try FileStatus.of(path: path).size
            #expect(size == SealedFile.sealedLength(plaintextLength: Int64(length), protection: protection))
            #expect(try Self.open(path, keys: keys) == bytes, "\(protection) \(length)")
            let head = try temporary.bytes(protection.rawValue)
            #expect(SealedFile.Header.parse(head)?.protection == protection)
            #expect(SealedFile.Header.parse(head)?.keybag == keys.keybag)
        }
    }

    @Test func noPlaintextAndNoFileMagicOnDisk() throws {
        let temporary = try TemporaryDirectory()
        let keys = try MemoryFileKeys()
        let canary = Array("%PDF-1.7 CANARY-TICKET-7Q2 \u{89}PNG".utf8)
        let bytes = (0..<500).flatMap { _ in canary }
        for protection in ProtectionClass.allCases {
            let sealed = try temporary.bytes(String(try Self.seal(bytes, protection, keys: keys, in: temporary, name: protection.rawValue)
                .split(separator: "/").last!))
            // Needles of five bytes or more: 64 KB of ciphertext holds a given three-byte string by
            // chance about once in 260 runs, a five-byte one about once in 17 million.
            for needle in ["CANARY-TICKET", "%PDF-1.7", "\u{89}PNG"] {
                #expect(Data(sealed).range(of: Data(needle.utf8)) == nil, "\(needle) in a \(protection) file")
            }
        }
    }

    @Test func anyChangeIsRefusedNotHandedOut() throws {
        let temporary = try TemporaryDirectory()
        let keys = try MemoryFileKeys()
        let bytes = Sodium.randomBytes(count: 150_000)
        let path = try Self.seal(bytes, .complete, keys: keys, in: temporary)
        let original = try temporary.bytes("sealed")
        let header = SealedFile.headerLength(.complete)
        let messageLength = SealedFile.messageBytes + SecretStream.overhead
        var variants: [(String, [UInt8])] = [
            ("cut after the first message", Array(original[..<(header + messageLength)])),
            ("cut inside the last message", Array(original.dropLast(3))),
            ("a byte appended", original + [0]),
            ("a message appended again", original + original[(header + messageLength)...]),
            ("messages swapped", Array(original[..<header]) + original[(header + messageLength)..<(header + 2 * messageLength)]
                + original[header..<(header + messageLength)] + original[(header + 2 * messageLength)...]),
            ("only the header", Array(original[..<header])),
        ]
        for offset in [0, 8, 9, 10, 30, header - 1, header + 5, original.count - 1] {
            var flipped = original
            flipped[offset] ^= 0x01
            variants.append(("bit flipped at \(offset)", flipped))
        }
        for (what, bytes) in variants {
            try temporary.write(bytes, to: "sealed")
            #expect(throws: DeviceError.self, "\(what)") { _ = try Self.open(path, keys: keys) }
        }
        try temporary.write(original, to: "sealed")
        #expect(try Self.open(path, keys: keys) == bytes)
    }

    @Test func anotherKeybagOrALockedClassOpensNothing() throws {
        let temporary = try TemporaryDirectory()
        let keys = try MemoryFileKeys()
        let path = try Self.seal(Array("ticket".utf8), .complete, keys: keys, in: temporary)
        #expect(throws: DeviceError.sealedElsewhere(path: path)) { _ = try Self.open(path, keys: try MemoryFileKeys()) }
        var locked = keys
        locked.closed = [.complete, .completeUnlessOpen]
        #expect(throws: DeviceError.locked) { _ = try Self.open(path, keys: locked) }
        // complete-unless-open is written while locked, and read only once unlocked.
        let written = try Self.seal(Array("shared while locked".utf8), .completeUnlessOpen, keys: locked, in: temporary, name: "cuo")
        #expect(throws: DeviceError.locked) { _ = try Self.open(written, keys: locked) }
        #expect(try Self.open(written, keys: keys) == Array("shared while locked".utf8))
    }

    @Test func aPlaintextFileIsNotTakenForASealedOne() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("%PDF-1.4 plain", to: "plain.pdf")
        #expect(throws: DeviceError.damagedSealedFile(path: temporary.child("plain.pdf"), reason: "it is not a sealed file")) {
            _ = try Self.open(temporary.child("plain.pdf"), keys: try MemoryFileKeys())
        }
    }
}
