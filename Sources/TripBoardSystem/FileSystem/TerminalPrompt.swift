internal import CSystem
import Glibc

extension StandardStream {
    /// Prompts on stderr and reads one line from the terminal with echo off (a passphrase typed
    /// by a person). The line is returned without its newline, at most `limit + 1` bytes of it (a
    /// longer result means a longer line, for the caller to refuse); the caller wipes it.
    ///
    /// A termination signal while the prompt waits must not leave the terminal without echo:
    /// SIGINT, SIGTERM, SIGHUP and SIGQUIT (those not ignored) are held back and read through a
    /// signalfd meanwhile; when one comes, the terminal settings are restored — dropping what was
    /// typed so far, so half a passphrase never reaches the shell — and the signal is raised
    /// again with its default action: the process ends as it would have.
    public func readLineWithoutEcho(prompt: String, limit: Int = 1024) throws(FileSystemError) -> [UInt8] {
        StandardStream.error.write(Array(prompt.utf8))
        let signals = try HeldSignals()
        defer { signals.release() }
        var saved = termios()
        let isTerminal = tcgetattr(rawValue, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(rawValue, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal { _ = tcsetattr(rawValue, TCSAFLUSH, &saved) }
            StandardStream.error.write([0x0a])
        }
        return try readLine(limit: limit, signals: signals) { signalNumber in
            if isTerminal { _ = tcsetattr(rawValue, TCSAFLUSH, &saved) }
            StandardStream.error.write([0x0a])
            signals.endProcess(with: signalNumber)
        }
    }

    /// Prompts on stderr and reads one line as typed, echo on (an answer such as `y`), without its
    /// newline and at most `limit + 1` bytes of it; a termination signal ends the process as it would.
    public func readLine(prompt: String, limit: Int = 256) throws(FileSystemError) -> [UInt8] {
        StandardStream.error.write(Array(prompt.utf8))
        let signals = try HeldSignals()
        defer { signals.release() }
        return try readLine(limit: limit, signals: signals) { signals.endProcess(with: $0) }
    }

    /// One line, read a byte at a time (nothing past the newline is consumed), keeping at most
    /// `limit + 1` bytes in a buffer allocated once; `onSignal` is called when a held signal comes.
    private func readLine(limit: Int, signals: HeldSignals, onSignal: (Int32) -> Never) throws(FileSystemError) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(limit + 1)
        var byte: UInt8 = 0
        while true {
            let signalNumber: Int32?
            do { signalNumber = try signals.waitForInput(on: rawValue) } catch {
                for index in line.indices { line[index] = 0 }
                throw error
            }
            if let signalNumber {
                for index in line.indices { line[index] = 0 }
                onSignal(signalNumber)
            }
            let read = retryingOnInterrupt { Glibc.read(rawValue, &byte, 1) }
            if read < 0 {
                for index in line.indices { line[index] = 0 }
                throw .fromErrno("read", path: "terminal")
            }
            if read == 0 || byte == 0x0a { break }
            if line.count <= limit { line.append(byte) }
        }
        byte = 0
        return line
    }
}

/// The termination signals a prompt holds back while it has changed the terminal, readable through
/// a signalfd instead of acting at once. Only the calling thread's mask changes: TripBoard prompts
/// before it starts any other thread, so the kernel has no other thread to deliver them to.
package struct HeldSignals {
    private let descriptor: FileDescriptor
    private var previousMask = sigset_t()

    /// Holds back SIGINT, SIGTERM, SIGHUP and SIGQUIT, except those this process ignores or
    /// blocks already: those would not have ended it (a command started in the background with
    /// SIGINT ignored must stay immune to it).
    init() throws(FileSystemError) {
        pthread_sigmask(SIG_BLOCK, nil, &previousMask)
        var mask = sigset_t()
        sigemptyset(&mask)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
        where !Self.isIgnored(signalNumber) && sigismember(&previousMask, signalNumber) == 0 {
            sigaddset(&mask, signalNumber)
        }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        let signalDescriptor = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        if signalDescriptor < 0 {
            let error = FileSystemError.fromErrno("signalfd", path: "signals")
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            throw error
        }
        descriptor = FileDescriptor(rawValue: signalDescriptor, path: "signals")
    }

    package static func isIgnored(_ signalNumber: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signalNumber, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Waits until `input` is readable (`nil`) or a held signal has come (its number).
    package func waitForInput(on input: Int32) throws(FileSystemError) -> Int32? {
        var descriptors = [pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, 2, -1) < 0 {
            if errno != EINTR { throw .fromErrno("poll", path: "terminal") }
        }
        guard descriptors[1].revents & Int16(POLLIN) != 0 else { return nil }
        var information = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        guard Glibc.read(descriptor.rawValue, &information, size) == size else { return nil }
        return Int32(information.ssi_signo)
    }

    /// Puts the signal mask back as it was.
    package func release() {
        var previous = previousMask
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }

    /// Ends the process by `signalNumber`, as if it had never been held: its default action,
    /// raised again once the mask is back (so the parent sees "killed by SIGINT", not an exit).
    package func endProcess(with signalNumber: Int32) -> Never {
        signal(signalNumber, SIG_DFL)
        release()
        raise(signalNumber)
        _exit(128 + signalNumber)
    }
}
