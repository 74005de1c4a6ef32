import TripBoardKeychain
import TripBoardDevice
import TripBoardSystem
import Foundation
import Testing

/// A fresh, empty temp directory per test, with helpers to run the executables against a
/// container inside it. Removed when released.
final class TestContainer: @unchecked Sendable {
    // @unchecked: immutable after init.
    let root: URL
    let path: String
    let extraEnvironment: [String: String]

    /// `device`: every command runs as a device of its own, `root/device-NAME` with a machine id
    /// of its own (`BackupRestoreTests.device(_:_:)` names the same one): what the container's
    /// files are sealed under, whichever command opens them.
    init(extraEnvironment: [String: String] = [:], base: String? = nil, device: String? = nil) throws {
        let baseURL = URL(fileURLWithPath: base ?? NSTemporaryDirectory())
        root = baseURL.appendingPathComponent("tripboard-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        path = root.appendingPathComponent("container").path
        var environment = extraEnvironment
        if let device {
            let machineID = root.appendingPathComponent("machine-id-" + device)
            try Data((Self.deviceMachine + "\n").utf8).write(to: machineID)
            environment["TRIPBOARD_DEVICE_DIR"] = root.appendingPathComponent("device-" + device).path
            environment["TRIPBOARD_MACHINE_ID_FILE"] = machineID.path
        }
        self.extraEnvironment = environment
    }

    /// The machine id of a test's own device.
    static let deviceMachine = "0123456789abcdef0123456789abcdef"

    deinit {
        _ = try? ProcessRunner.run("/bin/chmod", ["-R", "u+rwX", root.path], environment: ProcessRunner.environment(container: nil))
        try? FileManager.default.removeItem(at: root)
    }

    var storePath: String { path + "/store/TripBoard.sqlite" }
    var keychainPath: String { path + "/keychain/Keychain.sqlite" }

    var environment: [String: String] { ProcessRunner.environment(container: path, extra: extraEnvironment) }

    func environment(_ extra: [String: String]) -> [String: String] { environment.merging(extra) { $1 } }

    /// Runs `app ARGS` on this container.
    @discardableResult
    func app(_ arguments: String..., stdin: String? = nil, environment extra: [String: String] = [:]) throws -> ProcessResult {
        try app(arguments: arguments, stdin: stdin, environment: extra)
    }

    @discardableResult
    func app(arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:]) throws -> ProcessResult {
        try ProcessRunner.run("app", arguments, environment: environment(extra), stdin: stdin.map { Array($0.utf8) })
    }

    /// Runs `app ARGS`, requiring exit 0, and returns trimmed stdout.
    @discardableResult
    func appOK(_ arguments: String..., stdin: String? = nil) throws -> String {
        let result = try app(arguments: arguments, stdin: stdin)
        #expect(result.status == 0, "app \(arguments.joined(separator: " ")): \(result)")
        return result.trimmedStdout
    }

    /// Adds a trip and returns its id.
    @discardableResult
    func addTrip(_ name: String = "Lisbon", start: String = "2026-12-12", end: String = "2026-12-15") throws -> String {
        try appOK("trip", "add", "--name", name, "--start", start, "--end", end)
    }

    /// Runs the sqlite3 shell on the store (a foreign process, as a user or tool would) the
    /// supported way, `app container sqlite`, which opens a sealed store's key with the container's
    /// device. It keeps `-wal` and `-shm` when it closes last, as TripBoard's writers do, so that
    /// looking at the store does not change which files exist.
    /// `database`: `keychainPath` for the keychain's database; any other path (a database
    /// outside this container, in the clear) is opened by sqlite3 directly.
    /// `environment`: merged into this container's (another device, whose keys sealed `database`).
    func sqlite(_ sql: String, readOnly: Bool = false, database: String? = nil, environment extra: [String: String] = [:]) throws -> ProcessResult {
        let keepWAL = ["-cmd", ".output /dev/null", "-cmd", ".filectrl persist_wal 1", "-cmd", ".output stdout"]
        let database = database ?? storePath
        // A container's store or keychain (this one's or another's, e.g. a restored one): through
        // `app`, with this container's device.
        for (suffix, option) in [("/store/TripBoard.sqlite", [String]()), ("/keychain/Keychain.sqlite", ["--keychain"])] where database.hasSuffix(suffix) {
            let options = ["--container", String(database.dropLast(suffix.count)), "container", "sqlite"] + option + (readOnly ? ["--readonly"] : [])
            return try ProcessRunner.run("app", options + ["--"] + keepWAL + [sql], environment: environment(extra))
        }
        return try ProcessRunner.run("/usr/bin/sqlite3", keepWAL + (readOnly ? ["-readonly"] : []) + [database, sql],
                                     environment: ProcessRunner.environment(container: nil))
    }

    /// Puts the store and the keychain's database in the clear, as a build before sealed stores
    /// left them (what `app container protect` seals): the only shape in which one container is
    /// opened by two devices — a copy made then, or a wrong `HOME` — and the keychain's items
    /// show their device scope. `environment`: the device whose keys sealed them.
    func unsealDatabases(environment extra: [String: String] = [:]) throws {
        for (path, option) in [(storePath, [String]()), (keychainPath, ["--keychain"])] where FileManager.default.fileExists(atPath: path + "-key") {
            let plain = path + ".plain"
            let copy = try ProcessRunner.run("app", ["container", "sqlite"] + option + [".backup '\(plain)'"], environment: environment(extra))
            try #require(copy.status == 0, "\(copy)")
            for suffix in ["", "-wal", "-shm", "-key"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            try FileManager.default.moveItem(atPath: plain, toPath: path)
        }
    }

    /// `integrity_check` and `foreign_key_check` through the sqlite3 CLI: "ok" when clean.
    func integrity() throws -> String {
        let result = try sqlite("PRAGMA integrity_check; PRAGMA foreign_key_check;")
        return result.trimmedStdout
    }

    /// What a user could lose: every path below the root (with size and content hash, except the
    /// store's files, whose bytes move between `-wal` and the main file on checkpoints) and the
    /// store's logical content. Compare before/after to prove a command wrote nothing.
    func state() throws -> ContainerState {
        let files = files()
        let dump = FileManager.default.fileExists(atPath: storePath) ? (try sqlite(".dump")).stdout : ""
        return ContainerState(files: files, storeDump: dump)
    }

    /// Every path below the root with size and content fingerprint (store files: presence only).
    /// Unlike `state()`, runs no process, so it cannot change what it looks at.
    func files() -> [String: String] {
        var files: [String: String] = [:]
        if let enumerator = FileManager.default.enumerator(atPath: root.path) {
            while let relative = enumerator.nextObject() as? String {
                let full = root.path + "/" + relative
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory)
                if isDirectory.boolValue || relative.contains("/store/") {
                    files[relative] = "present"
                } else {
                    let data = (try? Data(contentsOf: URL(fileURLWithPath: full))) ?? Data()
                    files[relative] = "\(data.count) \(fnv1a(data))"
                }
            }
        }
        return files
    }

    /// The bytes of a file inside the root.
    func bytes(_ relative: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(relative))
    }

    /// The PNG of the cached thumbnail of attachment `id`: its sealed entry's plaintext after the
    /// line that names its attachment (`tripboard thumbnail of ID`).
    func cachedThumbnail(_ id: String, environment extra: [String: String] = [:]) throws -> Data {
        let plaintext = try unsealed("container/caches/thumbnails/\(id).png.sealed", environment: extra)
        let owner = Data("tripboard thumbnail of \(id)\n".utf8)
        #expect(plaintext.starts(with: owner), "the entry names its attachment")
        return plaintext.dropFirst(owner.count)
    }

    /// The plaintext of the sealed file at `relative` (below the root, as `bytes`), opened with
    /// the class keys of the device `extra` names (the default one without), as the executables
    /// open it; it must be a sealed file.
    func unsealed(_ relative: String, environment extra: [String: String] = [:]) throws -> Data {
        let path = root.appendingPathComponent(relative).path
        let keys = try FileProtection(environment: environment(extra))
        let reader = try SealedFileReader(input: try FileDescriptor.openForReading(path: path), path: path, keys: keys)
        return Data(try reader.readToEnd(limit: 1 << 30))
    }
}

/// See `TestContainer.state()`.
struct ContainerState: Equatable, CustomStringConvertible {
    let files: [String: String]
    let storeDump: String

    var description: String {
        files.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n") + "\n" + storeDump
    }
}

/// FNV-1a over the bytes: a stable content fingerprint (Data.hashValue is seeded per run).
func fnv1a(_ data: Data) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in data {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}
