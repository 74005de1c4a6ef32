public import TripBoardSystem

extension TicketFields {
    /// A wall-clock time as printed on a ticket (`07:35`), with no date or zone: the zone is the
    /// departure station's, which the ticket rarely prints.
    ///
    /// Encodes as the string `"07:35"`.
    public struct TimeOfDay: Sendable, Hashable, Comparable, CodableAsText {
        /// 0…23.
        public let hour: Int
        /// 0…59.
        public let minute: Int

        /// A time, or nil when `hour` is outside 0…23 or `minute` outside 0…59.
        public init?(hour: Int, minute: Int) {
            guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
            self.hour = hour
            self.minute = minute
        }

        /// Parses a strict `HH:MM`.
        public init?(_ text: some StringProtocol) {
            let bytes = Array(text.utf8)
            guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
                  let hour = CivilDate.number(bytes[0..<2]), let minute = CivilDate.number(bytes[3..<5])
            else { return nil }
            self.init(hour: hour, minute: minute)
        }

        /// Minutes since midnight: 07:35 is 455.
        public var minutesSinceMidnight: Int { hour * 60 + minute }

        public var description: String { CivilDate.pad(hour, 2) + ":" + CivilDate.pad(minute, 2) }

        public static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool {
            lhs.minutesSinceMidnight < rhs.minutesSinceMidnight
        }

        /// In JSON, the string `07:35` (`CodableAsText`).
        public static let textForm = "a time in HH:MM form"
    }
}
