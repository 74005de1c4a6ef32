public import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys
import TripBoardStorage
import TripBoardSystem
import TripBoardSyncProtocol
import TripBoardModel

/// A zone's key: made by the first device, stored on the server only wrapped under the sync
/// passphrase (Argon2id, then XChaCha20-Poly1305 — the keychain's recovery construction), kept on
/// each device in the keychain, this device only. Every field is sealed under a subkey of it.
public struct ZoneKey: Sendable {
    /// The keychain item that holds it (the account is the zone's name).
    public static let keychainService = "tripboard.sync.zone-key"
    /// The keychain item for the server's password, when it needs one.
    public static let passwordService = "tripboard.sync.server-password"

    let key: SecureBytes
    public let zone: String
    /// Public: names the key without revealing it (a keyed BLAKE2b, as the keychain's key ids).
    public let id: String
    private let fieldKey: SecureBytes
    /// Seals blobs (secretstream), and names them (keyed BLAKE2b of the plaintext: the same file
    /// gets the same name on every device of the zone, and the server learns nothing from it).
    let blobKey: SecureBytes
    let blobNameKey: SecureBytes
    /// Migratable keychain items (kind `secret`): their fields are sealed under a key of their own,
    /// their ids are a keyed BLAKE2b of service and account (the same item has the same id on
    /// every device, and the server learns nothing from it), and the shadow keeps a keyed digest of
    /// the value, never the value.
    let secretKey: SecureBytes
    let secretIDKey: SecureBytes
    let secretDigestKey: SecureBytes

    init(key: SecureBytes, zone: String) throws {
        self.key = key
        self.zone = zone
        id = try Keychain.keyID(key)
        fieldKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 1, context: "TBsyncF1")
        blobKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 2, context: "TBsyncB1")
        blobNameKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 3, context: "TBsyncN1")
        secretKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 4, context: "TBsyncS1")
        secretIDKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 5, context: "TBsyncI1")
        secretDigestKey = try KeyDerivation.deriveSubkey(from: key, subkeyID: 6, context: "TBsyncD1")
    }

    /// A new random key for `zone`.
    public static func make(zone: String) throws -> ZoneKey { try ZoneKey(key: try SecureBytes(randomCount: 32), zone: zone) }

    /// The key as the keychain keeps it.
    public static func fromKeychain(_ keychain: Keychain, zone: String) throws -> ZoneKey {
        try ZoneKey(key: try keychain.get(service: keychainService, account: zone), zone: zone)
    }

    public func store(in keychain: Keychain) throws {
        try keychain.set(service: Self.keychainService, account: zone, value: key, accessibility: .afterFirstUnlockThisDeviceOnly)
    }

    // MARK: - Wrapping under the passphrase

    /// What the server keeps (`zones.key_wrap`), as JSON.
    struct Wrap: Codable {
        var format: String
        var keyId: String
        var parameters: PasswordHashParameters
        var nonce: String
        var ciphertext: String
    }

    /// The key sealed under `passphrase` (Argon2id with `parameters`), as the server's JSON.
    public func wrapped(passphrase: SecureBytes, parameters: PasswordHashParameters = .moderate()) throws -> String {
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        let sealed = try XChaCha20Poly1305.seal(plaintext: key, key: wrappingKey, associatedData: Self.wrapAssociatedData(zone: zone, keyID: id))
        let wrap = Wrap(format: "tripboard-zone-key/v1", keyId: id, parameters: parameters,
                        nonce: Self.base64(sealed.nonce), ciphertext: Self.base64(sealed.ciphertext))
        return String(decoding: try JSON.encode(wrap, pretty: false), as: UTF8.self)
    }

    /// Unwraps the server's `wrap` with `passphrase`: `SyncError.wrongPassphrase` when it does
    /// not open, `.damagedServerData` when it is not a wrap at all (its Argon2id parameters are
    /// checked before they are used, as the keychain's are).
    public static func unwrap(_ wrap: String, zone: String, passphrase: SecureBytes) throws -> ZoneKey {
        let decoded: Wrap
        do {
            decoded = try JSON.decode(Wrap.self, from: Array(wrap.utf8))
        } catch {
            throw SyncError.damagedServerData("the zone's key wrap is not readable")
        }
        guard decoded.format == "tripboard-zone-key/v1", let nonce = bytes(base64: decoded.nonce),
              let ciphertext = bytes(base64: decoded.ciphertext) else {
            throw SyncError.damagedServerData("the zone's key wrap is not readable")
        }
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: decoded.parameters)
        let key: SecureBytes
        do {
            key = try XChaCha20Poly1305.open(ciphertext: ciphertext, nonce: nonce, key: wrappingKey,
                                             associatedData: wrapAssociatedData(zone: zone, keyID: decoded.keyId))
        } catch {
            throw SyncError.wrongPassphrase
        }
        let zoneKey = try ZoneKey(key: key, zone: zone)
        guard zoneKey.id == decoded.keyId else { throw SyncError.damagedServerData("the zone's key does not match its id") }
        return zoneKey
    }

    static func wrapAssociatedData(zone: String, keyID: String) -> [UInt8] {
        Keychain.encode(["tripboard-zone-key/v1", zone, keyID])
    }

    // MARK: - Fields

    /// Seals a field's value, given in its canonical text (`JSONValue.canonicalText`'s bytes), under
    /// its stamp (`HybridStamp.description`): a push keeps both in the shadow too. The nonce is
    /// the next of `nonces`, the engine's own (a system call per field cost a push 2%).
    func seal(canonical: [UInt8], kind: RecordKind, id: String, field: String, stamp: String,
              nonces: inout NonceBuffer) throws -> SealedField {
        let sealed = try XChaCha20Poly1305.seal(plaintext: canonical, key: fieldKey,
                                                associatedData: fieldAssociatedData(kind: kind.rawValue, id: id, field: field, stamp: stamp),
                                                nonces: &nonces)
        return SealedField(stamp: stamp, nonce: Self.base64(sealed.nonce), ciphertext: Self.base64(sealed.ciphertext))
    }

    /// The value of `sealed`, verified against where it claims to belong. A field moved to
    /// another record, field or stamp, or sealed under another key, does not open.
    func open(_ sealed: SealedField, kind: String, id: String, field: String) throws -> JSONValue {
        guard let nonce = Self.bytes(base64: sealed.nonce), let ciphertext = Self.bytes(base64: sealed.ciphertext) else {
            throw SyncError.damagedServerData("\(kind) \(id): field \(field) is not a sealed value")
        }
        // A field's value is no secret once opened (it goes into the store as it is).
        let plaintext: [UInt8]
        do {
            plaintext = try XChaCha20Poly1305.openPublic(ciphertext: ciphertext, nonce: nonce, key: fieldKey,
                                                   associatedData: fieldAssociatedData(kind: kind, id: id, field: field, stamp: sealed.stamp))
        } catch {
            throw SyncError.damagedServerData("\(kind) \(id): field \(field) does not open under the zone key (tampered, or another zone's)")
        }
        do {
            return try JSONValue.parse(plaintext)
        } catch {
            throw SyncError.damagedServerData("\(kind) \(id): field \(field) is not a JSON value")
        }
    }

    // MARK: - Keychain items

    /// The record id of the keychain item (service, account): 64 hex digits.
    func secretID(service: String, account: String) throws -> String {
        Sodium.hexString(try blake2b(Keychain.encode(["tripboard-sync-secret-id/v1", service, account]), outputLength: 32, key: secretIDKey))
    }

    /// The keyed digest of a value, as the shadow keeps it (hex): of the value alone for an
    /// after-first-unlock item (as earlier builds made it), of `"when-unlocked\0"` and the value for
    /// a when-unlocked one — so that a change of accessibility alone is a change to push.
    func secretDigest(_ value: SecureBytes, _ accessibility: KeychainAccessibility) throws -> String {
        let hasher = try Blake2bHasher(outputLength: 32, key: secretDigestKey)
        if accessibility == .whenUnlocked { hasher.update(Array("when-unlocked\0".utf8)) }
        value.withUnsafeBytes { hasher.update($0.bindMemory(to: UInt8.self)) }
        return Sodium.hexString(hasher.finalize())
    }

    /// `value` sealed for field `field` of keychain item `id` at `stamp`.
    func sealSecretField(_ value: SecureBytes, id: String, field: String, stamp: HybridStamp) throws -> SealedField {
        let sealed = try XChaCha20Poly1305.seal(plaintext: value, key: secretKey,
                                                associatedData: secretAssociatedData(id: id, field: field, stamp: stamp.description))
        return SealedField(stamp: stamp.description, nonce: Self.base64(sealed.nonce), ciphertext: Self.base64(sealed.ciphertext))
    }

    /// The value of a keychain item's field, verified against where it claims to belong.
    func openSecretField(_ sealed: SealedField, id: String, field: String) throws -> SecureBytes {
        guard let nonce = Self.bytes(base64: sealed.nonce), let ciphertext = Self.bytes(base64: sealed.ciphertext) else {
            throw SyncError.damagedServerData("secret \(id): field \(field) is not a sealed value")
        }
        do {
            return try XChaCha20Poly1305.open(ciphertext: ciphertext, nonce: nonce, key: secretKey,
                                              associatedData: secretAssociatedData(id: id, field: field, stamp: sealed.stamp))
        } catch {
            throw SyncError.damagedServerData("secret \(id): field \(field) does not open under the zone key (tampered, or another zone's)")
        }
    }

    private func secretAssociatedData(id: String, field: String, stamp: String) -> [UInt8] {
        Keychain.encode(["tripboard-sync-secret/v1", zone, "secret", id, field, stamp])
    }

    /// The associated data of chunk `index` of `count` of blob `name`: a chunk moved to another
    /// blob, zone or position, or a blob cut short or lengthened, does not open.
    func blobAssociatedData(name: String, index: Int, count: Int) -> [UInt8] {
        Keychain.encode(["tripboard-sync-blob/v1", zone, name, String(index), String(count)])
    }

    private func fieldAssociatedData(kind: String, id: String, field: String, stamp: String) -> [UInt8] {
        Keychain.encode(["tripboard-sync-field/v1", zone, kind, id, field, stamp])
    }

    /// A nonce or ciphertext as the server holds it: no secret, so encoded by the fast encoder.
    static func base64(_ bytes: [UInt8]) -> String { Base64.encodePublicUnpadded(bytes) }
    /// A nonce or ciphertext as the server holds it: no secret, so decoded by the fast decoder.
    static func bytes(base64 text: String) -> [UInt8]? { Base64.decodePublicUnpadded(Array(text.utf8)) }
}
