internal import CSQLite
public import TripBoardSystem

/// A plain SQLite database file — or its WAL — sealed page by page as its bytes stream in (a
/// restore's store and keychain database, from the archive): the file on disk never holds a
/// plaintext page. The sealed result opens through the sealed-page VFS under the key `makeKey`
/// gives for the file's page size (the caller keeps one key for a database and its WAL).
///
/// A database whose pages keep no room for the seal (byte 20 of its header is not 40: a backup
/// of a build before sealed stores) is gathered in memory instead, its reserved bytes made by a
/// `VACUUM` of an in-memory copy, then sealed: memory is the database's size, for those archives
/// only. A WAL beside such a database cannot be sealed, and is refused.
public final class SealingPagesWriter {
    public enum Kind: Sendable { case database, writeAheadLog }

    private let output: FileDescriptor
    private let kind: Kind
    private let makeKey: (Int) throws -> PageKey
    private var key: PageKey?
    private var pending: [UInt8] = []
    private var nextPage: UInt32 = 1
    /// The whole file, when its pages must be rebuilt first.
    private var gathered: [UInt8]?
    /// WAL: the bytes before the next frame have been written (its header).
    private var walHeaderDone = false
    /// Whether the database's pages had to be rebuilt in memory to make room for the seal.
    public private(set) var rebuilt = false
    /// Whether the database's header says WAL mode (its read or write version, byte 18 or 19, is
    /// 2): a connection to it, even a read-only one, makes `-wal` and `-shm` files beside it.
    public private(set) var headerSaysWAL = false

    public init(output: FileDescriptor, kind: Kind, makeKey: @escaping (Int) throws -> PageKey) {
        self.output = output
        self.kind = kind
        self.makeKey = makeKey
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if gathered != nil {
            gathered!.append(contentsOf: bytes)
            return
        }
        pending.append(contentsOf: bytes)
        switch kind {
        case .database: try drainDatabasePages()
        case .writeAheadLog: try drainFrames()
        }
    }

    /// Writes what remains (a WAL's torn last frame as it is: SQLite ignores it).
    public func finish() throws {
        if let whole = gathered {
            gathered = nil
            rebuilt = true
            let rebuilt = try Self.withReservedBytes(whole)
            pending = rebuilt
            try drainDatabasePages()
        }
        if kind == .database && !pending.isEmpty {
            throw SQLiteError(extendedCode: SQLITE_NOTADB, message: "the database file ends inside a page")
        }
        if !pending.isEmpty { try output.write(all: pending) }
        pending = []
    }

    private func drainDatabasePages() throws {
        if key == nil {
            guard pending.count >= 100 else { return }
            guard pending.starts(with: Array("SQLite format 3\0".utf8)) else {
                throw SQLiteError(extendedCode: SQLITE_NOTADB, message: "file is not a database")
            }
            let stated = Int(pending[16]) << 8 | Int(pending[17])
            let pageSize = stated == 1 ? 65536 : stated
            headerSaysWAL = pending[18] == 2 || pending[19] == 2
            guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
                throw SQLiteError(extendedCode: SQLITE_NOTADB, message: "the database's page size is not a power of two")
            }
            guard Int(pending[20]) == PageKey.reservedBytes else {
                gathered = pending
                pending = []
                return
            }
            key = try makeKey(pageSize)
        }
        guard let key else { return }
        let size = key.pageSize
        var offset = 0
        while pending.count - offset >= size {
            try pending.withUnsafeMutableBytes { try key.seal(page: UnsafeMutableRawBufferPointer(rebasing: $0[offset..<(offset + size)]), number: nextPage) }
            nextPage += 1
            offset += size
        }
        if offset > 0 {
            try pending.withUnsafeBytes { try output.write(all: UnsafeRawBufferPointer(rebasing: $0[..<offset])) }
            pending.removeFirst(offset)
        }
    }

    private func drainFrames() throws {
        if !walHeaderDone {
            guard pending.count >= 32 else { return }
            let pageSize = pending[8..<12].reduce(0) { $0 << 8 | Int($1) }
            guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
                throw SQLiteError(extendedCode: SQLITE_NOTADB, message: "the WAL's page size is not a power of two")
            }
            key = try makeKey(pageSize)
            try output.write(all: Array(pending[..<32]))
            pending.removeFirst(32)
            walHeaderDone = true
        }
        guard let key else { return }
        let frame = 24 + key.pageSize
        var offset = 0
        while pending.count - offset >= frame {
            let number = pending[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let page = offset + 24
            try pending.withUnsafeMutableBytes { try key.seal(page: UnsafeMutableRawBufferPointer(rebasing: $0[page..<(page + key.pageSize)]), number: number) }
            offset += frame
        }
        if offset > 0 {
            try pending.withUnsafeBytes { try output.write(all: UnsafeRawBufferPointer(rebasing: $0[..<offset])) }
            pending.removeFirst(offset)
        }
    }

    /// `database` (a whole SQLite file) with every page keeping the seal's 40 reserved bytes: an
    /// in-memory copy, `VACUUM`ed with the reserve asked for, read back. Nothing of its schema
    /// runs (`trusted_schema` off, defensive).
    static func withReservedBytes(_ database: [UInt8]) throws -> [UInt8] {
        var database = database
        if database.count >= 20 { database[18] = 1; database[19] = 1 }  // an in-memory copy cannot be in WAL mode
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        try connection.refuseUntrustedSchema()
        let size = database.count
        guard let buffer = sqlite3_malloc64(sqlite3_uint64(max(size, 1))) else { throw SQLiteError(extendedCode: SQLITE_NOMEM, message: "out of memory") }
        database.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: size) }
        var code = sqlite3_deserialize(connection.handle, "main", buffer.assumingMemoryBound(to: UInt8.self), sqlite3_int64(size), sqlite3_int64(size),
                                       UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE))
        if code != SQLITE_OK { throw SQLiteError(connection: connection.handle, code: code) }
        var reserve = Int32(PageKey.reservedBytes)
        code = sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        if code != SQLITE_OK { throw SQLiteError(connection: connection.handle, code: code) }
        try connection.execute("VACUUM")
        var length: sqlite3_int64 = 0
        guard let serialized = sqlite3_serialize(connection.handle, "main", &length, 0) else {
            throw SQLiteError(extendedCode: SQLITE_NOMEM, message: "the rebuilt database could not be read back")
        }
        defer { sqlite3_free(serialized) }
        let rebuilt = Array(UnsafeBufferPointer(start: serialized, count: Int(length)))
        guard rebuilt.count > 20, Int(rebuilt[20]) == PageKey.reservedBytes else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "the database could not be given room for the seal")
        }
        return rebuilt
    }
}
