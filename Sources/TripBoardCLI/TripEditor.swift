import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine

/// `trip edit ID` without field flags: the trip's editable fields as JSON in `$VISUAL`/`$EDITOR`.
///
/// The container lock is released while the editor runs (a person may take minutes, and a
/// migration must not wait on them); the change is then applied only if nobody else changed the
/// trip meanwhile (optimistic check on `updatedAt`).
///
/// What the person typed is never thrown away: a refused edit on a terminal reopens the editor on
/// their text with the error in `#` lines at the top (as `kubectl edit` does); anywhere else, or
/// when they save the refused text unchanged, the file is kept outside the container and its path
/// is named in the error.
struct TripEditor {
    let context: CommandContext

    /// The fields a person may edit; anything else in the file is refused.
    struct EditableTrip: Codable, Equatable {
        var name: String
        var startDate: String
        var endDate: String
        var notes: String
    }

    /// The editor `trip edit` runs: the first non-empty of `$VISUAL` and `$EDITOR`, else `vi` — but
    /// `nil` (refused before the container is opened) when neither is set and there is no terminal
    /// for `vi` to run on: a script that forgot its `EDITOR=` must not hang on an invisible `vi`.
    static func editor(environment: [String: String], isTerminal: Bool) -> String? {
        if let chosen = [environment["VISUAL"], environment["EDITOR"]].compactMap({ $0 }).first(where: { !$0.isEmpty }) {
            return chosen
        }
        return isTerminal ? "vi" : nil
    }

    /// Opens the trip in `editor` until its text is applied, cancelled or given up on. Once an
    /// edit was refused and the editor reopened, the file holds the person's text: a failure from
    /// then on keeps it where it is and names it.
    func edit(tripId: Trip.ID, editor: String) throws {
        let (trip, original, staging, fileName, originalBytes) = try stage(tripId)
        let filePath = staging.childPath(fileName)
        var leavesFile = false
        defer { if !leavesFile { try? staging.removeFile(fileName) } }
        let reopens = StandardStream.input.isTerminal
        var expectedUpdatedAt = trip.updatedAt
        var refusedText: [UInt8]?
        var holdsRefusedEdit = false
        func keptInPlace(_ error: any Error) -> CommandLineError {
            leavesFile = true
            return CommandLineError(exitStatus(for: error), terminalSafe(errorMessage(for: error) + "; your edit is kept in " + filePath))
        }
        while true {
            context.closeContainer()
            let status: Int32
            do { status = try ProcessSetup.runShellCommand(editor, argument: filePath) } catch {
                throw holdsRefusedEdit ? keptInPlace(error) : error
            }
            let failure = CommandLineError(.unavailable, "the editor (\(editor.prefix(60))) exited with status \(status); nothing was changed")
            guard let written = try readEditedFile(fileName, in: staging) else {
                // Too large to read back or to reopen: refused, and the file itself is kept.
                let (error, leftInPlace) = keepingFile(fileName, in: staging, tripId: tripId, status == 0 ? Self.tooLarge : failure)
                leavesFile = leftInPlace
                throw error
            }
            let text = Self.strippingComments(written)
            guard status == 0 else {
                guard text != Self.strippingComments(originalBytes) else { throw failure }
                throw keeping(written, fileName: fileName, in: staging, tripId: tripId, failure, leavesFile: &leavesFile)
            }
            if text.allSatisfy({ [0x20, 0x09, 0x0a, 0x0d].contains($0) }) {
                return context.console.diagnostic("the edited file is empty: the edit is cancelled; nothing was changed")
            }
            do {
                return try apply(text, tripId: tripId, original: original, expectedUpdatedAt: expectedUpdatedAt,
                                 readAt: trip.updatedAt)
            } catch {
                // Saved unchanged after a refusal: the person has given up on this text.
                guard reopens, text != refusedText else {
                    throw keeping(written, fileName: fileName, in: staging, tripId: tripId, error, leavesFile: &leavesFile)
                }
                refusedText = text
                let (notes, replacing) = try refusalNotes(error, tripId: tripId)
                if let replacing {
                    // Saving again, even unchanged, replaces the other process's version with this one, knowingly.
                    expectedUpdatedAt = replacing
                    refusedText = nil
                }
                do {
                    try staging.writeAtomically(Self.header(notes) + text, to: fileName, staging: staging)
                } catch {
                    throw keptInPlace(error)  // not replaced: the file holds what the person saved
                }
                holdsRefusedEdit = true
            }
        }
    }

    /// The trip as it is, and the file the editor gets (in the container's staging directory,
    /// written atomically): its name and bytes.
    private func stage(_ tripId: Trip.ID) throws
        -> (trip: Trip, original: EditableTrip, staging: Directory, fileName: String, originalBytes: [UInt8]) {
        let container = try context.container()
        let trip = try container.store.trip(id: tripId)
        let original = EditableTrip(name: trip.name, startDate: trip.startDate.description,
                                    endDate: trip.endDate.description, notes: trip.notes)
        let staging = try container.stagingDirectory()
        let fileName = "edit-trip-\(tripId.short)-\(UInt32.random(in: 0 ... .max)).json"
        let originalBytes = try Console.json(original) + [0x0a]
        try staging.writeAtomically(originalBytes, to: fileName, staging: staging)
        return (trip, original, staging, fileName, originalBytes)
    }

    private static let tooLarge = CommandLineError(.dataError, "the edited file is larger than the limit of 1 MiB; nothing was changed")

    /// What the reopened file says above the person's text: why it was refused, and after a
    /// conflict the other process's version as it reads now, with the `updatedAt` a save then
    /// knowingly replaces (`nil` for any other refusal).
    private func refusalNotes(_ error: any Error, tripId: Trip.ID) throws -> (notes: [String], replacing: Timestamp?) {
        var notes = [errorMessage(for: error)]
        guard case StoreError.conflict = error, let current = try? context.store().trip(id: tripId) else { return (notes, nil) }
        notes += ["Saving again replaces that version with yours. It reads now:"]
        notes += String(decoding: try Console.json(EditableTrip(name: current.name, startDate: current.startDate.description,
                                                               endDate: current.endDate.description, notes: current.notes)),
                        as: UTF8.self).split(separator: "\n").map(String.init)
        return (notes, current.updatedAt)
    }

    /// Parses and applies the edited text; throws the refusal otherwise (nothing changed).
    /// `readAt` is the `updatedAt` the file was written from: once a conflict moved
    /// `expectedUpdatedAt` on, even the original text is a change (back to it).
    private func apply(_ text: [UInt8], tripId: Trip.ID, original: EditableTrip, expectedUpdatedAt: Timestamp, readAt: Timestamp) throws {
        let edited = try parse(text)
        guard edited != original || expectedUpdatedAt != readAt else {
            context.console.diagnostic("no changes")
            return
        }
        for (field, text) in [("startDate", edited.startDate), ("endDate", edited.endDate)] where CivilDate(text) == nil {
            if let missing = Arguments.missingDay(text) { throw CommandLineError(.dataError, "\(field) '\(text)' \(missing); nothing was changed") }
        }
        guard let start = CivilDate(edited.startDate), let end = CivilDate(edited.endDate) else {
            throw CommandLineError(.dataError, "startDate and endDate must be dates in YYYY-MM-DD form; nothing was changed")
        }
        let changes = TripChanges(name: edited.name, startDate: start, endDate: end, notes: edited.notes)
        do {
            try context.store().editTrip(id: tripId, changes: changes, expectedUpdatedAt: expectedUpdatedAt)
        } catch let error as StoreError {
            // In the edited file, a bad value is bad data, not a bad command line.
            guard case .invalidField = error else { throw error }
            throw CommandLineError(.dataError, error.description + "; nothing was changed")
        }
    }

    /// The `#` lines put above the person's text when the editor is opened again.
    static func header(_ notes: [String]) -> [UInt8] {
        let lines = ["# The edit was refused; nothing was changed. Correct the trip below and save it, or save",
                     "# an empty file to cancel. Lines that begin with '#' are ignored.", "#"]
            + notes.map { "# " + $0.split(separator: "\n").joined(separator: " ") } + ["#"]
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// The text without its comment lines (first non-blank character `#`): no line of the JSON
    /// TripBoard writes can start so, since a JSON string holds no raw line break.
    static func strippingComments(_ bytes: [UInt8]) -> [UInt8] {
        let lines = bytes.split(separator: 0x0a, omittingEmptySubsequences: false)
            .filter { $0.first(where: { $0 != 0x20 && $0 != 0x09 }) != UInt8(ascii: "#") }
        return Array(lines.joined(separator: [0x0a]))
    }

    /// Copies the refused file out of the container (whose `tmp/` is swept) into `$TMPDIR` (else
    /// `/tmp`), mode 0600, and returns `error` with its path added: the work is never lost.
    /// `bytes` (what the person saved, also in `fileName`) written to `$TMPDIR` (else `/tmp`); should
    /// that fail, `fileName` in the container's `tmp/` is left as it is (`leavesFile`) and named.
    private func keeping(_ bytes: [UInt8], fileName: String, in staging: Directory, tripId: Trip.ID, _ error: any Error,
                         leavesFile: inout Bool) -> CommandLineError {
        let (directoryPath, name) = keptFileLocation(tripId: tripId)
        let keptAt: String
        do {
            let directory = try Directory.open(path: directoryPath)
            try directory.writeAtomically(bytes, to: name, staging: directory)
            keptAt = directory.childPath(name)
        } catch {
            leavesFile = true
            keptAt = staging.childPath(fileName)
        }
        return CommandLineError(exitStatus(for: error), terminalSafe(errorMessage(for: error) + "; your edit is kept in " + keptAt))
    }

    /// Where a refused edit is kept: `$TMPDIR` (else `/tmp`), under a new name.
    private func keptFileLocation(tripId: Trip.ID) -> (directory: String, name: String) {
        (context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp",
         "tripboard-edit-trip-\(tripId.short)-\(UInt32.random(in: 0 ... .max)).json")
    }

    /// `keeping` for an edited file too large to read whole: the file itself is moved (same
    /// filesystem) or copied, a block at a time, to `$TMPDIR` (else `/tmp`), mode 0600. Should that
    /// fail (no room there), it stays where it is, in the container's `tmp/`, and that path is
    /// named instead (`leftInPlace`: the caller must not remove it).
    private func keepingFile(_ fileName: String, in staging: Directory, tripId: Trip.ID,
                             _ error: CommandLineError) -> (CommandLineError, leftInPlace: Bool) {
        let (directoryPath, name) = keptFileLocation(tripId: tripId)
        func kept(_ path: String) -> CommandLineError {
            CommandLineError(error.status, terminalSafe(error.message + "; your edit is kept in " + path))
        }
        do throws(FileSystemError) {
            let directory = try Directory.open(path: directoryPath)
            if (try? staging.renameUnlessExists(fileName, to: directory, as: name)) == true {
                try? directory.setPermissions(of: name, to: 0o600)
                try? directory.synchronize()
                return (kept(directory.childPath(name)), false)
            }
            let source = try staging.openFileForReading(fileName)
            let copy = try directory.openFile(name, .writeOnly, creating: .newFile, mode: 0o600)
            do throws(FileSystemError) {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { buffer.deallocate() }
                _ = try source.copyContents(to: copy, maximumBytes: Int64.max >> 1, buffer: buffer)
                try copy.synchronize()
                try directory.synchronize()
            } catch {
                try? directory.removeFile(name)
                throw error
            }
            return (kept(directory.childPath(name)), false)
        } catch {
            return (kept(staging.childPath(fileName)), true)
        }
    }

    /// The edited file, at most 1 MiB (a trip's fields take at most about 45 KB); `nil` for a
    /// larger one (bad data, exit 65, the limit named, the file kept).
    private func readEditedFile(_ fileName: String, in staging: Directory) throws -> [UInt8]? {
        do throws(FileSystemError) {
            return try staging.openFileForReading(fileName).readToEnd(limit: 1 << 20)
        } catch {
            guard error.code == .tooLarge else { throw error }
            return nil
        }
    }

    private func parse(_ bytes: [UInt8]) throws -> EditableTrip {
        let refused = CommandLineError(.dataError, "the edited trip is not a JSON object with exactly name, startDate, endDate and notes; nothing was changed")
        guard case .object(let members)? = try? JSONValue.parse(bytes),
              Set(members.map(\.key)) == ["name", "startDate", "endDate", "notes"], members.count == 4,
              let edited = try? JSON.decode(EditableTrip.self, from: bytes)
        else { throw refused }
        return edited
    }
}
