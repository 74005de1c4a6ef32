import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardModel
import TripBoardTestSupport

/// The schema comparison (docs/storage.md, The schema, exactly): what a fresh container and every
/// step-by-step upgrade make is what `Schema.expectedObjects` derives, and what differs is named.
struct SchemaObjectsTests {
    @Test func aFreshContainersStoreIsExactlyThisBuildsSchema() throws {
        let fixture = try StoreFixture()
        #expect(try Schema.difference(of: fixture.store.connection) == nil)
        #expect(try Schema.objects(of: fixture.store.connection) == Schema.expectedObjects(version: Schema.currentVersion))
    }

    /// A store made at each earlier version, then upgraded step by step, ends with exactly the
    /// schema a new store has — and before the upgrade it was exactly that version's.
    @Test(arguments: 1..<Int(Schema.currentVersion))
    func everyStepByStepUpgradeEndsWithTheSameSchema(from version: Int) throws {
        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("store.sqlite"), mode: .readWriteCreate)
        try Schema.migrate(connection, steps: Array(Schema.migrations.prefix(version)))
        #expect(try connection.userVersion() == Int64(version))
        #expect(try Schema.difference(of: connection) == nil)
        try Schema.migrate(connection)
        #expect(try Schema.difference(of: connection) == nil)
        #expect(try Schema.objects(of: connection) == Schema.expectedObjects(version: Schema.currentVersion))
    }

    @Test func whatDiffersIsNamed() throws {
        let fixture = try StoreFixture()
        let connection = fixture.store.connection
        try connection.execute("""
            CREATE TRIGGER eat AFTER INSERT ON trips BEGIN DELETE FROM trips WHERE id = NEW.id; END;
            DROP INDEX trips_live_by_start;
            """)
        let difference = try #require(try Schema.difference(of: connection))
        #expect(difference.contains("trigger eat on trips is not part of schema \(Schema.currentVersion)"), "\(difference)")
        #expect(difference.contains("index trips_live_by_start on trips is missing"), "\(difference)")
    }

    /// Comments and white space do not count (SQLite keeps each statement as it was written);
    /// what is quoted does.
    @Test func foldingKeepsWhatIsQuoted() {
        #expect(Schema.folded("CREATE  TABLE t (\n  a TEXT -- the a\n  /* b */ , b TEXT)") == "CREATE TABLE t ( a TEXT , b TEXT)")
        #expect(Schema.folded("CHECK (a <> '--  x')") == "CHECK (a <> '--  x')")
        #expect(Schema.folded("CHECK (a <> '  ') ") != Schema.folded("CHECK (a <> ' ')"))
    }
}
