import Foundation
import Testing
import TripBoardSystem

/// `Identifier`: record ids are random version-4 UUIDs in lowercase.
struct IdentifierTests {
    /// The 16 bytes of a UUID string in the 8-4-4-4-12 form.
    private func bytes(of id: String) throws -> [UInt8] {
        let hex = Array(id.utf8).filter { $0 != UInt8(ascii: "-") }
        try #require(hex.count == 32, "\(id)")
        return try stride(from: 0, to: 32, by: 2).map { index in
            try #require(UInt8(String(decoding: hex[index..<(index + 2)], as: UTF8.self), radix: 16), "\(id)")
        }
    }

    @Test func madeIDHasTheLowercase8_4_4_4_12Form() {
        let id = Identifier.make()
        let characters = Array(id.utf8)
        #expect(characters.count == 36)
        for (index, character) in characters.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                #expect(character == UInt8(ascii: "-"), "\(id) at \(index)")
            } else {
                #expect(Array("0123456789abcdef".utf8).contains(character), "\(id) at \(index)")
            }
        }
        #expect(UUID(uuidString: id)?.uuidString.lowercased() == id, "Foundation reads the same UUID")
    }

    @Test func madeIDsCarryVersion4AndTheRFC9562Variant() throws {
        for _ in 0..<1_000 {
            let id = Identifier.make()
            let bytes = try bytes(of: id)
            #expect(bytes[6] >> 4 == 4, "version: \(id)")
            #expect(bytes[8] >> 6 == 0b10, "variant: \(id)")
        }
    }

    /// 10 000 ids: all distinct, and each of the 122 random bits is seen both set and clear (a
    /// stuck bit would show here with certainty; a fair one fails with probability 2^-9999).
    @Test func tenThousandIDsAreDistinctAndEveryRandomBitVaries() throws {
        let ids = (0..<10_000).map { _ in Identifier.make() }
        #expect(Set(ids).count == ids.count)
        var everSet = [UInt8](repeating: 0, count: 16)
        var everClear = [UInt8](repeating: 0, count: 16)
        for id in ids {
            for (index, byte) in try bytes(of: id).enumerated() {
                everSet[index] |= byte
                everClear[index] |= ~byte
            }
        }
        // Fixed bits: the version nibble of byte 6 and the two variant bits of byte 8.
        var randomMask = [UInt8](repeating: 0xff, count: 16)
        randomMask[6] = 0x0f
        randomMask[8] = 0x3f
        for index in 0..<16 {
            #expect(everSet[index] & randomMask[index] == randomMask[index], "byte \(index) has a bit never set")
            #expect(everClear[index] & randomMask[index] == randomMask[index], "byte \(index) has a bit never clear")
        }
    }

    @Test(arguments: [
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc33", true),
        ("3F2A9C4E-1B7D-4C8E-9F00-AA11BB22CC33", true),
        ("3f2A9c4E-1b7D-4c8E-9f00-Aa11Bb22Cc33", true),
        ("00000000-0000-0000-0000-000000000000", true),
        ("ffffffff-ffff-ffff-ffff-ffffffffffff", true),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8", true),  // version 1: any version is accepted
        ("", false),
        ("3f2a9c4e", false),
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc3", false),
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc333", false),
        ("3f2a9c4e1b7d4c8e9f00aa11bb22cc33", false),
        ("3f2a9c4e-1b7d-4c8e-9f00aa11-bb22cc33", false),
        ("3f2a9c4e_1b7d_4c8e_9f00_aa11bb22cc33", false),
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc3g", false),
        ("{3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc33}", false),
        ("urn:uuid:3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc33", false),
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc3３", false),  // a full-width digit
        ("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc٣", false),  // an Arabic-Indic digit: 36 bytes
        ("not-a-uuid", false),
    ])
    func isValidAcceptsExactlyThe8_4_4_4_12HexForm(text: String, valid: Bool) {
        #expect(Identifier.isValid(text) == valid)
        #expect((UUID(uuidString: text) != nil) == valid, "Foundation agrees")
    }

    /// Foundation's `UUID(uuidString:)` skips leading white space; ids never have any.
    @Test func leadingOrTrailingWhiteSpaceIsRefused() {
        #expect(!Identifier.isValid(" 3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc3"))
        #expect(!Identifier.isValid("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc3 "))
        #expect(!Identifier.isValid("3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc33\n"))
    }
}
