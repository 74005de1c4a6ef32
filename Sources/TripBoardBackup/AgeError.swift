import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys

/// Why an age file could not be written or read: one case per thing a user can act on.
///
/// Safe to print and log: no case carries key material, a passphrase or plaintext; the
/// ``malformedHeader(_:)`` reasons are fixed strings written in this module, never bytes of the file.
/// Input and output failures are not wrapped: they arrive as the ``FileSystemError`` of the
/// descriptor that failed.
public enum AgeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the file something ended too early.
    public enum Location: Sendable, Equatable {
        /// Inside the text header.
        case header
        /// Inside the 16-byte payload nonce that follows the header.
        case payloadNonce
        /// After the header, before any chunk.
        case payloadStart
        /// Inside chunk `index` (0-based): a partial chunk that does not authenticate.
        case chunk(index: UInt64)
    }

    /// The input does not start with an age header (`age-encryption.org/`).
    case notAnAgeFile
    /// The input is an ASCII-armored age file (`-----BEGIN AGE ENCRYPTED FILE-----`), which this
    /// reader does not accept: `age -d` it, or write it without `--armor`.
    case armored
    /// The header names an age version other than v1.
    case unsupportedVersion
    /// The header breaks a rule of age.md; `reason` says which (a fixed text).
    case malformedHeader(String)
    /// The header is longer than this reader accepts (a backup's header is a few hundred bytes).
    case headerTooLong(maximum: Int)
    /// The file is encrypted to public keys or a plugin, not with a passphrase.
    case notPassphraseEncrypted
    /// The scrypt work factor in the header (log2 N) is above what this reader accepts: it
    /// would take long and a lot of memory (2^logN KiB) to try.
    case workFactorTooHigh(logN: Int, maximum: Int)
    /// The passphrase does not unwrap the file key (or the stanza holding it was altered).
    case wrongPassphrase
    /// The file key unwrapped but the header's MAC does not verify: the header was altered.
    case headerAuthenticationFailed
    /// The file ends too early: cut short while being copied or written.
    case truncated(Location)
    /// The file ends after a complete chunk that is not marked final: cut at a chunk boundary.
    case missingFinalChunk
    /// The final chunk is empty although the payload is not (age.md: "MUST NOT be empty unless
    /// the whole payload is empty").
    case emptyFinalChunk
    /// A complete chunk does not authenticate: the file was altered or damaged there.
    case damagedChunk(index: UInt64)
    /// More bytes follow the final chunk.
    case trailingData
    /// The passphrase for a new file is empty.
    case emptyPassphrase
    /// Key derivation could not run (scrypt's memory was refused, or guarded memory ran out).
    case keyDerivationFailed(CryptoError)

    /// One line for the user, naming what is wrong and where; safe to print.
    public var description: String {
        switch self {
        case .notAnAgeFile: "not an age-encrypted file (it does not start with \"age-encryption.org/\")"
        case .armored: "an ASCII-armored age file: decrypt it with `age -d` first, or write it without --armor"
        case .unsupportedVersion: "an age file of a version other than v1, which this reader does not know"
        case .malformedHeader(let reason): "malformed age header: \(reason)"
        case .headerTooLong(let maximum): "the age header is longer than \(maximum) bytes"
        case .notPassphraseEncrypted: "the age file is not encrypted with a passphrase (it is for public keys or a plugin)"
        case .workFactorTooHigh(let logN, let maximum):
            "the age file's scrypt work factor 2^\(logN) is above the accepted 2^\(maximum)"
        case .wrongPassphrase: "wrong passphrase (or the age header was altered)"
        case .headerAuthenticationFailed: "the age header was altered or damaged: its MAC does not verify"
        case .truncated(let location): "the age file is truncated: it ends \(location.phrase)"
        case .missingFinalChunk: "the age file is truncated: it ends without its final chunk"
        case .emptyFinalChunk: "the age file ends with an empty final chunk after data, which age.md forbids"
        case .damagedChunk(let index): "the age file is damaged: chunk \(index) does not authenticate"
        case .trailingData: "the age file has data after its final chunk"
        case .emptyPassphrase: "the passphrase is empty"
        case .keyDerivationFailed(let cause): "the age key could not be derived: \(cause)"
        }
    }
}

extension AgeError.Location {
    /// "inside its header", "inside chunk 3 (or that chunk is damaged)", … for messages.
    var phrase: String {
        switch self {
        case .header: "inside its header"
        case .payloadNonce: "inside the payload nonce after the header"
        case .payloadStart: "after the header, before any data"
        // A partial last chunk that fails to authenticate is what a cut-short copy looks like;
        // a damaged short chunk looks the same, and the message says so.
        case .chunk(let index): "inside chunk \(index) (or that chunk is damaged)"
        }
    }
}
