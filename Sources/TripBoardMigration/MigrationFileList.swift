import TripBoardDevice
import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem

/// A file the migration moves: an attachment's file, or a file with no row (to `recovered/`).
struct PlannedFile: Equatable {
    /// Its place in the plan (attachments first, in version 1's rowid order, then the files no
    /// row names); also its name in `migration/staged/<thread>/` while a copy waits there.
    var number: Int64 = 0
    /// The name in the legacy `Attachments/`.
    var source: String
    /// Where it goes, relative to the container.
    var destination: String
    var byteCount: Int64
    /// The source's identity — device, inode, size and modification time (ns) — as the plan found
    /// it: a rename keeps all four, so a destination with them is the planned file, moved there by
    /// an earlier attempt; a source without them changed since the plan. No byte is read.
    var device: UInt64
    var inode: UInt64
    var modified: Int64
    /// The attachment row's id; absent for a file without a row.
    var attachmentID: String?
    /// Across filesystems: the inode of the copy, recorded once the copy is durable in
    /// `migration/staged/` (syncfs) and before it is renamed to its destination, whose size
    /// was checked. A destination with this inode and the planned size is that copy.
    var copyInode: UInt64?

    init(source: String, destination: String, status: FileStatus, attachmentID: String?) {
        self.source = source
        self.destination = destination
        byteCount = status.size
        device = status.device
        inode = status.inode
        modified = status.modificationNanoseconds
        self.attachmentID = attachmentID
    }

    init(number: Int64, source: String, destination: String, byteCount: Int64, device: UInt64, inode: UInt64, modified: Int64,
         attachmentID: String?, copyInode: UInt64?) {
        self.number = number
        self.source = source
        self.destination = destination
        self.byteCount = byteCount
        self.device = device
        self.inode = inode
        self.modified = modified
        self.attachmentID = attachmentID
        self.copyInode = copyInode
    }

    /// True when `status` is the planned source file, unchanged (or it renamed to its destination).
    func isPlannedFile(_ status: FileStatus) -> Bool {
        status.kind == .regular && status.device == device && status.inode == inode && status.size == byteCount
            && status.modificationNanoseconds == modified
    }

    /// True when `status` is this file's copy, recorded durable before it was renamed into place.
    func isRecordedCopy(_ status: FileStatus) -> Bool {
        guard let copyInode else { return false }
        return status.kind == .regular && status.inode == copyInode && status.size == sealedByteCount
    }

    /// The size of its copy in the container, sealed to `complete-unless-open`.
    var sealedByteCount: Int64 { SealedFile.sealedLength(plaintextLength: byteCount, protection: .completeUnlessOpen) }
}

/// The plan's file list, in SQLite beside `plan.json` (`migration/plan-files.sqlite`): every
/// step streams it a page at a time, so the migration's memory does not grow with the number of
/// files. Written by the plan in one transaction (committed, so fsynced, before `plan.json`
/// names it); later only the copies' inodes are recorded in it. A dry run keeps it in memory.
final class MigrationFileList {
    static let fileName = "plan-files.sqlite"
    /// Files read, moved or copied at a time.
    static let pageSize = 500

    let connection: Connection

    /// Each connection's page cache, whatever the number of files: the list is read a page of
    /// rows at a time, and its two indexes' upper levels fit (10,000 files make a 3 MB file, which
    /// SQLite's default cache of 2 MiB would otherwise hold most of).
    static let cacheKibibytes = 512

    private init(connection: Connection) throws {
        self.connection = connection
        try connection.execute("PRAGMA cache_size = -\(Self.cacheKibibytes)")
    }

    /// A new, empty list: in `directory` (an earlier attempt's list is deleted first), or in memory.
    static func create(in directory: Directory?) throws -> MigrationFileList {
        let connection: Connection
        if let directory {
            try removeFiles(in: directory)
            _ = try directory.openFile(fileName, .readWrite, creating: .newFile, mode: 0o600)
            connection = try Connection(path: directory.childPath(fileName), mode: .readWrite)
        } else {
            connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        }
        // The file is this migration's alone, under the exclusive container lock: a rollback
        // journal, each commit fsynced (the journal records a copy only once it is durable).
        try connection.execute("""
            PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;
            CREATE TABLE files (
                number INTEGER PRIMARY KEY,
                source TEXT NOT NULL,
                destination TEXT NOT NULL,
                byte_count INTEGER NOT NULL,
                device INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                modified INTEGER NOT NULL,
                attachment_id TEXT UNIQUE,
                copy_inode INTEGER
            );
            CREATE INDEX files_source ON files (source);
            """)
        return try MigrationFileList(connection: connection)
    }

    /// The list a plan recorded in `directory`.
    static func open(in directory: Directory) throws -> MigrationFileList {
        guard try directory.status(of: fileName) != nil else {
            throw MigrationError.damagedJournal(path: directory.childPath(fileName))
        }
        let connection = try Connection(path: directory.childPath(fileName), mode: .readWrite)
        try connection.execute("PRAGMA synchronous = FULL")
        return try MigrationFileList(connection: connection)
    }

    /// A second connection to the same list, for another thread (reading only).
    func openAnother() throws -> MigrationFileList {
        try MigrationFileList(connection: Connection(path: connection.path, mode: .readOnly))
    }

    /// The list and its rollback journal.
    static func removeFiles(in directory: Directory) throws {
        for suffix in ["", "-journal", "-wal", "-shm"] { try directory.removeFile(fileName + suffix) }
    }

    static let columns = "number, source, destination, byte_count, device, inode, modified, attachment_id, copy_inode"

    private static func file(from row: Statement) -> PlannedFile {
        PlannedFile(number: row.integer(0), source: row.text(1), destination: row.text(2), byteCount: row.integer(3),
                    device: UInt64(bitPattern: row.integer(4)), inode: UInt64(bitPattern: row.integer(5)), modified: row.integer(6),
                    attachmentID: row.optionalText(7), copyInode: row.optionalInteger(8).map { UInt64(bitPattern: $0) })
    }

    /// Adds `file` (inside the caller's transaction, see `writing`); returns its number.
    @discardableResult
    func add(_ file: PlannedFile) throws -> Int64 {
        try connection.statement("""
            INSERT INTO files (source, destination, byte_count, device, inode, modified, attachment_id) VALUES (?, ?, ?, ?, ?, ?, ?)
            """).run([.text(file.source), .text(file.destination), .integer(file.byteCount), .integer(Int64(bitPattern: file.device)),
                      .integer(Int64(bitPattern: file.inode)), .integer(file.modified), file.attachmentID.map(SQLValue.text) ?? .null])
        return try connection.integer("SELECT last_insert_rowid()")
    }

    /// Runs `body` (the plan's `add`s) in one write transaction: one commit, one fsync.
    func writing<T>(_ body: () throws -> T) throws -> T { try connection.writeTransaction(body) }

    /// The planned file of an attachment row, if its file was found.
    func file(attachmentID: String) throws -> PlannedFile? {
        try connection.statement("SELECT \(Self.columns) FROM files WHERE attachment_id = ?").rows([.text(attachmentID)], Self.file).first
    }

    /// True when a planned file comes from the legacy `Attachments/<name>`.
    func contains(source name: String) throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM files WHERE source = ?)", [.text(name)]) != 0
    }

    /// The files after `number`, at most `pageSize`, in order.
    func page(after number: Int64, limit: Int = pageSize) throws -> [PlannedFile] {
        try connection.statement("SELECT \(Self.columns) FROM files WHERE number > ? ORDER BY number LIMIT ?")
            .rows([.integer(number), .integer(Int64(limit))], Self.file)
    }

    /// Every file in order, a page at a time (never the whole list in memory).
    func forEach(_ body: (PlannedFile) throws -> Void) throws {
        var after: Int64 = 0
        while true {
            let page = try page(after: after)
            guard let last = page.last else { return }
            for file in page { try body(file) }
            after = last.number
        }
    }

    /// The files no row names, whose destinations (`attachments/recovered/…`) the summary lists.
    func recoveredDestinations() throws -> [String] {
        try connection.statement("SELECT destination FROM files WHERE attachment_id IS NULL ORDER BY number").rows { $0.text(0) }
    }

    func setDestination(_ destination: String, of number: Int64) throws {
        try connection.statement("UPDATE files SET destination = ? WHERE number = ?").run([.text(destination), .integer(number)])
    }

    /// Records the copies' inodes in one committed (fsynced) transaction.
    func recordCopies(_ copies: [(number: Int64, inode: UInt64)]) throws {
        guard !copies.isEmpty else { return }
        try connection.writeTransaction {
            let update = try connection.statement("UPDATE files SET copy_inode = ? WHERE number = ?")
            for copy in copies { try update.run([.integer(Int64(bitPattern: copy.inode)), .integer(copy.number)]) }
        }
    }

    var count: Int { get throws { Int(try connection.integer("SELECT count(*) FROM files")) } }
    var byteCount: Int64 { get throws { try connection.integer("SELECT coalesce(sum(byte_count), 0) FROM files") } }
}
