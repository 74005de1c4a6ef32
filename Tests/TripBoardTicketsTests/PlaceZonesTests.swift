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

/// Places by name → IANA zone (cities, countries with one zone), and the first place a ticket's
/// station or hotel name names.
struct PlaceNameZonesTests {
    @Test(arguments: [
        ("Lisbon", "Europe/Lisbon"), ("Lisboa", "Europe/Lisbon"), ("LISBOA", "Europe/Lisbon"), ("Sintra", "Europe/Lisbon"),
        ("Porto", "Europe/Lisbon"), ("Paris", "Europe/Paris"), ("München", "Europe/Berlin"), ("Frankfurt am Main", "Europe/Berlin"),
        ("Kyoto", "Asia/Tokyo"), ("京都", "Asia/Tokyo"), ("大阪", "Asia/Tokyo"), ("Germany", "Europe/Berlin"), ("Japan", "Asia/Tokyo"),
        ("New York City", "America/New_York"),
    ])
    func aPlaceHasItsZone(name: String, zone: String) {
        #expect(PlaceZones.named(name) == zone)
    }

    @Test(arguments: ["", "x", "Atlantis Nowhere", "Lisboa\tx", "Portugal"])
    func anUnknownNameOrACountryOfSeveralZonesHasNone(name: String) {
        #expect(PlaceZones.named(name) == nil)
    }

    @Test(arguments: [
        ("Lisboa Santa Apolónia", "Lisboa", "Europe/Lisbon"), ("新大阪", "大阪", "Asia/Tokyo"), ("Pousada de Lisboa", "Lisboa", "Europe/Lisbon"),
        ("Best Western Hotel Kyoto", "Kyoto", "Asia/Tokyo"), ("Frankfurt am Main Hbf", "Frankfurt am Main", "Europe/Berlin"),
        ("Paris Gare de Lyon", "Paris", "Europe/Paris"), ("Hotel Central Date Park Sintra", "Sintra", "Europe/Lisbon"),
    ])
    func theFirstPlaceATextNames(text: String, name: String, zone: String) throws {
        let found = try #require(PlaceZones.place(in: text))
        #expect(found.name == name && found.zone == zone)
    }

    /// Azul is a town of 55,000 in Argentina, Sintra one of 26,000: too small to be named alone by a hotel.
    @Test(arguments: ["Casa Azul B&B", "Hotel Sintra Charm"])
    func aHotelNamesNoSmallTownAlone(text: String) {
        #expect(PlaceZones.place(in: text, fromRight: true) == nil)
    }

    @Test(arguments: ["Memmo Alfama", "Gate 14 Seat 12A", "Best Central", "", "Holiday Inn Express", "Union Station",
                      "York House Hotel", "Hotel Miramar", "Hotel Victoria", "Hotel Bristol"])
    func aTextThatNamesNoKnownPlace(text: String) {
        #expect(PlaceZones.place(in: text) == nil)
        #expect(PlaceZones.place(in: text, fromRight: true) == nil)
    }

    /// A hotel's name ends with its city: the last place it names.
    @Test(arguments: [
        ("Hotel Victoria Lisboa", "Lisboa", "Europe/Lisbon"), ("Hotel Paris Marriott Lisbon", "Lisbon", "Europe/Lisbon"),
        ("Pousada de Lisboa", "Lisboa", "Europe/Lisbon"), ("Tokyo Station Hotel Kyoto", "Kyoto", "Asia/Tokyo"),
    ])
    func aHotelsNameIsReadFromTheRight(text: String, name: String, zone: String) throws {
        let found = try #require(PlaceZones.place(in: text, fromRight: true))
        #expect(found.name == name && found.zone == zone)
    }
}

