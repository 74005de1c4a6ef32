import Foundation
import Testing

/// What the environment sets for a process that opens the container for writing (docs/cli.md,
/// Environment), read once for `app` and `share-extension` (`ContainerOptions(processName:environment:)`):
/// a malformed value is a usage error (64) on one line, before anything is written or created.
@Suite struct EnvironmentSettingsTests {
    static let refused: [(name: String, value: String)] = [
        ("TRIPBOARD_LOCK_TIMEOUT", "-1"), ("TRIPBOARD_LOCK_TIMEOUT", "3601"), ("TRIPBOARD_LOCK_TIMEOUT", "abc"),
        ("TRIPBOARD_LOCK_TIMEOUT", "0x10"), ("TRIPBOARD_LOCK_TIMEOUT", "1e3"), ("TRIPBOARD_LOCK_TIMEOUT", "+5"),
        ("TRIPBOARD_LOCK_TIMEOUT", ".5"), ("TRIPBOARD_LOCK_TIMEOUT", "5."), ("TRIPBOARD_LOCK_TIMEOUT", " 5"),
        ("TRIPBOARD_LOCK_TIMEOUT", "nan"), ("TRIPBOARD_LOCK_TIMEOUT", "1.2.3"),
        ("TRIPBOARD_DURABILITY", "FULL"), ("TRIPBOARD_DURABILITY", "off"),
        ("TRIPBOARD_NOW", "garbage"), ("TRIPBOARD_NOW", "2026-12-05"),
    ]

    @Test(arguments: refused.map { "\($0.name)=\($0.value)" })
    func aMalformedValueIsAUsageErrorAndTouchesNothing(_ setting: String) throws {
        let (name, value) = (String(setting.prefix { $0 != "=" }), String(setting.drop { $0 != "=" }.dropFirst()))
        let container = try TestContainer()
        let added = try container.app("trip", "add", "--name", "Paris", "--start", "2026-12-10", "--end", "2026-12-14", environment: [name: value])
        #expect(added.status == 64 && added.stderrLines.count == 1 && added.stderr.contains(name), "\(setting): \(added)")
        #expect(!FileManager.default.fileExists(atPath: container.path), "\(setting): a refused command created the container")
        _ = try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let before = try container.state()
        let shared = try container.share([ticket], environment: [name: value])
        #expect(shared.status == 64 && shared.stderrLines.count == 1 && shared.stderr.contains(name), "\(setting): \(shared)")
        #expect(try container.state() == before, "\(setting): a refused share changed the container")
    }

    @Test(arguments: ["TRIPBOARD_LOCK_TIMEOUT=0", "TRIPBOARD_LOCK_TIMEOUT=0.25", "TRIPBOARD_LOCK_TIMEOUT=3600", "TRIPBOARD_DURABILITY=full",
                      "TRIPBOARD_DURABILITY=normal", "TRIPBOARD_NOW=2026-12-05T10:00:00Z"])
    func aWellFormedValueIsTaken(_ setting: String) throws {
        let (name, value) = (String(setting.prefix { $0 != "=" }), String(setting.drop { $0 != "=" }.dropFirst()))
        let container = try TestContainer()
        let added = try container.app("trip", "add", "--name", "Paris", "--start", "2026-12-10", "--end", "2026-12-14", environment: [name: value])
        #expect(added.status == 0, "\(setting): \(added)")
    }
}
