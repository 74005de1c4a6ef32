package import TripBoardDevice
package import TripBoardSQLite
import TripBoardModel
import TripBoardSystem
import Foundation

/// A test's own look at a container's database file, as a tool would take it: through its key
/// file (`DatabaseKeyFile`) when it has one, the sealed-page VFS then; in the clear otherwise.
package func openDatabaseFile(_ path: String, mode: Connection.Mode = .readWrite,
                              keys: any FileKeys = TestClock.fileKeys) throws -> Connection {
    let slash = path.lastIndex(of: "/")!
    let directory = try Directory.open(path: String(path[..<slash]))
    let name = String(path[path.index(after: slash)...])
    return try Connection(path: path, mode: mode, sealing: try DatabaseKeyFile.read(in: directory, database: name, keys: keys))
}

/// The page key of the database at `path` (its key file opened with `keys`); nil when it has none.
package func pageKey(ofDatabase path: String, keys: any FileKeys = TestClock.fileKeys) throws -> PageKey? {
    let slash = path.lastIndex(of: "/")!
    return try DatabaseKeyFile.read(in: try Directory.open(path: String(path[..<slash])),
                                    database: String(path[path.index(after: slash)...]), keys: keys)
}

/// Rewrites page `number` (from 1) of the database file at `path` with `change` applied to its
/// plaintext, sealed again under `key` when it is sealed: damage a test wants SQLite to find,
/// not the seal.
package func rewritePage(_ path: String, number: Int, key: PageKey?, _ change: (inout [UInt8]) -> Void) throws {
    let url = URL(fileURLWithPath: path)
    var bytes = Array(try Data(contentsOf: url))
    let size = key?.pageSize ?? 4096
    let range = (number - 1) * size..<number * size
    var page = Array(bytes[range])
    if let key { precondition(page.withUnsafeMutableBytes { key.open(page: $0, number: UInt32(number)) }, "the page opens") }
    change(&page)
    if let key { try page.withUnsafeMutableBytes { try key.seal(page: $0, number: UInt32(number)) } }
    bytes.replaceSubrange(range, with: page)
    try Data(bytes).write(to: url)
}
