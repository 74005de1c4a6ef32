import Testing
@testable import TripBoardSync
import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardKeys

/// A push seals a batch's records in advance (on two threads) only as far as the batch's byte
/// limit is likely to reach: by an estimate of each record's sealed size, close to what the
/// batch counts once they are sealed, for small and large values alike.
struct SealedSizeEstimateTests {
    @Test(arguments: [0, 40, 2_000, 60_000])
    func theEstimateIsCloseToWhatTheBatchCounts(notes: Int) throws {
        let key = try ZoneKey.make(zone: "estimate")
        let record = SyncRecord(kind: .trip, id: "0d4c1f7e-8c52-4f1b-9a51-4b1c8f9e2a11",
                                fields: ["name": .string("Lisboa"), "notes": .string(String(repeating: "é", count: notes))],
                                syncState: .pendingUpload, remoteVersion: nil, updatedAt: "2026-12-01T08:00:00.000Z")
        var nonces = NonceBuffer()
        let stamps = FieldStamps(clockOffset: 0, serverMilliseconds: 1_796_112_000_000, node: "0123456789abcdef")
        let (sealed, _) = try SyncEngine.sealChangedFields(of: record, shadow: [:], edits: [:], whole: false, key: key, stamps: stamps,
                                                           nonces: &nonces)
        #expect(sealed.count == 2)
        let counted = Double(SyncEngine.sealedBytes(sealed))
        let estimate = Double(SyncEngine.sealedSizeEstimate(of: record))
        #expect(estimate >= counted * 0.9 && estimate <= counted * 1.4, "estimate \(estimate) for \(counted) bytes")
    }
}
