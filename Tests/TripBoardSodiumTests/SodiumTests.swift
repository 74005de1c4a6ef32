@testable import TripBoardKeychain
import Testing
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

/// The Sodium layer: known-answer tests against published vectors, then the properties callers
/// rely on (tamper detection, nonce freshness, no leaks in descriptions, validated inputs).
///
/// Where each expected value comes from is written next to it. Every vector was also recomputed
/// outside libsodium before it was hard-coded: BLAKE2b and crypto_kdf (which is keyed BLAKE2b with
/// salt = subkey id, personal = context) with Python's `hashlib.blake2b`; XChaCha20-Poly1305 with a
/// HChaCha20 written in Python plus the `cryptography` package's ChaCha20-Poly1305; Argon2id with
/// `argon2-cffi` (the reference implementation).
struct SodiumTests {
    private func key(_ bytes: [UInt8]) throws -> SecureBytes {
        try SecureBytes(copying: bytes)
    }

    // MARK: - Initialisation and helpers

    @Test func initializationIsIdempotentAndReportsTheLibraryVersion() async {
        // Many tasks racing to be first: the static-let initializer runs sodium_init exactly once.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { Sodium.initialize() } }
        }
        #expect(Sodium.libraryVersion.hasPrefix("1."))
    }

    @Test func hexHelpersRoundTripAndRejectMalformedText() {
        let bytes: [UInt8] = [0x00, 0x01, 0x7f, 0x80, 0xab, 0xff]
        #expect(Sodium.hexString(bytes) == "00017f80abff")
        #expect(Sodium.bytes(hex: "00017F80ABff") == bytes)
        #expect(Sodium.bytes(hex: "") == [])
        #expect(Sodium.hexString([]) == "")
        for malformed in ["0", "abc", "zz", "00 11", "0x00", "00-11"] {
            #expect(Sodium.bytes(hex: malformed) == nil, "\(malformed)")
        }
    }

    @Test func randomBytesHaveTheRequestedLengthAndDiffer() {
        #expect(Sodium.randomBytes(count: 0) == [])
        let first = Sodium.randomBytes(count: 32)
        let second = Sodium.randomBytes(count: 32)
        #expect(first.count == 32)
        #expect(first != second, "two 256-bit random values collide with probability 2^-256")
    }

    // MARK: - SecureBytes

    /// A nonce buffer hands out 24-byte nonces, none twice, across many refills, and a value
    /// sealed under one opens under its nonce.
    @Test func aNonceBufferHandsOutEachNonceOnce() throws {
        var nonces = NonceBuffer()
        var seen = Set<[UInt8]>()
        for _ in 0..<2_000 {
            let nonce = nonces.next()
            #expect(nonce.count == XChaCha20Poly1305.nonceLength)
            #expect(seen.insert(nonce).inserted)
        }
        let key = try SecureBytes(randomCount: XChaCha20Poly1305.keyLength)
        let sealed = try XChaCha20Poly1305.seal(plaintext: Array("Lisbon".utf8), key: key, associatedData: [1, 2], nonces: &nonces)
        #expect(!seen.contains(sealed.nonce))
        #expect(try XChaCha20Poly1305.openPublic(ciphertext: sealed.ciphertext, nonce: sealed.nonce, key: key, associatedData: [1, 2])
                == Array("Lisbon".utf8))
    }

    /// Short secrets share slots of guarded pages: a slot handed out is wiped (whatever it held
    /// before), secrets alive at once never share one — thousands of them, made and dropped on
    /// several threads at once — and each reads back what was written. Longer ones get regions
    /// of their own; both kinds are locked in RAM here.
    @Test func shortSecretsTakeWipedSlotsOfTheirOwn() async throws {
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for round in 0..<20 {
                        var alive: [(SecureBytes, [UInt8])] = []
                        for index in 0..<300 {
                            let count = index % (SecureBytes.slotBytes + 1)
                            let pattern = (0..<count).map { UInt8(truncatingIfNeeded: task &* 31 &+ round &* 7 &+ index &+ $0 | 1) }
                            var wiped = true
                            let secure = try! SecureBytes(count: count) { buffer in
                                wiped = buffer.allSatisfy { $0 == 0 }
                                _ = buffer.initialize(from: pattern)
                            }
                            #expect(wiped, "a slot is handed out wiped")
                            alive.append((secure, pattern))
                        }
                        for (secure, pattern) in alive {
                            #expect(secure.withUnsafeBytes { Array($0) } == pattern, "no two live secrets share bytes")
                        }
                        // Every slot goes back wiped: the next round writes over what this one left.
                        alive.removeAll()
                    }
                }
            }
        }
        let long = try SecureBytes(copying: Array(repeating: UInt8(7), count: SecureBytes.slotBytes + 1))
        #expect(long.withUnsafeBytes { Array($0) } == Array(repeating: 7, count: SecureBytes.slotBytes + 1))
        let short = try SecureBytes(randomCount: 32)
        #expect(long.isLockedInMemory && short.isLockedInMemory)
    }

    @Test func secureBytesCopiesTheSourceAndReadsBack() throws {
        let source: [UInt8] = Array(0..<40)
        let secure = try SecureBytes(copying: source)
        #expect(secure.count == 40)
        #expect(contents(secure) == source)
        #expect(source == Array(0..<40), "copying leaves the source alone")
    }

    @Test func secureBytesWipingInitializerZeroesTheCallersArray() throws {
        var passphrase = Array("correct horse battery staple".utf8)
        let secure = try SecureBytes(wiping: &passphrase)
        #expect(contents(secure) == Array("correct horse battery staple".utf8))
        #expect(passphrase.count == 28, "the array keeps its length")
        #expect(passphrase.allSatisfy { $0 == 0 }, "every byte of the caller's copy is zeroed")

        var empty: [UInt8] = []
        #expect(try SecureBytes(wiping: &empty).count == 0)
    }

    @Test func randomSecureBytesHaveTheRequestedLengthAndDiffer() throws {
        let first = try SecureBytes(randomCount: 32)
        let second = try SecureBytes(randomCount: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(try SecureBytes(randomCount: 0).count == 0)
    }

    @Test func secureBytesEqualityComparesContentsAndLengths() throws {
        let bytes: [UInt8] = Array(repeating: 0x5a, count: 32)
        let secure = try key(bytes)
        #expect(secure == secure)
        #expect(secure == (try key(bytes)))
        for index in [0, 15, 31] {
            var other = bytes
            other[index] ^= 0x01
            #expect(secure != (try key(other)), "differs at \(index)")
        }
        #expect(secure != (try key(Array(bytes.dropLast()))), "a prefix is not equal")
        #expect(try key([]) == (try key([])))
    }

    @Test func secureBytesNeverPrintTheirContents() throws {
        let bytes: [UInt8] = Array(repeating: 0xab, count: 32)
        let secure = try key(bytes)
        #expect(secure.description == "<secure bytes: 32>")
        #expect(secure.debugDescription == "<secure bytes: 32>")
        #expect("\(secure)" == "<secure bytes: 32>")
        #expect(String(reflecting: secure) == "<secure bytes: 32>")
        var dumped = ""
        dump(secure, to: &dumped)
        #expect(dumped.contains("<secure bytes: 32>"), "\(dumped)")
        #expect(!dumped.lowercased().contains("ab"), "no byte value, no pointer: \(dumped)")
        #expect(!dumped.contains("171"), "no decimal byte value: \(dumped)")
        #expect(Mirror(reflecting: secure).children.isEmpty)
    }

    @Test func secureBytesCanBeReadFromManyTasksAtOnce() async throws {
        // SecureBytes is Sendable because it is immutable: concurrent readers see the same bytes.
        let key = try XChaCha20Poly1305.makeKey()
        let sealed = try XChaCha20Poly1305.seal(plaintext: Array("shared".utf8), key: key, associatedData: [])
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    let opened = try? XChaCha20Poly1305.open(ciphertext: sealed.ciphertext, nonce: sealed.nonce,
                                                             key: key, associatedData: [])
                    return opened.map { $0.withUnsafeBytes { Array($0) } } == Array("shared".utf8)
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 32))
    }

    // MARK: - BLAKE2b known answers

    /// BLAKE2b-256 of "" and "abc": Python `hashlib.blake2b(data, digest_size=32)`, which is the
    /// reference implementation. BLAKE2b-512 of "abc": RFC 7693 Appendix A. Keyed 512 of "" with
    /// key 00…3f: the first keyed vector of the BLAKE2 reference `blake2b-kat.txt`.
    @Test(arguments: [
        ("", 32, "", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"),
        ("abc", 32, "", "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"),
        ("abc", 16, "", "cf4ab791c62b8d2b2109c90275287816"),
        ("abc", 64, "",
         "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
         + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"),
        ("abc", 32, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "d63a32d3e44738d7907f964316c241adaba0abfeabc32349677578a15a203f7f"),
        ("", 64,
         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
         + "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f",
         "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
         + "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"),
    ])
    func blake2bMatchesKnownAnswers(input: String, outputLength: Int, keyHex: String, expectedHex: String) throws {
        let key = keyHex.isEmpty ? nil : try SecureBytes(copying: try hex(keyHex))
        let digest = try blake2b(Array(input.utf8), outputLength: outputLength, key: key)
        #expect(Sodium.hexString(digest) == expectedHex)
        if key == nil && outputLength == 32 {
            #expect(Sodium.hexString(blake2b(Array(input.utf8))) == expectedHex, "the one-shot default is BLAKE2b-256")
            #expect(Sodium.hexString(blake2b(input.utf8)) == expectedHex, "any collection of bytes")
        }
    }

    @Test func streamingInOddSizedChunksEqualsOneShot() throws {
        // 10 240 bytes 00…ff repeated: crosses BLAKE2b's 128-byte block boundary many times.
        // Expected: hashlib.blake2b(bytes(range(256)) * 40, digest_size=32).
        let data = Array(repeating: Array(0...255) as [UInt8], count: 40).flatMap { $0 }
        let expected = "1ed0d7616785400ccd2dc0ba224e13482b6120adff1b9cd7fb31be806b6892d1"
        #expect(Sodium.hexString(blake2b(data)) == expected)
        for chunkSize in [1, 3, 7, 63, 127, 128, 129, 1000, 4099] {
            let hasher = Blake2bHasher()
            var offset = 0
            while offset < data.count {
                let end = min(offset + chunkSize, data.count)
                hasher.update(data[offset..<end])
                offset = end
            }
            #expect(Sodium.hexString(hasher.finalize()) == expected, "chunks of \(chunkSize)")
        }
        let withEmptyUpdates = Blake2bHasher()
        withEmptyUpdates.update([UInt8]())
        withEmptyUpdates.update(data)
        withEmptyUpdates.update([UInt8]())
        #expect(Sodium.hexString(withEmptyUpdates.finalize()) == expected, "empty updates change nothing")
    }

    @Test func blake2bRejectsLengthsOutOfRange() throws {
        for length in [0, 15, 65] {
            #expect(throws: CryptoError.invalidLength(what: "BLAKE2b output", expected: 16...64, actual: length)) {
                _ = try Blake2bHasher(outputLength: length)
            }
        }
        for keyLength in [1, 15, 65] {
            let key = try SecureBytes(randomCount: keyLength)
            #expect(throws: CryptoError.invalidLength(what: "BLAKE2b key", expected: 16...64, actual: keyLength)) {
                _ = try blake2b([1, 2, 3], outputLength: 32, key: key)
            }
        }
        #expect(try Blake2bHasher(outputLength: 16).outputLength == 16)
        #expect(try blake2b([UInt8](), outputLength: 64).count == 64)
    }

    @Test func finalizingTwiceIsAProgrammerErrorAndTraps() async {
        await #expect(processExitsWith: .failure) {
            let hasher = Blake2bHasher()
            _ = hasher.finalize()
            _ = hasher.finalize()
        }
    }

    // MARK: - XChaCha20-Poly1305 known answer

    /// draft-irtf-cfrg-xchacha-03, Appendix A.3.1.
    @Test func aeadMatchesTheXChaChaDraftVector() throws {
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let key = try key(Array(0x80...0x9f))
        let nonce: [UInt8] = Array(0x40...0x57)
        let associatedData = try hex("50515253c0c1c2c3c4c5c6c7")
        let expected = try hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
            + "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
            + "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
            + "21f9664c97637da9768812f615c68b13b52e"
            + "c0875924c1c7987947deafd8780acf49")  // the tag

        let sealed = try XChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce, associatedData: associatedData)
        #expect(sealed == expected)
        let opened = try XChaCha20Poly1305.open(ciphertext: expected, nonce: nonce, key: key, associatedData: associatedData)
        #expect(contents(opened) == plaintext)
    }

    // MARK: - AEAD properties

    private func sealSample() throws -> (key: SecureBytes, associatedData: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) {
        let key = try XChaCha20Poly1305.makeKey()
        let associatedData = Array("keychain/refresh-token/v1".utf8)
        let sealed = try XChaCha20Poly1305.seal(plaintext: Array("refresh token 0123456789".utf8), key: key,
                                                associatedData: associatedData)
        return (key, associatedData, sealed.nonce, sealed.ciphertext)
    }

    @Test func sealThenOpenRoundTrips() throws {
        let key = try XChaCha20Poly1305.makeKey()
        #expect(key.count == 32)
        for plaintext in [[], [0x00], Array("a secret".utf8), Sodium.randomBytes(count: 1 << 20)] as [[UInt8]] {
            let sealed = try XChaCha20Poly1305.seal(plaintext: plaintext, key: key, associatedData: [7])
            #expect(sealed.nonce.count == 24)
            #expect(sealed.ciphertext.count == plaintext.count + 16)
            let opened = try XChaCha20Poly1305.open(ciphertext: sealed.ciphertext, nonce: sealed.nonce, key: key,
                                                    associatedData: [7])
            #expect(contents(opened) == plaintext, "\(plaintext.count) bytes")
        }
    }

    @Test func sealingSecureBytesRoundTrips() throws {
        let key = try XChaCha20Poly1305.makeKey()
        let secret = try SecureBytes(randomCount: 32)
        let sealed = try XChaCha20Poly1305.seal(plaintext: secret, key: key, associatedData: [])
        let opened = try XChaCha20Poly1305.open(ciphertext: sealed.ciphertext, nonce: sealed.nonce, key: key,
                                                associatedData: [])
        #expect(opened == secret)
    }

    @Test func everySingleByteChangeFailsAuthentication() throws {
        let sample = try sealSample()
        func expectRejected(ciphertext: [UInt8], nonce: [UInt8], associatedData: [UInt8], _ comment: Comment) {
            #expect(throws: CryptoError.authenticationFailed, comment) {
                _ = try XChaCha20Poly1305.open(ciphertext: ciphertext, nonce: nonce, key: sample.key,
                                               associatedData: associatedData)
            }
        }
        for mask: UInt8 in [0x01, 0x80, 0xff] {
            // The ciphertext includes the tag (its last 16 bytes), so this covers both.
            for index in sample.ciphertext.indices {
                var changed = sample.ciphertext
                changed[index] ^= mask
                expectRejected(ciphertext: changed, nonce: sample.nonce, associatedData: sample.associatedData,
                               "ciphertext byte \(index) ^ \(mask)")
            }
            for index in sample.nonce.indices {
                var changed = sample.nonce
                changed[index] ^= mask
                expectRejected(ciphertext: sample.ciphertext, nonce: changed, associatedData: sample.associatedData,
                               "nonce byte \(index) ^ \(mask)")
            }
            for index in sample.associatedData.indices {
                var changed = sample.associatedData
                changed[index] ^= mask
                expectRejected(ciphertext: sample.ciphertext, nonce: sample.nonce, associatedData: changed,
                               "associated data byte \(index) ^ \(mask)")
            }
        }
        expectRejected(ciphertext: sample.ciphertext, nonce: sample.nonce, associatedData: [], "associated data dropped")
        expectRejected(ciphertext: sample.ciphertext, nonce: sample.nonce, associatedData: sample.associatedData + [0],
                       "associated data extended")
        expectRejected(ciphertext: sample.ciphertext + [0], nonce: sample.nonce, associatedData: sample.associatedData,
                       "a byte appended")
    }

    @Test func everyTruncationIncludingEmptyFailsCleanly() throws {
        let sample = try sealSample()
        for length in 0..<sample.ciphertext.count {
            #expect(throws: CryptoError.authenticationFailed, "cut to \(length) bytes") {
                _ = try XChaCha20Poly1305.open(ciphertext: Array(sample.ciphertext.prefix(length)), nonce: sample.nonce,
                                               key: sample.key, associatedData: sample.associatedData)
            }
        }
        #expect(throws: CryptoError.authenticationFailed, "tag only, plaintext dropped") {
            _ = try XChaCha20Poly1305.open(ciphertext: Array(sample.ciphertext.suffix(16)), nonce: sample.nonce,
                                           key: sample.key, associatedData: sample.associatedData)
        }
    }

    @Test func anotherKeyFailsAuthentication() throws {
        let sample = try sealSample()
        let otherKey = try XChaCha20Poly1305.makeKey()
        #expect(throws: CryptoError.authenticationFailed) {
            _ = try XChaCha20Poly1305.open(ciphertext: sample.ciphertext, nonce: sample.nonce, key: otherKey,
                                           associatedData: sample.associatedData)
        }
    }

    @Test func keysAndNoncesOfTheWrongLengthAreRejected() throws {
        let sample = try sealSample()
        for length in [0, 16, 31, 33] {
            let key = try SecureBytes(randomCount: length)
            let expected = CryptoError.invalidLength(what: "key", expected: 32...32, actual: length)
            #expect(throws: expected) { _ = try XChaCha20Poly1305.seal(plaintext: [1], key: key, associatedData: []) }
            #expect(throws: expected) {
                _ = try XChaCha20Poly1305.open(ciphertext: sample.ciphertext, nonce: sample.nonce, key: key,
                                               associatedData: sample.associatedData)
            }
        }
        for length in [0, 12, 23, 25] {
            #expect(throws: CryptoError.invalidLength(what: "nonce", expected: 24...24, actual: length)) {
                _ = try XChaCha20Poly1305.open(ciphertext: sample.ciphertext, nonce: Array(repeating: 0, count: length),
                                               key: sample.key, associatedData: sample.associatedData)
            }
        }
    }

    @Test func noncesAreFreshForEverySeal() throws {
        // 10 000 seals of the same plaintext under one key: 192-bit random nonces never repeat
        // (collision probability about 2^-165), and so neither do the ciphertexts.
        let key = try XChaCha20Poly1305.makeKey()
        var nonces = Set<[UInt8]>()
        var ciphertexts = Set<[UInt8]>()
        for _ in 0..<10_000 {
            let sealed = try XChaCha20Poly1305.seal(plaintext: [1, 2, 3], key: key, associatedData: [])
            nonces.insert(sealed.nonce)
            ciphertexts.insert(sealed.ciphertext)
        }
        #expect(nonces.count == 10_000)
        #expect(ciphertexts.count == 10_000)
    }

    @Test func errorDescriptionsNameNoSecret() throws {
        let plaintext = "refresh token 0123456789"
        let sample = try sealSample()
        let error = try #require(throws: CryptoError.self) {
            _ = try XChaCha20Poly1305.open(ciphertext: sample.ciphertext, nonce: sample.nonce,
                                           key: try XChaCha20Poly1305.makeKey(), associatedData: sample.associatedData)
        }
        #expect(error == .authenticationFailed)
        #expect(!error.description.contains(plaintext))
        #expect(!error.description.contains(Sodium.hexString(sample.ciphertext)))
        #expect(CryptoError.invalidLength(what: "nonce", expected: 24...24, actual: 12).description
                == "nonce must be 24 bytes long, not 12")
        #expect(CryptoError.invalidLength(what: "subkey", expected: 16...64, actual: 8).description
                == "subkey must be 16…64 bytes long, not 8")
    }

    // MARK: - Key derivation (crypto_kdf)

    /// libsodium's own test (test/default/kdf.c and kdf.exp): master key 00…1f, context "KDF test";
    /// subkey id 0 at 64 bytes, and subkey id = length for 16 and 32 bytes. Also recomputed as
    /// `hashlib.blake2b(b"", digest_size=n, key=master, salt=id as 8 bytes LE + 8 zero bytes,
    /// person=context + 8 zero bytes)`.
    @Test(arguments: [
        (UInt64(0), 64,
         "a0c724404728c8bb95e5433eb6a9716171144d61efb23e74b873fcbeda51d807"
         + "1b5d70aae12066dfc94ce943f145aa176c055040c3dd73b0a15e36254d450614"),
        (UInt64(1), 64,
         "02507f144fa9bf19010bf7c70b235b4c2663cc00e074f929602a5e2c10a78075"
         + "7d2a3993d06debc378a90efdac196dd841817b977d67b786804f6d3cd585bab5"),
        (UInt64(16), 16, "a529216624ef9161e4cf117272aafff2"),
        (UInt64(32), 32, "154b291f11196737f8b7f491e4ca11764e0227d34f94295408a869f007aa8618"),
    ])
    func keyDerivationMatchesLibsodiumsVectors(subkeyID: UInt64, length: Int, expectedHex: String) throws {
        let master = try key(Array(0..<32))
        let subkey = try KeyDerivation.deriveSubkey(from: master, subkeyID: subkeyID, context: "KDF test", length: length)
        #expect(Sodium.hexString(contents(subkey)) == expectedHex)
    }

    @Test func differentIDsAndContextsGiveDifferentKeys() throws {
        let master = try SecureBytes(randomCount: 32)
        let base = try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: "keychain")
        #expect(base.count == 32)
        #expect(base == (try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: "keychain")), "deterministic")
        #expect(base != (try KeyDerivation.deriveSubkey(from: master, subkeyID: 2, context: "keychain")))
        #expect(base != (try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: "keychaim")))
        #expect(base != (try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: "Keychain")))
        #expect(base != (try KeyDerivation.deriveSubkey(from: try SecureBytes(randomCount: 32), subkeyID: 1,
                                                        context: "keychain")))
        #expect(base != master)
    }

    @Test func keyDerivationRejectsBadContextsAndLengths() throws {
        let master = try SecureBytes(randomCount: 32)
        for context in ["", "keychai", "keychains", "ключи"] {
            #expect(throws: CryptoError.invalidLength(what: "key derivation context", expected: 8...8,
                                                      actual: context.utf8.count), "\(context)") {
                _ = try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: context)
            }
        }
        for context in ["café-ok", "ключ", "tab\there", "nul\0null"] {
            try #require(context.utf8.count == 8, "\(context)")
            #expect(throws: CryptoError.invalidParameter(what: "key derivation context", reason: "must be printable ASCII")) {
                _ = try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: context)
            }
        }
        for length in [0, 15, 65] {
            #expect(throws: CryptoError.invalidLength(what: "subkey", expected: 16...64, actual: length)) {
                _ = try KeyDerivation.deriveSubkey(from: master, subkeyID: 1, context: "keychain", length: length)
            }
        }
        #expect(throws: CryptoError.invalidLength(what: "master key", expected: 32...32, actual: 16)) {
            _ = try KeyDerivation.deriveSubkey(from: try SecureBytes(randomCount: 16), subkeyID: 1, context: "keychain")
        }
    }

    // MARK: - Argon2id

    /// Two vectors, both recomputed with argon2-cffi (`hash_secret_raw(type=ID, version=19,
    /// parallelism=1)`): the empty passphrase with t=2, m=4882 KiB is libsodium's
    /// test/default/pwhash_argon2id.c (tv3, encoded `$argon2id$v=19$m=4882,t=2,p=1$bA81…`); the other
    /// was computed for this test.
    @Test(arguments: [
        ("", "6c0f356abb225f2b1ddd66d34739843b", UInt64(2), 4882 * 1024,
         "366f1004cfbb447d435e8f6bbe9e5cc0a10e38e7c3da0e89bb19578a1a0d7291"),
        ("correct horse battery staple", "000102030405060708090a0b0c0d0e0f", UInt64(2), 8 << 20,
         "a891dd91a3d123add6ea78ceedcc94a7f1dc1e4ca480e57e6f240a113662ea2f"),
    ])
    func argon2idMatchesKnownAnswers(passphrase: String, saltHex: String, passes: UInt64, memory: Int, expectedHex: String) throws {
        let parameters = try PasswordHashParameters(operationsLimit: passes, memoryLimit: memory, salt: try hex(saltHex))
        let key = try Argon2id.deriveKey(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), parameters: parameters)
        #expect(Sodium.hexString(contents(key)) == expectedHex)
    }

    @Test func argon2idIsDeterministicForOneSaltAndDiffersAcrossSalts() throws {
        let passphrase = try SecureBytes(copying: Array("open sesame".utf8))
        let parameters = PasswordHashParameters.fastForTesting()
        let first = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        #expect(first.count == 32)
        #expect(first == (try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)))
        #expect(first != (try Argon2id.deriveKey(passphrase: passphrase, parameters: .fastForTesting())), "new salt")
        #expect(first != (try Argon2id.deriveKey(passphrase: try SecureBytes(copying: Array("open sesamE".utf8)),
                                                 parameters: parameters)))
        let longer = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters, length: 64)
        #expect(longer.count == 64)
        #expect(throws: CryptoError.invalidLength(what: "derived key", expected: 16...1024, actual: 15)) {
            _ = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters, length: 15)
        }
    }

    @Test func passwordHashDefaultsAreLibsodiumsModerateLevelWithAFreshSalt() {
        let first = PasswordHashParameters.moderate()
        let second = PasswordHashParameters.moderate()
        #expect(first.operationsLimit == 3)
        #expect(first.memoryLimit == 256 << 20)
        #expect(first.salt.count == 16)
        #expect(first.salt != second.salt)
        #expect(first.description == "Argon2id (3 passes, 256 MiB)")
        #expect(PasswordHashParameters.interactive().memoryLimit == 64 << 20)
        #expect(PasswordHashParameters.fastForTesting().description == "Argon2id (1 passes, 8 KiB)")
    }

    @Test func passwordHashParametersRejectOutOfRangeValues() {
        let salt = Sodium.randomBytes(count: 16)
        #expect(throws: CryptoError.invalidLength(what: "password hash salt", expected: 16...16, actual: 15)) {
            _ = try PasswordHashParameters(operationsLimit: 3, memoryLimit: 1 << 20, salt: Array(salt.dropLast()))
        }
        for (passes, memory) in [(UInt64(0), 1 << 20), (17, 1 << 20), (3, 8191), (3, (1 << 30) + 1)] {
            #expect(throws: CryptoError.self, "\(passes) passes, \(memory) bytes") {
                _ = try PasswordHashParameters(operationsLimit: passes, memoryLimit: memory, salt: salt)
            }
        }
    }

    @Test func passwordHashParametersRoundTripThroughJSON() throws {
        let parameters = try PasswordHashParameters(operationsLimit: 3, memoryLimit: 256 << 20,
                                                    salt: try hex("000102030405060708090a0b0c0d0e0f"))
        let text = String(decoding: try JSON.encode(parameters, pretty: false), as: UTF8.self)
        #expect(text == #"{"algorithm":"argon2id13","memoryLimit":268435456,"operationsLimit":3,"salt":"000102030405060708090a0b0c0d0e0f"}"#)
        #expect(try JSON.decode(PasswordHashParameters.self, from: Array(text.utf8)) == parameters)
    }

    @Test(arguments: [
        #"{"algorithm":"argon2i13","memoryLimit":268435456,"operationsLimit":3,"salt":"000102030405060708090a0b0c0d0e0f"}"#,
        #"{"algorithm":"argon2id13","memoryLimit":268435456,"operationsLimit":3,"salt":"000102030405060708090a0b0c0d0e"}"#,
        #"{"algorithm":"argon2id13","memoryLimit":268435456,"operationsLimit":3,"salt":"not hex at all, 32 characters!!!"}"#,
        #"{"algorithm":"argon2id13","memoryLimit":4398046511104,"operationsLimit":3,"salt":"000102030405060708090a0b0c0d0e0f"}"#,
        #"{"algorithm":"argon2id13","memoryLimit":268435456,"operationsLimit":4294967295,"salt":"000102030405060708090a0b0c0d0e0f"}"#,
        #"{"algorithm":"argon2id13","memoryLimit":268435456,"salt":"000102030405060708090a0b0c0d0e0f"}"#,
    ])
    func decodingRejectsTamperedParameters(json: String) {
        #expect(throws: DecodingError.self) {
            _ = try JSON.decode(PasswordHashParameters.self, from: Array(json.utf8))
        }
    }
}
