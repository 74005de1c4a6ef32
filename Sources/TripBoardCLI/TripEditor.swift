import TripBoardStorage

/// `trip edit ID` without field flags: the trip's editable fields as JSON in `$VISUAL`/`$EDITOR`.
///
/// The container lock is released while the editor runs (a person may take minutes, and a
/// migration must not wait on them); the change is then applied only if nobody else changed the
/// trip meanwhile (optimistic check on `updatedAt`).
struct TripEditor {
    let context: CommandContext

    /// The fields a person may edit; anything else in the file is refused.
    struct EditableTrip: Codable, Equatable {
        var name: String
        var startDate: String
        var endDate: String
        var notes: String
    }

    func edit(tripId: String) throws {
        let container = try context.container()
        let trip = try container.store.trip(id: tripId)
        let original = EditableTrip(name: trip.name, startDate: trip.startDate.description,
                                    endDate: trip.endDate.description, notes: trip.notes)
        let staging = try container.stagingDirectory()
        let fileName = "edit-trip-\(tripId.prefix(8))-\(UInt32.random(in: 0 ... .max)).json"
        let filePath = staging.childPath(fileName)
        try staging.writeAtomically(try Console.json(original) + [0x0a], to: fileName, staging: staging)
        defer { try? staging.removeFile(fileName) }

        let editor = [context.environment["VISUAL"], context.environment["EDITOR"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        context.closeContainer()
        let status = try ProcessSetup.runShellCommand(editor, argument: filePath)
        guard status == 0 else {
            throw CommandLineError(.unavailable, "the editor (\(editor.prefix(60))) exited with status \(status); nothing was changed")
        }

        let edited = try parse(try readEditedFile(fileName, in: staging))
        guard edited != original else {
            context.console.diagnostic("no changes")
            return
        }
        guard let start = CivilDate(edited.startDate), let end = CivilDate(edited.endDate) else {
            throw CommandLineError(.dataError, "startDate and endDate must be dates in YYYY-MM-DD form; nothing was changed")
        }
        let changes = TripChanges(name: edited.name, startDate: start, endDate: end, notes: edited.notes)
        do {
            try context.store().editTrip(id: tripId, changes: changes, expectedUpdatedAt: trip.updatedAt)
        } catch let error as StoreError {
            // In the edited file, a bad value is bad data, not a bad command line.
            guard case .invalidField = error else { throw error }
            throw CommandLineError(.dataError, error.description + "; nothing was changed")
        }
    }

    /// The edited file, at most 1 MiB (a trip's fields take at most about 45 KB): a larger one is
    /// bad data, exit 65, with the limit named.
    private func readEditedFile(_ fileName: String, in staging: Directory) throws -> [UInt8] {
        do throws(FileSystemError) {
            return try staging.openFileForReading(fileName).readToEnd(limit: 1 << 20)
        } catch {
            guard error.code == .tooLarge else { throw error }
            throw CommandLineError(.dataError, "the edited file is larger than the limit of 1 MiB; nothing was changed")
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
