import Testing
import TripBoardSodium
import TripBoardKeys
import TripBoardTestSupport

/// The Sodium primitives the age format needs (HMAC-SHA-256, HKDF-SHA-256, scrypt,
/// ChaCha20-Poly1305-IETF, strict unpadded base64), against published vectors.
///
/// Provenance is written next to each value; every vector was also recomputed outside libsodium
/// before it was hard-coded (Python's `hmac`, `hashlib.scrypt` and the `cryptography` package).
struct AgePrimitivesTests {
    // MARK: - HMAC-SHA-256

    /// RFC 4231, test cases 1 and 2.
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    ])
    func hmacMatchesRFC4231(keyHex: String, message: String, expectedHex: String) throws {
        let hmac = HMACSHA256(key: try SecureBytes(copying: try hex(keyHex)))
        hmac.update(message.utf8)
        #expect(Sodium.hexString(hmac.finalize()) == expectedHex)

        // Fed one byte at a time, the code is the same.
        let streamed = HMACSHA256(key: try SecureBytes(copying: try hex(keyHex)))
        for byte in message.utf8 { streamed.update([byte]) }
        #expect(Sodium.hexString(streamed.finalize()) == expectedHex)
    }

    @Test func codesMatchComparesWholeCodesOnly() {
        let code = [UInt8](repeating: 7, count: 32)
        var other = code
        other[31] ^= 1
        #expect(HMACSHA256.codesMatch(code, code))
        #expect(!HMACSHA256.codesMatch(code, other))
        #expect(!HMACSHA256.codesMatch(Array(code.dropLast()), Array(code.dropLast())), "a code is 32 bytes")
    }

    // MARK: - HKDF-SHA-256

    /// RFC 5869, appendix A: test case 1 (salt and info) and test case 3 (empty salt and info),
    /// 42 bytes each: two HMAC blocks, so the expand loop is exercised past its first block.
    @Test(arguments: [
        ("000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
         "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
         "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        ("", "",
         "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
         "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ])
    func hkdfMatchesRFC5869(saltHex: String, infoHex: String, prkHex: String, okmHex: String) throws {
        let inputKeyMaterial = try SecureBytes(copying: [UInt8](repeating: 0x0b, count: 22))
        let prk = try HKDF.extract(inputKeyMaterial: inputKeyMaterial, salt: try hex(saltHex))
        #expect(Sodium.hexString(contents(prk)) == prkHex)
        let okm = try HKDF.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: try hex(saltHex), info: try hex(infoHex), length: 42)
        #expect(Sodium.hexString(contents(okm)) == okmHex)
        // A shorter output is a prefix of the longer one (each block depends only on the ones before).
        let short = try HKDF.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: try hex(saltHex), info: try hex(infoHex), length: 32)
        #expect(Sodium.hexString(contents(short)) == String(okmHex.prefix(64)))
    }

    @Test func hkdfRejectsOutputLengthsOutOfRange() throws {
        let key = try SecureBytes(randomCount: 16)
        for length in [0, 255 * 32 + 1] {
            #expect(throws: CryptoError.invalidLength(what: "HKDF output", expected: 1...8160, actual: length)) {
                _ = try HKDF.deriveKey(inputKeyMaterial: key, salt: [], info: [], length: length)
            }
        }
        #expect(try HKDF.deriveKey(inputKeyMaterial: key, salt: [], info: [], length: 8160).count == 8160)
    }

    // MARK: - scrypt

    /// RFC 7914, section 12: the first two vectors (the third and fourth take seconds and a GiB).
    @Test(arguments: [
        ("", "", 4, 1, 1,
         "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
         + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        ("password", "NaCl", 10, 8, 16,
         "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
         + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
    ])
    func scryptMatchesRFC7914(passphrase: String, salt: String, logN: Int, r: Int, p: Int, expectedHex: String) throws {
        let key = try Scrypt.deriveKey(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), salt: Array(salt.utf8),
                                       logN: logN, r: r, p: p, length: 64)
        #expect(Sodium.hexString(contents(key)) == expectedHex)
    }

    @Test func scryptRejectsWorkFactorsOutOfRange() throws {
        let passphrase = try SecureBytes(copying: Array("x".utf8))
        for logN in [0, 64, -1] {
            #expect(throws: CryptoError.invalidParameter(what: "scrypt work factor", reason: "log2(N) must be 1…63")) {
                _ = try Scrypt.deriveKey(passphrase: passphrase, salt: [1], logN: logN)
            }
        }
    }

    // MARK: - ChaCha20-Poly1305 (IETF)

    /// Key, nonce and plaintext of RFC 8439, section 2.8.2, without its associated data (age uses
    /// none): the ciphertext is the RFC's, the tag was computed with the `cryptography` package.
    @Test func chaCha20Poly1305MatchesRFC8439WithoutAssociatedData() throws {
        let key = try SecureBytes(copying: Array(0x80...0x9f) as [UInt8])
        let nonce = try hex("070000004041424344454647")
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = try hex(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
            + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
            + "3ff4def08e4b7a9de576d26586cec64b6116" + "6a23a4681fd59456aea1d29f82477216")
        #expect(try ChaCha20Poly1305.seal(try SecureBytes(copying: plaintext), key: key, nonce: nonce) == expected)
        #expect(contents(try ChaCha20Poly1305.open(expected, key: key, nonce: nonce)) == plaintext)

        // Sealed in place and opened into a buffer, as the payload STREAM does it.
        var buffer = plaintext + [UInt8](repeating: 0, count: 16)
        buffer.withUnsafeMutableBytes { raw in
            nonce.withUnsafeBytes { ChaCha20Poly1305.sealInPlace(raw, plaintextCount: plaintext.count, nonce: $0, key: key) }
        }
        #expect(buffer == expected)
        #expect(try openIntoBuffer(buffer, key: key, nonce: nonce) == plaintext)
    }

    @Test func chaCha20Poly1305RefusesAlteredBytesAndReleasesNothing() throws {
        let key = try SecureBytes(randomCount: 32)
        let nonce = [UInt8](repeating: 0, count: 12)
        let sealed = try ChaCha20Poly1305.seal(try SecureBytes(copying: [1, 2, 3]), key: key, nonce: nonce)
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x80
            #expect(throws: CryptoError.authenticationFailed) { _ = try ChaCha20Poly1305.open(altered, key: key, nonce: nonce) }
            #expect(try openIntoBuffer(altered, key: key, nonce: nonce) == nil)
        }
        #expect(throws: CryptoError.authenticationFailed) { _ = try ChaCha20Poly1305.open(Array(sealed.prefix(15)), key: key, nonce: nonce) }
        #expect(throws: CryptoError.invalidLength(what: "nonce", expected: 12...12, actual: 24)) {
            _ = try ChaCha20Poly1305.open(sealed, key: key, nonce: [UInt8](repeating: 0, count: 24))
        }
    }

    /// Opens `sealed` with the buffer-to-buffer form the STREAM reader uses; nil when it does not
    /// authenticate, after checking that the sealed bytes were left as they were (so the reader
    /// can try the other final-chunk flag) and that no plaintext was left in the output.
    private func openIntoBuffer(_ sealed: [UInt8], key: SecureBytes, nonce: [UInt8]) throws -> [UInt8]? {
        var output = [UInt8](repeating: 0xee, count: sealed.count)
        var input = sealed
        let count = input.withUnsafeMutableBytes { input in
            output.withUnsafeMutableBytes { output in
                nonce.withUnsafeBytes { ChaCha20Poly1305.open(UnsafeRawBufferPointer(input), into: output, nonce: $0, key: key) }
            }
        }
        #expect(input == sealed, "the sealed bytes are never changed")
        guard let count else {
            #expect(output.prefix(sealed.count - 16).allSatisfy { $0 == 0 }, "libsodium zeroes the output of a failed open")
            return nil
        }
        return Array(output.prefix(count))
    }

    // MARK: - Base64

    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")])
    func base64MatchesRFC4648WithoutPadding(plain: String, encoded: String) {
        // RFC 4648, section 10, with the `=` padding removed.
        #expect(String(decoding: Base64.encodeUnpadded(Array(plain.utf8)), as: UTF8.self) == encoded)
        #expect(Base64.decodeUnpadded(Array(encoded.utf8)) == Array(plain.utf8))
        #expect(Base64.decodePublicUnpadded(Array(encoded.utf8)) == Array(plain.utf8))
        #expect(Base64.encodePublicUnpadded(Array(plain.utf8)) == encoded)
    }

    /// The table-driven encoder against libsodium's, on random bytes of every length to 100.
    @Test func thePublicEncoderAgreesWithLibsodium() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...100 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(Base64.encodePublicUnpadded(bytes) == String(decoding: Base64.encodeUnpadded(bytes), as: UTF8.self))
            }
        }
    }

    @Test(arguments: ["Zg==", "Zm8=", "Zh", "Zm9", "Z", "Zm 9v", "Zm9v\n", "Zm-v", "Zm_v", "Zm9v\u{0}", "Zm9vé", "Zé9v", "Zm9vYmF\u{80}"])
    func base64RefusesPaddingNonCanonicalAndForeignCharacters(text: String) {
        // "Zh" and "Zm9" carry non-zero leftover bits: they decode, but are not canonical. A byte
        // from 0x80 up is no character of the alphabet either.
        #expect(Base64.decodeUnpadded(Array(text.utf8)) == nil, "\(text.debugDescription)")
        #expect(Base64.decodePublicUnpadded(Array(text.utf8)) == nil, "\(text.debugDescription)")
    }

    /// The table-driven decoder against libsodium's constant-time one, on random text: mostly
    /// the alphabet (so that many decode), now and then a byte outside it; every length to 40.
    @Test func thePublicDecoderAgreesWithLibsodiumOnRandomText() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var decoded = 0
        for round in 0..<20_000 {
            let length = round % 41
            let text: [UInt8] = (0..<length).map { _ in
                Int.random(in: 0..<50, using: &generator) == 0 ? UInt8.random(in: 0...255, using: &generator)
                    : alphabet[Int.random(in: 0..<64, using: &generator)]
            }
            let expected = Base64.decodeUnpadded(text)
            #expect(Base64.decodePublicUnpadded(text) == expected, "\(text)")
            if expected != nil { decoded += 1 }
        }
        #expect(decoded > 2_000)
    }
}
