internal import CLibPQ
import TripBoardSyncProtocol
import TripBoardSystem

/// One libpq connection, the one owner of its `PGconn` (`PQfinish` in `deinit`). Queries go
/// through `PQexecParams` with text parameters and text results: values are never spliced into
/// SQL. The corresponding C functions are `PQconnectdbParams`, `PQexecParams`, `PQfinish`.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// Statements prepared on this connection (`PQprepare`), by their text: the name to run them by.
    private var preparedNames: [String: String] = [:]
    /// True once this connection may hold an answer it did not read: it is not used again.
    private(set) var broken = false

    /// Connects with `conninfo` (a keyword/value string or a URI), `password` when given, and
    /// bounds on everything that could wait: `connect_timeout`, and a `statement_timeout`,
    /// `lock_timeout` and `idle_in_transaction_session_timeout` set for the session, so that a
    /// stalled or dead server ends in an error, never a hang.
    init(conninfo: String, password: String?) throws(PostgresError) {
        try Self.refusePassword(in: conninfo)
        // Later keywords override what the expanded conninfo says (PQconnectdbParams, expand_dbname).
        var pairs: [(String, String)] = [("dbname", conninfo)]
        if let password { pairs.append(("password", password)) }
        pairs.append(("connect_timeout", String(AgentLimits.connectSeconds)))
        pairs.append(("application_name", "tripboard-sync-agent"))
        pairs.append(("client_encoding", "UTF8"))
        // Both arrays end with NULL (PQconnectdbParams).
        let keywords = CStringArray(pairs.map(\.0) + [nil])
        let values = CStringArray(pairs.map(\.1) + [nil])
        let connection: OpaquePointer? = keywords.withPointers { keywordPointers in
            values.withPointers { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else { throw PostgresError(kind: .unavailable, sqlState: nil, message: "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(kind: .unavailable, sqlState: nil, message: message)
        }
        handle = connection
        try execute("""
            SET statement_timeout = '\(AgentLimits.statementSeconds)s'; SET lock_timeout = '\(AgentLimits.statementSeconds)s';
            SET idle_in_transaction_session_timeout = '\(AgentLimits.statementSeconds * 4)s'
            """)
    }

    deinit { PQfinish(handle) }

    /// Runs `sql` with `parameters` ($1, $2, … as text; `nil` is NULL) and returns the rows, each
    /// value as text or `nil` for NULL. With `prepared`, the statement is prepared once on this
    /// connection (`PQprepare`; a protocol-level statement, which outlives a rolled-back
    /// transaction) and run by name (`PQexecPrepared`) from then on.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = [], prepared: Bool = false) throws(PostgresError) -> [[String?]] {
        var name: String?
        if prepared {
            if let known = preparedNames[sql] {
                name = known
            } else {
                let fresh = "tripboard_\(preparedNames.count + 1)"
                guard let result = PQprepare(handle, fresh, sql, Int32(parameters.count), nil) else { throw failure(nil) }
                defer { PQclear(result) }
                guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure(result) }
                preparedNames[sql] = fresh
                name = fresh
            }
        }
        let sent: Int32 = CStringArray(parameters).withPointers { values in
            if let name { return PQsendQueryPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0) }
            return PQsendQueryParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard sent == 1 else { throw failure(nil) }
        // A row at a time (single-row mode), so that what the server answers is counted as it
        // arrives: a result beyond the bounds is damaged server data, and the connection, its
        // result unread, is dropped (`AgentService.failed`).
        _ = PQsetSingleRowMode(handle)
        return try collectRows()
    }

    /// The rows of the query just sent, a result at a time until libpq has none left; a failure
    /// is thrown once every result is read (libpq wants them all read before the next query).
    private func collectRows() throws(PostgresError) -> [[String?]] {
        var rows: [[String?]] = []
        var bytes = 0
        var failed: PostgresError?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_SINGLE_TUPLE {
                guard failed == nil else { continue }
                var values: [String?] = []
                for column in 0..<PQnfields(result) {
                    if PQgetisnull(result, 0, column) == 1 {
                        values.append(nil)
                    } else {
                        bytes += Int(PQgetlength(result, 0, column))
                        values.append(String(cString: PQgetvalue(result, 0, column)))
                    }
                }
                rows.append(values)
                if rows.count > AgentLimits.resultRows || bytes > AgentLimits.resultBytes {
                    // Nothing more of it is read: the connection goes with the rest.
                    broken = true
                    throw PostgresError(kind: .damaged, sqlState: nil, message: rows.count > AgentLimits.resultRows
                        ? "the server answered more than \(AgentLimits.resultRows) rows to one query"
                        : "the server answered more than \(AgentLimits.resultBytes >> 20) MiB to one query")
                }
            } else if status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && failed == nil {
                failed = failure(result)
            }
        }
        if let failed { throw failed }
        return rows
    }

    /// Refuses a conninfo that holds a password in any spelling libpq reads (a `password`
    /// keyword, a URI's `user:secret@`, a percent-encoded `pass%77ord=` parameter), or that
    /// libpq cannot parse: parsed by libpq itself (`PQconninfoParse`), so that what is checked is
    /// what would connect. The message never repeats the conninfo, nor libpq's (which may quote it).
    static func refusePassword(in conninfo: String) throws(PostgresError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            throw PostgresError(kind: .refused, sqlState: nil, message: "--server is not a conninfo libpq can read (keyword=value pairs or a postgresql:// URI)")
        }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val, value.pointee != 0 {
                throw PostgresError(kind: .refused, sqlState: nil,
                                    message: "--server must not contain a password (it would be visible in `ps` and kept in the store); use --with-password, which reads it from standard input")
            }
            option += 1
        }
    }

    /// Runs statements without parameters (several may be separated by `;`).
    func execute(_ sql: String) throws(PostgresError) {
        guard let result = PQexec(handle, sql) else { throw failure(nil) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else { throw failure(result) }
    }

    /// Runs `body` in one transaction at `isolation`, committed when it returns, rolled back when it throws.
    func transaction<T>(_ isolation: String = "READ COMMITTED", _ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN ISOLATION LEVEL \(isolation)")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Waits at most `timeout` seconds for notifications (after `LISTEN`) and returns the
    /// payloads of those that arrived, in order. The corresponding C functions are `PQsocket`,
    /// `PQconsumeInput` and `PQnotifies`.
    func notifications(waitingUpTo timeout: Double) throws(PostgresError) -> [String] {
        var payloads = drainNotifications()
        if !payloads.isEmpty { return payloads }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw PostgresError(kind: .unavailable, sqlState: nil, message: "the connection to the server is closed") }
        let ready: Bool
        do {
            ready = try FileDescriptor.waitForInput(onDescriptor: socket, milliseconds: Int32(max(0, min(timeout, 30)) * 1000),
                                                    path: "the server's socket")
        } catch {
            throw PostgresError(kind: .unavailable, sqlState: nil, message: "poll on the server's socket failed")
        }
        if ready {
            guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                throw PostgresError(kind: .unavailable, sqlState: nil, message: Self.trimmed(String(cString: PQerrorMessage(handle))))
            }
            payloads = drainNotifications()
        }
        return payloads
    }

    private func drainNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(notification.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notification)
        }
        return payloads
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        let message = Self.trimmed(String(cString: result.map { PQresultErrorMessage($0) } ?? PQerrorMessage(handle)))
        // PG_DIAG_SQLSTATE is the macro 'C', which does not import.
        let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        // An error without a SQLSTATE is libpq's own, not the server's answer to the statement:
        // the connection broke, even when its status does not say so yet (a server stopped under
        // a command: "server closed the connection unexpectedly"). Worth a new connection.
        if sqlState == nil && Self.memoryOrFramingMessages.contains(where: { message.includes($0) }) {
            // libpq could not hold what the server sent within the agent's address space
            // (`RLIMIT_AS`), or the server broke the protocol's framing: no honest server does either.
            broken = true
            return PostgresError(kind: .damaged, sqlState: nil, message: "the server's answer breaks the protocol (\(message))")
        }
        if PQstatus(handle) != CONNECTION_OK || sqlState == nil {
            return PostgresError(kind: .unavailable, sqlState: sqlState, message: message)
        }
        return PostgresError(kind: PostgresError.kind(sqlState: sqlState), sqlState: sqlState, message: message)
    }

    /// libpq's words (it is not translated here: the agent never calls `setlocale`) for an answer
    /// it could not hold within the agent's address space, or whose framing is broken.
    private static let memoryOrFramingMessages = ["out of memory", "cannot allocate memory", "lost synchronization with server"]

    private static func trimmed(_ message: String) -> String {
        let line = message.split(separator: "\n").first.map(String.init) ?? message
        return line.hasPrefix("ERROR:  ") ? String(line.dropFirst(8)) : line
    }
}

/// A failure reported by libpq or the server.
struct PostgresError: Error, CustomStringConvertible {
    var kind: AgentFailure.Kind
    var sqlState: String?
    var message: String

    var description: String { message + (sqlState.map { " (SQLSTATE \($0))" } ?? "") }

    /// Class 08 (connection), 57 (operator intervention: shutdown, statement timeout), 40
    /// (serialization failure, deadlock) and 55P03 (lock timeout) are worth another try; 42P01
    /// (no such table) means the schema is not installed.
    static func kind(sqlState: String?) -> AgentFailure.Kind {
        guard let sqlState else { return .server }
        if sqlState.hasPrefix("08") { return .unavailable }
        if sqlState.hasPrefix("57") || sqlState.hasPrefix("40") || sqlState == "55P03" { return .temporary }
        if sqlState == "42P01" || sqlState == "3F000" { return .schema }
        return .server
    }
}
