extension Schema {
    /// Version 15 → 16: a booking's end may have a zone of its own (`end_zone`): where a flight
    /// lands, so that the arrival shows on that clock (`11:20 JST`). No row has one yet.
    package static let bookingEndZone = """
        ALTER TABLE bookings ADD COLUMN end_zone TEXT;
        """
}
