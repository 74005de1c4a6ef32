import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `JSON.encode` / `JSON.decode`: `Codable` without Foundation. Foundation's `JSONEncoder` and
/// `JSONDecoder` are the oracle: same bytes, same values, same errors with the same coding paths.
struct JSONCodingTests {
    static let tripID: Trip.ID = "7a1c0000-0000-4000-8000-000000000001"

    /// The failure a `DecodingError` describes, without its context.
    enum Failure: Equatable, Sendable {
        case keyNotFound(String)
        case typeMismatch
        case valueNotFound
        case dataCorrupted
    }

    private struct Measurement: Codable, Equatable {
        var label: String
        var values: [Double]
    }

    private func models() throws -> (trips: [Trip], places: [Place], bookings: [Booking]) {
        let trips = [
            Trip(id: Self.tripID, name: "Lisbon", startDate: try day("2026-12-12"), endDate: try day("2026-12-15"),
                 notes: "pastéis\n\tde nata — \"the\" best / 🥐", syncState: .pendingUpload, remoteVersion: nil,
                 updatedAt: Timestamp(stored: "2026-11-30T23:12:17.123Z")),
            Trip(id: "7a1c0000-0000-4000-8000-000000000009", name: "東京", startDate: try day("2027-04-01"),
                 endDate: try day("2027-04-09"), notes: "", syncState: .synchronized, remoteVersion: 9_007_199_254_740_993,
                 updatedAt: Timestamp(stored: "2026-12-01T09:00:00.000Z")),
        ]
        let places = [
            Place(id: "7a1c0000-0000-4000-8000-000000000002", tripId: Self.tripID, name: "Belém Tower", city: "Lisbon",
                  visited: true, syncState: .failed, remoteVersion: 3, updatedAt: Timestamp(stored: "2026-11-30T23:12:17.123Z")),
            Place(id: "7a1c0000-0000-4000-8000-000000000003", tripId: Self.tripID, name: "Tram 28", city: nil,
                  visited: false, syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: "2026-11-30T23:12:17.123Z")),
        ]
        let bookings = [
            Booking(id: "7a1c0000-0000-4000-8000-000000000004", tripId: Self.tripID, kind: .flight, title: "TP 1351",
                    startsAt: BookingTime("2026-12-12T07:35:00+01:00"), reference: "X7K2QP", syncState: .synchronized, remoteVersion: 1,
                    updatedAt: Timestamp(stored: "2026-11-30T23:12:17.123Z")),
            Booking(id: "7a1c0000-0000-4000-8000-000000000005", tripId: Self.tripID, kind: .hotel, title: "Hotel",
                    startsAt: nil, reference: nil, syncState: .pendingDeletion, remoteVersion: 2,
                    updatedAt: Timestamp(stored: "2026-11-30T23:12:17.123Z")),
        ]
        return (trips, places, bookings)
    }

    private func exportDocument() throws -> ExportDocument {
        let (trips, places, bookings) = try models()
        return ExportDocument(format: ExportDocument.formatName, formatVersion: 1, exportedAt: "2026-12-01T10:00:00.000Z",
                              trips: trips, places: places, bookings: bookings,
                              preferences: ["currency": .text("JPY"), "showsVisitedPlaces": .flag(false)])
    }

    /// `exportDocument()` with no nil left in it.
    private func exportDocumentWithEveryValueSet() throws -> ExportDocument {
        var document = try exportDocument()
        for index in document.trips.indices { document.trips[index].remoteVersion = document.trips[index].remoteVersion ?? 5 }
        for index in document.places.indices {
            document.places[index].city = document.places[index].city ?? "Lisbon"
            document.places[index].remoteVersion = document.places[index].remoteVersion ?? 6
        }
        for index in document.bookings.indices {
            document.bookings[index].startsAt = BookingTime("2026-12-12T07:35:00+01:00")
            document.bookings[index].endsAt = BookingTime("2026-12-12T10:50:00+01:00")
            document.bookings[index].zone = "Europe/Lisbon"
            document.bookings[index].reference = document.bookings[index].reference ?? "HX48K2Q"
            document.bookings[index].seat = "14C"
            document.bookings[index].endZone = "Europe/Paris"
        }
        return document
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func describe(_ error: any Error) -> (Failure, [String])? {
        guard let error = error as? DecodingError else { return nil }
        func path(_ context: DecodingError.Context) -> [String] {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
        }
        switch error {
        case .keyNotFound(let key, let context): return (.keyNotFound(key.stringValue), path(context))
        case .typeMismatch(_, let context): return (.typeMismatch, path(context))
        case .valueNotFound(_, let context): return (.valueNotFound, path(context))
        case .dataCorrupted(let context): return (.dataCorrupted, path(context))
        @unknown default: return nil
        }
    }

    /// Encodes with ours, decodes with ours and with Foundation; decodes Foundation's encoding with ours.
    private func expectRoundTrip<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for pretty in [true, false] {
            let bytes = try JSON.encode(value, pretty: pretty)
            #expect(try JSON.decode(T.self, from: bytes) == value, sourceLocation: sourceLocation)
            #expect(try JSONDecoder().decode(T.self, from: Data(bytes)) == value, "Foundation reads ours", sourceLocation: sourceLocation)
        }
        let foundation = Array(try JSONEncoder().encode(value))
        #expect(try JSON.decode(T.self, from: foundation) == value, "ours reads Foundation's", sourceLocation: sourceLocation)
    }

    // MARK: - Encoding

    @Test func tripIsWrittenWithEveryKeySortedAndNullForNoRemoteVersion() throws {
        let trip = try models().trips[0]
        #expect(text(try JSON.encode(trip)) == #"""
            {
              "endDate" : "2026-12-15",
              "id" : "7a1c0000-0000-4000-8000-000000000001",
              "name" : "Lisbon",
              "notes" : "pastéis\n\tde nata — \"the\" best / 🥐",
              "remoteVersion" : null,
              "startDate" : "2026-12-12",
              "syncState" : "pendingUpload",
              "updatedAt" : "2026-11-30T23:12:17.123Z"
            }
            """#)
    }

    @Test func absentFieldsOfPlacesAndBookingsAreNullNotMissing() throws {
        let (_, places, bookings) = try models()
        let place = try JSONValue.parse(try JSON.encode(places[1]))
        #expect(place["city"] == .null)
        #expect(place["remoteVersion"] == .null)
        let booking = try JSON.makeValue(bookings[1])
        #expect(booking["startsAt"] == .null)
        #expect(booking["reference"] == .null)
        #expect(booking["remoteVersion"] == .number("2"))
        guard case .object(let members) = booking else {
            Issue.record("expected an object, got \(booking)")
            return
        }
        #expect(members.map(\.key) == ["id", "tripId", "kind", "title", "startsAt", "endsAt", "zone", "endZone", "reference", "seat", "syncState", "remoteVersion", "updatedAt"])
    }

    /// Foundation is the oracle for everything but a nil, whose key it leaves out where ours writes
    /// `null` (`aNilIsNullWhereFoundationLeavesTheKeyOut`): the document compared has every value set.
    @Test func outputIsByteForByteWhatFoundationWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let document = try exportDocumentWithEveryValueSet()
        #expect(text(try JSON.encode(document)) == text(Array(try encoder.encode(document))))
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(text(try JSON.encode(document, pretty: false)) == text(Array(try encoder.encode(document))))
    }

    @Test func aNilIsNullWhereFoundationLeavesTheKeyOut() throws {
        let place = try models().places[1]
        let ours = try JSONValue.parse(try JSON.encode(place))
        let foundation = try JSONValue.parse(Array(try JSONEncoder().encode(place)))
        #expect(ours["city"] == .null && ours["remoteVersion"] == .null)
        #expect(foundation["city"] == nil && foundation["remoteVersion"] == nil)
        #expect(foundation["name"] == ours["name"])
    }

    /// Every `encodeIfPresent` requirement the standard library declares, through a synthesized
    /// conformance: each nil is its key with `null`, in the order of the properties.
    private struct EveryOptional: Encodable {
        var flag: Bool?, text: String?, double: Double?, float: Float?
        var int: Int?, int8: Int8?, int16: Int16?, int32: Int32?, int64: Int64?
        var uint: UInt?, uint8: UInt8?, uint16: UInt16?, uint32: UInt32?, uint64: UInt64?
        var measurement: Measurement?, date: CivilDate?
    }

    @Test func aSynthesizedConformanceWritesNullForEveryNil() throws {
        let value = try JSON.makeValue(EveryOptional())
        guard case .object(let members) = value else {
            Issue.record("expected an object, got \(value)")
            return
        }
        #expect(members.map(\.key) == ["flag", "text", "double", "float", "int", "int8", "int16", "int32", "int64",
                                        "uint", "uint8", "uint16", "uint32", "uint64", "measurement", "date"])
        #expect(members.allSatisfy { $0.value == .null })
        let set = EveryOptional(flag: true, text: "x", double: 0.5, float: 2, int: -1, int8: 8, int16: 16, int32: 32, int64: 64,
                                uint: 1, uint8: 8, uint16: 16, uint32: 32, uint64: 64,
                                measurement: Measurement(label: "m", values: []), date: try day("2026-12-12"))
        #expect(text(try JSON.encode(set, pretty: false)) == #"{"date":"2026-12-12","double":0.5,"flag":true,"float":2,"int":-1,"int16":16,"int32":32,"int64":64,"int8":8,"measurement":{"label":"m","values":[]},"text":"x","uint":1,"uint16":16,"uint32":32,"uint64":64,"uint8":8}"#)
    }

    @Test func aJSONValueIsWrittenAsTheJSONItIs() throws {
        let value = try JSONValue.parse(Array(#"{"b": [1, 2.5, "x", null, true, -0.0], "a": {"z": {}, "y": []}}"#.utf8))
        #expect(text(try JSON.encode(value, pretty: false)) == #"{"a":{"y":[],"z":{}},"b":[1,2.5,"x",null,true,0]}"#)
    }

    @Test func modelsRoundTrip() throws {
        let (trips, places, bookings) = try models()
        for trip in trips { try expectRoundTrip(trip) }
        for place in places { try expectRoundTrip(place) }
        for booking in bookings { try expectRoundTrip(booking) }
        try expectRoundTrip(try exportDocument())
        try expectRoundTrip(Measurement(label: "", values: [0.5, -2.25, 3, 1e20, 123_456_789.125, 0.1]))
    }

    @Test(arguments: [(0.5, "0.5"), (3.0, "3"), (-2.25, "-2.25"), (1e20, "1e+20"), (0.1, "0.1")])
    func finiteDoublesAreWrittenShortest(value: Double, expected: String) throws {
        #expect(text(try JSON.encode(value)) == expected)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoubleRefusesToEncodeNamingItsPath(value: Double) throws {
        #expect(throws: EncodingError.self) { try JSON.encode(value) }
        let error = try #require(throws: EncodingError.self) {
            try JSON.encode(Measurement(label: "x", values: [1, value]))
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("expected .invalidValue, got \(error)")
            return
        }
        #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["values", "1"])
    }

    // MARK: - Decoding

    @Test(arguments: [
        ("3", 3 as Int?),
        ("3.0", 3),
        ("3e0", 3),
        ("30e-1", 3),
        ("-0", 0),
        ("-7", -7),
        ("9223372036854775807", Int.max),
        ("-9223372036854775808", Int.min),
        ("3.5", nil),
        ("3e-1", nil),
        ("1e400", nil),
        ("9223372036854775808", nil),
    ])
    func integersDecodeOnlyFromWholeNumbers(text: String, expected: Int?) throws {
        let bytes = Array(text.utf8)
        if let expected {
            #expect(try JSON.decode(Int.self, from: bytes) == expected)
        } else {
            let error = try #require(throws: DecodingError.self) { try JSON.decode(Int.self, from: bytes) }
            #expect(describe(error)?.0 == .dataCorrupted)
        }
        #expect((try? JSONDecoder().decode(Int.self, from: Data(bytes))) == expected, "Foundation agrees")
    }

    @Test func integerOutOfRangeForItsTypeIsRefused() throws {
        #expect(try JSON.decode(Int8.self, from: Array("-128".utf8)) == -128)
        #expect(try JSON.decode(UInt8.self, from: Array("255".utf8)) == 255)
        #expect(throws: DecodingError.self) { try JSON.decode(UInt8.self, from: Array("256".utf8)) }
        #expect(throws: DecodingError.self) { try JSON.decode(UInt.self, from: Array("-1".utf8)) }
        #expect(throws: DecodingError.self) { try JSON.decode(Int32.self, from: Array("2147483648".utf8)) }
    }

    static let goodTrip = #"{"id": "7a1c0000-0000-4000-8000-000000000001", "name": "Lisbon", "startDate": "2026-12-12", "endDate": "2026-12-15", "notes": "", "syncState": "pendingUpload", "remoteVersion": null, "updatedAt": "2026-11-30T23:12:17.123Z"}"#

    /// The second trip of a two-trip array with `key` set to `raw` (removed when `nil`).
    private func tripsJSON(_ key: String, _ raw: String?) throws -> [UInt8] {
        guard case .object(var members) = try JSONValue.parse(Array(Self.goodTrip.utf8)) else { return [] }
        members.removeAll { $0.key == key }
        if let raw { members.append((key, try JSONValue.parse(Array(raw.utf8)))) }
        return Array("[\(Self.goodTrip), \(text(JSONValue.object(members).serialized()))]".utf8)
    }

    @Test(arguments: [
        ("name", nil, Failure.keyNotFound("name"), ["1"]),
        ("name", "5", .typeMismatch, ["1", "name"]),
        ("name", "null", .valueNotFound, ["1", "name"]),
        ("startDate", #""2026-02-30""#, .dataCorrupted, ["1", "startDate"]),
        ("startDate", "20261212", .typeMismatch, ["1", "startDate"]),
        ("remoteVersion", #""3""#, .typeMismatch, ["1", "remoteVersion"]),
        ("remoteVersion", "3.5", .dataCorrupted, ["1", "remoteVersion"]),
        ("syncState", #""uploaded""#, .dataCorrupted, ["1", "syncState"]),
        ("syncState", "null", .valueNotFound, ["1", "syncState"]),
        ("notes", "[]", .typeMismatch, ["1", "notes"]),
    ] as [(String, String?, Failure, [String])])
    func decodingErrorNamesTheCodingPath(key: String, raw: String?, failure: Failure, path: [String]) throws {
        let bytes = try tripsJSON(key, raw)
        let error = try #require(throws: DecodingError.self) { try JSON.decode([Trip].self, from: bytes) }
        let ours = try #require(describe(error))
        #expect(ours.0 == failure)
        #expect(ours.1 == path)

        let foundationError = try #require(throws: DecodingError.self) { try JSONDecoder().decode([Trip].self, from: Data(bytes)) }
        let foundation = try #require(describe(foundationError))
        #expect(foundation.0 == ours.0, "Foundation agrees")
        // Foundation (6.3) reports a number that does not fit its type with an empty path.
        if !foundation.1.isEmpty { #expect(foundation.1 == ours.1, "Foundation agrees") }
    }

    @Test(arguments: [
        ("{}", Failure.typeMismatch, [String]()),
        ("[1, null]", .valueNotFound, ["1"]),
        (#"{"format": "tripboard-export"}"#, .keyNotFound("formatVersion"), []),
        (#"{"format": "tripboard-export", "formatVersion": 1, "exportedAt": "x", "trips": [], "places": {}, "bookings": [], "preferences": {}}"#,
         .typeMismatch, ["places"]),
        (#"{"format": "tripboard-export", "formatVersion": 1, "exportedAt": "x", "trips": [], "places": [], "bookings": [], "preferences": {"theme": [1]}}"#,
         .typeMismatch, ["preferences", "theme"]),
    ])
    func documentOfTheWrongShapeIsADecodingError(json: String, failure: Failure, path: [String]) throws {
        let bytes = Array(json.utf8)
        let error: any Error
        if json.hasPrefix("[") || json == "{}" {
            error = try #require(throws: DecodingError.self) { try JSON.decode([Int].self, from: bytes) }
        } else {
            error = try #require(throws: DecodingError.self) { try JSON.decode(ExportDocument.self, from: bytes) }
        }
        let described = try #require(describe(error))
        #expect(described.0 == failure)
        #expect(described.1 == path)
    }

    @Test func malformedTextIsASyntaxErrorNotADecodingError() throws {
        let error = try #require(throws: JSONSyntaxError.self) { try JSON.decode([Trip].self, from: Array("[{]".utf8)) }
        #expect(error.line == 1)
        #expect(error.column == 3)
    }
}

/// Every fixed-width integer and both floating-point types encode as numbers (they once recursed
/// until the stack overflowed), and out-of-range numbers are refused when decoding.
struct JSONScalarTypesTests {
    @Test func smallIntegersAndFloatsEncodeAsNumbers() throws {
        #expect(try JSON.encode(Int8(-3), pretty: false) == Array("-3".utf8))
        #expect(try JSON.encode(Int16(300), pretty: false) == Array("300".utf8))
        #expect(try JSON.encode(UInt8(255), pretty: false) == Array("255".utf8))
        #expect(try JSON.encode(UInt16(65535), pretty: false) == Array("65535".utf8))
        #expect(try JSON.encode(Float(1.5), pretty: false) == Array("1.5".utf8))
        #expect(try JSON.encode([Int8(1), Int8(2)], pretty: false) == Array("[1,2]".utf8))
    }

    @Test func numbersBeyondDoubleAreRefused() throws {
        #expect(throws: DecodingError.self) { try JSON.decode(Double.self, from: Array("1e400".utf8)) }
    }
}
