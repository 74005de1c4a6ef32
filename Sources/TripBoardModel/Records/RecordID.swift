import TripBoardSystem

/// The id of a `Record` (a `Trip`, `Place` or `Booking`): its text, typed by what it names, so
/// that a booking's id is never passed where a trip's is wanted. The text is the store's
/// (`FieldRules.id`: a lower-case version-4 UUID) once the record it names has been validated;
/// every write holds it to that rule, and the edges (arguments, imports, sync) read text into it.
public struct RecordID<Record>: Sendable, Hashable, Comparable, CustomStringConvertible, Codable, ExpressibleByStringLiteral {
    /// The id as the store keeps it.
    public let text: String

    public init(_ text: String) { self.text = text }

    /// A literal id, as tests and fixtures write them.
    public init(stringLiteral text: String) { self.text = text }

    /// A new random id (`Identifier.make()`).
    public static func make() -> RecordID { RecordID(Identifier.make()) }

    public var description: String { text }

    /// Its first 8 characters: how the lists and messages show it, and enough to name it again
    /// (`Store.resolveID` takes a prefix).
    public var short: String { String(text.prefix(8)) }

    public static func < (lhs: RecordID, rhs: RecordID) -> Bool { lhs.text < rhs.text }

    public init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// A kind of record the store keeps in a table of its own, with ids of its own.
public protocol StoredRecord {
    static var recordKind: RecordKind { get }
}

extension Trip: StoredRecord { public static var recordKind: RecordKind { .trip } }
extension Place: StoredRecord { public static var recordKind: RecordKind { .place } }
extension Booking: StoredRecord { public static var recordKind: RecordKind { .booking } }
