import TripBoardCommandLine
/// Man pages (roff, man macros), made from the command model: `tools/man` writes them to
/// `docs/man/<program>.1`, and a test checks the checked-in pages are what this makes.
enum ManPage {
    static func render(_ program: ProgramSpec) -> String {
        var lines = [
            ".\\\" Made by tools/man from the command model (Sources/TripBoardCLI); do not edit.",
            ".TH \(escape(program.name.uppercased())) 1 \"\" \"TripBoard 1.0\" \"TripBoard manual\"",
            ".SH NAME",
            "\(escape(program.name)) \\- \(escape(program.tagline))",
            ".SH SYNOPSIS",
        ]
        let globals = program.globalOptions.filter { $0 != CommonOptions.help && $0 != CommonOptions.version }
        if program.isSingleCommand {
            var grammar = program.grammar
            grammar.options = globals + grammar.options
            lines.append(synopsis(program.name, grammar))
        } else {
            lines.append(".B \(escape(program.name))\n" + globals.map { synopsisItem($0) }.joined(separator: "\n") + "\n.I COMMAND\n[\\fIOPTIONS\\fR]")
        }
        lines.append(".SH DESCRIPTION")
        for paragraph in program.description { lines += [".PP", escape(paragraph)] }
        if !program.isSingleCommand {
            lines.append(".SH COMMANDS")
            for command in program.commands {
                lines.append(".SS \"\(escape(command.words.joined(separator: " ")))\"")
                lines.append(synopsis(program.name + " " + command.words.joined(separator: " "), command.grammar))
                lines += [".PP", escape(command.summary)]
                lines += items(command.grammar.positionals.map { ("\\fI\(escape($0.name))\\fR" + ($0.isRepeated ? "..." : ""), $0.help) })
                lines += items(command.grammar.options.map { (label($0), $0.help) })
            }
            lines.append(".SH GLOBAL OPTIONS")
            lines += items(program.globalOptions.map { (label($0), $0.help) })
        } else {
            lines.append(".SH OPTIONS")
            lines += items(program.grammar.positionals.map { ("\\fI\(escape($0.name))\\fR", $0.help) })
            lines += items((program.grammar.options + program.globalOptions).map { (label($0), $0.help) })
        }
        lines.append(".SH EXIT STATUS")
        for status in program.exitStatuses {
            let (number, meaning) = status.split(separator: " ", maxSplits: 1).map(String.init).pair
            lines += [".TP", ".B \(number)", escape(meaning.trimmingLeadingSpaces)]
        }
        lines += [".SH ENVIRONMENT",
                  ".TP", ".B TRIPBOARD_CONTAINER", "the container, unless \\-\\-container is given",
                  ".TP", ".B XDG_DATA_HOME\\fR, \\fBHOME", "the default container: $XDG_DATA_HOME/tripboard/shared\\-container, else $HOME/.local/share/tripboard/shared\\-container",
                  ".TP", ".B TZ", "the local time zone",
                  ".PP", "docs/cli.md lists every variable each program reads.",
                  ".SH SEE ALSO"]
        lines.append(Completion.programNames.filter { $0 != program.name }.map { "\\fB\(escape($0))\\fR(1)" }.joined(separator: ", ")
                     + "; docs/cli.md in the TripBoard sources.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A synopsis paragraph: the name in bold, then each argument and option (a one-of group as
    /// `[--upcoming | --past | --from D --to D]`, as in the usage line).
    static func synopsis(_ name: String, _ grammar: Grammar) -> String {
        var parts = [".B \(escape(name))"]
        parts += grammar.positionals.map { positional in
            let bare = "\\fI\(escape(positional.name))\\fR" + (positional.isRepeated ? "..." : "")
            return positional.isOptional ? "[\(bare)]" : bare
        }
        parts += grammar.synopsisItems { option, inGroup in synopsisItem(option, bracketed: !inGroup) }
        return parts.joined(separator: "\n")
    }

    static func synopsisItem(_ option: OptionSpec, bracketed: Bool = true) -> String {
        let bare = "\\fB\(escape(option.name))\\fR" + (option.valueName.map { " \\fI\(escape($0))\\fR" } ?? "")
        return option.isRequired || !bracketed ? bare : "[\(bare)]"
    }

    static func label(_ option: OptionSpec) -> String {
        (option.short.map { "\\fB\(escape($0))\\fR, " } ?? "") + "\\fB\(escape(option.name))\\fR"
            + (option.valueName.map { " \\fI\(escape($0))\\fR" } ?? "")
    }

    static func items(_ rows: [(String, String)]) -> [String] {
        rows.flatMap { [".TP", $0.0, escape($0.1)] }
    }

    /// Text made safe for roff: backslashes and hyphens escaped, no line starting with a control
    /// character (`.` or `'`).
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case "\n": escaped += "\n"
            default: escaped.append(character)
            }
        }
        return escaped.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }.joined(separator: "\n")
    }
}

private extension Array where Element == String {
    var pair: (String, String) { (first ?? "", count > 1 ? self[1] : "") }
}

private extension String {
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
