import TripBoardStorage
import TripBoardModel
import TripBoardSystem
import TripBoardCommandLine
import TripBoardDevice

extension AppCommand {
    static var attachmentCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["attachment", "list"],
                        options: [
                            .value("--trip", "ID", "only the attachments of this trip"),
                            .json,
                        ],
                        summary: "Lists attachments (of one trip), oldest first.", run: listAttachments),
            AppCommandSpec(words: ["attachment", "export"],
                        arguments: [
                            .required("ID", "the attachment (an id or a unique prefix of one)"),
                            .required("DEST", "a file, a directory to put it in under its original name, or - for standard output", completion: .file),
                        ],
                        summary: """
                        Copies an attachment's file to DEST (a file, or a directory to put it in under its original \
                        name), verifying its hash on the way; written atomically, mode 0600. DEST - writes it to \
                        standard output, once verified.
                        """, run: exportAttachment),
            AppCommandSpec(words: ["attachment", "thumbnail"],
                        arguments: [
                            .required("ID", "the attachment (an id or a unique prefix of one)"),
                            .required("DEST", "a file, a directory to put it in as <original name>.png, or - for standard output", completion: .file),
                        ],
                        summary: """
                        Writes the attachment's thumbnail (a PNG of page 1) to DEST (a file, or a directory to put it in \
                        as <original name>.png; written atomically, mode 0600), or to standard output with -: the cached \
                        one, else rendered again from the ticket. The cache holds it sealed under the attachment's \
                        protection class, so it needs that class open (69 while the device is locked).
                        """, run: writeThumbnail),
            AppCommandSpec(words: ["attachment", "protect"],
                        options: [.json],
                        arguments: [
                            .required("ID", "the attachment (an id or a unique prefix of one)"),
                            .required("CLASS", ProtectionClass.fileClassNames.joined(separator: "|")),
                        ],
                        summary: """
                        Seals the attachment's file (and its thumbnail) under another protection class: complete (readable \
                        and writable only while unlocked), complete-unless-open (the default: filed while locked, read only \
                        while unlocked), until-first-unlock (readable from the first unlock after a start), or none \
                        (readable at any time on this device, still sealed). Needs the device unlocked; a file written \
                        before attachments were sealed is sealed now. The class travels with the attachment through sync \
                        and backup (--json: the attachment object).
                        """, run: protectAttachment),
            AppCommandSpec(words: ["attachment", "move"],
                        options: [
                            .value("--booking", "ID", "the booking to move it to, of this trip or another (an id or a unique prefix of one)",
                                   required: true),
                            .json,
                        ],
                        arguments: [
                            .required("ID", "the attachment (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Moves an attachment to another booking, of its trip or another (a ticket filed in the wrong place); \
                        refused (65) when that booking already has the same file. Its file stays where it is; the \
                        attachment becomes pendingUpload (--json: the attachment object).
                        """, run: moveAttachment),
            AppCommandSpec(words: ["attachment", "delete"],
                        arguments: [
                            .required("ID", "the attachment (an id or a unique prefix of one)"),
                        ],
                        summary: "Moves an attachment to the trash; its file is removed when the trash is purged (30 days, or trash empty).",
                        run: deleteAttachment),
            AppCommandSpec(words: ["cache", "clear"], summary: "Removes every cached thumbnail (they are regenerated when needed).", run: clearCache, store: .none),
            AppCommandSpec(words: ["container", "check"],
                        options: [
                            .flag("--repair", "repair what can be repaired (orphans go to attachments/recovered/, never deleted)"),
                            .flag("--purge-recovered", "with --repair: delete for good what attachments/recovered/ held when the check began"),
                            .value("--grace", "SECONDS", "leave leftovers younger than this alone (default 3600)"),
                            .json,
                        ],
                        summary: """
                        Verifies the store (integrity_check, foreign_key_check) and that every attachment has its file \
                        with the right size and hash; reports orphan files and staging leftovers older than the grace \
                        period (--grace, default 3600 s; an edit in $EDITOR keeps its copy in tmp/), anything that is not a \
                        regular file where one belongs, stale thumbnails and unfinished deletions. --repair finishes \
                        deletions, moves orphans and misplaced entries into attachments/recovered/ (never deleting them), \
                        removes tmp/ leftovers and stale cache entries, and marks rows whose file is gone as missing; \
                        damaged files are reported, never removed. What attachments/recovered/ keeps is listed; \
                        --purge-recovered (with --repair) deletes for good what it held when the check began, after \
                        every file a missing attachment recognises has been put back. Exit 65 when problems remain.
                        """, run: checkContainer, store: .inspection),
        ]
    }

    static func listAttachments(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let tripReference = try context.arguments.recordIDOption("--trip", "trip")
        try context.finishArguments()
        let store = try context.store()
        let tripId = try tripReference.map { try store.resolveID(Trip.self, $0) }
        if json { return try context.console.printJSONArray(store.attachmentRows(tripId: tripId)) }
        try context.console.printTable(header: ["ID", "FILE", "TYPE", "SIZE", "PAGES", "STATE", "PROTECTION", "BOOKING", "TRIP"],
                                       emptyMessage: "No attachments.", store.attachmentListingRows(tripId: tripId)) { listing in
            let attachment = listing.attachment
            return [attachment.id.short, attachment.originalFilename, attachment.contentType, String(attachment.byteCount),
                    attachment.pageCount.map(String.init) ?? "", attachment.state.rawValue, attachment.protection.fileClassName,
                    listing.bookingTitle, listing.tripName]
        }
    }

    static func exportAttachment(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("attachment")
        let destination = try context.arguments.positional("DEST")
        try context.finishArguments()
        if destination == "-" {
            // To standard output, verified first: what is written there cannot be taken back.
            let container = try context.container()
            let attachment = try container.store.attachment(id: try container.store.resolveID(Attachment.self, reference))
            try AttachmentFiles(container: container).requireOpen(attachment.protection)
            let bytes = try AttachmentFiles(container: container).contents(
                relativePath: attachment.relativePath, byteCount: attachment.byteCount, contentHash: attachment.contentHash)
            return context.console.write(bytes)
        }
        // Where it goes is settled before the container is opened: a bad DEST touches nothing.
        let place = try Self.destination(destination)
        let container = try context.container()
        let attachment = try container.store.attachment(id: try container.store.resolveID(Attachment.self, reference))
        let files = try AttachmentFiles(container: container)
        try files.requireOpen(attachment.protection)
        let (directory, fileName): (Directory, String?)
        switch place {
        case .stream(let output):
            // Verified first, as for `-`: what is written there cannot be taken back.
            let bytes = try files.contents(relativePath: attachment.relativePath, byteCount: attachment.byteCount, contentHash: attachment.contentHash)
            return try output.write(all: bytes)
        case .directory(let existing): (directory, fileName) = (existing, nil)
        case .file(let parent, let name): (directory, fileName) = (parent, name)
        }
        let name = fileName ?? attachment.originalFilename
        try files.export(relativePath: attachment.relativePath, byteCount: attachment.byteCount,
                         contentHash: attachment.contentHash, to: directory, as: name)
        context.console.diagnostic("wrote \(directory.childPath(name))")
    }

    /// Where DEST puts a file.
    enum Destination {
        /// A directory that is there (like cp FILE DIR): the file's own name, decided later.
        case directory(Directory)
        /// A file to create (or replace, atomically) in a directory that is there.
        case file(Directory, String)
        /// Something that is there and is neither a regular file nor a directory — a device such
        /// as `/dev/null`, a FIFO, a terminal, `/dev/stdout` — written to as it is, like `-`:
        /// never replaced (a rename over `/dev/null` would put a file in its place).
        case stream(FileDescriptor)
    }

    /// Where DEST puts a file. A directory that cannot be opened (permissions) is said so, not
    /// taken for a file's name.
    static func destination(_ destination: String) throws -> Destination {
        if let status = try? FileStatus.of(path: destination), status.kind != .regular, status.kind != .directory {
            return .stream(try FileDescriptor.openExistingForWriting(path: destination))
        }
        var existing: Directory?
        do {
            existing = try Directory.open(path: destination)
        } catch {
            guard error.code == .notFound || error.code == .notADirectory else { throw error }
        }
        if let existing { return .directory(existing) }
        let (directoryPath, name) = splitPath(destination)
        guard !name.isEmpty else {
            throw CommandLineError(.noInput, "there is no directory \(destination.prefix(200)); DEST is a directory that exists, or a file to create in one")
        }
        do {
            return .file(try Directory.open(path: directoryPath), name)
        } catch {
            if error.code == .notFound {
                throw CommandLineError(.noInput, "there is no directory \(directoryPath.prefix(200)) to write \(name.prefix(100)) in")
            }
            throw error
        }
    }

    static func writeThumbnail(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("attachment")
        let destination = try context.arguments.positional("DEST")
        try context.finishArguments()
        let place = destination == "-" ? nil : try self.destination(destination)
        let container = try context.container()
        let attachment = try container.store.attachment(id: try container.store.resolveID(Attachment.self, reference))
        let png = try ThumbnailCache(container: container).thumbnail(
            of: attachment, container: container, worker: try PDFWorker.locate(environment: context.environment))
        let (directory, name): (Directory, String)
        switch place {
        case nil: return context.console.write(png)
        case .stream(let output): return try output.write(all: png)
        case .directory(let existing): (directory, name) = (existing, attachment.originalFilename + ".png")
        case .file(let parent, let fileName): (directory, name) = (parent, fileName)
        }
        try directory.writeAtomically(png, to: name, staging: directory)
        context.console.diagnostic("wrote \(directory.childPath(name))")
    }

    static func protectAttachment(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let reference = try context.arguments.recordID("attachment")
        let protection = try ProtectionClass.fileClass(try context.arguments.positional("CLASS"), option: "CLASS")
        try context.finishArguments()
        let container = try context.container()
        let store = try container.store
        let attachment = try store.attachment(id: try store.resolveID(Attachment.self, reference))
        // A purge that would unlink the file being sealed waits (the rename would bring it back).
        let outcome = try AttachmentFiles(container: container).holdingDeletionsBack(timeout: container.options.lockTimeout) {
            try AttachmentProtection(container: container).protect(attachment, as: protection)
        }
        if json { return try context.console.printJSON(try store.attachment(id: attachment.id)) }
        context.console.diagnostic(terminalSafe(outcome.changed
            ? "\(attachment.originalFilename) is sealed under \(protection.fileClassName) now (\(outcome.was.map { "was " + $0.fileClassName } ?? "was in the clear"))"
            : "\(attachment.originalFilename) is sealed under \(protection.fileClassName) already; nothing changed"))
    }

    static func moveAttachment(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let reference = try context.arguments.recordID("attachment")
        let bookingReference = try context.arguments.requiredRecordIDOption("--booking", "booking")
        try context.finishArguments()
        let store = try context.store()
        let before = try store.attachment(id: try store.resolveID(Attachment.self, reference))
        let booking = try store.booking(id: try store.resolveID(Booking.self, bookingReference))
        let moved = try store.moveAttachment(id: before.id, toBooking: booking.id)
        if json { return try context.console.printJSON(moved) }
        let trip = try store.trip(id: booking.tripId)
        context.console.diagnostic(terminalSafe(before.bookingId == booking.id
            ? "\(moved.originalFilename) is in booking \(booking.title) already; nothing changed"
            : "moved \(moved.originalFilename) to booking \(booking.title) (\(booking.id.short)) of trip \(trip.name)"))
    }

    static func deleteAttachment(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("attachment")
        try context.finishArguments()
        try moveToTrash(.attachment, reference, context)
    }

    static func checkContainer(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let repair = context.arguments.flag("--repair")
        let purgeRecovered = context.arguments.flag("--purge-recovered")
        let grace = try context.arguments.option("--grace").map { text in
            guard let seconds = Int64(text), seconds >= 0 else {
                throw CommandLineError.usage("--grace '\(text.prefix(40))' is not a whole number of seconds")
            }
            return seconds
        } ?? ContainerCheck.defaultGracePeriod
        try context.finishArguments()
        guard repair || !purgeRecovered else {
            throw CommandLineError.usage("--purge-recovered deletes files, which only a repair does: add --repair")
        }
        let report = try ContainerCheck.run(container: try context.container(), repair: repair, gracePeriod: grace,
                                            purgeRecovered: purgeRecovered)
        if json {
            try context.console.printJSON(report)
        } else {
            let console = context.console
            for line in report.repairs { console.print("repaired: " + line) }
            for line in report.storeProblems { console.print("store: " + line) }
            for line in report.missingFiles { console.print("missing file: " + line) }
            for line in report.damagedFiles { console.print("damaged file: " + line) }
            for line in report.orphanFiles { console.print("orphan file: " + line) }
            for line in report.misplacedEntries { console.print("not a regular file: " + line) }
            for line in report.stagingLeftovers { console.print("staging leftover: " + line) }
            for line in report.staleCacheEntries { console.print("stale cache entry: " + line) }
            for line in report.returnedFiles { console.print("file back for a missing attachment: " + line) }
            for line in report.unfinishedDeletions { console.print("unfinished deletion: attachment " + line) }
            if let mark = report.staleDamageMark { console.print("damage mark: " + mark) }
            for line in report.recovered { console.print("kept in recovered/: " + line) }
            if !report.recovered.isEmpty {
                let count = report.recovered.count
                console.print("\(count) entr\(count == 1 ? "y is" : "ies are") kept in attachments/recovered/ (never deleted by a repair): "
                              + "share a ticket again with share-extension to re-attach it, or delete them with --repair --purge-recovered")
            }
            if report.hashesRecorded > 0 {
                console.print("hashed \(report.hashesRecorded) attachment file\(report.hashesRecorded == 1 ? "" : "s") not hashed yet "
                              + "(moved by the container migration), their hashes recorded")
            }
            if report.checkedBySizeOnly > 0 {
                console.print("\(report.checkedBySizeOnly) attachment file\(report.checkedBySizeOnly == 1 ? " was" : "s were") checked by size only: "
                              + "sealed under a class the lock keeps closed now (`app device unlock`, then check again to verify their hashes)")
            }
            if report.isClean { console.print("The container is consistent.") }
        }
        if !report.storeProblems.isEmpty {
            throw CommandLineError(.dataError, "the store cannot be used as it is: restore it from a backup, or `app container salvage` copies what can still be read into a new store (keeping the damaged one)")
        }
        if !report.isClean {
            throw CommandLineError(.dataError, "the container needs attention" + (repair ? " (what remains cannot be repaired safely)" : "; run `app container check --repair`"))
        }
    }

    static func clearCache(_ context: CommandContext) throws {
        try context.finishArguments()
        let count = try ThumbnailCache(container: try context.container()).clear()
        context.console.diagnostic("removed \(count) thumbnail\(count == 1 ? "" : "s")")
    }
}
