import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
/// One entry of a tar archive as TripBoard writes and reads them: a regular file or a directory.
public struct TarEntry: Sendable, Equatable {
    /// What the entry is. Links, devices, FIFOs and the rest are refused by the reader.
    public enum Kind: Sendable, Equatable {
        /// A regular file (typeflag `0`, or NUL in old archives).
        case file
        /// A directory (typeflag `5`).
        case directory
    }

    /// The path relative to the archive's root, `/`-separated, without a trailing slash.
    public let path: String
    /// File or directory.
    public let kind: Kind
    /// The permission bits recorded (`mode & 0o7777`); TripBoard writes 0600 and 0700.
    public let mode: UInt32
    /// The content length in bytes (0 for a directory).
    public let size: Int64
    /// The modification time recorded, whole seconds since 1970.
    public let modificationTime: Int64
}

/// The rules every path in a TripBoard archive follows, written and read: relative, `/`-separated
/// components that are neither empty nor `.` nor `..`, no NUL, at most 4096 bytes (`PATH_MAX`).
/// Extraction by hand (`tar x`) must never write outside the directory it runs in.
enum TarPath {
    static let maximumLength = 4096

    /// Throws ``TarError/invalidPath(_:reason:)`` unless `path` (a directory's without its
    /// trailing slash) follows the rules.
    static func validate(_ path: String) throws(TarError) {
        guard !path.isEmpty else { throw .invalidPath(path, reason: "empty") }
        guard path.utf8.count <= maximumLength else { throw .invalidPath(path, reason: "longer than 4096 bytes") }
        guard !path.hasPrefix("/") else { throw .invalidPath(path, reason: "absolute") }
        guard !path.utf8.contains(0) else { throw .invalidPath(path, reason: "holds a NUL byte") }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            switch component {
            case "": throw .invalidPath(path, reason: "an empty component (// or a trailing /)")
            case ".": throw .invalidPath(path, reason: "a . component")
            case "..": throw .invalidPath(path, reason: "a .. component")
            default: continue
            }
        }
    }
}

/// The paths an archive holds so far, so that no path appears twice and nothing sits under a
/// file: a later `tar x` would otherwise overwrite one entry with another, or fail half-way.
struct TarPathSet {
    private var kinds: [String: TarEntry.Kind] = [:]
    /// Every proper ancestor of a path seen, which must not also be a file.
    private var ancestors: Set<String> = []

    /// Records `path`; throws ``TarError/duplicatePath(_:)`` when it was seen, when an ancestor of
    /// it is a file, or when it is a file and something was seen under it.
    mutating func insert(_ path: String, kind: TarEntry.Kind) throws(TarError) {
        guard kinds[path] == nil, kind == .directory || !ancestors.contains(path) else { throw .duplicatePath(path) }
        var prefix = Substring(path)
        var newAncestors: [String] = []
        while let slash = prefix.lastIndex(of: "/") {
            prefix = prefix[..<slash]
            let ancestor = String(prefix)
            if kinds[ancestor] == .file { throw .duplicatePath(path) }
            newAncestors.append(ancestor)
        }
        kinds[path] = kind
        ancestors.formUnion(newAncestors)
    }
}
