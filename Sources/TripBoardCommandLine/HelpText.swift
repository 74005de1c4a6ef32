/// `--help`, made from the command model.
package enum HelpText {
    /// The usage line's start: the program and its global options (`app [--container DIR] [-q]`).
    package static func usagePrefix(_ program: ProgramSpec) -> String {
        ([program.name] + program.globalOptions.filter { $0 != CommonOptions.help && $0 != CommonOptions.version }.map(shortSynopsis))
            .joined(separator: " ")
    }

    /// `[-q]` rather than `[--quiet]` where there is a short form.
    package static func shortSynopsis(_ option: OptionSpec) -> String {
        guard let short = option.short else { return option.synopsis }
        return "[\(short)]"
    }

    /// Help for one `app` command.
    package static func command(_ command: CommandSpec, of program: ProgramSpec) -> String {
        var lines = ["usage: " + usagePrefix(program) + " " + command.usage, ""]
        lines += wrap(command.summary, width: 80)
        lines += table("arguments:", command.grammar.positionals.map { ($0.name + ($0.isRepeated ? "..." : ""), $0.help) })
        lines += table("options:", command.grammar.options.map { ($0.label, $0.help) })
        lines += table("global options:", program.globalOptions.filter { $0 != CommonOptions.version }.map { ($0.label, $0.help) })
        return lines.joined(separator: "\n")
    }

    /// Help listing commands (`app --help`, `app trip --help`).
    package static func commandList(_ commands: [CommandSpec], of program: ProgramSpec) -> String {
        var lines = ["usage: " + usagePrefix(program) + " COMMAND [OPTIONS]", ""]
        for paragraph in program.description { lines += wrap(paragraph, width: 80) + [""] }
        lines.append("commands:")
        lines += commands.map { "  \(program.name) " + $0.usage }
        lines += table("global options:", program.globalOptions.map { ($0.label, $0.help) })
        lines += ["", "exit statuses:"] + program.exitStatuses.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// Help for a single-command program (`widget --help`).
    package static func single(_ program: ProgramSpec) -> String {
        var lines = ["usage: " + ([usagePrefix(program), program.grammar.synopsis].filter { !$0.isEmpty }.joined(separator: " ")), ""]
        for paragraph in program.description { lines += wrap(paragraph, width: 80) }
        lines += table("arguments:", program.grammar.positionals.map { ($0.name, $0.help) })
        lines += table("options:", (program.grammar.options + program.globalOptions).map { ($0.label, $0.help) })
        lines += ["", "exit statuses:"] + program.exitStatuses.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// A titled two-column list; nothing when `rows` is empty.
    package static func table(_ title: String, _ rows: [(String, String)]) -> [String] {
        guard !rows.isEmpty else { return [] }
        let width = min(24, rows.map(\.0.count).max() ?? 0)
        var lines = ["", title]
        for (label, help) in rows {
            let wrapped = wrap(help, width: 80 - width - 4)
            let pad = String(repeating: " ", count: width + 4)
            if label.count > width {
                lines.append("  " + label)
                lines += wrapped.map { pad + $0 }
            } else {
                lines.append("  " + label + String(repeating: " ", count: width - label.count + 2) + (wrapped.first ?? ""))
                lines += wrapped.dropFirst().map { pad + $0 }
            }
        }
        return lines
    }

    /// `text` broken between words into lines of at most `width` characters (a longer word
    /// stands alone).
    package static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
