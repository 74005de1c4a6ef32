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

    /// Connects with `conninfo` (a keyword/value string or a URI), `password` when given, and
    /// bounds on everything that could wait: `connect_timeout`, and a `statement_timeout`,
    /// `lock_timeout` and `idle_in_transaction_session_timeout` set for the session, so that a
    /// stalled or dead server ends in an error, never a hang.
    init(conninfo: String, password: String?) throws(PostgresError) {
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
        let result: OpaquePointer? = CStringArray(parameters).withPointers { values in
            if let name { return PQexecPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0) }
            return PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else { throw failure(nil) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else { throw failure(result) }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [String?] = []
            for column in 0..<columnCount {
                values.append(PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column)))
            }
            rows.append(values)
        }
        return rows
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
        if PQstatus(handle) != CONNECTION_OK || sqlState == nil {
            return PostgresError(kind: .unavailable, sqlState: sqlState, message: message)
        }
        return PostgresError(kind: PostgresError.kind(sqlState: sqlState), sqlState: sqlState, message: message)
    }

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
