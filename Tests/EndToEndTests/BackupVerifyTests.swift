import Foundation
import Testing

/// `app backup verify FILE`, the restore drill: the dry run, then what a user sees in the backup
/// compared with the container — exit 0 when the same, 3 with what differs, 65 when damaged —
/// and in every case nothing published, nothing changed.
@Suite struct BackupVerifyTests {
    let passphrase = BackupRestoreTests.passphrase

    func verify(_ test: TestContainer, _ file: String, device: [String: String], json: Bool = false,
                passphrase: String? = nil) throws -> ProcessResult {
        try test.app(arguments: ["backup", "verify", file] + (json ? ["--json"] : []), stdin: (passphrase ?? self.passphrase) + "\n",
                     environment: device.merging(BackupRestoreTests.fast) { $1 })
    }

    /// Nothing beside the container but what was there (no staging directory left), and the
    /// container as it was (its databases' `-shm` aside).
    func expectUntouched(_ test: TestContainer, since before: (ContainerState, [String]), _ comment: Comment) throws {
        let now = try test.state()
        // A reader of a WAL database writes its read mark into `-shm`, which holds no data.
        let changed = Set(now.files.keys).union(before.0.files.keys).filter { now.files[$0] != before.0.files[$0] && !$0.hasSuffix("-shm") }.sorted()
        #expect(changed.isEmpty && now.storeDump == before.0.storeDump, "\(comment): \(changed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.root.path).sorted() == before.1, comment)
    }

    /// A container seeded on device "a" (`BackupRestoreTests.seed`), `extraTrip` added, backed
    /// up to `backup.age` beside it; its seeded trip's id.
    func seededAndBackedUp(extraTrip: String? = nil) throws -> (TestContainer, [String: String], String, String, String?) {
        let test = try TestContainer(device: "a")
        let device = try BackupRestoreTests.device(test, "a")
        let (trip, _) = try BackupRestoreTests.seed(test, device: device)
        let extra = try extraTrip.map { try test.addTrip($0) }
        let file = test.root.path + "/backup.age"
        #expect(try test.app(arguments: ["backup", "--output", file], stdin: passphrase + "\n",
                             environment: device.merging(BackupRestoreTests.fast) { $1 }).status == 0)
        return (test, device, trip, file, extra)
    }

    func before(_ test: TestContainer) throws -> (ContainerState, [String]) {
        (try test.state(), try FileManager.default.contentsOfDirectory(atPath: test.root.path).sorted())
    }

    @Test func aBackupOfTheContainerAsItIsVerifiesAndChangesNothing() throws {
        let (test, device, trip, file, _) = try seededAndBackedUp()
        // Sync bookkeeping moves on after the backup: no difference a user sees.
        try test.appOK("sync", "ack", trip, "--version", "1")
        let untouched = try before(test)
        let result = try verify(test, file, device: device)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("The backup is sound: 1 trips, 1 places, 1 bookings, 1 attachment files"), "\(result.stdout)")
        #expect(result.stdout.contains("It holds what the container holds."), "\(result.stdout)")
        try expectUntouched(test, since: untouched, "a verify publishes nothing")

        let json = try verify(test, file, device: device, json: true)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["differs"] as? Bool == false, "\(report)")
        let trips = try #require((report["records"] as? [String: Any])?["trips"] as? [String: Any])
        #expect(trips["same"] as? Int == 1 && trips["changed"] as? Int == 0, "\(trips)")
        #expect((report["keychain"] as? [String: Any])?["same"] as? Int == 2, "\(report)")
    }

    @Test func whatChangedSinceTheBackupIsSaidAndExitsThree() throws {
        let (test, device, trip, file, porto) = try seededAndBackedUp(extraTrip: "Porto")
        let gone = try #require(porto)
        try test.appOK("trip", "edit", trip, "--notes", "Tram 28")                 // changed
        try test.addTrip("Kyoto")                                                   // made since
        try test.appOK("trip", "delete", gone)
        _ = try test.app("trash", "empty", "--yes")                                 // deleted for good
        try test.appOK("prefs", "set", "currency", "JPY")
        #expect(try test.app(arguments: ["keychain", "set", "sync", "ana", "--accessibility", "migratable"], stdin: "rotated",
                             environment: device).status == 0)
        let untouched = try before(test)
        let result = try verify(test, file, device: device)
        #expect(result.status == 3, "\(result)")
        #expect(result.stdout.contains("It differs from the container:"), "\(result.stdout)")
        #expect(result.stdout.contains("1 trip changed since the backup, 1 trip added since the backup, 1 trip gone since the backup"),
                "\(result.stdout)")
        #expect(result.stdout.contains("preferences changed since the backup: currency"), "\(result.stdout)")
        #expect(result.stdout.contains("1 keychain item changed since the backup"), "\(result.stdout)")
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 1 && errors[0].hasPrefix("error: the backup does not hold what"), "\(result.stderr)")
        try expectUntouched(test, since: untouched, "a verify that finds differences changes nothing")

        let json = try verify(test, file, device: device, json: true)
        #expect(json.status == 3)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let trips = try #require((report["records"] as? [String: Any])?["trips"] as? [String: Any])
        #expect(trips["changed"] as? Int == 1 && trips["onlyHere"] as? Int == 1 && trips["onlyThere"] as? Int == 1, "\(trips)")
        #expect((trips["examples"] as? [String])?.contains(trip) == true && (trips["examples"] as? [String])?.contains(gone) == true)
        #expect(report["preferencesChanged"] as? [String] == ["currency"])
        #expect(report["differs"] as? Bool == true)
    }

    /// More records than one batch of the comparison (each store's side of a batch is read on a
    /// thread of its own): changes in the first, a middle and the last batch are each found, and
    /// every other record is the same.
    @Test func changesInEveryBatchOfALargeComparisonAreFound() throws {
        let (test, device, _, _, _) = try seededAndBackedUp()
        let ids = (0..<1_300).map { _ in UUID().uuidString.lowercased() }
        let trips = ids.enumerated().map { index, id in
            ["id": id, "name": "Trip \(index)", "startDate": "2027-01-01", "endDate": "2027-01-03"]
        }
        let document = try JSONSerialization.data(withJSONObject: ["format": "tripboard-export", "formatVersion": 1, "trips": trips])
        let source = test.root.path + "/trips.json"
        try document.write(to: URL(fileURLWithPath: source))
        try test.appOK("import", source)
        let file = test.root.path + "/large.age"
        #expect(try test.app(arguments: ["backup", "--output", file], stdin: passphrase + "\n",
                             environment: device.merging(BackupRestoreTests.fast) { $1 }).status == 0)
        let sorted = ids.sorted()
        let edited = [sorted[0], sorted[700], sorted[1_299]]
        for id in edited { try test.appOK("trip", "edit", id, "--notes", "Changed after the backup") }
        let json = try verify(test, file, device: device, json: true)
        #expect(json.status == 3, "\(json)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let found = try #require((report["records"] as? [String: Any])?["trips"] as? [String: Any])
        #expect(found["changed"] as? Int == 3 && found["same"] as? Int == 1_298 && found["onlyHere"] as? Int == 0
                && found["onlyThere"] as? Int == 0, "\(found)")
        #expect(Set(found["examples"] as? [String] ?? []) == Set(edited), "\(found)")
    }

    /// A ticket filed since the backup, and one whose file was lost here since: both are
    /// attachment differences (the hash and the file are part of what a user sees).
    @Test func attachmentsAreComparedByHashAndFile() throws {
        let (test, device, trip, file, _) = try seededAndBackedUp()
        let files = try FileManager.default.subpathsOfDirectory(atPath: test.path + "/attachments").filter { $0.hasSuffix(".pdf") }
        try FileManager.default.removeItem(atPath: test.path + "/attachments/" + #require(files.first))
        _ = try test.app("container", "check", "--repair")
        _ = try test.shareOK(try test.input(TicketPDF.make(lines: ["Another ticket", "Ref ZZ-9"]), as: "second.pdf"), "--trip", trip)
        let json = try verify(test, file, device: device, json: true)
        #expect(json.status == 3, "\(json)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let attachments = try #require((report["records"] as? [String: Any])?["attachments"] as? [String: Any])
        #expect(attachments["changed"] as? Int == 1 && attachments["onlyHere"] as? Int == 1, "\(attachments)")
    }

    /// A wrong passphrase, a damaged archive: 65, one line, nothing left anywhere.
    @Test func aDamagedBackupOrAWrongPassphraseIs65AndLeavesNothing() throws {
        let (test, device, _, file, _) = try seededAndBackedUp()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[bytes.count - 100] ^= 0x01
        let damaged = test.root.path + "/damaged.age"
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let untouched = try before(test)
        for (archive, phrase) in [(file, "not the passphrase"), (damaged, passphrase)] {
            let result = try verify(test, archive, device: device, passphrase: phrase)
            #expect(result.status == 65 && result.stderr.split(separator: "\n").count == 1 && result.stdout.isEmpty, "\(result)")
            try expectUntouched(test, since: untouched, "a refused verify leaves nothing")
        }
    }

    /// `backup --output verify` still writes a file named `verify`: the longer command is chosen
    /// only when it reads the line without a mistake.
    @Test func aBackupToAFileNamedVerifyIsABackup() throws {
        let test = try TestContainer()
        try test.addTrip()
        let result = try test.app(arguments: ["backup", "--output", test.root.path + "/verify"], stdin: passphrase + "\n",
                                  environment: BackupRestoreTests.fast)
        #expect(result.status == 0 && FileManager.default.fileExists(atPath: test.root.path + "/verify"), "\(result)")
    }
}
