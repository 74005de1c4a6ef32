internal import CSodium

/// The libsodium library: initialised once per process, plus random bytes and hex helpers.
///
/// Every function of the Sodium layer initialises libsodium itself before its first call into it,
/// so calling ``initialize()`` is optional; an executable may call it at start-up to fail early.
public enum Sodium {
    /// Runs `sodium_init()` the first time it is read. A `static let` initialiser runs exactly once
    /// per process even when several threads race to read it (Swift uses `swift_once`), which is
    /// the guarantee libsodium asks for: "sodium_init() … must be called before any other function"
    /// and is then thread-safe.
    private static let initialization: Bool = {
        // sodium_init(): 0 on success, 1 if already initialised (by C code sharing the process),
        // -1 on failure. Failure means libsodium cannot get randomness or pick its implementations:
        // no key can be made and none should be used, so stop rather than limp on.
        let result = sodium_init()
        if result < 0 { fatalError("libsodium failed to initialise (sodium_init returned \(result))") }
        return true
    }()

    /// Initialises libsodium if this process has not yet done so; traps if libsodium cannot start.
    /// The corresponding C function is `sodium_init`.
    public static func initialize() {
        _ = initialization
    }

    /// The version of the libsodium library in use, e.g. `"1.0.18"`.
    public static var libraryVersion: String {
        initialize()
        return String(cString: sodium_version_string())
    }

    /// `count` bytes from libsodium's CSPRNG (the kernel's `getrandom`), for public values such as
    /// nonces and salts. Secret random values belong in ``SecureBytes/init(randomCount:)``.
    /// The corresponding C function is `randombytes_buf`.
    public static func randomBytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "negative byte count")
        initialize()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return bytes
    }

    // MARK: - Hex (package: for sync-agent too; public values only, e.g. a salt in a stored document)

    /// Lowercase hex of `bytes`. `sodium_bin2hex` runs in time independent of the values, which
    /// costs nothing here and means a test that hex-encodes key material leaks nothing by timing.
    package static func hexString(_ bytes: [UInt8]) -> String {
        initialize()
        var characters = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        bytes.withUnsafeBufferPointer { input in
            _ = sodium_bin2hex(&characters, characters.count, input.baseAddress, input.count)
        }
        characters.removeLast()  // the terminating NUL
        return String(decoding: characters.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of a hex string (either case, no separators), or `nil` if it is not exactly that.
    package static func bytes(hex: String) -> [UInt8]? {
        initialize()
        let characters = Array(hex.utf8).map { CChar(bitPattern: $0) }
        guard characters.count % 2 == 0 else { return nil }
        if characters.isEmpty { return [] }
        var bytes = [UInt8](repeating: 0, count: characters.count / 2)
        var decodedCount = 0
        // With `hex_end` NULL, sodium_hex2bin fails (-1) unless it consumed the whole input.
        let result = sodium_hex2bin(&bytes, bytes.count, characters, characters.count, nil, &decodedCount, nil)
        guard result == 0, decodedCount == bytes.count else { return nil }
        return bytes
    }

    /// Whether `a` and `b` hold the same bytes, in a time that depends on their length only
    /// (`sodium_memcmp`): for comparing a MAC with the one computed.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    /// Overwrites `buffer` with zeros in a way the compiler does not remove (`sodium_memzero`):
    /// for buffers that held plaintext, before they go back to the allocator.
    public static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// `fields` each as a 4-byte big-endian length and its UTF-8 bytes: the associated data and
    /// MAC input of every seal, so that no two sequences of fields encode alike.
    public static func lengthPrefixed(_ fields: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.reduce(0) { $0 + 4 + $1.utf8.count })
        for field in fields {
            let count = UInt32(field.utf8.count)
            bytes.append(UInt8(count >> 24))
            bytes.append(UInt8(count >> 16 & 0xff))
            bytes.append(UInt8(count >> 8 & 0xff))
            bytes.append(UInt8(count & 0xff))
            bytes.append(contentsOf: field.utf8)
        }
        return bytes
    }
}
