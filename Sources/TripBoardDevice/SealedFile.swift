public import TripBoardKeys
public import TripBoardSystem

/// A file sealed under a protection class: a ticket or a thumbnail in the container is never
/// stored in the clear. docs/security.md ("Sealed files") specifies the format byte by byte:
///
///     "TBSEALED"  version (1)  class (1)  keybag id (16)  key block (72 or 80)  stream header (24)  messages…
///
/// A random 32-byte file key seals the bytes with libsodium's secretstream, in messages of
/// 65,536 plaintext bytes (the last one shorter, possibly empty, and tagged final; the first
/// one's associated data is everything before the stream header). The key block holds the file
/// key: wrapped with XChaCha20-Poly1305 under the class key (associated data: the 26 bytes before
/// it), or — for `complete-unless-open` — sealed to the class's public key with an ephemeral
/// X25519 key (`crypto_box_seal`), which needs nothing unlocked, as iOS's class B does.
public enum SealedFile {
    /// The first eight bytes of every sealed file.
    public static let magic = Array("TBSEALED".utf8)
    /// The format this build writes and reads.
    public static let version: UInt8 = 1
    /// Plaintext bytes per message.
    public static let messageBytes = 65_536
    /// Bytes before the key block: the magic, the version, the class, the keybag id.
    static let prefixLength = 26

    /// The class's code in byte 9.
    static func code(of protection: ProtectionClass) -> UInt8 {
        switch protection {
        case .complete: 1
        case .completeUnlessOpen: 2
        case .untilFirstUnlock: 3
        case .always: 4
        }
    }

    static func protection(code: UInt8) -> ProtectionClass? {
        ProtectionClass.allCases.first { Self.code(of: $0) == code }
    }

    /// The key block's length for `protection`: a nonce and the wrapped key, or the sealed box.
    static func keyBlockLength(_ protection: ProtectionClass) -> Int {
        protection == .completeUnlessOpen ? 32 + SealedBox.overhead : XChaCha20Poly1305.nonceLength + 32 + XChaCha20Poly1305.tagLength
    }

    /// The header's length (everything before the first message) for `protection`.
    public static func headerLength(_ protection: ProtectionClass) -> Int {
        prefixLength + keyBlockLength(protection) + SecretStream.headerLength
    }

    /// The sealed size of `plaintextLength` bytes under `protection`: exact, so that a file's
    /// size is checked against its row without opening it.
    public static func sealedLength(plaintextLength: Int64, protection: ProtectionClass) -> Int64 {
        let messages = plaintextLength / Int64(messageBytes) + 1
        return Int64(headerLength(protection)) + plaintextLength + messages * Int64(SecretStream.overhead)
    }

    /// Enough bytes to parse any header (`Header.parse`).
    public static let prefixBytesToParse = prefixLength + 32 + 48 + 24

    /// The plaintext length of a sealed file of `sealedLength` bytes under `protection` (the
    /// inverse of `sealedLength(plaintextLength:protection:)`); nil when no plaintext seals to it.
    public static func plaintextLength(sealedLength: Int64, protection: ProtectionClass) -> Int64? {
        let messageLength = Int64(messageBytes + SecretStream.overhead)
        let body = sealedLength - Int64(headerLength(protection)) - Int64(SecretStream.overhead)
        guard body >= 0 else { return nil }
        let (full, rest) = body.quotientAndRemainder(dividingBy: messageLength)
        guard rest < Int64(messageBytes) else { return nil }
        return full * Int64(messageBytes) + rest
    }

    /// Whether `head` (a file's first bytes) starts like a sealed file.
    public static func isSealed(_ head: some Collection<UInt8>) -> Bool { head.starts(with: magic) }

    /// What a sealed file's first bytes say about it, read without any key.
    public struct Header: Sendable, Equatable {
        public var protection: ProtectionClass
        /// The keybag (hex) whose class key sealed it.
        public var keybag: String
        /// The prefix and the key block: the first message's associated data.
        var bound: [UInt8]
        var keyBlock: [UInt8] { Array(bound[SealedFile.prefixLength...]) }
        var streamHeader: [UInt8]

        /// Reads the header from the start of `bytes`; nil when they are not a sealed file of this
        /// version, or are too short.
        public static func parse(_ bytes: [UInt8]) -> Header? {
            guard bytes.count >= SealedFile.prefixLength, SealedFile.isSealed(bytes), bytes[8] == SealedFile.version,
                  let protection = SealedFile.protection(code: bytes[9]) else { return nil }
            let boundLength = SealedFile.prefixLength + SealedFile.keyBlockLength(protection)
            guard bytes.count >= boundLength + SecretStream.headerLength else { return nil }
            return Header(protection: protection, keybag: Sodium.hexString(Array(bytes[10..<26])), bound: Array(bytes[..<boundLength]),
                          streamHeader: Array(bytes[boundLength..<(boundLength + SecretStream.headerLength)]))
        }
    }

    /// The header of a new sealed file, and its file key: the key wrapped under `key`.
    static func makeHeader(_ key: FileSealingKey) throws -> (header: [UInt8], fileKey: SecureBytes) {
        let fileKey = try SecureBytes(randomCount: SecretStream.keyLength)
        var prefix = magic + [version, code(of: key.protection)]
        prefix += Sodium.bytes(hex: key.keybag) ?? []
        precondition(prefix.count == prefixLength, "a keybag id is 16 bytes")
        switch key.material {
        case .classKey(let classKey):
            let wrapped = try XChaCha20Poly1305.seal(plaintext: fileKey, key: classKey, associatedData: prefix)
            prefix += wrapped.nonce + wrapped.ciphertext
        case .publicKey(let publicKey):
            prefix += try SealedBox.seal(fileKey, to: publicKey)
        }
        return (prefix, fileKey)
    }

    /// The file key of a file with `header`, opened with `key` (the class key, or the
    /// `complete-unless-open` private key); `.authenticationFailed` when it does not open.
    static func openFileKey(_ header: Header, with key: FileOpeningKey) throws -> SecureBytes {
        let block = header.keyBlock
        switch key.material {
        case .classKey(let classKey):
            let nonceLength = XChaCha20Poly1305.nonceLength
            return try XChaCha20Poly1305.open(ciphertext: Array(block[nonceLength...]), nonce: Array(block[..<nonceLength]), key: classKey,
                                              associatedData: Array(header.bound[..<prefixLength]))
        case .keyPair(let publicKey, let privateKey):
            return try SealedBox.open(block, publicKey: publicKey, privateKey: privateKey)
        }
    }
}

/// What seals a new file under a class: the class key, or the public key of
/// `complete-unless-open` (which needs nothing unlocked).
public struct FileSealingKey: Sendable {
    public enum Material: Sendable {
        case classKey(SecureBytes)
        case publicKey([UInt8])
    }

    public let protection: ProtectionClass
    /// The keybag (hex id) the key belongs to: written into the file.
    public let keybag: String
    public let material: Material

    public init(protection: ProtectionClass, keybag: String, material: Material) {
        self.protection = protection
        self.keybag = keybag
        self.material = material
    }
}

/// What opens a file sealed under a class: the class key, or the `complete-unless-open` pair.
public struct FileOpeningKey: Sendable {
    public enum Material: Sendable {
        case classKey(SecureBytes)
        case keyPair(publicKey: [UInt8], privateKey: SecureBytes)
    }

    public let material: Material

    public init(material: Material) { self.material = material }
}

/// Where the keys of sealed files come from: this device's lock (`FileProtection`), or a test's.
public protocol FileKeys: Sendable {
    /// The key that seals a new file under `protection`.
    func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey
    /// The keybag (hex id) a file sealed under `protection` now would name, without the key
    /// itself: what tells a file sealed under an earlier keybag (`DatabaseKeyFile` refreshes it).
    func sealingKeybag(_ protection: ProtectionClass) throws -> String
    /// The key that opens a file sealed under `protection` by the keybag `keybag`; `path` names
    /// the file in errors. Throws `DeviceError.locked` (and its kin) when the class is closed,
    /// `DeviceError.sealedElsewhere` when this device does not have that keybag.
    func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey
    /// Why the keys of `protection` cannot be used now (`.locked`, `.notUnlockedSinceStart`…),
    /// or nil when they can: asked before work that needs them, so that it is refused whole.
    func refusal(_ protection: ProtectionClass) throws -> DeviceError?
    /// Whether this device has its class keys already (a keybag): sealing would otherwise make
    /// them, which is refused over a container whose files another device sealed.
    func hasKeys() throws -> Bool
}

extension FileKeys {
    /// The sealing key's keybag: keys held in memory have no cheaper way to say it.
    public func sealingKeybag(_ protection: ProtectionClass) throws -> String { try sealingKey(protection).keybag }
}

// MARK: - Writing

/// Seals bytes into a file as they come: `write` them, then `finish`. Memory stays flat (one
/// message's buffers). The caller makes the file durable and names it.
public final class SealedFileWriter {
    private let output: any ByteSink
    private let stream: SecretStream
    private var associatedData: [UInt8]
    private let plaintext: UnsafeMutableRawBufferPointer
    private let ciphertext: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var finished = false
    /// Plaintext bytes taken so far.
    public private(set) var plaintextLength: Int64 = 0
    /// Bytes written to the file so far.
    public private(set) var sealedLength: Int64 = 0

    /// Writes the header to `output` (at its current offset) at once.
    public init(output: any ByteSink, key: FileSealingKey) throws {
        let (header, fileKey) = try SealedFile.makeHeader(key)
        let (stream, streamHeader) = try SecretStream.encrypting(key: fileKey)
        try output.write(header + streamHeader)
        self.output = output
        self.stream = stream
        self.associatedData = header
        sealedLength = Int64(header.count + streamHeader.count)
        plaintext = .allocate(byteCount: SealedFile.messageBytes, alignment: 16)
        ciphertext = .allocate(byteCount: SealedFile.messageBytes + SecretStream.overhead, alignment: 16)
    }

    deinit {
        // The buffers held ticket bytes: wiped before they go back to the allocator.
        Sodium.wipe(plaintext)
        plaintext.deallocate()
        ciphertext.deallocate()
    }

    /// Seals `bytes` (buffered up to a whole message).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "SealedFileWriter.write after finish")
        var offset = 0
        while offset < bytes.count {
            let taken = min(bytes.count - offset, SealedFile.messageBytes - filled)
            plaintext.baseAddress!.advanced(by: filled).copyMemory(from: bytes.baseAddress!.advanced(by: offset), byteCount: taken)
            filled += taken
            offset += taken
            if filled == SealedFile.messageBytes { try push(isFinal: false) }
        }
        plaintextLength += Int64(bytes.count)
    }

    /// Seals `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Seals what is buffered as the final message (possibly empty).
    public func finish() throws {
        precondition(!finished, "SealedFileWriter.finish twice")
        try push(isFinal: true)
        finished = true
    }

    private func push(isFinal: Bool) throws {
        let count = try associatedData.withUnsafeBytes { ad in
            try stream.push(UnsafeRawBufferPointer(rebasing: plaintext[..<filled]), into: ciphertext, associatedData: ad, isFinal: isFinal)
        }
        associatedData = []
        try output.write(all: UnsafeRawBufferPointer(rebasing: ciphertext[..<count]))
        sealedLength += Int64(count)
        Sodium.wipe(UnsafeMutableRawBufferPointer(rebasing: plaintext[..<filled]))
        filled = 0
    }
}

// Holds a stream's state and buffers: one writer belongs to one task.
@available(*, unavailable)
extension SealedFileWriter: Sendable {}

// MARK: - Reading

/// Opens a sealed file and hands out its plaintext message by message, each authenticated before
/// it is handed out; a file cut short (no final message), extended, reordered or altered is
/// `DeviceError.damagedSealedFile`.
public final class SealedFileReader: ByteSource {
    public let header: SealedFile.Header
    private let input: FileDescriptor
    private let path: String
    private let stream: SecretStream
    private var associatedData: [UInt8]
    private let ciphertext: UnsafeMutableRawBufferPointer
    private let plaintext: UnsafeMutableRawBufferPointer
    private var available = 0..<0
    private var ended = false
    /// Plaintext bytes handed out so far.
    public private(set) var plaintextLength: Int64 = 0

    /// Reads the header of `input` (from its current offset) and opens the file key with `keys`.
    /// A file that does not start as a sealed file is `.damagedSealedFile`.
    public init(input: FileDescriptor, path: String, keys: any FileKeys) throws {
        let first = try input.read(upTo: SealedFile.prefixBytesToParse)
        guard let header = SealedFile.Header.parse(first) else {
            throw DeviceError.damagedSealedFile(path: path, reason: SealedFile.isSealed(first) ? "its header is damaged or of a newer format"
                                                                                                : "it is not a sealed file")
        }
        let headerLength = SealedFile.headerLength(header.protection)
        let opening = try keys.openingKey(header.protection, keybag: header.keybag, path: path)
        let stream: SecretStream
        do {
            stream = try SecretStream.decrypting(key: try SealedFile.openFileKey(header, with: opening), header: header.streamHeader)
        } catch is CryptoError {
            throw DeviceError.damagedSealedFile(path: path, reason: "its key does not open under this device's class key")
        }
        self.header = header
        self.input = input
        self.path = path
        self.stream = stream
        associatedData = header.bound
        ciphertext = .allocate(byteCount: SealedFile.messageBytes + SecretStream.overhead, alignment: 16)
        plaintext = .allocate(byteCount: SealedFile.messageBytes, alignment: 16)
        // What was read past the header is the start of the first message.
        let rest = first[headerLength...]
        rest.withUnsafeBytes { ciphertext.copyMemory(from: $0) }
        pending = rest.count
    }

    /// Ciphertext read ahead in `ciphertext[..<pending]`.
    private var pending = 0

    deinit {
        Sodium.wipe(plaintext)
        plaintext.deallocate()
        ciphertext.deallocate()
    }

    /// Up to `buffer.count` plaintext bytes into `buffer`; 0 at the end (after the final message).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while available.isEmpty {
            if ended { return 0 }
            try nextMessage()
        }
        let count = min(buffer.count, available.count)
        buffer.baseAddress!.copyMemory(from: plaintext.baseAddress!.advanced(by: available.lowerBound), byteCount: count)
        available = (available.lowerBound + count)..<available.upperBound
        plaintextLength += Int64(count)
        return count
    }

    /// The next message's plaintext as a buffer the reader owns (valid until the next call);
    /// empty at the end.
    public func nextChunk() throws -> UnsafeRawBufferPointer {
        while available.isEmpty {
            if ended { return UnsafeRawBufferPointer(start: nil, count: 0) }
            try nextMessage()
        }
        let chunk = UnsafeRawBufferPointer(rebasing: plaintext[available])
        plaintextLength += Int64(available.count)
        available = available.upperBound..<available.upperBound
        return chunk
    }

    /// Every plaintext byte, at most `limit` of them (a larger file is `.tooLarge`).
    public func readToEnd(limit: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try nextChunk()
            if chunk.isEmpty { return bytes }
            guard bytes.count + chunk.count <= limit else {
                throw FileSystemError(code: .tooLarge, systemCall: "read", path: path, detail: "more than \(limit) bytes")
            }
            bytes.append(contentsOf: chunk)
        }
    }

    private func nextMessage() throws {
        let messageLength = SealedFile.messageBytes + SecretStream.overhead
        while pending < messageLength {
            let count = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: ciphertext[pending...]))
            if count == 0 { break }
            pending += count
        }
        // The buffer holds one message: a full one, or what is left at the end of the file.
        guard pending >= SecretStream.overhead else { throw damaged(pending == 0 ? "it was cut short (no final message)" : "its last message is cut short") }
        let length = pending
        let (count, isFinal): (Int, Bool)
        do {
            (count, isFinal) = try associatedData.withUnsafeBytes { ad in
                try stream.pull(UnsafeRawBufferPointer(rebasing: ciphertext[..<length]), into: plaintext, associatedData: ad)
            }
        } catch {
            throw damaged("a message does not authenticate (the file was changed or damaged)")
        }
        associatedData = []
        pending = 0
        if isFinal {
            guard try input.read(upTo: 1).isEmpty else { throw damaged("bytes follow its final message") }
            ended = true
        } else if count != SealedFile.messageBytes {
            throw damaged("a message before the last is short")
        }
        available = 0..<count
    }

    private func damaged(_ reason: String) -> DeviceError { .damagedSealedFile(path: path, reason: reason) }
}

@available(*, unavailable)
extension SealedFileReader: Sendable {}
