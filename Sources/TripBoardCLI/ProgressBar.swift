import TripBoardMigration
import TripBoardStorage
import TripBoardSystem

/// A one-line progress bar on standard error, redrawn in place, drawn only when standard error
/// is a terminal (a log or a pipe gets no control characters).
final class ProgressBar {
    let isEnabled: Bool
    private var drawn: [UInt8] = []
    private var lastDrawTime = 0.0

    init(isEnabled: Bool = StandardStream.error.isTerminal) { self.isEnabled = isEnabled }

    /// Redraws the bar for `progress`, at most every 50 ms unless the step changed or it is done.
    func update(_ progress: MigrationProgress) {
        guard isEnabled else { return }
        let now = MonotonicClock.now()
        let fraction = progress.total > 0 ? min(1, Double(progress.done) / Double(progress.total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let label = progress.step.padding(to: 11)
        let text = "\(label) [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            + "] \(Int(fraction * 100))% " + Self.bytes(progress.done) + " / " + Self.bytes(progress.total)
        let line = Array(("\r" + text + "\u{1B}[K").utf8)
        guard line != drawn, fraction >= 1 || now - lastDrawTime >= 0.05 || !drawn.starts(with: Array(("\r" + label).utf8)) else { return }
        StandardStream.error.write(line)
        drawn = line
        lastDrawTime = now
    }

    /// Clears the bar's line, so that what follows starts at the left margin.
    func finish() {
        guard isEnabled, !drawn.isEmpty else { return }
        StandardStream.error.write(Array("\r\u{1B}[K".utf8))
        drawn = []
    }

    /// `512 B`, `12.3 MB`, `1.0 GB` (decimal units).
    static func bytes(_ count: Int64) -> String {
        for (size, unit) in [(Int64(1_000_000_000), "GB"), (1_000_000, "MB"), (1_000, "kB")] where count >= size {
            let tenths = (count * 10 + size / 2) / size
            return "\(tenths / 10).\(tenths % 10) \(unit)"
        }
        return "\(count) B"
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
