import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// One entry of the trash: a record the user deleted, with what went with it, restorable until it
/// is purged 30 days later (or at once by `trash empty`). `--json` prints this object.
public struct TrashEntry: Sendable, Equatable, Encodable {
    /// How many records went to the trash with the deleted one (it not included).
    public struct Contents: Sendable, Equatable, Codable {
        public var places = 0
        public var bookings = 0
        public var attachments = 0
    }

    public var kind: RecordKind
    public var id: String
    /// A trip's or place's name, a booking's title, an attachment's file name.
    public var name: String
    /// Where it was: the trip of a place or booking, the booking of an attachment (`nil` for a
    /// trip, or when that parent was deleted for good).
    public var parentId: String?
    public var parentName: String?
    /// When it was deleted (UTC, milliseconds); the order of `trash list`, newest first.
    public var trashedAt: Timestamp
    /// When the next writer purges it for good: `trashedAt` + 30 days.
    public var purgeAfter: Timestamp
    public var contents: Contents
    /// `pendingDeletion` when the server had it (a tombstone it will be told about), else what it was.
    public var syncState: SyncState
    public var remoteVersion: Int64?
}

/// The trash, in the store (docs/storage.md §4.4). A deleted record keeps its row, marked with
/// `trashed_at` and `trashed_with` (the id of the record the user deleted: the entry it belongs
/// to). Deleting a trip takes its live places, bookings and their attachments into the trip's
/// entry; what was deleted on its own earlier stays an entry of its own.
/// The trash in the store: records deleted and kept 30 days, restorable (docs/storage.md §4.4) —
/// moving a record and its children there, listing, restoring, purging. A view of the store over
/// its one connection: a deletion moves the record in the same transaction as its edit.
public struct StoreTrash: StoreView {
    package let store: Store
}

extension Store {
    /// The trash in the store (`StoreTrash`).
    public var trash: StoreTrash { StoreTrash(store: self) }
}

extension StoreTrash {
    /// How long an entry stays in the trash before the next writer purges it.
    public static let trashRetentionSeconds: Int64 = 30 * 86_400

    /// The tables whose rows belong to an entry of `kind`, children first, the entry's own last.
    /// Each member kind of an entry of `kind` (`memberKinds`) with the condition that selects its
    /// rows under the record `?2`: the record itself, or its children (`childScope`).
    static func memberScopes(of kind: RecordKind, liveOnly: Bool = true) -> [(member: RecordKind, scope: String)] {
        memberKinds(of: kind).map { member in (member, member == kind ? "id = ?2" : childScope(member, of: kind, liveOnly: liveOnly)) }
    }

    static func memberKinds(of kind: RecordKind) -> [RecordKind] {
        switch kind {
        case .trip: [.attachment, .booking, .place, .trip]
        case .booking: [.attachment, .booking]
        case .place: [.place]
        case .attachment: [.attachment]
        }
    }

    /// Moves the live record `id` of `kind` to the trash with its live children, in one
    /// transaction: hidden from every other read, stamped, and — for every record the server
    /// had — a `pendingDeletion` tombstone for sync at once. Files stay where they are.
    func moveToTrash(_ kind: RecordKind, id: String) throws -> TrashEntry {
        let now = store.stamp()
        return try connection.writeTransaction { try moveToTrashInTransaction(kind, id: id, at: now) }
    }

    /// `moveToTrash` inside the caller's write transaction (sync applies a deletion from the
    /// server with the rest of a page). `pulled`: the deletion is the server's, and an attachment
    /// under the record that the server has as this device does stays `synchronized` — its own
    /// deletion comes from the device that deleted its booking, or it was moved elsewhere there
    /// first (`SyncLedger.sendOwedAttachmentDeletions` sends what neither settles).
    package func moveToTrashInTransaction(_ kind: RecordKind, id: String, at now: String, pulled: Bool = false) throws -> TrashEntry {
        func marked(_ member: RecordKind) -> String {
            let waits = pulled && member == .attachment && member != kind ? " OR sync_state = 'synchronized'" : ""
            return """
                trashed_at = ?1, trashed_with = ?2, updated_at = ?1,
                sync_state = CASE WHEN remote_version IS NULL\(waits) THEN sync_state ELSE 'pendingDeletion' END
                """
        }
        guard try connection.integer("SELECT count(*) FROM \(kind.table) WHERE id = ? AND \(Store.liveCondition(kind))",
                                     [.text(id)]) == 1 else { throw StoreError.notFound(kind: kind, id: id) }
        // Children first: their scope is "of a live booking (or trip)", which the parent's
        // own update then ends.
        for (member, scope) in Self.memberScopes(of: kind) {
            try connection.statement("UPDATE \(member.table) SET \(marked(member)) WHERE \(scope) AND \(Store.liveCondition(member))")
                .run([.text(now), .text(id)])
        }
        guard let entry = try trashEntries().first(where: { $0.id == id }) else { throw StoreError.notInTrash(id: id) }
        return entry
    }

    /// The rows of `member`'s table under the record `?2` of `kind` — under its live bookings
    /// only, when `liveOnly` (a deletion takes what is live; a purge takes everything under it).
    static func childScope(_ member: RecordKind, of kind: RecordKind, liveOnly: Bool = true) -> String {
        switch (kind, member) {
        case (.trip, .attachment):
            "booking_id IN (SELECT id FROM bookings WHERE trip_id = ?2\(liveOnly ? " AND " + RecordRows.live : ""))"
        case (.booking, .attachment):
            "booking_id = ?2"
        default:
            "trip_id = ?2"
        }
    }

    /// Every entry of the trash, newest first, with what it holds. A purge in progress has taken
    /// its rows out of their entries (`trashed_with` NULL): they are not listed.
    public func trashEntries() throws -> [TrashEntry] {
        try connection.readTransaction {
            var counts: [String: TrashEntry.Contents] = [:]
            for (kind, path) in [(RecordKind.place, \TrashEntry.Contents.places), (.booking, \.bookings), (.attachment, \.attachments)] {
                try connection.statement("""
                    SELECT trashed_with, sum(id <> trashed_with) FROM \(kind.table)
                    WHERE trashed_at IS NOT NULL AND trashed_with IS NOT NULL GROUP BY trashed_with
                    """).rows { ($0.text(0), Int($0.integer(1))) }.forEach { counts[$0.0, default: .init()][keyPath: path] = $0.1 }
            }
            var entries: [TrashEntry] = []
            for kind in RecordKind.allCases {
                entries += try connection.statement(Self.trashRootsQuery(kind)).rows { row in
                    TrashEntry(kind: kind, id: row.text(0), name: row.text(1), parentId: row.optionalText(2),
                               parentName: row.optionalText(3), trashedAt: Timestamp(stored: row.text(4)), purgeAfter: Self.purgeTime(after: Timestamp(stored: row.text(4))),
                               contents: counts[row.text(0)] ?? .init(), syncState: SyncState(rawValue: row.text(5)) ?? .failed,
                               remoteVersion: row.optionalInteger(6))
                }
            }
            return entries.sorted { ($0.trashedAt, $0.id) > ($1.trashedAt, $1.id) }
        }
    }

    /// The entries of `kind`'s table: rows in the trash that are their own entry.
    static func trashRootsQuery(_ kind: RecordKind) -> String {
        let (name, parent, parentTable, parentName) = switch kind {
        case .trip: ("name", "NULL", "", "NULL")
        case .place: ("name", "r.trip_id", "trips", "p.name")
        case .booking: ("title", "r.trip_id", "trips", "p.name")
        case .attachment: ("original_filename", "r.booking_id", "bookings", "p.title")
        }
        let join = parentTable.isEmpty ? "" : " LEFT JOIN \(parentTable) p ON p.id = \(parent)"
        return """
            SELECT r.id, r.\(name), \(parent), \(parentName), r.trashed_at, r.sync_state, r.remote_version
            FROM \(kind.table) r\(join) WHERE r.trashed_at IS NOT NULL AND r.trashed_with = r.id
            """
    }

    /// `time` + 30 days.
    static func purgeTime(after time: Timestamp) -> Timestamp {
        Timestamp(secondsSinceEpoch: time.secondsSinceEpoch + trashRetentionSeconds, milliseconds: time.milliseconds)
    }

    /// Resolves an id or unique prefix typed for `trash restore`/`trash empty` to an entry of the
    /// trash. A record that went to the trash with another (a booking with its trip) is refused
    /// with the entry to name instead: an entry is restored or purged whole.
    public func resolveTrashEntry(_ text: String) throws -> (kind: RecordKind, id: String) {
        guard let prefix = Identifier.normalizedPrefix(text) else {
            throw StoreError.invalidArgument("'\(text.prefix(40))' is not an id (a UUID or a prefix of one)")
        }
        var found: [(kind: RecordKind, id: String, entry: String)] = []
        for kind in RecordKind.allCases {
            found += try connection.statement(
                "SELECT id, trashed_with FROM \(kind.table) WHERE id >= ?1 AND id < ?2 AND trashed_with IS NOT NULL ORDER BY id LIMIT 6"
            ).rows([.text(prefix), .text(prefix + "~")]) { (kind, $0.text(0), $0.text(1)) }
        }
        if let exact = found.first(where: { $0.id == prefix }) { found = [exact] }
        guard let match = found.first else { throw StoreError.notInTrash(id: text) }
        guard found.count == 1 else {
            throw StoreError.invalidArgument("id prefix '\(text)' matches several things in the trash: "
                + found.prefix(5).map { "\($0.kind.rawValue) \($0.id)" }.joined(separator: ", ") + "; give more characters")
        }
        guard match.entry == match.id else {
            let holder = try store.kindHolding(id: match.entry)?.rawValue ?? "record"
            throw StoreError.invalidData("""
                \(match.kind.rawValue) \(match.id) went to the trash with \(holder) \(match.entry), and is restored or emptied \
                with it: name \(match.entry.prefix(8)) instead
                """)
        }
        return (match.kind, match.id)
    }
}
