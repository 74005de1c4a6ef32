import TripBoardSystem
public import TripBoardWorkerContract

/// `pdf-worker`: inspects one untrusted PDF under resource limits and prints one JSON object.
///
///     pdf-worker inspect [--thumbnail OUT.png] [--thumbnail-size PX] [--text-pages N] [--max-size BYTES] [--] FILE
///
/// Options may come before or after FILE; `--` ends them. Defaults: `--text-pages 2` (0–100),
/// `--thumbnail-size 200` (1–2048), `--max-size` 64 MiB (at most 1 GiB); no thumbnail unless `--thumbnail` names a file that does not
/// exist yet (created 0600 with O_EXCL).
///
/// stdout carries exactly one JSON object and a newline (keys sorted; see `PDFInspection`):
///
///     {"pageCount":1,"text":"…","thumbnail":{"height":200,"path":"OUT.png","width":141},"thumbnailError":null}
///     {"error":"encrypted","message":"…"}
///
/// Exit statuses (`PDFInspectionFailure.Kind.exitStatus`): 0 inspected (a thumbnail that could
/// not be made is `thumbnailError`, not a failure) · 1 internal error · 64 usage · 66 unreadable ·
/// 80 notPDF · 81 encrypted · 82 damaged · 83 tooLarge. Death by a signal means a limit stopped
/// it: SIGXCPU (CPU), SIGKILL (CPU hard limit, or the caller's timeout), SIGABRT/SIGTRAP/SIGILL/
/// SIGSEGV (usually memory: allocations fail under RLIMIT_AS and poppler and Swift abort).
/// stderr says nothing: it is /dev/null once the arguments are parsed.
public enum WorkerCommand {
    /// What to inspect and what to produce.
    public struct Options: Sendable, Equatable {
        /// The PDF to inspect.
        public var file: String
        /// Where to write the PNG of page 1 (a file that must not exist yet); nil: no thumbnail.
        public var thumbnailPath: String?
        /// The square box, in pixels, the thumbnail fits.
        public var thumbnailSize: Int
        /// How many pages' text to report (from the first).
        public var textPages: Int
        /// The largest file accepted, in bytes (`PDFWorkerLimits.fileBytes` unless the caller,
        /// which has its own cap, says otherwise; never above `PDFWorkerLimits.maximumFileBytes`).
        public var maximumBytes: Int

        public init(file: String, thumbnailPath: String? = nil, thumbnailSize: Int = 200, textPages: Int = 2,
                    maximumBytes: Int = PDFWorkerLimits.fileBytes) {
            self.file = file
            self.thumbnailPath = thumbnailPath
            self.thumbnailSize = thumbnailSize
            self.textPages = textPages
            self.maximumBytes = maximumBytes
        }
    }

    /// A parsed command line.
    public enum Invocation: Sendable, Equatable {
        case help
        case inspect(Options)
    }

    /// What `pdf-worker --version` (alone on the line, or with `-q`/`--quiet`) prints.
    public static let version = "TripBoard pdf-worker 1.0"

    /// What `--help` prints.
    public static let usage = """
        usage: pdf-worker inspect [--thumbnail OUT.png] [--thumbnail-size PX] [--text-pages N] [--max-size BYTES] [--] FILE
        Prints one JSON object: {"pageCount","text","thumbnail","thumbnailError"} or {"error","message"}.
        Exit status: 0 ok, 1 internal, 64 usage, 66 unreadable, 80 notPDF, 81 encrypted, 82 damaged, 83 tooLarge.

        """

    /// The whole worker: parse, confine, silence, inspect, print. Returns the exit status.
    public static func main(arguments: [String]) -> Int32 {
        ProcessSetup.applyDefaults()
        if arguments.contains("--version"), arguments.allSatisfy({ ["--version", "-q", "--quiet"].contains($0) }) {
            StandardStream.output.write(Array((version + "\n").utf8))
            return 0
        }
        let invocation: Invocation
        do {
            invocation = try parse(arguments)
        } catch {
            return report(.failure(error))
        }
        guard case .inspect(let options) = invocation else {
            StandardStream.output.write(Array(usage.utf8))
            return 0
        }
        WorkerConfinement.applyLimits()
        WorkerConfinement.silenceDiagnostics()
        return report(Result { () throws(PDFInspectionFailure) in try inspect(options) })
    }

    /// Parses the arguments after the executable's name.
    public static func parse(_ arguments: [String]) throws(PDFInspectionFailure) -> Invocation {
        if arguments.contains("--help") || arguments.contains("-h") || arguments.first == "help" { return .help }
        guard arguments.first == "inspect" else {
            throw PDFInspectionFailure(.usage, arguments.isEmpty ? "missing command 'inspect'" : "unknown command '\(arguments[0])'")
        }
        var options = Options(file: "")
        var files: [String] = []
        var remaining = arguments.dropFirst()[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--":
                files += remaining
                remaining = []
            case "--thumbnail":
                options.thumbnailPath = try value(of: argument, from: &remaining)
            case "--thumbnail-size":
                options.thumbnailSize = try number(of: argument, from: &remaining, in: 1...PDFWorkerLimits.thumbnailPixels)
            case "--text-pages":
                options.textPages = try number(of: argument, from: &remaining, in: 0...PDFWorkerLimits.textPages)
            case "--max-size":
                options.maximumBytes = try number(of: argument, from: &remaining, in: 1...PDFWorkerLimits.maximumFileBytes)
            default:
                if argument.hasPrefix("-") && argument != "-" { throw PDFInspectionFailure(.usage, "unknown option '\(argument)'") }
                files.append(argument)
            }
        }
        guard files.count == 1, let file = files.first, !file.isEmpty else {
            throw PDFInspectionFailure(.usage, files.isEmpty ? "missing FILE" : "expected one FILE, got \(files.count)")
        }
        options.file = file
        return .inspect(options)
    }

    /// Inspects `options.file` in this process, with no limits: the worker's logic, testable in-process.
    public static func inspect(_ options: Options) throws(PDFInspectionFailure) -> PDFInspection {
        try checkFile(options.file, maximumBytes: options.maximumBytes)
        let document: PDFDocument
        do {
            document = try PDFDocument(path: options.file)
        } catch {
            throw failure(for: error)
        }
        var inspection = PDFInspection(
            pageCount: document.pageCount,
            text: document.text(firstPages: options.textPages, limit: PDFWorkerLimits.textBytes))
        if let thumbnailPath = options.thumbnailPath {
            do {
                let image = try document.renderThumbnail(fittingIn: options.thumbnailSize)
                try write(image.bytes, to: thumbnailPath)
                inspection.thumbnail = PDFThumbnail(path: thumbnailPath, width: image.width, height: image.height)
            } catch {
                inspection.thumbnailError = errorMessage(for: error)
                // The caller reports a full disk as a full disk, not as a damaged PDF.
                inspection.thumbnailErrorKind = (error as? FileSystemError).map { $0.code == .noSpace ? .noSpace : .writing } ?? .rendering
            }
        }
        return inspection
    }

    // MARK: - Private

    /// Refuses what poppler should never see: a file we cannot read, something that is not a
    /// regular file (a FIFO would block `fopen` forever), a file over the size cap, and a file
    /// with no `%PDF-` in its first 1024 bytes (poppler accepts junk before the header, and so
    /// do we, but it also "repairs" files that are not PDFs at all).
    static func checkFile(_ path: String, maximumBytes: Int = PDFWorkerLimits.fileBytes) throws(PDFInspectionFailure) {
        let status: FileStatus
        do {
            status = try FileStatus.of(path: path)
        } catch {
            throw PDFInspectionFailure(.unreadable, error.reason)
        }
        guard status.kind == .regular else { throw PDFInspectionFailure(.unreadable, "not a regular file") }
        let prefix: [UInt8]
        let size: Int64
        do {
            let file = try FileDescriptor.openForReading(path: path)
            size = try file.status().size
            prefix = try file.read(upTo: PDFWorkerLimits.headerSearchBytes)
        } catch {
            throw PDFInspectionFailure(.unreadable, error.description)
        }
        guard size <= maximumBytes else {
            throw PDFInspectionFailure(.tooLarge, "\(size) bytes, more than the limit of \(maximumBytes) bytes")
        }
        guard !prefix.isEmpty else { throw PDFInspectionFailure(.notPDF, "the file is empty") }
        guard PDFWorkerLimits.hasHeader(prefix) else {
            throw PDFInspectionFailure(.notPDF, "no %PDF- header in the first \(PDFWorkerLimits.headerSearchBytes) bytes")
        }
    }

    /// Writes a new file at `path` (O_EXCL, 0600). Not fsync'd: a thumbnail is a cache entry.
    static func write(_ bytes: [UInt8], to path: String) throws(FileSystemError) {
        let slash = path.lastIndex(of: "/")
        let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let directory = try Directory.open(path: directoryPath)
        let file = try directory.openFile(name, .writeOnly, creating: .newFile, mode: 0o600)
        do {
            try file.write(all: bytes)
        } catch {
            try? directory.removeFile(name)
            throw error
        }
    }

    static func failure(for error: PDFDocumentError) -> PDFInspectionFailure {
        switch error {
        case .encrypted: PDFInspectionFailure(.encrypted, error.reason)
        case .damaged, .renderingFailed: PDFInspectionFailure(.damaged, error.reason)
        case .unreadable: PDFInspectionFailure(.unreadable, error.reason)
        }
    }

    /// Prints the one JSON object and returns the exit status that goes with it.
    private static func report(_ result: Result<PDFInspection, PDFInspectionFailure>) -> Int32 {
        do {
            let (document, status) = switch result {
            case .success(let inspection): (try JSON.encode(inspection, pretty: false), Int32(0))
            case .failure(let failure): (try JSON.encode(failure, pretty: false), failure.kind.exitStatus)
            }
            return StandardStream.output.write(document + [0x0a]) ? status : 1
        } catch {
            return 1
        }
    }

    private static func value(of option: String, from arguments: inout ArraySlice<String>) throws(PDFInspectionFailure) -> String {
        guard let value = arguments.popFirst() else { throw PDFInspectionFailure(.usage, "\(option) needs a value") }
        return value
    }

    private static func number(of option: String, from arguments: inout ArraySlice<String>,
                               in range: ClosedRange<Int>) throws(PDFInspectionFailure) -> Int {
        let text = try value(of: option, from: &arguments)
        guard let number = Int(text), range.contains(number) else {
            throw PDFInspectionFailure(.usage, "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}
