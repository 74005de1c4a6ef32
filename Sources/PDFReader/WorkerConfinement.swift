import TripBoardSystem
import TripBoardWorkerContract

/// What `pdf-worker` does to itself before it lets poppler near a file.
enum WorkerConfinement {
    /// Lowers this process's resource limits (never raises one an administrator set lower):
    /// address space `PDFWorkerLimits.memoryBytes`, CPU `PDFWorkerLimits.cpuSeconds` (then SIGXCPU;
    /// SIGKILL 2 s later), files written `PDFWorkerLimits.writtenFileBytes`, no core dumps (a core
    /// of a 512 MiB process parsing someone's ticket is both large and private).
    ///
    /// SIGXFSZ is ignored so that an oversized write fails with EFBIG and becomes a
    /// `thumbnailError` instead of killing the inspection.
    static func applyLimits() {
        ResourceLimit.addressSpaceBytes.lower(to: UInt64(PDFWorkerLimits.memoryBytes))
        ResourceLimit.cpuSeconds.lower(soft: UInt64(PDFWorkerLimits.cpuSeconds), hard: UInt64(PDFWorkerLimits.cpuSeconds + 2))
        ResourceLimit.writtenFileBytes.lower(to: UInt64(PDFWorkerLimits.writtenFileBytes))
        ResourceLimit.coreFileBytes.lower(to: 0)
        ProcessSignal.fileSizeLimit.ignore()
    }

    /// Keeps poppler's diagnostics ("error (1234): Couldn't find trailer dictionary") away from the
    /// user: `PopplerShim` discards them (they can quote the file's bytes), and stderr points at
    /// /dev/null for whatever C++ code prints directly. Called after the
    /// arguments are parsed, before any file is touched.
    static func silenceDiagnostics() {
        StandardStream.error.discard()
    }
}
