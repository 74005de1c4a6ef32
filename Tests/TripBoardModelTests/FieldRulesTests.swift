import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `FieldRules`: the one rule per field that every path writing a record uses.
struct FieldRulesTests {
    /// The field and rule text of the `invalidField` error `body` throws.
    private func refusal(_ body: () throws -> Any?, sourceLocation: SourceLocation = #_sourceLocation) -> (field: String, rule: String)? {
        do {
            _ = try body()
            Issue.record("expected a refusal", sourceLocation: sourceLocation)
        } catch StoreError.invalidField(let field, let rule) {
            return (field, rule)
        } catch {
            Issue.record("expected .invalidField, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    // MARK: - Text: characters and bytes

    static let combiningAcute = "\u{301}"

    @Test(arguments: [
        (String(repeating: "x", count: 200), true),
        (String(repeating: "é", count: 200), true),             // 400 bytes
        (String(repeating: "𝄞", count: 200), true),             // 4-byte scalars: exactly 800 bytes
        (String(repeating: "x", count: 201), false),            // 201 characters
        ("e" + String(repeating: combiningAcute, count: 400), false),  // 1 character, 801 bytes
        ("e" + String(repeating: combiningAcute, count: 10_000), false),
    ])
    func namesAreLimitedInCharactersAndInBytes(name: String, accepted: Bool) throws {
        if accepted {
            #expect(try FieldRules.line(name, field: "name") == name)
        } else {
            let refused = try #require(refusal { try FieldRules.line(name, field: "name") })
            #expect(refused.field == "name")
            #expect(refused.rule == "is longer than 800 bytes of UTF-8" || refused.rule == "is longer than 200 characters", "\(refused)")
        }
    }

    @Test func aCharacterOfManyCombiningMarksIsRefusedByItsBytes() throws {
        let name = "e" + String(repeating: Self.combiningAcute, count: 5_000)
        #expect(name.count == 1)
        #expect(refusal { try FieldRules.line(name, field: "title") }?.rule == "is longer than 800 bytes of UTF-8")
    }

    @Test func notesAreLimitedTo10000CharactersAnd40000Bytes() throws {
        let wide = String(repeating: "é", count: 10_000)  // 20,000 bytes
        #expect(try FieldRules.notes(wide) == wide)
        #expect(refusal { try FieldRules.notes(wide + "é") }?.rule == "is longer than 10000 characters")
        let heavy = String(repeating: "e" + String(repeating: Self.combiningAcute, count: 9), count: 2_200)  // 2,200 characters, 41,800 bytes
        #expect(refusal { try FieldRules.notes(heavy) }?.rule == "is longer than 40000 bytes of UTF-8")
        #expect(try FieldRules.notes("two\nlines\tand a tab") == "two\nlines\tand a tab")
        #expect(refusal { try FieldRules.notes("carriage\rreturn") }?.field == "notes")
    }

    @Test func referencesAreLimitedTo100CharactersAnd400Bytes() throws {
        let limit = FieldRules.referenceLimit
        #expect(try FieldRules.optionalLine(String(repeating: "R", count: 100), field: "reference", limit: limit)?.count == 100)
        #expect(refusal { try FieldRules.optionalLine(String(repeating: "R", count: 101), field: "reference", limit: limit) }?.rule
                == "is longer than 100 characters")
        #expect(refusal { try FieldRules.optionalLine("R" + String(repeating: Self.combiningAcute, count: 200), field: "reference", limit: limit) }?.rule
                == "is longer than 400 bytes of UTF-8")
        #expect(try FieldRules.optionalLine("   ", field: "city") == nil, "blank means none")
        #expect(try FieldRules.optionalLine(nil, field: "city") == nil)
    }

    @Test(arguments: ["a/b.pdf", "../../etc/passwd", ".", "..", String(repeating: "x", count: 256), String(repeating: "é", count: 128), "", "two\nlines.pdf"])
    func attachmentFileNamesMustBeOneFileName(name: String) {
        #expect(refusal { try FieldRules.filename(name) }?.field == "originalFilename")
    }

    @Test func anAttachmentFileNameMayUseAll255Bytes() throws {
        let name = String(repeating: "é", count: 125) + ".pdf"  // 254 bytes
        #expect(try FieldRules.filename(name) == name)
    }

    // MARK: - Ids

    @Test func idsAreLowercaseVersion4UUIDs() throws {
        #expect(try FieldRules.id("7A1C0000-0000-4000-8000-00000000000A") == "7a1c0000-0000-4000-8000-00000000000a")
        #expect(try FieldRules.id("7a1c0000-0000-4000-b000-000000000001") == "7a1c0000-0000-4000-b000-000000000001")
    }

    @Test(arguments: [
        ("00000000-0000-0000-0000-000000000000", "is the nil UUID"),
        ("ffffffff-ffff-ffff-ffff-ffffffffffff", "not a version-4"),
        ("7a1c0000-0000-1000-8000-000000000001", "not a version-4"),    // version 1 (time-based)
        ("7a1c0000-0000-7000-8000-000000000001", "not a version-4"),    // version 7
        ("7a1c0000-0000-4000-c000-000000000001", "not a version-4"),    // Microsoft's variant
        ("7a1c0000-0000-4000-0000-000000000001", "not a version-4"),    // NCS variant
        ("7a1c00000000-4000-8000-000000000001", "is not a UUID"),
        ("lisbon", "is not a UUID"),
    ])
    func otherIdsAreRefused(text: String, reason: String) {
        let refused = refusal { try FieldRules.id(text, field: "tripId") }
        #expect(refused?.field == "tripId")
        #expect(refused?.rule.contains(reason) == true, "\(String(describing: refused))")
    }

    // MARK: - Times

    @Test(arguments: [
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ("9999-12-31T23:59:59+14:00", "9999-12-31T09:59:59.000Z"),
        ("0001-01-01T00:00Z", "0001-01-01T00:00:00.000Z"),
        ("0001-01-01T00:00-05:00", "0001-01-01T05:00:00.000Z"),
    ])
    func stampsAtTheEdgesOfTheYearsAreKept(text: String, stored: String) throws {
        #expect(try FieldRules.stamp(text) == stored)
    }

    @Test(arguments: [
        ("9999-12-31T23:59:59-14:00", "falls in the year 10000 in UTC"),
        ("9999-12-31T20:00-05:00", "falls in the year 10000 in UTC"),
        ("0001-01-01T00:00:00+01:00", "falls in the year 0 in UTC"),
        ("yesterday", "'yesterday' is not an ISO 8601 time"),
    ])
    func stampsOutsideTheYears0001To9999AreRefused(text: String, reason: String) {
        let refused = refusal { try FieldRules.stamp(text, field: "updatedAt") }
        #expect(refused?.field == "updatedAt")
        #expect(refused?.rule.hasPrefix(reason) == true, "\(String(describing: refused))")
    }

    @Test func aStartMustFitTheYearsAsWrittenAndInUTC() throws {
        #expect(try FieldRules.startsAt("9999-12-31T23:00+05:00") == "9999-12-31T23:00:00+05:00")
        #expect(refusal { try FieldRules.startsAt("9999-12-31T23:00-05:00") }?.rule.hasPrefix("falls in the year 10000 in UTC") == true)
        // 0001-01-01T00:00Z written in New York's offset is 0000-12-31T19:00-05:00: a year-0 text.
        let firstMoment = Timestamp(secondsSinceEpoch: Int64(CivilDate("0001-01-01")!.daysSinceEpoch) * 86_400, offsetSeconds: -5 * 3600)
        #expect(refusal { try FieldRules.instant(firstMoment, field: "startsAt") }?.rule.hasPrefix("falls in the year 0 as written") == true)
    }

    // MARK: - Versions, states, kinds

    @Test func remoteVersionsRunFrom1To2Pow53Minus1() throws {
        #expect(try FieldRules.remoteVersion(nil) == nil)
        #expect(try FieldRules.remoteVersion(1) == 1)
        #expect(try FieldRules.remoteVersion(9_007_199_254_740_991) == 9_007_199_254_740_991)
        for version: Int64 in [0, -1, .min] {
            #expect(refusal { try FieldRules.remoteVersion(version) }?.rule == "must be a positive integer")
        }
        for version: Int64 in [9_007_199_254_740_992, .max] {
            #expect(refusal { try FieldRules.remoteVersion(version) }?.rule == "must be at most 9007199254740991")
        }
    }

    @Test(arguments: SyncState.allCases)
    func onlyRecordsWaitingForUploadMayLackARemoteVersion(state: SyncState) throws {
        try FieldRules.syncState(state, remoteVersion: 3)
        if state == .pendingUpload || state == .failed {
            try FieldRules.syncState(state, remoteVersion: nil)
        } else {
            #expect(refusal { try FieldRules.syncState(state, remoteVersion: nil) }?.rule == "\(state.rawValue) needs a remoteVersion (the version the server has)")
        }
    }

    @Test func bookingKindsAreReadInAnyCase() throws {
        for text in ["flight", "FLIGHT", "Flight", "fLiGhT"] { #expect(try FieldRules.bookingKind(text) == .flight) }
        for text in ["boat", " flight", "flight ", "", "flights"] {
            #expect(refusal { try FieldRules.bookingKind(text) }?.rule.contains("is not a booking kind: use one of flight, train, hotel, car, event, other") == true)
        }
    }

    // MARK: - Whole records

    @Test func aRecordIsKeptInItsNormalForm() throws {
        let trip = Trip(id: "7A1C0000-0000-4000-8000-000000000001", name: "  Lisbon ", startDate: try day("2026-12-12"),
                        endDate: try day("2026-12-15"), notes: "", syncState: .synchronized, remoteVersion: 2,
                        updatedAt: Timestamp(stored: "2026-12-01T10:00+01:00"))
        let kept = try trip.validated()
        #expect(kept.id == "7a1c0000-0000-4000-8000-000000000001")
        #expect(kept.name == "Lisbon")
        #expect(kept.updatedAt.utcStamp == "2026-12-01T09:00:00.000Z")
        #expect(try kept.validated() == kept, "validating the kept form changes nothing")
    }

    /// Empty for a row whose file is missing, or whose bytes are not hashed yet (a migrated file
    /// before the hashing pass: `hashIsUnverified`); otherwise 64 lowercase hex digits.
    @Test func anAttachmentHashIsEmptyOrBLAKE2bHex() throws {
        var attachment = TripBoardStorage.Attachment(id: "7a1c0000-0000-4000-8000-000000000004", bookingId: "7a1c0000-0000-4000-8000-000000000003",
                                    originalFilename: "ticket.pdf", contentType: "application/pdf", byteCount: 0, contentHash: .pending,
                                    pageCount: nil, relativePath: "attachments/7a/x.pdf", state: .missing,
                                    createdAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"), syncState: .pendingUpload, remoteVersion: nil,
                                    updatedAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"))
        #expect(try attachment.validated() == attachment)
        attachment.state = .present
        #expect(try attachment.validated() == attachment && attachment.hashIsUnverified)
        attachment.contentHash = .verified(String(repeating: "AB", count: 32))
        #expect(refusal { try attachment.validated() }?.field == "contentHash")
        attachment.contentHash = .verified(String(repeating: "ab", count: 32))
        #expect(try attachment.validated() == attachment)
        attachment.pageCount = 0
        #expect(refusal { try attachment.validated() }?.field == "pageCount")
    }
}
