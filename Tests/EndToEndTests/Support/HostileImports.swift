/// Import documents that `app import` must refuse whole (exit 65, one `error:` line naming the
/// record and the rule, nothing written), each of which an earlier TripBoard accepted and then
/// could not export again, acknowledge unambiguously or sync. Kept as plain JSON text with one
/// placeholder, `ATTACHMENT_ID` (the id of an attachment already in the container), so that
/// `tools/torture` can plant the same documents.
enum HostileImports {
    struct Document: Sendable, CustomStringConvertible {
        /// A short name for reports.
        let name: String
        let json: String
        /// Words the error line must contain.
        let message: String
        var description: String { name }
        /// True when `json` holds `ATTACHMENT_ID`.
        var needsAnAttachment: Bool { json.contains("ATTACHMENT_ID") }
    }

    static let trip = "aaaaaaaa-0000-4000-8000-000000000001"
    static let other = "aaaaaaaa-0000-4000-8000-000000000002"

    // A member repeated in MEMBERS overrides the default before it: in an object the last
    // occurrence of a key wins (docs/cli.md).

    /// `{"trips": [a trip with MEMBERS added]}`.
    static func trip(_ members: String) -> String {
        #"{"trips": [{"id": "\#(trip)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02", \#(members)}]}"#
    }

    /// A trip and one place with MEMBERS added.
    static func place(_ members: String) -> String {
        #"{"trips": [{"id": "\#(trip)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02"}], "places": [{"tripId": "\#(trip)", "name": "P", \#(members)}]}"#
    }

    /// A trip and one booking with MEMBERS added.
    static func booking(_ members: String, tripMembers: String = "") -> String {
        #"{"trips": [{"id": "\#(trip)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02"\#(tripMembers)}], "bookings": [{"tripId": "\#(trip)", "kind": "car", "title": "B", \#(members)}]}"#
    }

    static let combiningMarks = "e" + String(repeating: "\u{301}", count: 400)  // one character, 801 bytes

    static let documents: [Document] = [
        // Times outside the years 0001–9999 once in UTC: stored as year 10000 (or 0) and then unreadable.
        Document(name: "updatedAt in the year 10000 in UTC", json: trip(#""updatedAt": "9999-12-31T23:59:59-14:00""#),
                 message: "trips[0].updatedAt falls in the year 10000 in UTC"),
        Document(name: "updatedAt in the year 0 in UTC", json: trip(#""updatedAt": "0001-01-01T00:00:00+01:00""#),
                 message: "trips[0].updatedAt falls in the year 0 in UTC"),
        Document(name: "startsAt in the year 10000 in UTC", json: booking(#""startsAt": "9999-12-31T23:30-01:00""#),
                 message: "bookings[0].startsAt falls in the year 10000 in UTC"),
        // One id, one record, whatever its kind: `sync ack ID` must name one record.
        Document(name: "a place with its trip's id", json: place(#""id": "\#(trip)""#),
                 message: "the id \(trip) appears twice in the import (trips[0] and places[0])"),
        Document(name: "a booking with a place's id",
                 json: #"{"trips": [{"id": "\#(trip)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02"}], "places": [{"id": "\#(other)", "tripId": "\#(trip)", "name": "P"}], "bookings": [{"id": "\#(other)", "tripId": "\#(trip)", "kind": "car", "title": "B"}]}"#,
                 message: "the id \(other) appears twice in the import (places[0] and bookings[0])"),
        Document(name: "a booking with an attachment's id", json: booking(#""id": "ATTACHMENT_ID""#),
                 message: "an attachment in the store has this id"),
        // Records no TripBoard can make.
        Document(name: "the nil UUID", json: trip(#""id": "00000000-0000-0000-0000-000000000000""#),
                 message: "trips[0].id 00000000-0000-0000-0000-000000000000 is the nil UUID"),
        Document(name: "a version-1 UUID", json: place(#""id": "aaaaaaaa-0000-1000-8000-000000000003""#),
                 message: "places[0].id aaaaaaaa-0000-1000-8000-000000000003 is not a version-4 (random) UUID"),
        Document(name: "a trip id of another UUID variant", json: booking(#""tripId": "aaaaaaaa-0000-4000-c000-000000000001""#),
                 message: "bookings[0].tripId aaaaaaaa-0000-4000-c000-000000000001 is not a version-4 (random) UUID"),
        Document(name: "a tombstone never uploaded", json: trip(#""syncState": "pendingDeletion""#),
                 message: "trips[0].syncState pendingDeletion needs a remoteVersion"),
        Document(name: "synchronized without a version", json: place(#""syncState": "synchronized""#),
                 message: "places[0].syncState synchronized needs a remoteVersion"),
        Document(name: "a live booking under a deleted trip",
                 json: booking(#""syncState": "synchronized", "remoteVersion": 1"#, tripMembers: #", "syncState": "pendingDeletion", "remoteVersion": 2"#),
                 message: "is not deleted, but its trip \(trip) is"),
        Document(name: "a live place under a deleted trip",
                 json: #"{"trips": [{"id": "\#(trip)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02", "syncState": "pendingDeletion", "remoteVersion": 2}], "places": [{"tripId": "\#(trip)", "name": "P"}]}"#,
                 message: "places[0]: place "),
        // Versions beyond what JSON readers and sync carry exactly.
        Document(name: "remoteVersion 2^53", json: trip(#""remoteVersion": 9007199254740992"#),
                 message: "trips[0].remoteVersion must be at most 9007199254740991"),
        Document(name: "remoteVersion 1e30", json: trip(#""remoteVersion": 1e30"#), message: "trips[0].remoteVersion"),
        Document(name: "remoteVersion 1.5", json: trip(#""remoteVersion": 1.5"#), message: "trips[0].remoteVersion"),
        Document(name: "remoteVersion -0", json: trip(#""remoteVersion": -0"#), message: "trips[0].remoteVersion must be a positive integer"),
        // Lengths in bytes as well as characters.
        Document(name: "a name of one character and 801 bytes", json: trip(#""name": "\#(combiningMarks)""#),
                 message: "trips[0].name is longer than 800 bytes of UTF-8"),
        Document(name: "notes of 40001 bytes", json: trip(#""notes": "\#(String(repeating: "é", count: 5_000))\#(String(repeating: "\u{301}", count: 15_001))""#),
                 message: "trips[0].notes is longer than 40000 bytes of UTF-8"),
        Document(name: "a city of 201 characters", json: place(#""city": "\#(String(repeating: "c", count: 201))""#),
                 message: "places[0].city is longer than 200 characters"),
        Document(name: "a reference of 101 characters", json: booking(#""reference": "\#(String(repeating: "R", count: 101))""#),
                 message: "bookings[0].reference is longer than 100 characters"),
        Document(name: "a title of 801 bytes", json: booking(#""title": "\#(combiningMarks)""#),
                 message: "bookings[0].title is longer than 800 bytes of UTF-8"),
        Document(name: "an unknown kind", json: booking(#""kind": "boat""#),
                 message: "bookings[0].kind 'boat' is not a booking kind"),
    ]
}
