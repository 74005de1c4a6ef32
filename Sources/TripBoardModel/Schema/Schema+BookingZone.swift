extension Schema {
    /// Version 5 → 6: a booking keeps the IANA zone its times were given in (`zone`:
    /// `Europe/Lisbon`), so that a reader anywhere sees `07:35 WET`, not only `+00:00`. An older
    /// booking has none: its times keep the fixed offset they were written with.
    package static let bookingZone = """
        ALTER TABLE bookings ADD COLUMN zone TEXT;
        """
}
