import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem

/// Helpers for the trash's end-to-end tests: attachments placed fast (files, then rows, as an
/// import leaves them), and the checks that a deletion or a purge left nothing behind.
extension TestContainer {
    /// Writes `count` attachment files of `size` bytes for `booking`, then their rows in one
    /// transaction; returns each file's relative path with its bytes.
    @discardableResult
    func placeAttachments(on booking: String, count: Int, size: Int = 4096, tag: String = "") throws -> [String: Data] {
        var placed: [String: Data] = [:]
        var sql = "BEGIN;"
        for index in 0..<count {
            let id = Identifier.make()
            let relative = "attachments/\(id.prefix(2))/\(id).pdf"
            var bytes = Data("%PDF-1.7 \(tag) \(index)\n".utf8)
            bytes.append(Data((0..<max(0, size - bytes.count)).map { _ in UInt8.random(in: 0...255) }))
            try FileManager.default.createDirectory(atPath: path + "/attachments/\(id.prefix(2))", withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: path + "/" + relative))
            placed[relative] = bytes
            sql += """
                INSERT INTO attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, page_count,
                relative_path, state, created_at, updated_at) VALUES ('\(id)', '\(booking)', 'ticket-\(index).pdf', 'application/pdf',
                \(bytes.count), '\(blake2bHex(bytes))', 1, '\(relative)', 'present', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
                """
        }
        let result = try sqlite(sql + "COMMIT;")
        #expect(result.status == 0, "\(result)")
        return placed
    }

    /// A trip with one booking holding `count` placed attachments: (trip, booking, files).
    func tripWithAttachments(_ count: Int, name: String = "Lisbon", size: Int = 4096) throws -> (String, String, [String: Data]) {
        let trip = try addTrip(name)
        let booking = try appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351")
        return (trip, booking, try placeAttachments(on: booking, count: count, size: size, tag: name))
    }

    /// `--json` output of an `app` command, parsed.
    func appJSON(_ arguments: String..., environment extra: [String: String] = [:]) throws -> Any {
        let result = try app(arguments: arguments + ["--json"], environment: extra)
        try #require(result.status == 0, "app \(arguments.joined(separator: " ")): \(result)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// What is in the trash: `trash list --json`.
    func trashList() throws -> [[String: Any]] {
        try #require(try appJSON("trash", "list") as? [[String: Any]])
    }

    /// No orphan file (every file under `attachments/`, `recovered/` aside, is named by a row), no
    /// row without its file (but a queued one, whose file may be gone already), nothing listed twice
    /// (`trash list`, `sync pending`), a sound store. `byTheApp: false` looks without running `app`,
    /// which — a writer — would finish an interrupted purge first.
    func expectNothingLeftBehind(_ context: String, byTheApp: Bool = true) throws {
        let rows = try sqlite("SELECT relative_path || '|' || state FROM attachments").stdoutLines.map { $0.split(separator: "|").map(String.init) }
        let files = Set(regularFiles(under: "attachments").filter { !$0.hasPrefix("attachments/recovered/") })
        let named = Set(rows.map { $0[0] })
        #expect(files.subtracting(named).isEmpty, "\(context): orphan files \(files.subtracting(named))")
        for row in rows where row[1] != "deleting" {
            #expect(files.contains(row[0]), "\(context): row without its file \(row)")
        }
        #expect(try integrity() == "ok", "\(context)")
        guard byTheApp else { return }
        let trash = try trashList().compactMap { $0["id"] as? String }
        #expect(Set(trash).count == trash.count, "\(context): listed twice in the trash \(trash)")
        let pending = try #require(try appJSON("sync", "pending") as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(Set(pending).count == pending.count, "\(context): listed twice in sync pending")
    }

    /// The thumbnails in the cache, by attachment id.
    var thumbnails: Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: path + "/caches/thumbnails")) ?? []).map { String($0.prefix(36)) })
    }
}
