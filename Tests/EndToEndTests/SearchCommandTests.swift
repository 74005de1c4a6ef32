import Foundation
import Testing

/// `app search`, as a user runs it.
@Suite struct SearchCommandTests {
    @Test func findsAcrossTripsPlacesAndBookingsAndNotInTheTrash() throws {
        let container = try TestContainer()
        let lisbon = try container.appOK("trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15",
                                         "--notes", "Pastéis de Belém")
        let place = try container.appOK("place", "add", "--trip", lisbon, "--name", "Torre de Belém", "--city", "Lisboa")
        let booking = try container.appOK("booking", "add", "--trip", lisbon, "--kind", "flight", "--title", "TP 1351",
                                          "--reference", "X7K2QP")
        let found = try container.appOK("search", "belem", "--json")
        let hits = try #require(try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["id"] as? String }) == [lisbon, place])
        #expect(hits.allSatisfy { Set($0.keys) == ["kind", "id", "tripId", "tripName", "title", "detail"] })
        let table = try container.appOK("search", "x7k2")
        #expect(table.contains("booking  \(booking.prefix(8))  Lisbon  TP 1351  X7K2QP"), "\(table)")
        #expect(try container.appOK("search", "lis", "tor").contains(place.prefix(8)))

        try container.appOK("booking", "delete", booking)
        #expect(try container.appOK("search", "x7k2") == "Nothing found.")
        try container.appOK("trash", "restore", booking)
        #expect(try container.appOK("search", "x7k2").contains(booking.prefix(8)))
        try container.appOK("place", "edit", place, "--name", "Padrão")
        #expect(try container.appOK("search", "torre") == "Nothing found.")
        #expect(try container.appOK("search", "padrao").contains(place.prefix(8)))
    }

    @Test(arguments: [(["search"], "missing TEXT to search for"), (["search", "*", "-"], "nothing to search for in '* -'")])
    func nothingToSearchForIsAUsageError(arguments: [String], message: String) throws {
        let container = try TestContainer()
        let result = try container.app(arguments: arguments)
        #expect(result.status == 64 && result.stderr.contains(message), "\(result)")
        #expect(container.files().isEmpty)
    }

    @Test func searchingWhereThereIsNoContainerCreatesNothing() throws {
        let container = try TestContainer()
        let result = try container.app("search", "lisbon")
        #expect(result.status == 66 && result.stderr.contains("no TripBoard container at"), "\(result)")
        #expect(container.files().isEmpty)
    }
}
