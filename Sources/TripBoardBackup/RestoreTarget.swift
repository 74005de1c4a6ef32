import TripBoardStorage
import TripBoardKeychain
import TripBoardSystem
import TripBoardModel

/// Where a restore puts the container, and the renames that put it there.
///
/// The staging directory, `.<name>.restoring-<stamp>`, is made in the nearest directory of the
/// target's path that exists (same filesystem as the target, so the final step is a rename),
/// holding a marker file until it is complete. Publishing is one atomic step: a `rename` into a
/// missing or empty target, or — with `--replace`, under the old container's exclusive lock — a
/// `renameat2(RENAME_EXCHANGE)` of the staging directory and the old container, after which the
/// old one (now under the staging name) is renamed to `<name>.replaced-<stamp>`.
struct RestoreTarget {
    enum Kind { case absent, emptyDirectory, container }

    let kind: Kind
    /// The nearest existing directory on the target's path, where staging happens.
    let parent: Directory
    /// The components between `parent` and the target (the last is the target's own name).
    let missing: [String]
    var name: String { missing.last! }
    var canonicalPath: String { ([parent.path] + missing).joined(separator: "/").replacingDoubleSlash() }
    static let incompleteMarker = ".restore-incomplete"

    init(path: String, replace: Bool) throws {
        let found: Directory?
        do {
            found = try Directory.openResolvingLinks(path: path)
        } catch {
            if error.code == .notADirectory { throw ContainerError.unusable(path: path, reason: "it is not a directory") }
            guard error.code == .notFound else { throw error }
            found = nil
        }
        guard let existing = found else {
            (parent, missing) = try Self.nearestExisting(path)
            // The name itself may be there as a link to nothing: said as such, before anything
            // is staged (the final rename would meet it).
            if missing.count == 1, try parent.status(of: missing[0])?.kind == .symbolicLink {
                throw ContainerError.unusable(path: path, reason: "it is a symbolic link to a path that does not exist; create the "
                                              + "directory it names, or remove the link")
            }
            kind = .absent
            return
        }
        let components = existing.path.split(separator: "/").map(String.init)
        guard let last = components.last else { throw ContainerError.unusable(path: path, reason: "it is the root directory") }
        parent = try Directory.openResolvingLinks(path: "/" + components.dropLast().joined(separator: "/"))
        missing = [last]
        switch try Container.presence(in: existing) {
        case .emptyDirectory: kind = .emptyDirectory
        case .container:
            guard replace else { throw RestoreError.targetHoldsAContainer(path: existing.path) }
            kind = .container
        case .foreignDirectory:
            throw ContainerError.unusable(path: existing.path, reason: "it is a directory with other files in it and no TripBoard container")
        }
    }

    /// The deepest existing directory on `path` and the names below it.
    static func nearestExisting(_ path: String) throws -> (Directory, [String]) {
        var components = path.split(separator: "/").map(String.init)
        var missing: [String] = []
        while let last = components.popLast() {
            missing.insert(last, at: 0)
            let prefix = (path.hasPrefix("/") ? "/" : "") + components.joined(separator: "/")
            // (A `catch … where` on a typed error crashes the 6.3 compiler here.)
            let opened: Directory
            do {
                opened = try Directory.openResolvingLinks(path: prefix.isEmpty ? "." : prefix)
            } catch {
                if error.code == .notFound { continue }
                throw error
            }
            return (opened, missing)
        }
        throw ContainerError.unusable(path: path, reason: "no directory on its path exists")
    }

    var stagingPrefix: String { "." + name + ".restoring-" }
    /// Holds the target for one restore, from before its staging directory is made until it is
    /// published or removed: an exclusive `flock` on the directory where staging happens (a
    /// descriptor of its own; no file is made for it, so a dry run or a refused restore writes
    /// nothing). A second restore there waits up to `timeout` seconds, then is refused; so no
    /// restore ever touches the staging directory of one that is running.
    func holdForRestore(timeout: Double) throws -> FileLock {
        let lock = FileLock(descriptor: try parent.openDirectory(".").descriptor)
        do {
            try lock.lock(.exclusive, timeout: timeout)
        } catch {
            if error.cause != nil { throw error }
            throw RestoreError.anotherRestoreRunning(target: canonicalPath, waited: error.waited,
                                                     holders: error.holders.map(\.description).joined(separator: ", "))
        }
        return lock
    }

    /// An earlier restore of this target that was killed left its staging directory: with the
    /// marker it was never complete and is removed (it is entirely the restore's own); without it
    /// it may be a whole container — the old one, if the kill came right after the exchange — and
    /// is kept, renamed `<name>.replaced-<stamp>`.
    func removeLeftoversOfEarlierRestores() throws {
        for entry in try parent.entries() where entry.hasPrefix(stagingPrefix) {
            let staging = try parent.openDirectory(entry)
            if try staging.status(of: Self.incompleteMarker) != nil {
                try parent.removeTree(entry)
            } else {
                _ = try parent.renameUnlessExists(entry, to: parent, as: name + ".replaced-" + entry.dropFirst(stagingPrefix.count))
            }
        }
    }

    /// Makes the staging directory (0700) with its marker; returns its name.
    func makeStaging(stamp: String) throws -> String {
        let staging = stagingPrefix + Self.compact(stamp)
        let directory = try parent.openDirectory(staging, create: true)
        guard try directory.entries().isEmpty else {
            throw FileSystemError(code: .alreadyExists, systemCall: "mkdirat", path: directory.path, detail: "a restore of the same instant")
        }
        _ = try directory.openFile(Self.incompleteMarker, .writeOnly, creating: .newFile, mode: 0o600)
        try parent.synchronize()
        return staging
    }

    /// Puts the complete staging directory in place; returns where the replaced container went.
    func publish(_ stagingName: String, stamp: String, lockTimeout: Double) throws -> String? {
        let staging = try parent.openDirectory(stagingName)
        try staging.removeFile(Self.incompleteMarker)
        try staging.synchronize()
        switch kind {
        case .absent:
            var directory = parent
            for component in missing.dropLast() { directory = try directory.openDirectory(component, create: true) }
            guard try parent.renameUnlessExists(stagingName, to: directory, as: name) else {
                throw RestoreError.targetHoldsAContainer(path: directory.childPath(name))
            }
            try directory.synchronize()
        case .emptyDirectory:
            // rename(2) replaces an empty directory, and fails (ENOTEMPTY) if it is no longer empty.
            try parent.rename(stagingName, to: parent, as: name)
        case .container:
            return try replaceContainer(with: stagingName, stamp: stamp, lockTimeout: lockTimeout)
        }
        try parent.synchronize()
        CrashPoint.reach("restore.published")
        return nil
    }

    /// The exchange, under the old container's exclusive lock: no process is in the middle of
    /// its work when the directories change places.
    private func replaceContainer(with stagingName: String, stamp: String, lockTimeout: Double) throws -> String {
        let old = try parent.openDirectory(name)
        // A container without a lock file has no process to wait for; one whose lock file
        // cannot be opened might: that is an error, not a reason to exchange without the lock.
        let lock: FileDescriptor?
        do {
            lock = try old.openFile(ContainerLayout.lockFile, .readWrite)
        } catch {
            guard error.code == .notFound else { throw error }
            lock = nil
        }
        let fileLock = lock.map { FileLock(descriptor: $0) }
        try fileLock?.lock(.exclusive, timeout: lockTimeout)
        defer { fileLock?.unlock() }
        try parent.exchange(stagingName, with: parent, name)
        // From here the staging name holds the old container: a failure must not let the
        // restore's clean-up remove it (`RestoreError.replacedButUnsettled` says where it is).
        let kept = name + ".replaced-" + Self.compact(stamp)
        do {
            try parent.synchronize()
            CrashPoint.reach("restore.exchanged")
            guard try parent.renameUnlessExists(stagingName, to: parent, as: kept) else {
                return parent.childPath(stagingName)  // the name is taken: the old container stays under the staging name
            }
            try parent.synchronize()
            CrashPoint.reach("restore.published")
            return parent.childPath(kept)
        } catch {
            // Still under the staging name, unless the rename went through before the failure.
            let keptAt = (try? parent.status(of: stagingName)) != nil ? stagingName : kept
            throw RestoreError.replacedButUnsettled(restoredAt: parent.childPath(name), oldKeptAt: parent.childPath(keptAt),
                                                    detail: "\(error)")
        }
    }

    static func compact(_ stamp: String) -> String { stamp.filter { $0 != ":" && $0 != "-" && $0 != "." } }
}

private extension String {
    func replacingDoubleSlash() -> String { hasPrefix("//") ? String(dropFirst()) : self }
}
