import TripBoardSystem
package import TripBoardCommandLine
public import TripBoardWorkerContract

/// `pdf-worker`: inspects one untrusted PDF under resource limits and prints one JSON object.
///
///     pdf-worker inspect [--thumbnail OUT.png|-] [--thumbnail-size PX] [--text-pages N] [--max-size BYTES] [--] FILE|-
///
/// `FILE` `-` is standard input, which must be a regular file (the share extension hands over an
/// in-memory copy, memfd_create(2)); `--thumbnail -` returns the PNG in the JSON object
/// (`thumbnail.png`, base64) instead of writing a file, so that no thumbnail reaches a disk in
/// the clear.
///
/// Options may come before or after FILE, as `--name VALUE` or `--name=VALUE`; `--` ends them
/// (the command line is parsed by the programs' shared core, `ProgramStart`). Defaults: `--text-pages 2` (0–100),
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
        case version
        case inspect(Options)
    }

    /// The worker's command line, declared once: its parsing and `--help` are made from it.
    package static let program = ProgramSpec(
        name: "pdf-worker", tagline: "inspects one untrusted PDF under resource limits",
        description: [
            "Run by share-extension and app for each PDF they file, confined: it prints one JSON object, {\"pageCount\",\"text\",\"thumbnail\",\"thumbnailError\",\"thumbnailErrorKind\"} or {\"error\",\"message\"}, and nothing on standard error once its arguments are read.",
        ],
        globalOptions: [CommonOptions.quiet, CommonOptions.help, CommonOptions.version], commands: [],
        grammar: Grammar(options: [
            .value("--thumbnail", "OUT.png", "write page 1 as a PNG to this new file (created 0600, never over an existing one), or `-`: return it in the JSON object (base64)", completion: .file),
            .value("--thumbnail-size", "PX", "the square box the thumbnail fits, 1–\(PDFWorkerLimits.thumbnailPixels) (default 200)"),
            .value("--text-pages", "N", "how many pages' text to report, 0–\(PDFWorkerLimits.textPages) (default 2)"),
            .value("--max-size", "BYTES", "the largest file accepted, at most \(PDFWorkerLimits.maximumFileBytes) (default 64 MiB)"),
        ], positionals: [
            .required("inspect", "the command (the only one)"),
            .required("FILE", "the PDF, or `-`: standard input (a regular file, e.g. an in-memory copy)", completion: .file),
        ]),
        exitStatuses: ["0  inspected", "1  internal error", "64  usage", "66  unreadable", "80  not a PDF", "81  encrypted",
                       "82  damaged", "83  too large"],
        versionDetail: nil)

    /// `main(arguments:)` with the command line as the kernel passed it: a word that is not
    /// valid UTF-8 is a usage error (`ProgramStart.words`), never a file name repaired into
    /// another file's.
    public static func main(rawArguments: [[UInt8]]) -> Int32 {
        do {
            return main(arguments: try ProgramStart.words(rawArguments))
        } catch {
            ProcessSetup.applyDefaults()
            return report(.failure(PDFInspectionFailure(.usage, error.message)))
        }
    }

    /// The whole worker: parse, confine, silence, inspect, print. Returns the exit status.
    public static func main(arguments: [String]) -> Int32 {
        ProcessSetup.applyDefaults()
        let invocation: Invocation
        do {
            invocation = try parse(arguments)
        } catch {
            return report(.failure(error))
        }
        let options: Options
        switch invocation {
        case .help:
            return StandardStream.output.write(Array((HelpText.single(program) + "\n").utf8)) ? 0 : 1
        case .version:
            return StandardStream.output.write(Array((program.versionLine + "\n").utf8)) ? 0 : 1
        case .inspect(let inspected):
            options = inspected
        }
        WorkerConfinement.applyLimits()
        WorkerConfinement.silenceDiagnostics()
        return report(Result { () throws(PDFInspectionFailure) in try inspect(options) })
    }

    /// Parses the arguments after the executable's name.
    public static func parse(_ words: [String]) throws(PDFInspectionFailure) -> Invocation {
        do {
            var arguments: Arguments
            switch try ProgramStart.parse(words, of: program) {
            case .help: return .help
            case .version: return .version
            case .run(let parsed): arguments = parsed
            }
            guard let command = arguments.nextPositional() else { throw CommandLineError.usage("missing command 'inspect'") }
            if command == "help" { return .help }
            guard command == "inspect" else {
                let suggestion = Suggestion.closest(to: command, among: ["inspect"]).map { " (did you mean \($0)?)" } ?? ""
                throw CommandLineError.usage("unknown command '\(terminalSafe(String(command.prefix(60))))'" + suggestion)
            }
            let file = try arguments.positional("FILE")
            try arguments.finish()
            guard !file.isEmpty else { throw CommandLineError.usage("missing FILE") }
            let thumbnail = try arguments.option("--thumbnail")
            if thumbnail?.isEmpty == true { throw CommandLineError.usage("--thumbnail needs a file name") }
            var options = Options(file: file, thumbnailPath: thumbnail)
            options.thumbnailSize = try number(arguments, "--thumbnail-size", in: 1...PDFWorkerLimits.thumbnailPixels) ?? options.thumbnailSize
            options.textPages = try number(arguments, "--text-pages", in: 0...PDFWorkerLimits.textPages) ?? options.textPages
            options.maximumBytes = try number(arguments, "--max-size", in: 1...PDFWorkerLimits.maximumFileBytes) ?? options.maximumBytes
            return .inspect(options)
        } catch let failure as PDFInspectionFailure {
            throw failure
        } catch {
            throw PDFInspectionFailure(.usage, (error as? CommandLineError)?.message ?? "\(error)")
        }
    }

    /// Inspects `options.file` in this process, with no limits: the worker's logic, testable in-process.
    public static func inspect(_ options: Options) throws(PDFInspectionFailure) -> PDFInspection {
        // `-`: the file is standard input, a descriptor the caller handed over (an in-memory
        // copy: the ticket's plaintext is on no disk), opened again through /proc like any file.
        let path = options.file == "-" ? standardInputPath : options.file
        try checkFile(path, maximumBytes: options.maximumBytes)
        let document: PDFDocument
        do {
            document = try PDFDocument(path: path)
        } catch {
            throw failure(for: error)
        }
        var inspection = PDFInspection(
            pageCount: document.pageCount,
            text: document.text(firstPages: options.textPages, limit: PDFWorkerLimits.textBytes))
        if let thumbnailPath = options.thumbnailPath {
            do {
                let image = try document.renderThumbnail(fittingIn: options.thumbnailSize)
                if thumbnailPath == "-" {
                    guard image.bytes.count <= PDFWorkerLimits.thumbnailBytes else {
                        throw PDFDocumentError.renderingFailed(path: options.file, detail: "the thumbnail is larger than \(PDFWorkerLimits.thumbnailBytes >> 20) MiB")
                    }
                    inspection.thumbnail = PDFThumbnail(path: "-", width: image.width, height: image.height, png: image.bytes)
                } else {
                    try write(image.bytes, to: thumbnailPath)
                    inspection.thumbnail = PDFThumbnail(path: thumbnailPath, width: image.width, height: image.height)
                }
            } catch {
                inspection.thumbnailError = errorMessage(for: error)
                // The caller reports a full disk as a full disk, not as a damaged PDF.
                inspection.thumbnailErrorKind = (error as? FileSystemError).map { $0.code == .noSpace ? .noSpace : .writing } ?? .rendering
            }
        }
        return inspection
    }

    /// Where a process finds its standard input as a file it can open again.
    static let standardInputPath = "/proc/self/fd/0"

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

    /// `--name N` within `range`, or nil when it is not given.
    private static func number(_ arguments: Arguments, _ option: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try arguments.option(option) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw PDFInspectionFailure(.usage,
                "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(terminalSafe(String(text.prefix(40))))'")
        }
        return number
    }
}
