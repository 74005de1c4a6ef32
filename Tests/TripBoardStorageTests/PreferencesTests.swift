import Foundation
import Synchronization
import Testing
@testable import TripBoardStorage
import TripBoardModel
import TripBoardTestSupport

struct PreferencesTests {
    static let file = "container/preferences/preferences.json"

    /// The file as a JSON object.
    private func rawObject(_ fixture: StoreFixture) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(fixture.temporary.bytes(Self.file))) as? [String: Any])
    }

    @Test func freshContainerHasTheDefaultsAndNoFile() throws {
        let fixture = try StoreFixture()
        var file = try PreferencesFile(container: fixture.container)
        let preferences = try file.load()

        #expect(preferences[.currency] == .text("EUR"))
        #expect(preferences[.theme] == .text("system"))
        #expect(preferences[.mapStyle] == .text("standard"))
        #expect(preferences[.showsVisitedPlaces] == .flag(true))
        #expect(PreferenceKey.allCases.allSatisfy { !preferences.isSet($0) })
        #expect(preferences == Preferences())
        #expect(file.warnings == [])
        #expect(!fixture.temporary.exists(Self.file))
        #expect(file.path == fixture.temporary.child(Self.file))
    }

    @Test func setValuesAreReadBackByAnotherReader() throws {
        let fixture = try StoreFixture()
        var writer = try PreferencesFile(container: fixture.container)
        try writer.set(.currency, to: try PreferenceKey.currency.parse("usd"))
        try writer.set(.showsVisitedPlaces, to: .flag(false))
        try writer.update([.theme: .text("dark"), .mapStyle: .text("hybrid")])

        var reader = try PreferencesFile(container: fixture.container)
        let preferences = try reader.load()
        #expect(preferences.explicitValues == [
            .currency: .text("USD"), .showsVisitedPlaces: .flag(false), .theme: .text("dark"), .mapStyle: .text("hybrid"),
        ])
        #expect(reader.warnings == [])
        #expect(try fixture.temporary.permissions(Self.file) == 0o600)
        #expect(try fixture.temporary.entries("container/tmp") == [])
        #expect(try rawObject(fixture)["showsVisitedPlaces"] as? Bool == false)
        #expect(try rawObject(fixture)["currency"] as? String == "USD")
    }

    @Test(arguments: [
        (PreferenceKey.currency, "EUR", PreferenceValue.text("EUR")),
        (.currency, "jpy", .text("JPY")),
        (.theme, "dark", .text("dark")),
        (.theme, "light", .text("light")),
        (.mapStyle, "satellite", .text("satellite")),
        (.showsVisitedPlaces, "yes", .flag(true)),
        (.showsVisitedPlaces, "ON", .flag(true)),
        (.showsVisitedPlaces, "0", .flag(false)),
        (.showsVisitedPlaces, "False", .flag(false)),
    ])
    func parseAcceptsTheAllowedValues(key: PreferenceKey, text: String, value: PreferenceValue) throws {
        #expect(try key.parse(text) == value)
        #expect(try key.validate(value) == value)
    }

    @Test(arguments: [
        (PreferenceKey.currency, "XYZ"),
        (.currency, "euro"),
        (.currency, ""),
        (.currency, "true"),
        (.theme, "darkest"),
        (.theme, "neon"),
        (.mapStyle, "terrain"),
        (.showsVisitedPlaces, "maybe"),
        (.showsVisitedPlaces, ""),
    ])
    func parseRefusesAnythingElseNamingTheChoices(key: PreferenceKey, text: String) throws {
        let error = try #require(throws: StoreError.self) { try key.parse(text) }
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected .invalidArgument, got \(error)")
            return
        }
        #expect(message.contains(key.rawValue))
        #expect(message.contains(key.allowedValues))
    }

    @Test func validateChecksTheTypeToo() throws {
        #expect(throws: StoreError.self) { try PreferenceKey.currency.validate(.flag(true)) }
        #expect(throws: StoreError.self) { try PreferenceKey.theme.validate(.flag(false)) }
        #expect(try PreferenceKey.showsVisitedPlaces.validate(.text("false")) == .flag(false))
        #expect(try PreferenceKey.currency.validate(.text("gbp")) == .text("GBP"))
    }

    @Test func badValueIsRefusedAndNothingIsWritten() throws {
        let fixture = try StoreFixture()
        var file = try PreferencesFile(container: fixture.container)
        #expect(throws: StoreError.self) { try file.set(.theme, to: .text("neon")) }
        #expect(throws: StoreError.self) { try file.update([.currency: .text("JPY"), .mapStyle: .text("terrain")]) }
        #expect(!fixture.temporary.exists(Self.file))
        try file.set(.currency, to: .text("JPY"))
        let before = try fixture.temporary.bytes(Self.file)
        #expect(throws: StoreError.self) { try file.set(.currency, to: .text("XXX")) }
        #expect(try fixture.temporary.bytes(Self.file) == before)
    }

    @Test(arguments: ["{not json", "", "[1, 2]", "\u{0}\u{1}binary"])
    func unreadableFileIsMovedAsideWithAWarningAndDefaultsAreUsed(content: String) throws {
        let fixture = try StoreFixture()
        try fixture.temporary.write(content, to: Self.file)
        var file = try PreferencesFile(container: fixture.container)

        let preferences = try file.load()

        #expect(preferences == Preferences())
        let asideName = "preferences.json.corrupt-20261130T231217.123Z"
        #expect(try fixture.temporary.entries("container/preferences") == [asideName])
        #expect(try fixture.temporary.bytes("container/preferences/" + asideName) == Array(content.utf8), "kept for the user")
        try #require(file.warnings.count == 1)
        #expect(file.warnings[0].contains("moved aside to \(asideName)"))
        #expect(file.warnings[0].contains(fixture.temporary.child(Self.file)))

        try file.set(.theme, to: .text("dark"))
        #expect(try fixture.temporary.entries("container/preferences") == ["preferences.json", asideName])
        #expect(file.warnings.count == 1, "warned once")
    }

    @Test func keyWithABadValueReadsAsItsDefaultWithAWarning() throws {
        let fixture = try StoreFixture()
        try fixture.temporary.write(#"{"theme": "neon", "currency": "JPY"}"#, to: Self.file)
        var file = try PreferencesFile(container: fixture.container)

        let preferences = try file.load()

        #expect(preferences[.theme] == .text("system"))
        #expect(!preferences.isSet(.theme))
        #expect(preferences[.currency] == .text("JPY"))
        try #require(file.warnings.count == 1)
        #expect(file.warnings[0].contains("preference theme"))
        #expect(try fixture.temporary.entries("container/preferences") == ["preferences.json"], "not moved aside")
    }

    @Test func keysFromANewerBuildSurviveARewrite() throws {
        let fixture = try StoreFixture()
        try fixture.temporary.write(#"{"futureKey": "kept", "futureFlag": true, "currency": "JPY"}"#, to: Self.file)
        var file = try PreferencesFile(container: fixture.container)

        let loaded = try file.load()
        try file.set(.theme, to: .text("dark"))

        #expect(loaded.explicitValues == [.currency: .text("JPY")])
        let raw = try rawObject(fixture)
        #expect(Set(raw.keys) == ["futureKey", "futureFlag", "currency", "theme"])
        #expect(raw["futureKey"] as? String == "kept")
        #expect(raw["futureFlag"] as? Bool == true)
        #expect(raw["theme"] as? String == "dark")
        #expect(file.warnings == [])
    }

    @Test func twoReadersWritingDifferentKeysInTurnKeepBoth() throws {
        let fixture = try StoreFixture()
        var first = try PreferencesFile(container: fixture.container)
        var second = try PreferencesFile(container: fixture.container)
        _ = try first.load()
        _ = try second.load()
        try first.set(.currency, to: .text("GBP"))
        try second.set(.theme, to: .text("light"))
        #expect(try first.load().explicitValues == [.currency: .text("GBP"), .theme: .text("light")])
    }

    /// Two writers, each with its own container and preferences file (as two processes would
    /// have), update different keys as fast as they can. The read-modify-write runs under an
    /// exclusive flock on `preferences/`, so neither loses the other's last value.
    @Test func concurrentUpdatesOfDifferentKeysAreBothKept() throws {
        let fixture = try StoreFixture()
        let path = fixture.temporary.child("container")
        let writers: [(PreferenceKey, [PreferenceValue])] = [
            (.currency, ["USD", "JPY", "GBP", "CHF"].map(PreferenceValue.text)),
            (.mapStyle, ["satellite", "standard", "hybrid"].map(PreferenceValue.text)),
        ]
        let rounds = 40
        let options = fixture.clock.options
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers.count) { index in
            do {
                let container = try Container.openForWriting(at: path, options: options)
                var file = try PreferencesFile(container: container)
                let (key, values) = writers[index]
                for round in 0..<rounds { try file.set(key, to: values[round % values.count]) }
            } catch {
                failures.withLock { $0.append("\(writers[index].0): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])

        var reader = try PreferencesFile(container: fixture.container)
        let final = try reader.load()
        for (key, values) in writers {
            #expect(final[key] == values[(rounds - 1) % values.count], "\(key)")
        }
        #expect(try fixture.temporary.entries("container/tmp") == [])
    }
}
