internal import CPoppler
import Glibc
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
        lower(RLIMIT_AS, to: rlim_t(PDFWorkerLimits.memoryBytes), "RLIMIT_AS")
        lower(RLIMIT_CPU, soft: rlim_t(PDFWorkerLimits.cpuSeconds), hard: rlim_t(PDFWorkerLimits.cpuSeconds + 2), "RLIMIT_CPU")
        lower(RLIMIT_FSIZE, to: rlim_t(PDFWorkerLimits.writtenFileBytes), "RLIMIT_FSIZE")
        lower(RLIMIT_CORE, to: 0, "RLIMIT_CORE")
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Keeps poppler's and glib's diagnostics ("Syntax Error: …", "Invalid XRef entry") away from
    /// the user: poppler-glib sends them to g_log (shown with `G_MESSAGES_DEBUG=all`), so install a
    /// no-op default handler and a no-op structured-log writer (`g_log_structured` bypasses the
    /// default handler), and point stderr at /dev/null for whatever C++ code prints directly.
    /// Called after the arguments are parsed, before any file is touched.
    static func silenceDiagnostics() {
        g_log_set_default_handler({ _, _, _, _ in }, nil)
        g_log_set_writer_func({ _, _, _, _ in G_LOG_WRITER_HANDLED }, nil, nil)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if null >= 0 {
            _ = dup2(null, 2)
            if null != 2 { _ = close(null) }
        }
    }

    private static func lower(_ resource: __rlimit_resource, to limit: rlim_t, _ name: StaticString) {
        lower(resource, soft: limit, hard: limit, name)
    }

    /// setrlimit(2): "An unprivileged process may … irreversibly lower its hard limit." Lowering
    /// cannot fail, so a failure is a programmer error (a wrong resource), and traps.
    private static func lower(_ resource: __rlimit_resource, soft: rlim_t, hard: rlim_t, _ name: StaticString) {
        let which = __rlimit_resource_t(resource.rawValue)
        var current = rlimit()
        precondition(getrlimit(which, &current) == 0, "getrlimit(\(name)) failed")
        var limit = rlimit(rlim_cur: min(soft, current.rlim_max), rlim_max: min(hard, current.rlim_max))
        precondition(setrlimit(which, &limit) == 0, "setrlimit(\(name)) failed")
    }
}
