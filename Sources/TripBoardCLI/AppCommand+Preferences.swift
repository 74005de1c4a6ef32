import TripBoardStorage
import TripBoardCommandLine

extension AppCommand {
    static var preferenceCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["prefs", "list"],
                        options: [
                            .json,
                        ],
                        summary: "Lists every preference with its value; defaults are marked.", run: listPreferences, store: .none),
            AppCommandSpec(words: ["prefs", "get"],
                        options: [.json],
                        arguments: [
                            .required("KEY", "the preference", completion: .choices(PreferenceKey.allCases.map(\.rawValue))),
                        ],
                        summary: "Prints one preference's value (--json: {\"key\", \"value\", \"isDefault\"}).", run: getPreference, store: .none),
            AppCommandSpec(words: ["prefs", "set"],
                        arguments: [
                            .required("KEY", "the preference", completion: .choices(PreferenceKey.allCases.map(\.rawValue))),
                            .required("VALUE", "its new value"),
                        ],
                        summary: "Sets a preference. Keys: " + PreferenceKey.allCases.map { "\($0.rawValue) (\($0.allowedValues))" }.joined(separator: "; ") + ".",
                        run: setPreference, createsContainer: true, store: .none),
            AppCommandSpec(words: ["prefs", "unset"],
                        arguments: [
                            .required("KEY", "the preference", completion: .choices(PreferenceKey.allCases.map(\.rawValue))),
                        ],
                        summary: "Removes a preference's value, so that it reads as its default again.",
                        run: unsetPreference, store: .none),
        ]
    }

    /// Loads the preferences, printing any warning about the file once.
    static func loadPreferences(_ context: CommandContext) throws -> (PreferencesFile, Preferences) {
        var file = try PreferencesFile(container: try context.container())
        let preferences = try file.load()
        for warning in file.warnings { context.console.warning(warning) }
        return (file, preferences)
    }

    static func preferenceKey(_ text: String) throws -> PreferenceKey {
        guard let key = PreferenceKey(rawValue: text) else {
            throw CommandLineError.usage("unknown preference '\(text.prefix(40))': use one of \(PreferenceKey.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return key
    }

    static func listPreferences(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let (_, preferences) = try loadPreferences(context)
        if json {
            return try context.console.printJSON(Dictionary(uniqueKeysWithValues: PreferenceKey.allCases.map { ($0.rawValue, preferences[$0]) }))
        }
        context.console.printTable(header: ["KEY", "VALUE", ""], rows: PreferenceKey.allCases.map { key in
            [key.rawValue, preferences[key].description, preferences.isSet(key) ? "" : "(default)"]
        })
    }

    static func getPreference(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let key = try preferenceKey(try context.arguments.positional("preference KEY"))
        try context.finishArguments()
        let (_, preferences) = try loadPreferences(context)
        if json { return try context.console.printJSON(PreferenceReading(key: key.rawValue, value: preferences[key], isDefault: !preferences.isSet(key))) }
        context.console.print(preferences[key].description)
    }

    static func setPreference(_ context: CommandContext) throws {
        let key = try preferenceKey(try context.arguments.positional("preference KEY"))
        let value = try key.parse(try context.arguments.positional("VALUE for \(key.rawValue)"))
        try context.finishArguments()
        var (file, _) = try loadPreferences(context)
        try file.set(key, to: value)
    }

    static func unsetPreference(_ context: CommandContext) throws {
        let key = try preferenceKey(try context.arguments.positional("preference KEY"))
        try context.finishArguments()
        var (file, _) = try loadPreferences(context)
        if !(try file.unset(key)) {
            context.console.diagnostic("\(key.rawValue) was not set; it reads as its default, \(key.defaultValue.description)")
        }
    }
}

/// `prefs get --json`: one preference, typed as in `prefs list --json`.
struct PreferenceReading: Encodable {
    let key: String
    let value: PreferenceValue
    /// True when the preference is not set and reads as its default.
    let isDefault: Bool
}
