import Foundation

/// Import documents that `app import` must refuse whole (exit 65, one `error:` line naming the
/// record and the rule, nothing written), each of which an earlier TripBoard accepted and then
/// could not export again, acknowledge unambiguously or sync: times outside 0001–9999 in UTC, one
/// id for records of two kinds, nil and non-v4 UUIDs, states the app cannot reach, versions past
/// 2^53 − 1, texts over their limits in bytes. Kept as plain JSON text in
/// `tools/lib/hostile-imports.json`, with one placeholder, `ATTACHMENT_ID` (the id of an
/// attachment already in the container); in a few a key appears twice on purpose (the last
/// occurrence wins).
enum HostileImports {
    struct Document: Sendable, CustomStringConvertible {
        /// A short name for reports.
        let name: String
        let json: String
        /// Words the error line must contain.
        let message: String
        var description: String { name }
        /// True when `json` holds `ATTACHMENT_ID`.
        var needsAnAttachment: Bool { json.contains("ATTACHMENT_ID") }
    }

    static let trip = "aaaaaaaa-0000-4000-8000-000000000001"
    static let other = "aaaaaaaa-0000-4000-8000-000000000002"

    static let combiningMarks = "e" + String(repeating: "\u{301}", count: 400)  // one character, 801 bytes

    /// The documents, from `tools/lib/hostile-imports.json`, which `tools/torture` plants too: one
    /// list for both. Each entry is a name, the JSON text and words its error must contain.
    static let documents: [Document] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../tools/lib/hostile-imports.json")
        guard let data = try? Data(contentsOf: file),
              let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: String]] else {
            fatalError("cannot read \(file.path)")
        }
        return entries.map { Document(name: $0["name"] ?? "", json: $0["json"] ?? "", message: $0["message"] ?? "") }
    }()
}
