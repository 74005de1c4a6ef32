internal import CSodium

/// A failed operation of the Sodium layer.
///
/// Safe to print and log: no case carries key material, plaintext, a passphrase or a digest, only
/// lengths, parameter names and fixed reasons written in this module.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ciphertext did not verify: it was altered, truncated, sealed under another key, or
    /// opened with other associated data or another nonce. libsodium cannot tell these apart,
    /// by design, so neither can the caller.
    case authenticationFailed
    /// An input had the wrong length: `what` names it ("key", "nonce", …), `expected` is the
    /// accepted range of byte counts (one value when only one is accepted).
    case invalidLength(what: String, expected: ClosedRange<Int>, actual: Int)
    /// An input had an acceptable length but an unacceptable value, e.g. a key derivation
    /// context that is not ASCII or a password-hash memory limit past the allowed maximum.
    case invalidParameter(what: String, reason: String)
    /// `sodium_malloc` could not map the guarded pages for key material.
    case outOfMemory
    /// `crypto_pwhash` did not complete, usually because the system refused the memory that the
    /// parameters ask for.
    case passwordHashingFailed

    public var description: String {
        switch self {
        case .authenticationFailed:
            return "authentication failed: the data was altered or sealed under another key or context"
        case .invalidLength(let what, let expected, let actual):
            let accepted = expected.count == 1
                ? "\(expected.lowerBound)"
                : "\(expected.lowerBound)…\(expected.upperBound)"
            return "\(what) must be \(accepted) bytes long, not \(actual)"
        case .invalidParameter(let what, let reason):
            return "invalid \(what): \(reason)"
        case .outOfMemory:
            return "out of memory for protected key storage (sodium_malloc)"
        case .passwordHashingFailed:
            return "password hashing did not complete (crypto_pwhash); the system may lack the memory it needs"
        }
    }

    /// Throws `.invalidLength` unless `actual` is in `expected`.
    package static func checkLength(_ what: String, _ actual: Int, _ expected: ClosedRange<Int>) throws(CryptoError) {
        guard expected.contains(actual) else { throw .invalidLength(what: what, expected: expected, actual: actual) }
    }
}
