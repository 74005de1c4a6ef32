public import TripBoardSystem
public import TripBoardWorkerContract

/// Inspects untrusted PDFs in a `pdf-worker` child process, so that poppler never runs (and is
/// never linked) in a process that holds the container: a PDF that crashes, loops or exhausts
/// memory takes down only the worker, which runs under its own resource limits
/// (`PDFWorkerLimits`) and a wall-clock timeout enforced here with SIGKILL.
///
///     let worker = try PDFWorker.locate()
///     let inspection = try worker.inspect(memoryFile: copy, displayName: "ticket.pdf", thumbnail: true)
public struct PDFWorker: Sendable {
    /// Names the worker executable explicitly (e.g. a release build used by the tests).
    public static let environmentVariable = "TRIPBOARD_PDF_WORKER"
    /// Wall-clock seconds an inspection may take. Ordinary tickets take 30–100 ms.
    public static let defaultTimeout = 10.0

    /// The `pdf-worker` executable this client spawns.
    public let executablePath: String
    /// Wall-clock seconds before the worker is killed and the PDF reported as too complex.
    public var timeout: Double

    public init(executablePath: String, timeout: Double = PDFWorker.defaultTimeout) {
        self.executablePath = executablePath
        self.timeout = timeout
    }

    /// The worker named by `TRIPBOARD_PDF_WORKER` in `environment`, else `pdf-worker` in the
    /// directory of the running executable (where `swift build` and the installation put it).
    /// Whether it exists is found out when it is spawned.
    public static func locate(
        environment: [String: String] = ProcessSetup.environment([PDFWorker.environmentVariable]),
        timeout: Double = PDFWorker.defaultTimeout
    ) throws(PDFImportError) -> PDFWorker {
        if let path = environment[environmentVariable], !path.isEmpty {
            return PDFWorker(executablePath: path, timeout: timeout)
        }
        let directory: String
        do {
            directory = try ChildProcess.currentExecutableDirectory()
        } catch {
            throw .workerMissing(path: "pdf-worker", detail: error.description)
        }
        return PDFWorker(executablePath: directory + "/pdf-worker", timeout: timeout)
    }

    /// Inspects `file`: page count, the text of its first `textPages` pages and, when `thumbnail`
    /// names a file that does not exist yet, a PNG of page 1 fitting a `thumbnailSize`-pixel
    /// square. The worker creates the thumbnail with `O_EXCL` and mode 0600 and does not fsync it
    /// (a cache): write it to a fresh temporary name and rename it into place. Errors name the
    /// file as `displayName` when given (the user's name for a staged copy). `whileRunning` is
    /// work of ours that overlaps the worker's (see `ChildProcess.run`); it reports its own errors.
    public func inspect(file: String, thumbnail: String? = nil, thumbnailSize: Int = 200,
                        textPages: Int = 2, maximumBytes: Int = PDFWorkerLimits.fileBytes,
                        displayName: String? = nil,
                        whileRunning: () -> Void = {}) throws(PDFImportError) -> PDFInspection {
        var arguments = ["inspect", "--text-pages", String(textPages)]
        if maximumBytes != PDFWorkerLimits.fileBytes { arguments += ["--max-size", String(maximumBytes)] }
        if let thumbnail { arguments += ["--thumbnail", thumbnail, "--thumbnail-size", String(thumbnailSize)] }
        arguments += ["--", file]
        return try run(arguments, file: displayName ?? file, maximumBytes: maximumBytes, standardInput: nil,
                       outputLimit: PDFWorkerLimits.textBytes * 6 + (64 << 10), whileRunning: whileRunning)
    }

    /// Inspects the PDF in `file` (an in-memory copy, `FileDescriptor.memoryFile`, sealed against
    /// changes): the worker reads it as its standard input, and when `thumbnail` it returns the
    /// PNG of page 1 on its pipe (`PDFThumbnail.pngBytes`) — no byte of the ticket, nor of its
    /// thumbnail, is written to a disk in the clear. As `inspect(file:…)` otherwise.
    public func inspect(memoryFile file: FileDescriptor, displayName: String, thumbnail: Bool, thumbnailSize: Int = 200,
                        textPages: Int = 2, maximumBytes: Int = PDFWorkerLimits.fileBytes,
                        whileRunning: () -> Void = {}) throws(PDFImportError) -> PDFInspection {
        var arguments = ["inspect", "--text-pages", String(textPages)]
        if maximumBytes != PDFWorkerLimits.fileBytes { arguments += ["--max-size", String(maximumBytes)] }
        if thumbnail { arguments += ["--thumbnail", "-", "--thumbnail-size", String(thumbnailSize)] }
        arguments += ["--", "-"]
        do {
            try file.seek(to: 0)
        } catch {
            throw .workerFailed(file: displayName, detail: error.description)
        }
        return try run(arguments, file: displayName, maximumBytes: maximumBytes, standardInput: file,
                       outputLimit: PDFWorkerLimits.textBytes * 6 + (64 << 10) + (thumbnail ? PDFWorkerLimits.thumbnailBytes / 3 * 4 + 4 : 0),
                       whileRunning: whileRunning)
    }

    private func run(_ arguments: [String], file: String, maximumBytes: Int, standardInput: FileDescriptor?, outputLimit: Int,
                     whileRunning: () -> Void) throws(PDFImportError) -> PDFInspection {
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(
                executable: executablePath, arguments: arguments, environment: Self.childEnvironment(),
                timeout: timeout, outputLimit: outputLimit, standardInput: standardInput, whileRunning: whileRunning)
        } catch where [.notFound, .permissionDenied, .notExecutable].contains(error.code) {
            // Not there, not ours to run, or not a program: missing, for our purposes.
            throw .workerMissing(path: executablePath, detail: error.description)
        } catch {
            throw .workerFailed(file: file, detail: error.description)
        }
        return try interpret(outcome, file: file, maximumBytes: maximumBytes)
    }

    /// The one mapping from how the worker ended to a result or a typed error.
    func interpret(_ outcome: ChildProcess.Outcome, file: String,
                   maximumBytes: Int = PDFWorkerLimits.fileBytes) throws(PDFImportError) -> PDFInspection {
        if outcome.timedOut { throw .tooComplex(file: file, limit: .wallClock(seconds: timeout)) }
        if outcome.exceededOutputLimit { throw .workerFailed(file: file, detail: "it printed more than expected") }
        switch outcome.termination {
        case .signaled(let signal):
            throw Self.error(forSignal: signal, cpuSeconds: outcome.cpuSeconds, file: file)
        case .exited(0):
            do {
                return try JSON.decode(PDFInspection.self, from: outcome.output)
            } catch {
                throw .workerFailed(file: file, detail: "unreadable result (\(error))")
            }
        case .exited(let status):
            let failure = try? JSON.decode(PDFInspectionFailure.self, from: outcome.output)
            guard let kind = failure?.kind ?? PDFInspectionFailure.Kind(exitStatus: status) else {
                throw .workerFailed(file: file, detail: "exit status \(status)")
            }
            let detail = failure?.message ?? "exit status \(status)"
            switch kind {
            case .notPDF: throw .notPDF(file: file)
            case .encrypted: throw .encrypted(file: file)
            case .damaged: throw .damaged(file: file, detail: detail)
            case .unreadable: throw .unreadable(file: file, detail: detail)
            case .tooLarge: throw .tooLarge(file: file, limitBytes: maximumBytes)
            case .usage: throw .workerFailed(file: file, detail: "usage: \(detail)")
            }
        }
    }

    /// What a signal that ended the worker means. SIGXCPU is the RLIMIT_CPU soft limit, SIGKILL
    /// not sent by us its hard limit (or the kernel's OOM killer). Under RLIMIT_AS a failed
    /// allocation ends poppler or the Swift runtime with SIGABRT, SIGTRAP or SIGILL (they
    /// abort rather than return NULL), and a SIGSEGV is the usual face of a crafted file; none of
    /// these is an answer about an ordinary PDF, so all are reported as too complex to read safely.
    static func error(forSignal signal: Int32, cpuSeconds: Double, file: String) -> PDFImportError {
        switch signal {
        case ProcessSignal.cpuTimeLimit:
            return .tooComplex(file: file, limit: .cpuTime(seconds: PDFWorkerLimits.cpuSeconds))
        case ProcessSignal.kill where cpuSeconds >= Double(PDFWorkerLimits.cpuSeconds) - 0.5:
            return .tooComplex(file: file, limit: .cpuTime(seconds: PDFWorkerLimits.cpuSeconds))
        case ProcessSignal.kill, ProcessSignal.abort, ProcessSignal.trap, ProcessSignal.illegalInstruction,
             ProcessSignal.busError, ProcessSignal.segmentationFault:
            return .tooComplex(file: file, limit: .memory(bytes: PDFWorkerLimits.memoryBytes, signal: signal))
        default:
            return .workerFailed(file: file, detail: "ended by signal \(signal)")
        }
    }

    /// The worker needs nothing from our environment but the library path (non-standard
    /// installations) and where fontconfig may keep its cache.
    static func childEnvironment() -> [String: String] {
        ProcessSetup.environment(["LD_LIBRARY_PATH", "HOME", "XDG_CACHE_HOME"])
    }
}

/// Why a PDF could not be imported. Descriptions are one line, name the file, and are safe to show.
public enum PDFImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A limit the worker hit while reading a PDF.
    public enum Limit: Sendable, Equatable {
        /// The RLIMIT_CPU limit.
        case cpuTime(seconds: Int)
        /// The RLIMIT_AS limit, as far as can be told: the worker died of `signal` (an abort on a
        /// failed allocation, or a crash) rather than answering.
        case memory(bytes: Int, signal: Int32)
        /// The client's wall-clock timeout.
        case wallClock(seconds: Double)
    }

    /// The error without its details, for `switch` and tests.
    public enum Kind: Sendable, Equatable {
        case notPDF, encrypted, damaged, unreadable, tooLarge, tooComplex, workerMissing, workerFailed
    }

    /// No `%PDF-` header near the start: a photo, a web page, random bytes.
    case notPDF(file: String)
    /// Opening it needs a user password.
    case encrypted(file: String)
    /// A PDF poppler cannot make sense of (cut short, no pages, broken beyond repair).
    case damaged(file: String, detail: String)
    /// Missing, a directory, no permission.
    case unreadable(file: String, detail: String)
    /// Larger than `PDFWorkerLimits.fileBytes`.
    case tooLarge(file: String, limitBytes: Int)
    /// The worker was stopped by a limit: the PDF needs more time or memory than a ticket may.
    case tooComplex(file: String, limit: Limit)
    /// `pdf-worker` is not there or cannot be run.
    case workerMissing(path: String, detail: String)
    /// The worker misbehaved: a bug, not a verdict on the PDF.
    case workerFailed(file: String, detail: String)

    /// Which case this is, without its details.
    public var kind: Kind {
        switch self {
        case .notPDF: .notPDF
        case .encrypted: .encrypted
        case .damaged: .damaged
        case .unreadable: .unreadable
        case .tooLarge: .tooLarge
        case .tooComplex: .tooComplex
        case .workerMissing: .workerMissing
        case .workerFailed: .workerFailed
        }
    }

    public var description: String {
        switch self {
        case .notPDF(let file):
            return "\(file): not a PDF file"
        case .encrypted(let file):
            return "\(file): the PDF is password-protected, so TripBoard cannot read it; save a copy without the password (e.g. print it to PDF) and import that"
        case .damaged(let file, let detail):
            return "\(file): the PDF is damaged and cannot be read (\(detail))"
        case .unreadable(let file, let detail):
            return "\(file): cannot be read (\(detail))"
        case .tooLarge(let file, let limit):
            return "\(file): the PDF is larger than \(limit >> 20) MiB, too large to import"
        case .tooComplex(let file, let limit):
            let reason = switch limit {
            case .cpuTime(let seconds): "reading it used more than its \(seconds) s of CPU time"
            case .memory(let bytes, let signal): "the PDF reader stopped (signal \(signal)), most likely on reaching its \(bytes >> 20) MiB memory limit"
            case .wallClock(let seconds): "reading it took longer than \(Self.format(seconds)) s and was stopped"
            }
            return "\(file): the PDF is too complex to read safely: \(reason)"
        case .workerMissing(let path, let detail):
            return "the PDF reader \(path) cannot be run (\(detail)); reinstall TripBoard or set \(PDFWorker.environmentVariable)"
        case .workerFailed(let file, let detail):
            return "\(file): the PDF reader failed: \(detail)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
