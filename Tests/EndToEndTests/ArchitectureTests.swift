import Foundation
import Testing
import TripBoardModel

/// docs/architecture.md stays true: its table of modules says what each may import, and the code
/// imports nothing else.
struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The table's rows: module → the modules its "may import" cell names.
    static func allowedImports() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let short = ["System", "SQLite", "Keys", "Sodium", "Model", "CommandLine", "Widget", "Storage", "Device", "Keychain", "Backup", "Migration", "Tickets",
                     "Sync", "SyncProtocol", "WorkerContract", "ShareExtension"]
        let basement = ["TripBoardSystem", "TripBoardSQLite", "TripBoardKeys", "TripBoardSodium", "TripBoardWorkerContract", "TripBoardSyncProtocol"]
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
                if word.hasPrefix("C") || ["Glibc", "PopplerShim", "SealedPages"].contains(word) { allowed.insert(word) }
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

    /// Every section a source comment cites (`docs/storage.md §4.4 and §6`) is a numbered
    /// heading of that document, and every document cited exists: no comment points at a rule
    /// that is not in the repository.
    @Test func everySectionTheSourcesCiteExists() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path))
        var cited = 0
        while let file = files.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            var rest = Substring(text)
            while let start = rest.range(of: "docs/") {
                let citation = rest[start.lowerBound...].prefix { $0 != ")" && $0 != "\n" && $0 != ":" && $0 != ";" }
                rest = rest[start.upperBound...]
                guard let end = citation.range(of: ".md") else { continue }
                let document = String(citation[..<end.upperBound])
                let path = Self.root.appendingPathComponent(document).path
                #expect(FileManager.default.fileExists(atPath: path), "\(file) cites \(document), which does not exist")
                guard let body = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
                let headings = body.split(separator: "\n").filter { $0.hasPrefix("#") }
                // `§4.4 and §6`, `§4.4, §5`: each section mark up to the end of the citation.
                for mark in citation.split(separator: "§").dropFirst() {
                    let number = mark.prefix { $0.isNumber || $0 == "." }.trimmingSuffix(".")
                    guard !number.isEmpty else { continue }
                    cited += 1
                    let found = headings.contains { heading in
                        let words = heading.drop { $0 == "#" }.trimmingPrefix(" ")
                        return words.hasPrefix(number + ". ") || words.hasPrefix(number + " ")
                    }
                    #expect(found, "\(file) cites \(document) §\(number), which has no such heading")
                }
            }
        }
        #expect(cited > 10)
    }
}

extension Substring {
    func trimmingSuffix(_ suffix: String) -> Substring { hasSuffix(suffix) ? dropLast(suffix.count) : self }
}
