internal import CSQLite
internal import SealedPages
public import TripBoardKeys

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
        PageKey(key: try SecureBytes(randomCount: keyLength), fileID: try SecureBytes(randomCount: fileIDLength).withUnsafeBytes { Array($0) },
                pageSize: pageSize)
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

    /// Seals `page` (one plaintext page, numbered from 1) in place with a random nonce.
    public func seal(page: UnsafeMutableRawBufferPointer, number: UInt32) throws {
        precondition(page.count == pageSize, "one whole page")
        let nonce = try SecureBytes(randomCount: 24).withUnsafeBytes { Array($0) }
        key.withUnsafeBytes { key in
            fileID.withUnsafeBufferPointer { id in
                tripboard_seal_page(key.baseAddress!.assumingMemoryBound(to: UInt8.self), id.baseAddress!, number,
                                    page.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pageSize), nonce)
            }
        }
    }

    /// Gives `handle`'s main file this key, before its first read.
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
