import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardModel
import TripBoardTestSupport

/// The thumbnail cache: derived, size-limited, least recently used out first.
struct ThumbnailCacheTests {
    func put(_ cache: ThumbnailCache, _ fixture: StoreFixture, id: String, bytes: Int, usedSecondsAgo: Double) throws {
        let staging = try fixture.container.stagingDirectory()
        try cache.store([UInt8](repeating: 1, count: bytes), for: id, protection: .completeUnlessOpen, staging: staging)
        let path = fixture.temporary.child("container/caches/thumbnails/\(id).png.sealed")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-usedSecondsAgo)], ofItemAtPath: path)
    }

    @Test func evictionRemovesTheLeastRecentlyUsedFirst() throws {
        let fixture = try StoreFixture()
        let cache = try ThumbnailCache(container: fixture.container)
        try put(cache, fixture, id: "old", bytes: 300, usedSecondsAgo: 300)
        try put(cache, fixture, id: "mid", bytes: 300, usedSecondsAgo: 200)
        try put(cache, fixture, id: "new", bytes: 300, usedSecondsAgo: 100)
        _ = try cache.cachedPNG(for: "old")  // using it makes it the most recent
        #expect(try cache.evict(toFit: 1000) == ["mid"])  // three sealed entries of 474 bytes
        #expect(try cache.evict(toFit: 0, keeping: "old").sorted() == ["new"])
        #expect(try cache.cachedPNG(for: "old") == [UInt8](repeating: 1, count: 300))
        #expect(try cache.clear() == 1)
        #expect(try cache.cachedPNG(for: "old") == nil)
    }

    @Test func aDeletedCacheDirectoryIsRecreated() throws {
        let fixture = try StoreFixture()
        try FileManager.default.removeItem(atPath: fixture.temporary.child("container/caches/thumbnails"))
        let cache = try ThumbnailCache(container: fixture.container)
        #expect(try cache.cachedPNG(for: "anything") == nil)
    }

    @Test(arguments: [("250", true), ("0", false), ("10001", false), ("lots", false)])
    func cacheLimitIsAWholeNumberOfMiB(text: String, accepted: Bool) {
        if accepted {
            #expect((try? PreferenceKey.cacheLimitMB.parse(text)) == .number(250))
        } else {
            #expect(throws: StoreError.self) { try PreferenceKey.cacheLimitMB.parse(text) }
        }
    }

    @Test func extensionsNeverCreateAContainer() throws {
        let temporary = try TemporaryDirectory()
        var options = ContainerOptions()
        options.mayCreate = false
        #expect(throws: ContainerError.self) { try Container.openForWriting(at: temporary.child("container"), options: options) }
        #expect(!FileManager.default.fileExists(atPath: temporary.child("container")))
    }
}
