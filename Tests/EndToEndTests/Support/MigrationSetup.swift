import Foundation
import Testing

/// A temp container, a version-1 directory beside it (or on another filesystem), and this
/// device's key directory: what a `container-migration` test needs.
final class MigrationSetup: @unchecked Sendable {
    // @unchecked: immutable after init.
    let container: TestContainer
    let fixture: LegacyFixture
    /// The version-1 directory.
    let legacy: String
    /// Where the legacy directory lives when it is on another filesystem (removed at the end).
    private let legacyBase: String?

    /// `crossDevice`: the legacy directory goes to `/dev/shm` (tmpfs) while the container stays
    /// under the temp directory, so `rename` fails with `EXDEV`. `template`: a copy of this
    /// directory, already written from `fixture` (quicker than running Python again).
    init(_ fixture: LegacyFixture = .standard(), crossDevice: Bool = false, containerBase: String? = nil, template: String? = nil) throws {
        // One device for `app` and the migration alike: the store is sealed under its keys.
        container = try TestContainer(base: containerBase, device: "migration")
        self.fixture = fixture
        if crossDevice {
            let base = "/dev/shm/tripboard-legacy-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
            legacyBase = base
            legacy = base + "/legacy"
        } else {
            legacyBase = nil
            legacy = container.root.appendingPathComponent("legacy").path
        }
        if let template {
            try FileManager.default.copyItem(atPath: template, toPath: legacy)
        } else {
            try fixture.write(to: legacy)
        }
    }

    /// What a finished migration must not leave in the container: anything in `migration/` but
    /// the commit marker (copies, built stores, journal), anything in `tmp/`.
    func leftovers() throws -> [String] {
        let files = FileManager.default
        let migration = (try? files.contentsOfDirectory(atPath: container.path + "/migration")) ?? []
        let staging = (try? files.contentsOfDirectory(atPath: container.path + "/tmp")) ?? []
        return migration.filter { $0 != "committed.json" }.map { "migration/" + $0 } + staging.map { "tmp/" + $0 }
    }

    deinit {
        if let legacyBase { try? FileManager.default.removeItem(atPath: legacyBase) }
    }

    /// The device key and machine id for the keychain, and the legacy directory for the app.
    var environment: [String: String] {
        container.environment(["TRIPBOARD_LEGACY_DIR": legacy])
    }

    /// Runs `container-migration ARGS` (with `--from` the legacy directory unless told otherwise).
    @discardableResult
    func migrate(_ arguments: [String] = [], from: Bool = true, environment extra: [String: String] = [:]) throws -> ProcessResult {
        try ProcessRunner.run("container-migration", (from ? ["--from", legacy] : []) + arguments,
                              environment: environment.merging(extra) { $1 })
    }

    /// Starts `container-migration` without waiting (to kill it).
    func startMigration(environment extra: [String: String] = [:]) throws -> RunningProcess {
        try ProcessRunner.start("container-migration", ["--from", legacy], environment: environment.merging(extra) { $1 })
    }

    /// The invariants; `final` after a finished migration, else those of an interrupted one.
    func problems(final: Bool, checkingKeychain: Bool = true) throws -> [String] {
        let (device, machineID) = (container.extraEnvironment["TRIPBOARD_DEVICE_DIR"]!, container.extraEnvironment["TRIPBOARD_MACHINE_ID_FILE"]!)
        var problems = try fixture.problems(container: container.path, legacy: legacy, searchRoot: container.root.path, final: final,
                                            device: device, machineID: machineID)
        if final && checkingKeychain {
            let token = try ProcessRunner.run("app", ["keychain", "get", "tripboard.auth.access-token", "traveller@example.com"], environment: environment)
            if token.stdout != LegacyFixture.accessToken { problems.append("the access token is not in the keychain: \(token)") }
            if let legacyBase {
                problems += try fixture.problems(container: container.path, legacy: legacy, searchRoot: legacyBase, final: true, device: device, machineID: machineID)
            }
        }
        return problems
    }

    /// Every file under the legacy directory with its bytes: to prove a refusal changed nothing.
    func legacySnapshot() throws -> [String: Data] {
        var snapshot: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: legacy) else { return snapshot }
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: legacy + "/" + relative, isDirectory: &isDirectory)
            // -shm is SQLite's shared-memory index, rebuilt by any reader: not content.
            if !isDirectory.boolValue && !relative.hasSuffix("-shm") {
                snapshot[relative] = try Data(contentsOf: URL(fileURLWithPath: legacy + "/" + relative))
            }
        }
        return snapshot
    }
}
