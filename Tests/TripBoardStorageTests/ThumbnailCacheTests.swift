import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardModel
import TripBoardTestSupport

/// The thumbnail cache: derived, size-limited, least recently used out first.
struct ThumbnailCacheTests {
    func put(_ cache: ThumbnailCache, _ fixture: StoreFixture, id: String, bytes: Int, usedSecondsAgo: Double) throws {
        let staging = try fixture.container.stagingDirectory()
        try fixture.temporary.write([UInt8](repeating: 1, count: bytes), to: "container/tmp/\(id).tmp")
        let path = try cache.store(stagedName: "\(id).tmp", in: staging, for: id)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-usedSecondsAgo)], ofItemAtPath: path)
    }

    @Test func evictionRemovesTheLeastRecentlyUsedFirst() throws {
        let fixture = try StoreFixture()
        let cache = try ThumbnailCache(container: fixture.container)
        try put(cache, fixture, id: "old", bytes: 400, usedSecondsAgo: 300)
        try put(cache, fixture, id: "mid", bytes: 400, usedSecondsAgo: 200)
        try put(cache, fixture, id: "new", bytes: 400, usedSecondsAgo: 100)
        _ = try cache.cachedPath(for: "old")  // using it makes it the most recent
        #expect(try cache.evict(toFit: 800) == ["mid"])
        #expect(try cache.evict(toFit: 0, keeping: "old").sorted() == ["new"])
        #expect(try cache.cachedPath(for: "old") != nil)
        #expect(try cache.clear() == 1)
        #expect(try cache.cachedPath(for: "old") == nil)
    }

    @Test func aDeletedCacheDirectoryIsRecreated() throws {
        let fixture = try StoreFixture()
        try FileManager.default.removeItem(atPath: fixture.temporary.child("container/caches/thumbnails"))
        let cache = try ThumbnailCache(container: fixture.container)
        #expect(try cache.cachedPath(for: "anything") == nil)
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
