public import TripBoardModel

extension Store {
    /// Files an attachment — and `booking` with it when `creatingBooking` (a ticket that made its
    /// own) — in one write transaction: the trip, and an existing booking, must still be live
    /// (`.notFound` otherwise), and when `existingCopy` finds the same bytes already attached
    /// there (another import won the race), nothing is written and that copy is returned.
    public func fileAttachment(_ attachment: Attachment, booking: Booking, creatingBooking: Bool, tripId: Trip.ID,
                               existingCopy: () throws -> Attachment?) throws -> Attachment? {
        try connection.writeTransaction {
            _ = try trip(id: tripId)
            if !creatingBooking { _ = try self.booking(id: booking.id) }
            if let existing = try existingCopy() { return existing }
            if creatingBooking { try insert(booking) }
            try insert(attachment)
            return nil
        }
    }
}
