package import TripBoardSQLite
import Synchronization

/// The schema objects a store holds — tables, indexes, triggers, views — compared with the ones
/// this build makes for that store version, derived by running this build's own migrations on an
/// empty database (never a copy kept by hand): a fresh setup, every step-by-step upgrade, the
/// TripBoard 1 migration and a salvage all make their stores that way. A store that comes from
/// outside (a backup's) or that `container check` looks at must hold exactly these objects: an
/// extra trigger could delete every new trip, a changed table drop a constraint.
/// docs/storage.md, The schema, exactly.
extension Schema {
    /// One row of `sqlite_schema`: its type, name, table and SQL (comments and runs of white
    /// space folded: the text SQLite keeps is the statement as written).
    package struct Object: Hashable, Comparable, Sendable, CustomStringConvertible {
        package let type: String
        package let name: String
        package let table: String
        package let sql: String?

        package static func < (lhs: Object, rhs: Object) -> Bool { (lhs.type, lhs.name) < (rhs.type, rhs.name) }
        package var description: String { type + " " + name + (table == name ? "" : " on " + table) }
    }

    /// The objects of `connection`'s main database.
    package static func objects(of connection: Connection) throws -> Set<Object> {
        Set(try connection.statement("SELECT type, name, tbl_name, sql FROM sqlite_schema").rows { row in
            Object(type: row.text(0), name: row.text(1), table: row.text(2), sql: row.optionalText(3).map(folded))
        })
    }

    /// The objects this build's migrations make for a store of `version` (1…current), made once
    /// per version in an in-memory database.
    /// `steps`: another database's migrations (the keychain's), named by `database` for the cache.
    package static func expectedObjects(version: Int64, steps: [String] = migrations, database: String = "store") throws -> Set<Object> {
        precondition((1...Int64(steps.count)).contains(version), "no schema of version \(version)")
        let key = database + "/" + String(version)
        if let known = expected.withLock({ $0[key] }) { return known }
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        try migrate(connection, steps: Array(steps.prefix(Int(version))))
        let made = try objects(of: connection)
        expected.withLock { $0[key] = made }
        return made
    }

    private static let expected = Mutex<[String: Set<Object>]>([:])

    /// What differs between `connection`'s schema and the one this build makes at its
    /// `user_version` (nil: the same), in a line: the first few objects extra, missing or changed.
    /// The caller opens the store read-only with SQLite's defensive settings
    /// (`Connection.refuseUntrustedSchema`), so nothing in it runs.
    package static func difference(of connection: Connection, steps: [String] = migrations, database: String = "store") throws -> String? {
        let version = try connection.userVersion()
        guard (1...Int64(steps.count)).contains(version) else { return "its schema version is \(version)" }
        let found = try objects(of: connection)
        let expected = try expectedObjects(version: version, steps: steps, database: database)
        guard found != expected else { return nil }
        let extra = found.subtracting(expected).sorted()
        let missing = expected.subtracting(found).sorted()
        let changed = Set(extra.map(\.name)).intersection(missing.map(\.name))
        var parts: [String] = []
        parts += extra.filter { changed.contains($0.name) }.map { "\($0) is not as schema \(version) makes it" }
        parts += extra.filter { !changed.contains($0.name) }.map { "\($0) is not part of schema \(version)" }
        parts += missing.filter { !changed.contains($0.name) }.map { "\($0) is missing" }
        return parts.prefix(3).joined(separator: "; ") + (parts.count > 3 ? "; and \(parts.count - 3) more" : "")
    }

    /// `sql` with comments taken out and every run of white space made one space (outside quotes).
    package static func folded(_ sql: String) -> String {
        var out = ""
        var quote: Character?
        let characters = Array(sql)
        var index = 0
        var pendingSpace = false
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                out.append(character)
                if character == open { quote = nil }
                index += 1
                continue
            }
            if character == "-" && index + 1 < characters.count && characters[index + 1] == "-" {
                while index < characters.count && characters[index] != "\n" { index += 1 }
                pendingSpace = true
                continue
            }
            if character == "/" && index + 1 < characters.count && characters[index + 1] == "*" {
                index += 2
                while index + 1 < characters.count && !(characters[index] == "*" && characters[index + 1] == "/") { index += 1 }
                index += 2
                pendingSpace = true
                continue
            }
            if character.isWhitespace {
                pendingSpace = true
                index += 1
                continue
            }
            if pendingSpace && !out.isEmpty { out.append(" ") }
            pendingSpace = false
            if character == "'" || character == "\"" || character == "`" || character == "[" {
                quote = character == "[" ? "]" : character
            }
            out.append(character)
            index += 1
        }
        return out
    }
}
