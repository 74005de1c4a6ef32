import Glibc

/// Named places where the crash tests have a process killed, to prove that what is on disk at
/// that instant is consistent. `TRIPBOARD_CRASH_AT=<name>` makes the process send itself SIGKILL
/// on reaching `<name>` — the same death as `kill -9`, with no cleanup and no buffered output.
/// The names are listed in docs/guarantees.md beside the tests that use them.
public enum CrashPoint {
    public static let environmentVariable = "TRIPBOARD_CRASH_AT"

    private static let selected: String? = {
        let value = ProcessSetup.environment([environmentVariable])[environmentVariable]
        return value?.isEmpty == false ? value : nil
    }()

    /// Kills the process here when the environment names this point; `<name>:stop` stops it
    /// instead (SIGSTOP, until a SIGCONT), so that a test can act while it is there.
    public static func reach(_ name: String) {
        guard let selected, selected.hasPrefix(name) else { return }
        if selected == name { _ = kill(getpid(), SIGKILL) }
        if selected == name + ":stop" { _ = kill(getpid(), SIGSTOP) }
    }
}
