/// The time zones of places a ticket names (docs/cli.md, "Which zone a ticket's times are in"):
/// airports by IATA code, and cities and countries by name, from the tables `tools/place-zones`
/// generates (`PlaceZones+Data.swift`).
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
        return index.flatMap { zoneNames.indices.contains($0) ? zoneNames[$0] : nil }
    }
}

extension PlaceZones {
    /// The IANA zone of a place by its name — a city (`Lisboa`, `大阪`, `Sintra`), or a country
    /// with one zone — the whole name, any case; nil when the table does not have it.
    public static func named(_ name: String) -> String? { entry(name)?.zone }

    /// `named`'s zone, and whether the place has 100,000 people or more (or is a country).
    static func entry(_ name: String) -> (zone: String, isMajor: Bool)? {
        let key = Array(name.lowercased().utf8)
        guard key.count >= 2, !key.contains(0x09), !key.contains(0x0A) else { return nil }
        let found = placeRows.utf8.withContiguousStorageIfAvailable { rows -> (Int, Bool)? in
            // Records `name\tNNN\n`, sorted by the name's bytes: a binary search over byte
            // offsets, each probe widened to the record it falls in.
            func record(around offset: Int) -> (start: Int, tab: Int, end: Int) {
                var start = offset
                while start > 0 && rows[start - 1] != 0x0A { start -= 1 }
                var tab = start
                while tab < rows.count && rows[tab] != 0x09 { tab += 1 }
                var end = tab
                while end < rows.count && rows[end] != 0x0A { end += 1 }
                return (start, tab, end)
            }
            var (low, high) = (0, rows.count)
            while low < high {
                let found = record(around: (low + high) / 2)
                let name = rows[found.start..<found.tab]
                if name.elementsEqual(key) {
                    guard found.tab + 4 <= found.end else { return nil }
                    return (rows[(found.tab + 1)..<(found.tab + 4)].reduce(0) { $0 * 10 + Int($1 - 0x30) },
                            found.tab + 4 < found.end && rows[found.tab + 4] == 0x2B)
                }
                if name.lexicographicallyPrecedes(key) { low = found.end + 1 } else { high = found.start }
            }
            return nil
        } ?? nil
        guard let (index, isMajor) = found, zoneNames.indices.contains(index) else { return nil }
        return (zoneNames[index], isMajor)
    }

    /// The first place `text` names, reading its words from the left — or the last, `fromRight`
    /// (a hotel's name ends with its city: `Hotel Victoria Lisboa`): the longest run of up to
    /// three words that is a known name (`Lisboa Santa Apolónia` → Lisboa), and in Chinese or
    /// Japanese text the longest known run of two to four characters (`新大阪` → 大阪); a word joined
    /// by hyphens is read whole first, then as its parts (`Bruxelles-Midi` → Bruxelles). A hotel's
    /// name (`fromRight`) names a town of fewer than 100,000 people only in two words or more:
    /// too many such towns are named like the words of a name (`Casa Azul`).
    public static func place(in text: String, fromRight: Bool = false) -> (name: String, zone: String)? {
        var words: [String] = []
        var current = ""
        func flush() {
            if !current.isEmpty { words.append(current) }
            current = ""
        }
        for character in text {
            if character.isLetter && !Self.isCJK(character) || character == "'" || character == "-" && !current.isEmpty {
                current.append(character)
            } else {
                flush()
                if Self.isCJK(character) { words.append(String(character)) }
            }
        }
        flush()
        if let found = scan(words, fromRight: fromRight) { return found }
        // A station joined to its city by a hyphen: `Bruxelles-Midi`, `Shin-Osaka`, `Paris-Nord`.
        let split = words.flatMap { $0.split(separator: "-").map(String.init) }
        return split == words ? nil : scan(split, fromRight: fromRight)
    }

    private static func scan(_ words: [String], fromRight: Bool) -> (name: String, zone: String)? {
        var found: [(name: String, zone: String)] = []
        var start = 0
        while start < words.count {
            let ideographic = words[start].first.map(Self.isCJK) ?? false
            let longest = ideographic ? 4 : 3
            var matched = 0
            for length in stride(from: min(longest, words.count - start), through: ideographic ? 2 : 1, by: -1) {
                let run = words[start..<(start + length)]
                guard run.allSatisfy({ ($0.first.map(Self.isCJK) ?? false) == ideographic }) else { continue }
                let name = ideographic ? run.joined() : run.joined(separator: " ")
                // Short Latin words are too often ordinary ones (`Via`), and some towns are named
                // like the words of a ticket or a hotel's name (`Date`, `Holiday`): neither counts alone.
                guard ideographic || (name.count >= 4 && (length > 1 || !Self.ordinaryWords.contains(name.lowercased()))) else { continue }
                if let (zone, isMajor) = entry(name), ideographic || !fromRight || length > 1 || isMajor {
                    if !fromRight { return (name, zone) }
                    found.append((name, zone))
                    matched = length
                    break
                }
            }
            start += max(matched, 1)
        }
        return found.last
    }

    /// The zones of the United States and its territories (tzdata's `zone1970.tab`, country US,
    /// with Puerto Rico's and Guam's): where a ticket prints a slashed date month first.
    public static let unitedStatesZones: Set<String> = [
        "America/New_York", "America/Detroit", "America/Kentucky/Louisville", "America/Kentucky/Monticello",
        "America/Indiana/Indianapolis", "America/Indiana/Vincennes", "America/Indiana/Winamac", "America/Indiana/Marengo",
        "America/Indiana/Petersburg", "America/Indiana/Vevay", "America/Chicago", "America/Indiana/Tell_City",
        "America/Indiana/Knox", "America/Menominee", "America/North_Dakota/Center", "America/North_Dakota/New_Salem",
        "America/North_Dakota/Beulah", "America/Denver", "America/Boise", "America/Phoenix", "America/Los_Angeles",
        "America/Anchorage", "America/Juneau", "America/Sitka", "America/Metlakatla", "America/Yakutat", "America/Nome",
        "America/Adak", "Pacific/Honolulu", "America/Puerto_Rico", "Pacific/Guam",
    ]

    /// Words of tickets and hotel names that are also the names of towns in the table.
    static let ordinaryWords: Set<String> = [
        "date", "central", "gare", "best", "grand", "royal", "plaza", "park", "palace", "garden", "holiday", "union", "victoria",
        "marina", "florida", "orange", "aurora", "liberty", "miramar", "lido", "bristol", "windsor", "regina", "lincoln", "express",
        "station", "terminal", "airport", "city", "centro", "centre", "center", "alameda", "paradise", "sunrise", "sunset", "golden",
        "pacific", "atlantic", "continental", "imperial", "president", "ambassador", "olympia", "york",
    ]

    static func isCJK(_ character: Character) -> Bool {
        character.unicodeScalars.first.map { (0x3040...0x30FF).contains($0.value) || (0x4E00...0x9FFF).contains($0.value) } ?? false
    }
}
