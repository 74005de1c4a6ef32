/// The time zones of places a ticket names (docs/cli.md, "Which zone a ticket's times are in"):
/// airports by IATA code, from the table `tools/place-zones` generates (`PlaceZones+Airports.swift`).
public enum PlaceZones {
    /// The IANA zone of the airport with this IATA code (three capital letters), if the table has it.
    public static func airport(_ code: String) -> String? {
        let key = Array(code.utf8)
        guard key.count == 3, key.allSatisfy({ (0x41...0x5A).contains($0) }) else { return nil }
        // Records of six bytes (the code, then the zone's index in three digits), sorted by code.
        let index = airportRows.utf8.withContiguousStorageIfAvailable { rows -> Int? in
            var (low, high) = (0, rows.count / 6)
            while low < high {
                let middle = (low + high) / 2
                let record = rows[(middle * 6)..<(middle * 6 + 3)]
                if record.elementsEqual(key) {
                    return rows[(middle * 6 + 3)..<(middle * 6 + 6)].reduce(0) { $0 * 10 + Int($1 - 0x30) }
                }
                if record.lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
            }
            return nil
        } ?? nil
        return index.flatMap { airportZoneNames.indices.contains($0) ? airportZoneNames[$0] : nil }
    }
}
