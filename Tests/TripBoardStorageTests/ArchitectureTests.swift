import Foundation
import Testing
import TripBoardReadPath

/// docs/architecture.md stays true: its table of modules says what each may import, and the code
/// imports nothing else.
struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The table's rows: module → the modules its "may import" cell names.
    static func allowedImports() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let short = ["System", "SQLite", "Sodium", "ReadPath", "CommandLine", "Widget", "Storage", "Migration", "Tickets", "Sync",
                     "SyncProtocol", "WorkerContract"]
        let basement = ["TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardWorkerContract", "TripBoardSyncProtocol"]
        var table: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { continue }
            let module = String(cells[0].dropFirst().dropLast())
            var allowed: Set<String> = []
            // Names are words of the cell (parenthesised remarks included: they name no module).
            let words = cells[2].replacingOccurrences(of: "the basement", with: "BASEMENT")
                .split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
            for word in words {
                if word == "BASEMENT" { allowed.formUnion(basement) }
                if short.contains(word) { allowed.insert("TripBoard" + word) }
                if word.hasPrefix("C") || ["Glibc", "PopplerShim"].contains(word) { allowed.insert(word) }
            }
            table[module] = allowed
        }
        return table
    }

    /// Every module each Swift module of Sources/ imports (any access level).
    static func actualImports() throws -> [String: Set<String>] {
        let sources = root.appendingPathComponent("Sources")
        var found: [String: Set<String>] = [:]
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let directory = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            var imports: Set<String> = []
            var hasSwift = false
            while let file = files.nextObject() as? String {
                guard file.hasSuffix(".swift") else { continue }
                hasSwift = true
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                          words[..<index].allSatisfy({ ["public", "package", "internal", "private", "fileprivate"].contains($0) || $0.hasPrefix("@") })
                    else { continue }
                    imports.insert(words[index + 1])
                }
            }
            if hasSwift { found[module] = imports }
        }
        return found
    }

    @Test func theImportTableAllowsEveryImport() throws {
        let allowed = try Self.allowedImports()
        let actual = try Self.actualImports()
        let executables: Set<String> = ["app", "widget", "share-extension", "container-migration", "pdf-worker", "sync-agent"]
        #expect(!allowed.isEmpty)
        for (module, imports) in actual where !executables.contains(module) {
            guard let permitted = allowed[module] else {
                Issue.record("\(module) has no row in docs/architecture.md")
                continue
            }
            let extra = imports.subtracting(permitted).subtracting(["Synchronization"])
            #expect(extra.isEmpty, "\(module) imports \(extra.sorted()), which docs/architecture.md does not allow")
            #expect(!imports.contains("Foundation"), "\(module) imports Foundation")
        }
    }

    /// docs/cli.md's examples name this build's store schema (`--version`, `container info`,
    /// its JSON) and docs/storage.md's §5 heading too: a new schema step updates them.
    @Test func theDocsNameTheCurrentStoreSchema() throws {
        let current = "\(Schema.currentVersion)"
        let cli = try String(contentsOf: Self.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        for phrase in ["(store schema \(current), layout 1)", "store schema \(current); SQLite", "\"schemaVersion\" : \(current),"] {
            #expect(cli.contains(phrase), "docs/cli.md should say \(phrase)")
        }
        let storage = try String(contentsOf: Self.root.appendingPathComponent("docs/storage.md"), encoding: .utf8)
        #expect(storage.contains("## 5. Schema (version \(current))") && storage.contains("(\(current) today"))
    }
}
