internal import CSodium

/// The cost and salt of one Argon2id key derivation, stored next to what the derived key protects
/// so the same key can be derived again from the passphrase.
///
/// Codable as `{"algorithm": "argon2id13", "operationsLimit": 3, "memoryLimit": 268435456,
/// "salt": "<32 hex digits>"}`. Decoding validates everything, because a stored document may come
/// from elsewhere (an imported backup): an unknown algorithm, a salt of the wrong length, or a cost
/// below libsodium's minimum or above ``maximumOperationsLimit`` / ``maximumMemoryLimit`` is
/// rejected rather than spending minutes or gigabytes on a crafted file.
public struct PasswordHashParameters: Sendable, Equatable {
    /// The only algorithm: Argon2id version 1.3 (`crypto_pwhash_alg_argon2id13()`).
    public static let algorithm = "argon2id13"
    /// The highest accepted ``operationsLimit``: 16 passes, four times libsodium's "sensitive".
    public static let maximumOperationsLimit: UInt64 = 16
    /// The highest accepted ``memoryLimit``: 1 GiB, libsodium's "sensitive" level.
    public static var maximumMemoryLimit: Int { crypto_pwhash_argon2id_memlimit_sensitive() }
    /// The salt length in bytes (16).
    public static var saltLength: Int { crypto_pwhash_argon2id_saltbytes() }

    /// The number of passes over memory (Argon2's `t`; libsodium's `opslimit`).
    public let operationsLimit: UInt64
    /// The memory used, in bytes (libsodium's `memlimit`; Argon2's `m` is this in KiB).
    public let memoryLimit: Int
    /// Random, not secret; unique per derived key, so equal passphrases give unrelated keys and
    /// precomputed tables are useless.
    public let salt: [UInt8]

    /// Parameters with the given costs and salt. Throws `.invalidLength` for a salt that is not
    /// 16 bytes and `.invalidParameter` for a cost outside the accepted range.
    public init(operationsLimit: UInt64, memoryLimit: Int, salt: [UInt8]) throws(CryptoError) {
        try CryptoError.checkLength("password hash salt", salt.count, Self.saltLength...Self.saltLength)
        let minimumOperations = UInt64(crypto_pwhash_argon2id_opslimit_min())
        guard (minimumOperations...Self.maximumOperationsLimit).contains(operationsLimit) else {
            throw .invalidParameter(what: "password hash operations limit",
                                    reason: "must be \(minimumOperations)…\(Self.maximumOperationsLimit)")
        }
        let minimumMemory = crypto_pwhash_argon2id_memlimit_min()
        guard (minimumMemory...Self.maximumMemoryLimit).contains(memoryLimit) else {
            throw .invalidParameter(what: "password hash memory limit",
                                    reason: "must be \(minimumMemory)…\(Self.maximumMemoryLimit) bytes")
        }
        self.init(validatedOperationsLimit: operationsLimit, memoryLimit: memoryLimit, salt: salt)
    }

    /// The default for new passphrase-derived keys: libsodium's "moderate" level (3 passes over
    /// 256 MiB: about 0.8 s on the development machine) with a fresh random salt.
    ///
    /// Moderate rather than "interactive" (2 passes, 64 MiB) because these keys protect secrets
    /// that leave the machine (an exported or backed-up keychain), which an attacker can copy and
    /// attack offline for as long as they like, while TripBoard derives the key only when a user
    /// exports or imports, not on every start. "Sensitive" (1 GiB) would fail on small machines.
    public static func moderate() -> PasswordHashParameters {
        make(operationsLimit: UInt64(crypto_pwhash_argon2id_opslimit_moderate()),
             memoryLimit: crypto_pwhash_argon2id_memlimit_moderate())
    }

    /// Whether both costs are at least libsodium's "moderate" level: what keys that an attacker
    /// holding a copy can guess offline must cost (a device passcode).
    public var isAtLeastModerate: Bool {
        operationsLimit >= UInt64(crypto_pwhash_argon2id_opslimit_moderate()) && memoryLimit >= crypto_pwhash_argon2id_memlimit_moderate()
    }

    /// libsodium's "interactive" level (2 passes over 64 MiB) with a fresh random salt: for a
    /// passphrase typed often whose derived key never leaves the machine.
    public static func interactive() -> PasswordHashParameters {
        make(operationsLimit: UInt64(crypto_pwhash_argon2id_opslimit_interactive()),
             memoryLimit: crypto_pwhash_argon2id_memlimit_interactive())
    }

    /// The cheapest parameters libsodium accepts (1 pass over 8 KiB): for tests only, which is why
    /// this is internal. A key derived this way resists guessing hardly better than a plain hash.
    package static func fastForTesting(salt: [UInt8]? = nil) -> PasswordHashParameters {
        let salt = salt ?? Sodium.randomBytes(count: saltLength)
        precondition(salt.count == saltLength, "password hash salt must be \(saltLength) bytes")
        return PasswordHashParameters(validatedOperationsLimit: UInt64(crypto_pwhash_argon2id_opslimit_min()),
                                      memoryLimit: crypto_pwhash_argon2id_memlimit_min(), salt: salt)
    }

    /// A named level with a fresh salt; libsodium's levels are within the accepted range.
    private static func make(operationsLimit: UInt64, memoryLimit: Int) -> PasswordHashParameters {
        PasswordHashParameters(validatedOperationsLimit: operationsLimit, memoryLimit: memoryLimit,
                               salt: Sodium.randomBytes(count: saltLength))
    }

    private init(validatedOperationsLimit operationsLimit: UInt64, memoryLimit: Int, salt: [UInt8]) {
        self.operationsLimit = operationsLimit
        self.memoryLimit = memoryLimit
        self.salt = salt
    }
}

// MARK: - Codable

extension PasswordHashParameters: Codable {
    private enum CodingKeys: String, CodingKey {
        case algorithm, operationsLimit, memoryLimit, salt
    }

    /// Reads and validates stored parameters; throws `DecodingError.dataCorrupted` for anything
    /// the initialiser would reject or an algorithm other than ``algorithm``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let algorithm = try container.decode(String.self, forKey: .algorithm)
        guard algorithm == Self.algorithm else {
            throw DecodingError.dataCorruptedError(forKey: .algorithm, in: container,
                                                   debugDescription: "unsupported password hash algorithm")
        }
        let saltText = try container.decode(String.self, forKey: .salt)
        guard let salt = Sodium.bytes(hex: saltText) else {
            throw DecodingError.dataCorruptedError(forKey: .salt, in: container, debugDescription: "salt is not hex")
        }
        let operationsLimit = try container.decode(UInt64.self, forKey: .operationsLimit)
        let memoryLimit = try container.decode(Int.self, forKey: .memoryLimit)
        do {
            try self.init(operationsLimit: operationsLimit, memoryLimit: memoryLimit, salt: salt)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Writes the algorithm, both costs and the salt as lowercase hex (by hand: the algorithm is
    /// not a stored property and the salt is bytes).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.algorithm, forKey: .algorithm)
        try container.encode(operationsLimit, forKey: .operationsLimit)
        try container.encode(memoryLimit, forKey: .memoryLimit)
        try container.encode(Sodium.hexString(salt), forKey: .salt)
    }
}

// MARK: - Description

extension PasswordHashParameters: CustomStringConvertible {
    /// The costs, e.g. `Argon2id (3 passes, 256 MiB)`; the salt is left out as noise.
    public var description: String {
        "Argon2id (\(operationsLimit) passes, \(memoryLimit >= 1 << 20 ? "\(memoryLimit >> 20) MiB" : "\(memoryLimit >> 10) KiB"))"
    }
}
