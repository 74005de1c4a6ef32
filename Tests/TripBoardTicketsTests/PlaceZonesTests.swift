import Testing
import TripBoardTickets

/// Airports by IATA code → IANA zone, from the table `tools/place-zones` generates.
struct PlaceZonesTests {
    @Test(arguments: [
        ("LIS", "Europe/Lisbon"), ("CDG", "Europe/Paris"), ("JFK", "America/New_York"), ("HND", "Asia/Tokyo"),
        ("KIX", "Asia/Tokyo"), ("OPO", "Europe/Lisbon"), ("SYD", "Australia/Sydney"),
        ("AAA", "Pacific/Tahiti"), ("ZYL", "Asia/Dhaka"),
    ])
    func anAirportHasItsZone(code: String, zone: String) {
        #expect(PlaceZones.airport(code) == zone)
    }

    @Test(arguments: ["lis", "LI", "LISB", "", "L1S", "ÀÀÀ", "QQQ"])
    func whatIsNotAKnownCodeHasNone(code: String) {
        #expect(PlaceZones.airport(code) == nil)
    }
}
