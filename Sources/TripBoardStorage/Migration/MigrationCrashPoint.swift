import Glibc

/// A testing hook: `TRIPBOARD_MIGRATION_CRASH_AT=<name>` makes the migration send itself SIGKILL
/// on reaching the point `<name>` — the same death as `kill -9`, with no cleanup — so the tests
/// can prove that a re-run finishes from there. The names, one per step and one inside each long
/// step, are listed in docs/migration.md. Unset (always, outside the tests), it does nothing.
enum MigrationCrashPoint {
    static let environmentVariable = "TRIPBOARD_MIGRATION_CRASH_AT"

    static let names = ["plan", "store-staged", "store", "attachments-partial", "attachments", "preferences-partial",
                        "preferences", "verify", "commit", "delete-partial"]

    private static let selected: String? = {
        guard let value = getenv(environmentVariable) else { return nil }
        let name = String(cString: value)
        return name.isEmpty ? nil : name
    }()

    /// Kills the process here when the environment names this point.
    static func reach(_ name: String) {
        assert(names.contains(name), "unknown crash point \(name)")
        guard let selected, selected == name else { return }
        _ = kill(getpid(), SIGKILL)
    }
}
