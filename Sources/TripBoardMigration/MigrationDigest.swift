import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardModel

/// A BLAKE2b-256 over records in a fixed encoding: every field, in declaration order, each
/// followed by a unit separator (U+001F; an absent value is U+0000), each record by a record
/// separator (U+001E). The store step digests the records it converts from the legacy copy, in
/// order; the verification digests what the container's store holds, in insertion (rowid)
/// order, and the two must be equal — one sequential scan instead of a lookup per record.
struct MigrationDigest {
    private let hasher = Blake2bHasher()
    private var buffer: [UInt8] = []

    mutating func add(_ trip: Trip) {
        record([trip.id.text, trip.name, trip.startDate.description, trip.endDate.description, trip.notes,
                trip.syncState.rawValue, trip.remoteVersion.map(String.init), trip.updatedAt.utcStamp])
    }

    mutating func add(_ place: Place) {
        record([place.id.text, place.tripId.text, place.name, place.city, place.visited ? "1" : "0", place.syncState.rawValue,
                place.remoteVersion.map(String.init), place.updatedAt.utcStamp])
    }

    mutating func add(_ booking: Booking) {
        record([booking.id.text, booking.tripId.text, booking.kind.rawValue, booking.title, booking.startsAt?.text, booking.reference,
                booking.syncState.rawValue, booking.remoteVersion.map(String.init), booking.updatedAt.utcStamp])
    }

    mutating func add(_ attachment: Attachment) {
        record([attachment.id.text, attachment.bookingId.text, attachment.originalFilename, attachment.contentType,
                String(attachment.byteCount), attachment.contentHash.stored, attachment.pageCount.map(String.init),
                attachment.relativePath, attachment.state.rawValue, attachment.createdAt.utcStamp, attachment.syncState.rawValue,
                attachment.remoteVersion.map(String.init), attachment.updatedAt.utcStamp])
    }

    mutating func add(_ record: StoreVerification.AnyRecord) {
        switch record {
        case .trip(let trip): add(trip)
        case .place(let place): add(place)
        case .booking(let booking): add(booking)
        case .attachment(let attachment): add(attachment)
        }
    }

    /// The digest, lowercase hex. Call once.
    mutating func finish() -> String {
        hasher.update(buffer)
        buffer.removeAll()
        return Sodium.hexString(hasher.finalize())
    }

    private mutating func record(_ fields: [String?]) {
        for field in fields {
            if let field { buffer += field.utf8 } else { buffer.append(0) }
            buffer.append(0x1f)
        }
        buffer.append(0x1e)
        if buffer.count >= 1 << 16 {
            hasher.update(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }
}
