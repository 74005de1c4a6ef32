import TripBoardDevice
public import TripBoardSystem
import TripBoardModel

/// `attachments/recovered/`: where files that may be user data go when no row names them (an
/// orphan, a file a migration found without a row) or when something that is not a regular file
/// stands where an attachment belongs. Nothing is deleted by being quarantined: the entry is only
/// renamed, never followed, and the user can look at it, re-attach it, or delete it.
public enum Quarantine {
    /// `name`, or with `-2`, `-3`, … before its extension: the `number`th candidate name for a
    /// file that must not replace another (`ticket.pdf` → `ticket-2.pdf`).
    public static func candidateName(for name: String, number: Int) -> String {
        guard number > 1 else { return name }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return name[..<dot] + "-\(number)" + name[dot...]
        }
        return name + "-\(number)"
    }

    /// Moves `name` out of `directory` into `recovered` under the first free candidate of
    /// `preferredName` (`renameat2(RENAME_NOREPLACE)`: an entry already there is never replaced);
    /// returns the name it got. Same filesystem, so the move is one atomic rename; the two
    /// directories are fsynced.
    static func move(_ name: String, from directory: Directory, into recovered: Directory, as preferredName: String) throws -> String {
        for number in 1...10_000 {
            let candidate = candidateName(for: preferredName, number: number)
            if try directory.renameUnlessExists(name, to: recovered, as: candidate) {
                try recovered.synchronize()
                try directory.synchronize()
                return candidate
            }
        }
        throw FileSystemError(code: .alreadyExists, systemCall: "renameat2", path: recovered.childPath(preferredName),
                              detail: "10,000 names are taken")
    }
}

extension AttachmentFiles {
    /// `attachments/recovered/`, created (0700) when missing.
    package func recoveredDirectory() throws -> Directory {
        try attachments.openDirectory(Self.recoveredDirectory, create: true)
    }

    /// Moves the entry at `relativePath` (`attachments/<xx>/<name>`, or `attachments/<xx>` itself
    /// when that is not a directory) into `attachments/recovered/`; returns its new relative path.
    public func quarantine(relativePath: String) throws -> String {
        let components = relativePath.split(separator: "/").map(String.init)
        guard components.first == ContainerLayout.attachmentsDirectory, (2...3).contains(components.count),
              !components.contains(".."), !components.contains("."), components[1] != Self.recoveredDirectory else {
            throw AttachmentError.invalidPath(relativePath)
        }
        let directory = components.count == 3 ? try attachments.openDirectory(components[1]) : attachments
        let moved = try Quarantine.move(components.last!, from: directory, into: try recoveredDirectory(), as: components.last!)
        return ContainerLayout.attachmentsDirectory + "/" + Self.recoveredDirectory + "/" + moved
    }

    /// The regular files in `attachments/recovered/` with their size (`[]` when there is none).
    package func recoveredFiles() throws -> [(name: String, size: Int64)] {
        try recoveredEntries().filter { $0.status.kind == .regular }.map { ($0.name, $0.status.size) }
    }

    /// Every entry of `attachments/recovered/` as it is now: name and the identity (device, inode)
    /// a purge checks before it removes anything (`[]` when there is none).
    public func recoveredEntries() throws -> [RecoveredEntry] {
        guard try attachments.status(of: Self.recoveredDirectory)?.kind == .directory else { return [] }
        let recovered = try attachments.openDirectory(Self.recoveredDirectory)
        return try recovered.entries().compactMap { name in
            try recovered.status(of: name).map { RecoveredEntry(name: name, status: $0) }
        }
    }

    /// Deletes for good the entries of `attachments/recovered/` in `entries` that are still the
    /// same entry (same device and inode; a name freed and taken again by a newer quarantine is
    /// left alone); a directory goes with everything in it, a link is removed itself, never
    /// followed. Only on the user's explicit request (`container check --repair
    /// --purge-recovered`). Returns what was deleted, one line each; the directory is fsynced.
    public func purgeRecovered(_ entries: [RecoveredEntry]) throws -> [String] {
        guard !entries.isEmpty, try attachments.status(of: Self.recoveredDirectory)?.kind == .directory else { return [] }
        let recovered = try attachments.openDirectory(Self.recoveredDirectory)
        var deleted: [String] = []
        for entry in entries {
            guard let now = try recovered.status(of: entry.name), now.device == entry.status.device,
                  now.inode == entry.status.inode else { continue }
            try recovered.removeTree(entry.name)
            deleted.append(RecoveredEntry(name: entry.name, status: now).description)
        }
        try recovered.synchronize()
        return deleted
    }

    /// True when `attachments/recovered/<name>` holds exactly `byteCount` bytes hashing to
    /// `contentHash` (a pending hash matches no file).
    func recoveredFile(_ name: String, matches byteCount: Int64, _ contentHash: ContentHash) throws -> Bool {
        let file: AttachmentReader
        do {
            file = try AttachmentReader(name, in: try recoveredDirectory(), keys: keys)
        } catch let error as DeviceError {
            // Sealed under another keybag, or under a class closed now: not this row's file as
            // far as can be told here; it stays where it is.
            if case .damagedSealedFile = error { return false }
            if case .sealedElsewhere = error { return false }
            throw error
        }
        guard file.plaintextLength == byteCount else { return false }
        do {
            let (count, hash) = try Self.contentHash(of: file)
            return count == byteCount && hash == contentHash.hex
        } catch DeviceError.damagedSealedFile {
            return false
        }
    }

    /// Moves `attachments/recovered/<name>` back to an attachment's `relativePath` (never over
    /// anything there); false when the place is taken.
    func restoreRecovered(_ name: String, to relativePath: String) throws -> Bool {
        try putBack(name, from: try recoveredDirectory(), to: relativePath)
    }

    /// Moves `source/<name>` — a file in `attachments/recovered/`, or a shared ticket staged in
    /// `tmp/` — to the place of an attachment row that lost its file, never over anything there
    /// (`renameat2(RENAME_NOREPLACE)`), and fsyncs the directories; false when the place is taken.
    /// The caller has checked the bytes against the row's size and hash, and marks it `present`
    /// only after this returns.
    package func putBack(_ name: String, from source: Directory, to relativePath: String) throws -> Bool {
        let components = relativePath.split(separator: "/").map(String.init)
        guard components.count == 3, components[0] == ContainerLayout.attachmentsDirectory, components[1] != Self.recoveredDirectory,
              !components.contains(".."), !components.contains(".") else { throw AttachmentError.invalidPath(relativePath) }
        let shard = try attachments.openDirectory(components[1], create: true)
        guard try source.renameUnlessExists(name, to: shard, as: components[2]) else { return false }
        try shard.synchronize()
        try source.synchronize()
        try attachments.synchronize()
        return true
    }
}

/// An entry of `attachments/recovered/`, as `recoveredEntries()` found it.
public struct RecoveredEntry: Sendable, Equatable, CustomStringConvertible {
    public let name: String
    public let status: FileStatus

    /// `attachments/recovered/<name> (<what it is>[, N bytes])`, as `container check` reports it.
    public var description: String {
        let size = status.kind == .regular ? ", \(status.size) bytes" : ""
        return "\(ContainerLayout.attachmentsDirectory)/\(AttachmentFiles.recoveredDirectory)/\(name) (\(status.kindDescription)\(size))"
    }
}
