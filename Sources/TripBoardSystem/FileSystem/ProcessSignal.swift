import Glibc

/// A signal by name, so code above the basement never spells signal numbers (`case 24`):
///
///     switch termination {
///     case .signaled(ProcessSignal.cpuTimeLimit): …
///
/// Matches the raw numbers `ChildProcess.Termination` carries with `~=`.
public struct ProcessSignal: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let kill = ProcessSignal(rawValue: SIGKILL)
    public static let abort = ProcessSignal(rawValue: SIGABRT)
    public static let trap = ProcessSignal(rawValue: SIGTRAP)
    public static let illegalInstruction = ProcessSignal(rawValue: SIGILL)
    public static let busError = ProcessSignal(rawValue: SIGBUS)
    public static let segmentationFault = ProcessSignal(rawValue: SIGSEGV)
    /// RLIMIT_CPU's soft limit was reached.
    public static let cpuTimeLimit = ProcessSignal(rawValue: SIGXCPU)

    /// `signal 11 (Segmentation fault)`, as `strsignal(3)` names it.
    public var description: String { "signal \(rawValue) (\(String(cString: strsignal(rawValue))))" }

    public static func ~= (pattern: ProcessSignal, value: Int32) -> Bool { pattern.rawValue == value }
}
