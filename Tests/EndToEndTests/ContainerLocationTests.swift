import Foundation
import Testing

/// Where a container may be, and what TripBoard does at a path that is not one yet: a symbolic
/// link on the way works, a directory of other files is refused untouched, a command refused for
/// its arguments or a command that only reads creates nothing.
@Suite struct ContainerLocationTests {
    static let addTrip = ["trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15"]

    /// Every path below `directory`, with its kind and mode (what a refused command must not change).
    static func tree(_ directory: String) -> [String: String] {
        var found: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            var info = stat()
            lstat(directory + "/" + relative, &info)
            found[relative] = "\(info.st_mode) \(info.st_size)"
        }
        var info = stat()
        lstat(directory, &info)
        found["."] = "\(info.st_mode)"
        return found
    }

    @Test func aContainerReachedThroughASymbolicLinkWorks() throws {
        let test = try TestContainer()
        let real = test.root.path + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: test.root.path + "/link", withDestinationPath: real)
        let environment = ProcessRunner.environment(container: "link/c")
        func app(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run("/usr/bin/env", ["-C", test.root.path, ProcessRunner.executable("app")] + arguments, environment: environment)
        }
        let added = try app(Self.addTrip)
        #expect(added.status == 0, "\(added)")
        #expect(added.stderr.contains("created a new TripBoard container at \(real)/c"), "\(added)")
        #expect(try app(["trip", "list"]).stdout.contains("Lisbon"))
        let info = try app(["container", "info", "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(json["location"] as? String == "link/c")
        #expect((json["paths"] as? [String: Any])?["container"] as? String == real + "/c", "\(info)")
        #expect(try app(["container", "info"]).stdout.contains("\(real)/c (given as link/c)"))
        let widget = try ProcessRunner.run("/usr/bin/env", ["-C", test.root.path, ProcessRunner.executable("widget"), "--now", "2026-12-01T00:00Z"],
                                           environment: environment)
        #expect(widget.status == 0 && widget.stdout.contains("Lisbon"), "\(widget)")
    }

    @Test func theDefaultContainerUnderASymbolicLinkedHomeWorks() throws {
        let test = try TestContainer()
        let realHome = test.root.path + "/real-home"
        try FileManager.default.createDirectory(atPath: realHome, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: test.root.path + "/home", withDestinationPath: realHome)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": test.root.path + "/home", "LANG": "C.UTF-8", "TZ": "UTC",
                           "TRIPBOARD_LEGACY_DIR": test.root.path + "/no-legacy"]
        let added = try ProcessRunner.run("app", Self.addTrip, environment: environment)
        #expect(added.status == 0, "\(added)")
        #expect(FileManager.default.fileExists(atPath: realHome + "/.local/share/tripboard/shared-container/store/TripBoard.sqlite"))
        #expect(try ProcessRunner.run("app", ["trip", "list"], environment: environment).stdout.contains("Lisbon"))
        #expect(try ProcessRunner.run("widget", ["--now", "2026-12-01T00:00Z"], environment: environment).stdout.contains("Lisbon"))
    }

    @Test func symbolicLinksInsideTheContainerAreStillRefused() throws {
        let test = try TestContainer()
        try test.addTrip()
        let outside = test.root.path + "/outside-store"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: test.path + "/store", toPath: outside + "/store")
        try FileManager.default.createSymbolicLink(atPath: test.path + "/store", withDestinationPath: outside + "/store")
        let result = try test.app("trip", "list")
        #expect(result.status == 73, "\(result)")
        #expect(result.stderr.contains("symbolic link"), "\(result)")
    }

    @Test func aDirectoryOfOtherFilesIsRefusedAndLeftAsItWas() throws {
        let test = try TestContainer()
        let foreign = test.root.path + "/downloads"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        #expect(chmod(foreign, 0o1777) == 0)
        let before = Self.tree(foreign)
        for arguments in [Self.addTrip, ["trip", "list"], ["prefs", "set", "theme", "dark"], ["container", "init"]] {
            let result = try ProcessRunner.run("app", ["--container", foreign] + arguments, environment: ProcessRunner.environment(container: nil))
            #expect(result.status == 73, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("no TripBoard container"), "\(result)")
            #expect(Self.tree(foreign) == before, "\(arguments) changed the directory")
        }
        let widget = try ProcessRunner.run("widget", ["--container", foreign], environment: ProcessRunner.environment(container: nil))
        #expect(widget.status == 0 && Self.tree(foreign) == before, "\(widget)")
    }

    @Test func anEmptyDirectoryKeepsItsModeAndBecomesAContainer() throws {
        let test = try TestContainer()
        let shared = test.root.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o1777) == 0)
        let result = try ProcessRunner.run("app", ["--container", shared] + Self.addTrip, environment: ProcessRunner.environment(container: nil))
        #expect(result.status == 0, "\(result)")
        var info = stat()
        #expect(stat(shared, &info) == 0 && info.st_mode & 0o7777 == 0o1777, "a directory TripBoard did not create is never chmod'ed")
        #expect(stat(shared + "/store", &info) == 0 && info.st_mode & 0o7777 == 0o700)
    }

    /// docs/storage.md: a store copied (with its key file) into an empty directory, and a
    /// container whose manifest was removed, are containers: set up again around their store.
    @Test func aCopiedStoreAndALostManifestStayUsable() throws {
        let test = try TestContainer()
        try test.addTrip("Kyoto")
        #expect(try test.sqlite("PRAGMA wal_checkpoint(TRUNCATE)").status == 0)
        let copy = test.root.path + "/copy"
        try FileManager.default.createDirectory(atPath: copy + "/store", withIntermediateDirectories: true)
        // A sealed store goes with its key file (on the same device: its keys open it).
        try FileManager.default.copyItem(atPath: test.storePath, toPath: copy + "/store/TripBoard.sqlite")
        try FileManager.default.copyItem(atPath: test.storePath + "-key", toPath: copy + "/store/TripBoard.sqlite-key")
        let fromCopy = try ProcessRunner.run("app", ["--container", copy, "trip", "list"], environment: ProcessRunner.environment(container: nil))
        #expect(fromCopy.status == 0 && fromCopy.stdout.contains("Kyoto"), "\(fromCopy)")
        try FileManager.default.removeItem(atPath: test.path + "/container.json")
        #expect(try test.appOK("trip", "list").contains("Kyoto"))
        #expect(FileManager.default.fileExists(atPath: test.path + "/container.json"))
    }

    @Test func readingCommandsCreateNoContainerAndSaySo() throws {
        let test = try TestContainer()
        for arguments in [["trip", "list"], ["trip", "show", "abcd"], ["prefs", "get", "theme"], ["prefs", "list"], ["container", "info"],
                          ["container", "check"], ["attachment", "list"], ["sync", "pending"], ["export"], ["trip", "delete", "abcd"],
                          ["place", "add", "--trip", "abcd", "--name", "X"], ["cache", "clear"]] {
            let result = try test.app(arguments: arguments)
            #expect(result.status == 66, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("no TripBoard container at \(test.path)"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: test.path), "\(arguments) created the container")
        }
        let empty = test.root.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let onEmpty = try ProcessRunner.run("app", ["--container", empty, "trip", "list"], environment: ProcessRunner.environment(container: nil))
        #expect(onEmpty.status == 66, "\(onEmpty)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }

    @Test func writingCommandsCreateTheContainerOnceAndSaySo() throws {
        let test = try TestContainer()
        let first = try test.app(arguments: Self.addTrip)
        #expect(first.status == 0 && first.stderr == "created a new TripBoard container at \(test.path)\n", "\(first)")
        let second = try test.app(arguments: Self.addTrip)
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second)")
    }

    /// tools/torture's fuzz scenario, seed 2338215015: a container created by a command that does
    /// not need the store (`keychain set`) left setup's WAL frames for the next process to
    /// checkpoint, so a share-extension refused for its input changed the store's files.
    @Test func aContainerMadeByACommandWithoutTheStoreLeavesNothingForTheNextToWrite() throws {
        let test = try TestContainer(extraEnvironment: ["TRIPBOARD_DEVICE_DIR": NSTemporaryDirectory() + "device-\(UUID())"])
        try test.appOK("keychain", "set", "api", "ana", stdin: "s3cret")
        let empty = try test.input(Data(), as: "empty.pdf")
        // Byte for byte, the store's own files included (`files()` only notes that they exist).
        func storeBytes() -> [Data?] { ["", "-wal"].map { FileManager.default.contents(atPath: test.storePath + $0) } }
        let before = (test.files(), storeBytes())
        let refused = try test.share([empty])
        #expect(refused.status == 65, "\(refused)")
        #expect(test.files() == before.0 && storeBytes() == before.1, "a refused import changed the container")
    }

    @Test func containerInitCreatesOrConfirms() throws {
        let test = try TestContainer()
        let elsewhere = test.root.path + "/elsewhere"
        let created = try test.app("container", "init", elsewhere)
        #expect(created.status == 0 && created.trimmedStdout == elsewhere, "\(created)")
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/store/TripBoard.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: test.path), "DIR wins over TRIPBOARD_CONTAINER")
        let again = try test.app("container", "init", elsewhere)
        #expect(again.status == 0 && again.stderr.contains("already"), "\(again)")
        #expect(try test.app("container", "init").status == 0)
        #expect(try test.appOK("trip", "list").contains("No trips yet"))
    }

    /// tools/torture's fuzz scenario, seed 911222582: a value that is no id was refused only after
    /// the container had been created at `./--=`.
    @Test func aCommandRefusedForItsArgumentsTouchesNoDisk() throws {
        let test = try TestContainer()
        for arguments in [["trip", "edit", "--container=--=", "fail"], ["trip", "show", "--container=--=", "not-hex!"],
                          ["place", "add", "--container=--=", "--trip", "Lisbon!", "--name", "X"],
                          ["attachment", "export", "--container=--=", "abcd", test.root.path + "/no-such-dir/x.pdf"],
                          ["sync", "ack", "--container=--=", "zz", "--version", "1"],
                          ["trip", "add", "--container=--=", "--name", "  ", "--start", "2026-12-01", "--end", "2026-12-02"],
                          ["trip", "add", "--container=--=", "--name", "X", "--start", "2026-12-05", "--end", "2026-12-01"],
                          ["trip", "add", "--container=--=", "--name", String(repeating: "é", count: 201), "--start", "2026-12-01",
                           "--end", "2026-12-02"]] {
            let result = try ProcessRunner.run("/usr/bin/env", ["-C", test.root.path, ProcessRunner.executable("app")] + arguments,
                                               environment: ProcessRunner.environment(container: nil))
            #expect([64, 65, 66].contains(result.status), "\(arguments): \(result)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: test.root.path).isEmpty, "\(arguments) wrote: \(result)")
        }
    }

    @Test func aContainerPathThatIsAFileIsExit73Everywhere() throws {
        let test = try TestContainer()
        let file = test.root.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for (executable, arguments) in [("app", ["trip", "list"]), ("app", Self.addTrip), ("widget", []), ("widget", ["--json"]),
                                        ("app", ["--container", file + "/below", "trip", "list"])] {
            let result = try ProcessRunner.run(executable, arguments, environment: ProcessRunner.environment(container: file))
            #expect(result.status == 73, "\(executable) \(arguments): \(result)")
            #expect(result.stderr.contains("not a directory"), "\(result)")
        }
    }
}
