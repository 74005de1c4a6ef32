internal import CSodium
import Synchronization

/// Anonymous public-key encryption: anyone holding a recipient's X25519 public key can seal a
/// message that only the private key opens (libsodium's `crypto_box_seal`: an ephemeral key pair
/// per message, X25519 + XSalsa20-Poly1305, the nonce derived from both public keys). This is how
/// data is sealed to the `complete-unless-open` protection class while the device is locked: the
/// public half is stored in the clear, the private half only wrapped.
public enum SealedBox {
    /// The public key length in bytes (32).
    public static var publicKeyLength: Int { Int(crypto_box_publickeybytes()) }
    /// The private key length in bytes (32).
    public static var privateKeyLength: Int { Int(crypto_box_secretkeybytes()) }
    /// How much longer a sealed message is than its plaintext (48: the ephemeral public key and the tag).
    public static var overhead: Int { Int(crypto_box_sealbytes()) }

    /// A new key pair; the private half is in guarded memory.
    public static func makeKeyPair() throws(CryptoError) -> (publicKey: [UInt8], privateKey: SecureBytes) {
        var publicKey = [UInt8](repeating: 0, count: publicKeyLength)
        let privateKey = try SecureBytes(count: privateKeyLength) { privateKey throws(CryptoError) in
            let result = publicKey.withUnsafeMutableBufferPointer { crypto_box_keypair($0.baseAddress!, privateKey.baseAddress!) }
            if result != 0 { throw .invalidParameter(what: "key pair", reason: "crypto_box_keypair failed") }
        }
        return (publicKey, privateKey)
    }

    /// The public key that belongs to `privateKey` (X25519 of the base point).
    ///
    /// Remembered for the last few private keys of the process (`KnownPublicKeys`): opening each
    /// of 10,000 files sealed to `complete-unless-open` asks it twice per file, and X25519 of the
    /// base point was 14% of a backup's time. The memo holds no secret: each entry is the public
    /// key under a BLAKE2b MAC of the private key, keyed by random bytes of this process.
    public static func publicKey(of privateKey: SecureBytes) throws(CryptoError) -> [UInt8] {
        try CryptoError.checkLength("private key", privateKey.count, privateKeyLength...privateKeyLength)
        guard let tag = KnownPublicKeys.shared.tag(of: privateKey) else { return try derivePublicKey(of: privateKey) }
        if let known = KnownPublicKeys.shared.publicKey(tag: tag) { return known }
        let publicKey = try derivePublicKey(of: privateKey)
        KnownPublicKeys.shared.remember(publicKey, tag: tag)
        return publicKey
    }

    private static func derivePublicKey(of privateKey: SecureBytes) throws(CryptoError) -> [UInt8] {
        var publicKey = [UInt8](repeating: 0, count: publicKeyLength)
        let result = publicKey.withUnsafeMutableBufferPointer { publicKey in
            privateKey.withUnsafePointer { crypto_scalarmult_base(publicKey.baseAddress!, $0) }
        }
        if result != 0 { throw .invalidParameter(what: "private key", reason: "not a usable X25519 key") }
        return publicKey
    }

    /// `plaintext` sealed to `publicKey`: only the matching private key opens it.
    public static func seal(_ plaintext: SecureBytes, to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try CryptoError.checkLength("public key", publicKey.count, publicKeyLength...publicKeyLength)
        var sealed = [UInt8](repeating: 0, count: plaintext.count + overhead)
        let result = sealed.withUnsafeMutableBufferPointer { sealed in
            publicKey.withUnsafeBufferPointer { publicKey in
                plaintext.withUnsafePointer { plaintext in
                    crypto_box_seal(sealed.baseAddress!, plaintext, UInt64(sealed.count - overhead), publicKey.baseAddress!)
                }
            }
        }
        if result != 0 { throw .invalidParameter(what: "public key", reason: "not a usable X25519 key") }
        return sealed
    }

    /// Opens what `seal` made for this key pair; `.authenticationFailed` for anything else.
    public static func open(_ sealed: [UInt8], publicKey: [UInt8], privateKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        try CryptoError.checkLength("public key", publicKey.count, publicKeyLength...publicKeyLength)
        try CryptoError.checkLength("private key", privateKey.count, privateKeyLength...privateKeyLength)
        guard sealed.count >= overhead else { throw .authenticationFailed }
        return try SecureBytes(count: sealed.count - overhead) { plaintext throws(CryptoError) in
            let result = sealed.withUnsafeBufferPointer { sealed in
                publicKey.withUnsafeBufferPointer { publicKey in
                    privateKey.withUnsafePointer { privateKey in
                        crypto_box_seal_open(plaintext.baseAddress!, sealed.baseAddress!, UInt64(sealed.count),
                                             publicKey.baseAddress!, privateKey)
                    }
                }
            }
            if result != 0 { throw .authenticationFailed }
        }
    }
}

/// Public keys of the process's recently used private keys, each under a BLAKE2b-256 MAC of its private
/// key (keyed by 32 random bytes drawn when first used): a tag names a private key without
/// revealing it, and a tag from another process, or another run, names nothing here.
final class KnownPublicKeys: Sendable {
    static let shared = KnownPublicKeys()
    /// Few: a device has one `complete-unless-open` key, and one per earlier keybag.
    static let capacity = 4
    /// nil when no guarded key could be made: then nothing is remembered.
    private let key: SecureBytes?
    private let entries = Mutex<[(tag: [UInt8], publicKey: [UInt8])]>([])

    private init() {
        Sodium.initialize()
        do { key = try SecureBytes(randomCount: 32) } catch { key = nil }
    }

    /// The tag of `privateKey`; nil when there is no MAC key.
    func tag(of privateKey: SecureBytes) -> [UInt8]? {
        guard let key, let hasher = try? Blake2bHasher(outputLength: 32, key: key) else { return nil }
        privateKey.withUnsafePointer { hasher.update(UnsafeBufferPointer(start: $0, count: privateKey.count)) }
        return hasher.finalize()
    }

    /// The public key under `tag`, moved to the front (the least recently used goes first).
    func publicKey(tag: [UInt8]) -> [UInt8]? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.tag == tag }) else { return nil }
            let entry = entries.remove(at: index)
            entries.insert(entry, at: 0)
            return entry.publicKey
        }
    }

    func remember(_ publicKey: [UInt8], tag: [UInt8]) {
        entries.withLock { entries in
            entries.removeAll { $0.tag == tag }
            entries.insert((tag, publicKey), at: 0)
            if entries.count > Self.capacity { entries.removeLast() }
        }
    }
}
