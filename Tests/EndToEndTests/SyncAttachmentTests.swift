import Foundation
import Testing
import TripBoardStorage
import TripBoardSodium
import TripBoardKeys

/// Attachments through sync: the PDF sealed with secretstream into 1 MiB chunks on the server,
/// fetched by the other device into its container's attachments with its hash verified, and
/// its tombstone travelling with the booking's deletion.
@Suite struct SyncAttachmentTests {
    static let plantedLine = "PLANTEDPDFLINE-4471"
    static let plantedFilename = "Planted-Filename-Q8 boarding pass.pdf"

    static func hex(_ text: String) -> String { Data(text.utf8).map { String(format: "%02x", $0) }.joined() }

    /// A ticket of about 2.5 MiB (three chunks) shared into a trip on `device`; returns the
    /// bytes and the attachment object `share-extension --json` printed.
    static func shareTicket(on device: SyncDevice) throws -> (Data, [String: Any]) {
        try device.container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass + [plantedLine], padding: 2_500_000)
        let shared = try device.container.shareOK(try device.container.input(pdf, as: plantedFilename))
        return (pdf, try #require(shared["attachment"] as? [String: Any]))
    }

    /// `shareTicket` on `device`: the bytes, and the ids of the attachment, its booking and its trip.
    static func sharedTicket(on device: SyncDevice) throws -> (pdf: Data, id: String, booking: String, trip: String) {
        let (pdf, attachment) = try shareTicket(on: device)
        let id = try #require(attachment["id"] as? String)
        let booking = try #require(attachment["bookingId"] as? String)
        let trip = try device.container.sqlite("SELECT trip_id FROM bookings WHERE id = '\(booking)'").trimmedStdout
        return (pdf, id, booking, trip)
    }

    @Test func aTicketTravelsSealedAndArrivesVerifiedAndItsDeletionFollows() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, attachment) = try Self.shareTicket(on: a)
        let id = try #require(attachment["id"] as? String)
        let booking = try #require(attachment["bookingId"] as? String)
        #expect(pdf.range(of: Data(Self.plantedLine.utf8)) != nil, "the ticket holds the planted line in the clear")

        let pushed = try a.sync()
        #expect(pushed["pushed"] as? Int == 3 && pushed["blobsUploaded"] as? Int == 1 && pushed["pending"] as? Int == 0, "\(pushed)")
        #expect(try server.psql("SELECT count(*), sum(chunk_count), bool_and(complete) FROM tripboard.blobs") == "1|3|t")
        let stored = Int(try server.psql("SELECT sum(octet_length(bytes)) FROM tripboard.blob_chunks")) ?? 0
        #expect(stored == pdf.count + SecretStream.headerLength + 3 * SecretStream.overhead, "ciphertext only: \(stored) for \(pdf.count)")

        let pulled = try b.sync()
        #expect(pulled["pulled"] as? Int == 3 && pulled["blobsDownloaded"] as? Int == 1 && pulled["attachmentsMissing"] as? Int == 0, "\(pulled)")
        let listed = try #require(try b.json("attachment", "list") as? [[String: Any]])
        #expect(listed.count == 1 && listed.first?["id"] as? String == id, "\(listed)")
        let arrived = try #require(listed.first)
        #expect(arrived["state"] as? String == "present" && arrived["syncState"] as? String == "synchronized")
        #expect(arrived["contentHash"] as? String == blake2bHex(pdf) && arrived["originalFilename"] as? String == Self.plantedFilename)
        let relative = try #require(arrived["relativePath"] as? String)
        #expect(relative == "attachments/\(id.prefix(2))/\(id).pdf")
        #expect(try b.container.unsealed("container/" + relative) == pdf)
        #expect(b.container.regularFiles(under: "tmp").isEmpty)
        #expect(try b.sync()["blobsDownloaded"] as? Int == 0, "nothing fetched twice")

        // The server's tables hold no byte of the ticket, its name, or any field in the clear.
        let dump = try server.dump()
        #expect(dump.contains("tripboard.blob_chunks"))
        for secret in [Self.plantedLine, Self.plantedFilename, "Planted-Filename-Q8", "TP 1351", "X7K2QP", "Paris", "BOARDING PASS", "%PDF-"] {
            #expect(!dump.contains(secret), "\(secret) is on the server in the clear")
            #expect(!dump.contains(Self.hex(secret)), "\(secret) is on the server as hex")
        }
        #expect(!dump.contains(String(repeating: "78", count: 16)), "the ticket's padding is on the server in the clear")

        // Deleting the booking on A deletes the attachment with it on B: both in B's trash.
        try a.ok("booking", "delete", booking)
        let deleted = try a.sync()
        #expect(deleted["pushed"] as? Int == 2, "the booking's tombstone and its attachment's: \(deleted)")
        #expect(try server.psql("SELECT kind, deleted FROM tripboard.records WHERE id IN ('\(id)', '\(booking)') ORDER BY kind") == "attachment|t\nbooking|t")
        #expect(try b.sync()["trashed"] as? Int == 1)
        #expect(try (b.json("attachment", "list") as? [Any])?.isEmpty == true)
        #expect(try b.container.sqlite("SELECT trashed_with, sync_state FROM attachments WHERE id = '\(id)'").trimmedStdout == "\(booking)|synchronized")
        #expect(try b.container.unsealed("container/" + relative) == pdf, "in the trash, the file stays until the purge")
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// After a sync, the files are sealed as their rows say under the attachments' deletion lock.
    /// When that step fails (here the lock is held past `TRIPBOARD_LOCK_TIMEOUT`) the sync still
    /// stands, and a warning says so: it is never dropped without a word.
    @Test func aSealingStepThatFailsAfterTheSyncIsAWarning() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        _ = try Self.sharedTicket(on: a)
        try a.sync()
        try FileManager.default.createDirectory(atPath: b.container.path + "/attachments", withIntermediateDirectories: true)
        let holder = try ProcessRunner.start("/usr/bin/flock", ["--no-fork", "-x", b.container.path + "/attachments", "sleep", "20"],
                                             environment: ProcessRunner.environment(container: nil))
        defer { holder.kill(); _ = holder.wait() }
        usleep(300_000)
        let result = try b.container.app(arguments: ["sync", "now", "--json"], environment: ["TRIPBOARD_LOCK_TIMEOUT": "0.3"])
        let report = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect(result.status == 0 && report["blobsDownloaded"] as? Int == 1, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("warning: the sync is done, but sealing its files as their rows say failed ("),
                "\(result)")
        holder.kill()
        _ = holder.wait()
        let again = try b.container.app(arguments: ["sync", "now"])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    /// A chunk altered on the server: the download does not verify, the row stays `missing`,
    /// nothing is at its path or left in `tmp/`; once the chunk is right again, the next sync fetches it.
    @Test func aBlobThatDoesNotVerifyLeavesTheAttachmentMissingNeverAHalfFile() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, attachment) = try Self.shareTicket(on: a)
        let id = try #require(attachment["id"] as? String)
        try a.sync()
        let flip = "UPDATE tripboard.blob_chunks SET bytes = set_byte(bytes, 1000, get_byte(bytes, 1000) # 1) WHERE chunk_index = 1"
        _ = try server.psql(flip)

        let pulled = try b.sync()
        #expect(pulled["blobsDownloaded"] as? Int == 0 && pulled["attachmentsMissing"] as? Int == 1, "\(pulled)")
        #expect(try b.container.sqlite("SELECT state FROM attachments WHERE id = '\(id)'").trimmedStdout == "missing")
        #expect(b.container.regularFiles(under: "attachments").isEmpty && b.container.regularFiles(under: "tmp").isEmpty)
        let status = try #require(try b.json("sync", "status") as? [String: Any])
        #expect(status["attachmentsAwaitingFile"] as? Int == 1)

        _ = try server.psql(flip)
        #expect(try b.sync()["blobsDownloaded"] as? Int == 1)
        #expect(try b.container.sqlite("SELECT state FROM attachments WHERE id = '\(id)'").trimmedStdout == "present")
        #expect(try b.container.unsealed("container/attachments/\(id.prefix(2))/\(id).pdf") == pdf)
    }

    /// `sync now` on B killed (SIGKILL, crash point `sync.blob-chunk-written`) after the first of
    /// a file's three chunks is written: the pulled records are there, the attachment `missing`,
    /// nothing at its path; the next sync fetches, verifies and publishes it.
    @Test func aDownloadKilledHalfWayLeavesNoHalfFileAndTheNextSyncFetchesIt() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, attachment) = try Self.shareTicket(on: a)
        let id = try #require(attachment["id"] as? String)
        try a.sync()
        let killed = try b.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.blob-chunk-written"])
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(killed)")
        #expect(try b.container.sqlite("SELECT state, sync_state FROM attachments WHERE id = '\(id)'").trimmedStdout == "missing|synchronized")
        #expect(b.container.regularFiles(under: "attachments").isEmpty, "no half file at its path")
        #expect(try b.container.integrity() == "ok")

        let resumed = try b.sync()
        #expect(resumed["blobsDownloaded"] as? Int == 1 && resumed["attachmentsMissing"] as? Int == 0, "\(resumed)")
        #expect(try b.container.sqlite("SELECT state FROM attachments WHERE id = '\(id)'").trimmedStdout == "present")
        #expect(try b.container.unsealed("container/attachments/\(id.prefix(2))/\(id).pdf") == pdf)
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// Two devices sharing a trip "Paris", then the same boarding pass filed into it on A and on B
    /// before either syncs again: the share-extension's answers, A's first.
    private static func theSameTicketFiledOnBothDevices() throws
        -> (PostgresServer, SyncDevice, SyncDevice, trip: String, pdf: Data, shared: [[String: Any]]) {
        let (server, a, b) = try SyncTests.twoDevices()
        let trip = try a.container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        try a.sync()
        try b.sync()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let shared = try [a, b].map {
            try $0.container.shareOK(try $0.container.input(pdf, as: "boarding pass.pdf"), "--trip", trip)
        }
        return (server, a, b, trip, pdf, shared)
    }

    /// The same ticket filed into the same trip on both devices before either synced: after both
    /// sync, one booking and one attachment everywhere — B, syncing second, keeps A's.
    @Test func theSameTicketFiledOnBothDevicesIsOneBookingAndOneAttachment() throws {
        let (server, a, b, trip, pdf, shared) = try Self.theSameTicketFiledOnBothDevices()
        defer { withExtendedLifetime(server) {} }
        let filed = try shared.map { try #require(($0["attachment"] as? [String: Any])?["id"] as? String) }
        try a.sync()
        let second = try b.sync()
        #expect(second["duplicatesMerged"] as? Int == 2 && second["pushed"] as? Int == 0 && second["blobsDownloaded"] as? Int == 1,
                "\(second)")
        try a.sync()
        #expect(try server.psql("SELECT kind, count(*) FROM tripboard.records WHERE NOT deleted GROUP BY kind ORDER BY kind")
                == "attachment|1\nbooking|1\ntrip|1")
        for device in [a, b] {
            let listed = try #require(try device.json("attachment", "list") as? [[String: Any]])
            #expect(listed.count == 1 && listed.first?["id"] as? String == filed[0], "\(listed)")
            #expect(try device.container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "1")
            #expect(try device.container.unsealed("container/attachments/\(filed[0].prefix(2))/\(filed[0]).pdf") == pdf)
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        // B's own copy leaves with the next writer (the deletion queue): no file, no row.
        try b.ok("trip", "edit", trip, "--notes", "one ticket")
        #expect(try b.container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "1")
        #expect(b.container.regularFiles(under: "attachments").count == 1)
    }

    /// A row whose bytes are not hashed yet (a migrated container before its hashing pass:
    /// `content_hash` empty) is pushed with the hash of the bytes uploaded, never with none; the
    /// device records that hash (it read every byte), and the next sync has nothing to push.
    @Test func anAttachmentNotHashedYetIsPushedWithTheHashOfItsBytes() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, attachment) = try Self.shareTicket(on: a)
        let id = try #require(attachment["id"] as? String)
        #expect(try a.container.sqlite("UPDATE attachments SET content_hash = ''").status == 0)
        let pushed = try a.sync()
        #expect(pushed["pushed"] as? Int == 3 && pushed["blobsUploaded"] as? Int == 1 && pushed["pending"] as? Int == 0, "\(pushed)")
        #expect(try a.container.sqlite("SELECT content_hash FROM attachments WHERE id = '\(id)'").trimmedStdout == blake2bHex(pdf),
                "the hash of the bytes uploaded is recorded")
        let again = try a.sync()
        #expect(again["pushed"] as? Int == 0, "nothing changed: \(again)")
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        try b.sync()
        let listed = try #require(try b.json("attachment", "list") as? [[String: Any]])
        #expect(listed.first?["contentHash"] as? String == blake2bHex(pdf), "\(listed)")
        #expect(try b.container.unsealed("container/attachments/\(id.prefix(2))/\(id).pdf") == pdf)
    }

    /// The same ticket filed on both devices, B's copy not hashed yet: B hashes it on the spot
    /// when A's arrives and keeps one, as it would with the hash recorded.
    @Test func aDuplicateNotHashedYetIsRecognisedByHashingItOnTheSpot() throws {
        let (server, a, b, _, pdf, shared) = try Self.theSameTicketFiledOnBothDevices()
        defer { withExtendedLifetime(server) {} }
        let filed = try shared.map { try #require(($0["attachment"] as? [String: Any])?["id"] as? String) }
        #expect(try b.container.sqlite("UPDATE attachments SET content_hash = ''").status == 0)
        try a.sync()
        let second = try b.sync()
        #expect(second["duplicatesMerged"] as? Int == 2 && second["pushed"] as? Int == 0, "\(second)")
        let listed = try #require(try b.json("attachment", "list") as? [[String: Any]])
        #expect(listed.map { $0["id"] as? String } == [filed[0]], "\(listed)")
        #expect(listed.first?["contentHash"] as? String == blake2bHex(pdf))
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// The same ticket filed on both devices, and both copies pushed before either device pulled
    /// the other's (B's batch saved, then the run killed; A syncs; B's next run sends its batch
    /// before it pulls): every device settles the pair the same way — the booking with the
    /// smaller id stays, the other goes to the trash with its copy of the file — in both orders.
    @Test(arguments: [false, true])
    func theSameTicketPushedFromBothDevicesEndsAsOneBooking(bSettlesFirst: Bool) throws {
        let (server, a, b, trip, pdf, shared) = try Self.theSameTicketFiledOnBothDevices()
        defer { withExtendedLifetime(server) {} }
        let bookings = try shared.map { try #require(($0["booking"] as? [String: Any])?["id"] as? String) }
        let attachments = try shared.map { try #require(($0["attachment"] as? [String: Any])?["id"] as? String) }
        let killed = try b.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.batch-saved"])
        #expect(killed.wasSignaled, "\(killed)")
        try a.sync()
        let first = bSettlesFirst ? b : a
        if !bSettlesFirst {
            // B sends its batch and applies A's page, then dies before it settles: A settles first.
            #expect(try b.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.page-applied"]).wasSignaled)
        }
        // B first: its batch goes out in the run that settles. A first: both copies are there now.
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'booking' AND NOT deleted") == (bSettlesFirst ? "1" : "2"))
        let settled = try first.sync()
        #expect(settled["duplicatesMerged"] as? Int == 1, "\(settled)")
        for device in [a, b, a, b] { try device.sync() }
        let kept = bookings.min()!
        let keptAttachment = attachments[bookings.firstIndex(of: kept)!]
        #expect(try server.psql("SELECT kind, count(*) FROM tripboard.records WHERE NOT deleted GROUP BY kind ORDER BY kind")
                == "attachment|1\nbooking|1\ntrip|1")
        // The copy is in the trash of the device that filed it, and of the other if it ever had
        // it (not when B settled first, dropping its own copy before A saw it).
        let loser = bookings.max()!
        let loserFiledOnB = bookings[1] == loser
        for device in [a, b] {
            let listed = try #require(try device.json("booking", "list", "--trip", trip) as? [[String: Any]])
            #expect(listed.map { $0["id"] as? String } == [kept], "\(listed)")
            let filedLoser = (device === b) == loserFiledOnB
            let trash = try #require(try device.json("trash", "list") as? [[String: Any]])
            #expect(trash.map { $0["id"] as? String } == (filedLoser || !(bSettlesFirst && loserFiledOnB) ? [loser] : []), "\(trash)")
            let files = try #require(try device.json("attachment", "list") as? [[String: Any]])
            #expect(files.map { $0["id"] as? String } == [keptAttachment], "\(files)")
            #expect(try device.container.unsealed("container/attachments/\(keptAttachment.prefix(2))/\(keptAttachment).pdf") == pdf)
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        if !(bSettlesFirst && loserFiledOnB) { #expect(try a.content() == b.content()) }
    }

    /// The same file shared on both devices is one blob on the server (named by a keyed hash of its bytes).
    @Test func theSameFileIsOneBlobOnTheServer() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        for device in [a, b] {
            try device.container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-14")
            _ = try device.container.shareOK(try device.container.input(pdf, as: "ticket.pdf"))
        }
        #expect(try a.sync()["blobsUploaded"] as? Int == 1)
        let second = try b.sync()
        #expect(second["blobsUploaded"] as? Int == 0 && second["pushed"] as? Int == 3, "\(second)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.blobs") == "1")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'attachment'") == "2")
    }

    /// B merges the ticket's booking into another (the attachment moves, the old booking goes to
    /// the trash) while the server serves the attachment with its old booking: edited on A
    /// meanwhile, or read again by a reconcile once the horizon passed. The attachment follows
    /// the merged booking, not the one the server names: edited elsewhere, it used to join the
    /// old booking in the trash, and its deletion went to every device (the sync model, seed
    /// 3792725341).
    @Test(arguments: [false, true])
    func aTicketMovedByAMergeStaysWhenTheServerServesItsOldBooking(editedElsewhere: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (_, id, old, trip) = try Self.sharedTicket(on: a)
        let kept = try a.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Thalys 9312")
        try a.sync()
        try b.sync()
        try b.ok("booking", "merge", kept, old)
        #expect(try b.container.sqlite("SELECT booking_id, trashed_at IS NULL FROM attachments").trimmedStdout == "\(kept)|1")
        if editedElsewhere {
            try a.ok("attachment", "protect", id, "until-first-unlock")
            try a.sync()
        } else {
            _ = try server.psql("UPDATE tripboard.zones SET change_sequence = change_sequence + 1, purged_through = change_sequence + 1")
        }
        let merged = try b.sync()
        #expect(merged["trashed"] as? Int ?? 0 == 0 && merged["pending"] as? Int == 0, "\(merged)")
        if !editedElsewhere { #expect(merged["reconciled"] as? String == "horizonPassed", "\(merged)") }
        try a.sync()
        for device in [a, b] {
            #expect(try device.container.sqlite("SELECT booking_id, trashed_at IS NULL FROM attachments").trimmedStdout == "\(kept)|1")
            #expect(try device.container.sqlite("SELECT count(*) FROM bookings WHERE trashed_at IS NULL").trimmedStdout == "1")
        }
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(id)'") == "f")
        if editedElsewhere {
            #expect(try b.container.sqlite("SELECT protection FROM attachments").trimmedStdout == "until-first-unlock")
        }
    }

    /// A's trip was deleted there when B filed a ticket into it: the ticket arrives on A straight
    /// into the trash with the trip, its file never fetched, and A sends its deletion. Restored on
    /// A with the trip, it goes back up naming the blob its file is in, and A fetches the file:
    /// nothing stays pending. It used to wait for good for a file A never had (the sync model,
    /// seed 862173165).
    @Test func aTicketRestoredBeforeItsFileEverCameIsFetched() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        try a.sync()
        try b.sync()
        try a.ok("trip", "delete", trip)
        let booking = try b.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Thalys 9312")
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass, padding: 1_500_000, salt: "restored")
        let shared = try b.container.shareOK(try b.container.input(pdf, as: "thalys.pdf"), "--booking", booking)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        try b.sync()
        try a.sync()
        try a.sync()
        #expect(try a.container.sqlite("SELECT state, trashed_at IS NOT NULL, sync_state FROM attachments").trimmedStdout == "missing|1|synchronized")
        #expect(try server.psql("SELECT bool_and(deleted) FROM tripboard.records") == "t")

        try a.ok("trash", "restore", trip)
        let restored = try a.sync()
        #expect(restored["pending"] as? Int == 0 && restored["blobsDownloaded"] as? Int == 1, "\(restored)")
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        let listed = try #require(try a.json("attachment", "list") as? [[String: Any]])
        #expect(listed.count == 1 && listed.first?["id"] as? String == id && listed.first?["state"] as? String == "present", "\(listed)")
        let relative = try #require(listed.first?["relativePath"] as? String)
        #expect(try a.container.unsealed("container/" + relative) == pdf)

        try b.sync()
        #expect(try b.container.sqlite("SELECT state, trashed_at IS NULL FROM attachments").trimmedStdout == "present|1")
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
        #expect(try server.psql("SELECT count(*) FILTER (WHERE NOT deleted) FROM tripboard.records") == "3")
    }

    /// A moves a ticket from a booking of Paris to one of Lyon and has not synced when B, which
    /// never saw the move, deletes Paris: B's deletion of the ticket went with the trip's. On A
    /// the ticket is under Lyon, moved later than where B had it, so that deletion no longer
    /// reaches it: A keeps it and sends it again (a new life), and B takes it back out of its
    /// trash under Lyon. It used to go to A's trash too (the sync model, seed 3695203037). Not
    /// moved, it goes with Paris. Moved *into* Lyon after B deleted Lyon, it goes with Lyon on A,
    /// and B, which still has it under Paris, believes that deletion: its place there is older
    /// than the move (seed 178374062).
    @Test(arguments: ["out of Paris", "not moved", "into Lyon"])
    func aTicketMovedOutOfATripDeletedElsewhereStays(how: String) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, id, booking, paris) = try Self.sharedTicket(on: a)
        let lyon = try a.container.addTrip("Lyon", start: "2027-01-10", end: "2027-01-12")
        let hotel = try a.ok("booking", "add", "--trip", lyon, "--kind", "hotel", "--title", "Hôtel des Célestins")
        try a.sync()
        try b.sync()
        let deleted = how == "into Lyon" ? lyon : paris
        if how == "out of Paris" { try a.ok("attachment", "move", id, "--booking", hotel) }
        try b.ok("trip", "delete", deleted)
        try b.sync()
        if how == "into Lyon" { try a.ok("attachment", "move", id, "--booking", hotel) }
        let pulled = try a.sync()
        #expect(pulled["refused"] as? Int ?? 0 == 0, "\(pulled)")
        let back = try b.sync()
        try a.sync()
        for device in [a, b] {
            let state = try device.container.sqlite("SELECT booking_id, trashed_at IS NULL FROM attachments").trimmedStdout
            let expected = switch how {
            case "out of Paris": "\(hotel)|1"
            case "not moved": "\(booking)|0"
            default: device === a ? "\(hotel)|0" : "\(booking)|0"
            }
            #expect(state == expected, "\(how): \(state)")
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
            #expect(try !device.ok("trip", "list").contains(how == "into Lyon" ? "Lyon" : "Paris"))
        }
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(id)'") == (how == "out of Paris" ? "f" : "t"))
        #expect(pulled["keptMovedOut"] as? Int ?? 0 == (how == "out of Paris" ? 1 : 0), "\(pulled)")
        #expect(back["keptMovedOut"] as? Int ?? 0 == 0, "\(back)")
        if how == "out of Paris" {
            let listed = try #require(try b.json("attachment", "list") as? [[String: Any]])
            let relative = try #require(listed.first?["relativePath"] as? String)
            #expect(try b.container.unsealed("container/" + relative) == pdf)
        }
    }

    /// A merges the ticket's booking into another (the ticket moves, the old booking goes to the
    /// trash) and the server is then restored from a dump older than all of it: A sends it all
    /// again, numbered from 1, as B holds it. B pulls the old booking's deletion (its ticket goes
    /// to the trash with it) and then the ticket under the new booking, at the version B holds:
    /// it comes out of the trash there. It used to be passed over as deleted here, and B then sent
    /// its deletion to every device (the sync model, seed 1863512531).
    @Test func aTicketMovedThenSentAgainToAServerThatLostItComesOutOfTheTrash() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let dump = server.directory + "/before-ticket.dump"
        try server.backUp(to: dump)
        let (_, id, old, trip) = try Self.sharedTicket(on: a)
        let kept = try a.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Thalys 9312")
        try a.sync()
        try b.sync()
        try a.ok("booking", "merge", kept, old)
        try server.restore(from: dump)
        let resent = try a.sync()
        #expect(resent["reconciled"] as? String == "serverLostChanges", "\(resent)")
        #expect(try server.psql("SELECT version FROM tripboard.records WHERE id = '\(id)'") == "1")
        let pulled = try b.sync()
        #expect(pulled["pending"] as? Int == 0, "\(pulled)")
        try a.sync()
        for device in [a, b] {
            #expect(try device.container.sqlite("SELECT booking_id, trashed_at IS NULL FROM attachments").trimmedStdout == "\(kept)|1")
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(id)'") == "f")
    }
}
