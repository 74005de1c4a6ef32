extension Schema {
    /// Version 17 → 18: an all-day booking stored before version 3 is over at the end of its day.
    /// Step 3 set every old booking's `over_at_epoch` to its start, which for a date alone is
    /// 00:00 UTC of the day (`BookingTime.startEpoch`), so the widget's lookup (`NextTrip.Query`:
    /// not over within the widest offset of now) could pass over such a booking in the last hours
    /// of its own day. Every booking written since holds `BookingTime.epochs`'s value, which for
    /// an all-day booking without an end is its day's end, 24:00 UTC; the rows step 3 left are
    /// given the same.
    package static let allDayOverAtItsDaysEnd = """
        UPDATE bookings SET over_at_epoch = starts_at_epoch + 86400
            WHERE ends_at IS NULL AND length(starts_at) = 10 AND over_at_epoch = starts_at_epoch;
        """
}
