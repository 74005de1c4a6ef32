import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys

/// The passphrase recipient of age v1 (age.md, "The scrypt recipient type"): the file key sealed
/// with ChaCha20-Poly1305 under a key that scrypt derives from the passphrase.
///
///     -> scrypt <base64 salt, 16 bytes> <log2 of the work factor N>
///     <base64 body: the 16-byte file key sealed, plus its 16-byte tag>
enum ScryptRecipient {
    /// Prefixed to the salt (age.md: `S = "age-encryption.org/v1/scrypt" || salt`), so a key
    /// derived here is never a key some other protocol derived from the same passphrase.
    private static let saltLabel = Array("age-encryption.org/v1/scrypt".utf8)
    static let saltLength = 16
    static let fileKeyLength = 16

    /// A new stanza wrapping `fileKey` under `passphrase` with a fresh random salt and
    /// N = 2^`logN` (age.md: "A new salt MUST be generated for each stanza and each file").
    static func stanza(wrapping fileKey: SecureBytes, passphrase: SecureBytes, logN: Int) throws(AgeError) -> AgeHeader.Stanza {
        let salt = Sodium.randomBytes(count: saltLength)
        do throws(CryptoError) {
            let wrapKey = try Scrypt.deriveKey(passphrase: passphrase, salt: saltLabel + salt, logN: logN, r: 8, p: 1)
            let body = try ChaCha20Poly1305.seal(fileKey, key: wrapKey, nonce: zeroNonce)
            return AgeHeader.Stanza(arguments: ["scrypt", String(decoding: Base64.encodeUnpadded(salt), as: UTF8.self), "\(logN)"],
                                    body: body)
        } catch {
            throw .keyDerivationFailed(error)
        }
    }

    /// The file key from the header's scrypt stanza, checking every rule age.md sets for it
    /// before the (expensive) scrypt runs: alone in the header, exactly three arguments, a
    /// canonical 16-byte salt, a work factor matching `^[1-9][0-9]*$` and at most
    /// `maximumWorkFactor`, a body of exactly 32 bytes.
    static func unwrap(_ header: AgeHeader, passphrase: SecureBytes, maximumWorkFactor: Int) throws(AgeError) -> SecureBytes {
        guard let stanza = header.stanzas.first(where: { $0.arguments.first == "scrypt" }) else {
            throw .notPassphraseEncrypted
        }
        // age.md: "The identity implementation MUST reject headers where an scrypt stanza is
        // present alongside any other stanza" (a passphrase must mean only this passphrase opens it).
        guard header.stanzas.count == 1 else { throw .malformedHeader("a passphrase (scrypt) stanza must be the only stanza") }
        guard stanza.arguments.count == 3 else { throw .malformedHeader("a scrypt stanza must have exactly 3 arguments") }
        guard let salt = Base64.decodeUnpadded(stanza.arguments[1].utf8), salt.count == saltLength else {
            throw .malformedHeader("the scrypt salt is not 16 bytes in canonical base64")
        }
        let logN = try workFactor(stanza.arguments[2], maximum: maximumWorkFactor)
        // age.md: "it MUST check that the body length is exactly 32 bytes before attempting to
        // decrypt it, to mitigate partitioning oracle attacks."
        guard stanza.body.count == fileKeyLength + ChaCha20Poly1305.tagLength else {
            throw .malformedHeader("the scrypt stanza's body is not 32 bytes")
        }
        let wrapKey: SecureBytes
        do throws(CryptoError) {
            wrapKey = try Scrypt.deriveKey(passphrase: passphrase, salt: saltLabel + salt, logN: logN, r: 8, p: 1)
        } catch {
            throw .keyDerivationFailed(error)
        }
        do throws(CryptoError) {
            return try ChaCha20Poly1305.open(stanza.body, key: wrapKey, nonce: zeroNonce)
        } catch {
            throw .wrongPassphrase
        }
    }

    /// age.md: "the third argument is … a decimal number composed of only digits with no leading
    /// zeroes (`^[1-9][0-9]*$`)"; "The identity implementation SHOULD apply an upper limit".
    private static func workFactor(_ text: String, maximum: Int) throws(AgeError) -> Int {
        let digits = Array(text.utf8)
        guard let first = digits.first, (0x31...0x39).contains(first), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .malformedHeader("the scrypt work factor is not a decimal number without leading zeros")
        }
        guard let logN = Int(text), logN <= 63 else { throw .malformedHeader("the scrypt work factor is out of range") }
        guard logN <= maximum else { throw .workFactorTooHigh(logN: logN, maximum: maximum) }
        return logN
    }

    /// age.md: "the ChaCha20-Poly1305 nonce is fixed as 12 0x00 bytes" (the wrap key is used once).
    private static var zeroNonce: [UInt8] { [UInt8](repeating: 0, count: ChaCha20Poly1305.nonceLength) }
}
