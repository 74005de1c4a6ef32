internal import CSQLite
internal import SealedPages
public import TripBoardKeys
public import TripBoardSystem

/// What seals a database's pages (docs/security.md, "Sealed stores"): a 32-byte key, the file's
/// 16-byte id (bound into every page with its number, so that a page of another file — another
/// container's store, the keychain's database — does not open here) and the page size.
///
/// A connection opened with one reads and writes through the `tripboard-sealed` VFS, which seals
/// every page of the main file and of the WAL with XChaCha20-Poly1305, the nonce and the tag in
/// the page's 40 reserved bytes.
public struct PageKey: Sendable {
    public let key: SecureBytes
    public let fileID: [UInt8]
    public let pageSize: Int

    /// The page size of every sealed database TripBoard makes (SQLite's default).
    public static let defaultPageSize = 4096
    /// Bytes at the end of each page that hold its nonce and tag.
    public static let reservedBytes = Int(TRIPBOARD_SEALED_RESERVE)
    /// The VFS's name (`TRIPBOARD_SEALED_VFS`): what a `file:` URI names with `vfs=`.
    public static let vfsName = "tripboard-sealed"
    public static let keyLength = 32
    public static let fileIDLength = 16

    public init(key: SecureBytes, fileID: [UInt8], pageSize: Int = PageKey.defaultPageSize) {
        precondition(key.count == Self.keyLength && fileID.count == Self.fileIDLength, "a page key is 32 bytes and a file id 16")
        self.key = key
        self.fileID = fileID
        self.pageSize = pageSize
    }

    /// A new random key and file id (a database sealed from its creation, or a snapshot's
    /// ephemeral key).
    public static func random(pageSize: Int = PageKey.defaultPageSize) throws -> PageKey {
        PageKey(key: try SecureBytes(randomCount: keyLength), fileID: Sodium.randomBytes(count: fileIDLength), pageSize: pageSize)
    }

    /// Opens `page` (one sealed page of this file, numbered from 1) in place; false when it does
    /// not authenticate (the page is then zeros but for its seal). Its last 40 bytes become zeros:
    /// what a plain SQLite file has there.
    public func open(page: UnsafeMutableRawBufferPointer, number: UInt32) -> Bool {
        precondition(page.count == pageSize, "one whole page")
        return key.withUnsafeBytes { key in
            fileID.withUnsafeBufferPointer { id in
                tripboard_open_page(key.baseAddress!.assumingMemoryBound(to: UInt8.self), id.baseAddress!, number,
                                    page.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pageSize)) == 0
            }
        }
    }

    /// Seals `page` (one plaintext page, numbered from 1) in place with a random nonce (no secret:
    /// it is stored in the page).
    public func seal(page: UnsafeMutableRawBufferPointer, number: UInt32) throws {
        precondition(page.count == pageSize, "one whole page")
        let nonce = Sodium.randomBytes(count: 24)
        key.withUnsafeBytes { key in
            fileID.withUnsafeBufferPointer { id in
                tripboard_seal_page(key.baseAddress!.assumingMemoryBound(to: UInt8.self), id.baseAddress!, number,
                                    page.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pageSize), nonce)
            }
        }
    }

    /// Runs `body` while the sealed-page VFS holds this key for the main file at `path`: SQLite
    /// opening that file itself (`VACUUM INTO`) reads and writes it sealed.
    func whileExpected<T>(at path: String, _ body: () throws -> T) throws -> T {
        let code = key.withUnsafeBytes { key in
            fileID.withUnsafeBufferPointer { id in
                var given = tripboard_page_key(key: key.baseAddress!.assumingMemoryBound(to: UInt8.self), file_id: id.baseAddress!,
                                               page_size: Int32(pageSize))
                return tripboard_sealed_expect(path, &given)
            }
        }
        if code != SQLITE_OK { throw SQLiteError(extendedCode: code, message: "another sealed copy is being made in this process") }
        defer { tripboard_sealed_forget() }
        return try body()
    }

    /// Gives `handle`'s main database this key, before its first read.
    func apply(to handle: OpaquePointer) -> Int32 {
        key.withUnsafeBytes { key in
            fileID.withUnsafeBufferPointer { id in
                var given = tripboard_page_key(key: key.baseAddress!.assumingMemoryBound(to: UInt8.self), file_id: id.baseAddress!,
                                               page_size: Int32(pageSize))
                return sqlite3_file_control(handle, "main", TRIPBOARD_FCNTL_PAGE_KEY, &given)
            }
        }
    }
}

/// The plaintext of a sealed database file, page by page: each page is read whole, opened and
/// handed out (its reserved bytes as zeros), so that what comes out is an ordinary SQLite file
/// (a backup archive's store). Memory stays flat: one buffer of 16 pages. The file must not be
/// one SQLite has open in this process, and must hold whole pages only (a rollback-journal file
/// the backup API wrote, not a live store: its WAL is not read).
public final class OpenedPages: ByteSource {
    private let input: FileDescriptor
    private let key: PageKey
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var nextPage: UInt32 = 1

    public init(input: FileDescriptor, key: PageKey) {
        self.input = input
        self.key = key
        buffer = [UInt8](repeating: 0, count: key.pageSize * 16)
    }

    public func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        if start == end { try fill() }
        let count = min(destination.count, end - start)
        guard count > 0 else { return 0 }
        buffer.withUnsafeBytes { source in
            destination.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
        }
        start += count
        return count
    }

    private func fill() throws {
        start = 0
        end = 0
        while end < buffer.count {
            let read = try buffer.withUnsafeMutableBytes { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[end...])) }
            if read == 0 { break }
            end += read
        }
        let size = key.pageSize
        guard end % size == 0 else {
            throw SQLiteError(extendedCode: SQLiteError.sealedPageFailureCode, message: "the sealed file ends inside a page")
        }
        for offset in stride(from: 0, to: end, by: size) {
            let opened = buffer.withUnsafeMutableBytes { key.open(page: UnsafeMutableRawBufferPointer(rebasing: $0[offset..<(offset + size)]), number: nextPage) }
            guard opened else {
                throw SQLiteError(extendedCode: SQLiteError.sealedPageFailureCode, message: "page \(nextPage) of the sealed file does not open")
            }
            nextPage += 1
        }
    }
}
