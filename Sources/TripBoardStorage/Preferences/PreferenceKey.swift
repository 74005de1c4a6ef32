import TripBoardModel
/// The typed preferences. Unknown keys and values of the wrong type are refused.
public enum PreferenceKey: String, Sendable, CaseIterable, Codable {
    /// ISO 4217 code, e.g. `EUR`.
    case currency
    /// `system`, `light` or `dark`.
    case theme
    /// `standard`, `satellite` or `hybrid`.
    case mapStyle
    /// `true` or `false`.
    case showsVisitedPlaces
    /// The thumbnail cache's size limit in MiB (1…10000); least recently used thumbnails go first.
    case cacheLimitMB

    /// The value used until the user sets one.
    public var defaultValue: PreferenceValue {
        switch self {
        case .currency: .text("EUR")
        case .theme: .text("system")
        case .mapStyle: .text("standard")
        case .showsVisitedPlaces: .flag(true)
        case .cacheLimitMB: .number(100)
        }
    }

    /// What values the key takes, for messages and `prefs list`.
    public var allowedValues: String {
        switch self {
        case .currency: "an ISO 4217 currency code such as EUR, USD, JPY"
        case .theme: "system, light or dark"
        case .mapStyle: "standard, satellite or hybrid"
        case .showsVisitedPlaces: "true or false"
        case .cacheLimitMB: "a whole number of MiB from 1 to 10000"
        }
    }

    /// Parses a value typed by the user (`prefs set`) or found in a file.
    public func parse(_ text: String) throws -> PreferenceValue {
        let refused = StoreError.invalidArgument("'\(text.prefix(40))' is not a valid \(rawValue): use \(allowedValues)")
        switch self {
        case .currency:
            let code = text.uppercased()
            guard Currency.isoCodes.contains(code) else { throw refused }
            return .text(code)
        // Names in any case, as the currency and the booleans are read (`Dark` is `dark`).
        case .theme:
            guard ["system", "light", "dark"].contains(text.lowercased()) else { throw refused }
            return .text(text.lowercased())
        case .mapStyle:
            guard ["standard", "satellite", "hybrid"].contains(text.lowercased()) else { throw refused }
            return .text(text.lowercased())
        case .showsVisitedPlaces:
            switch text.lowercased() {
            case "true", "yes", "on", "1": return .flag(true)
            case "false", "no", "off", "0": return .flag(false)
            default: throw refused
            }
        case .cacheLimitMB:
            guard let number = Int(text), (1...10_000).contains(number) else { throw refused }
            return .number(number)
        }
    }

    /// Checks a value read from a file or an import: the right type and an allowed value.
    public func validate(_ value: PreferenceValue) throws -> PreferenceValue {
        switch (self, value) {
        case (.showsVisitedPlaces, .flag): return value
        case (_, .text(let text)): return try parse(text)
        case (_, .flag(let flag)): return try parse(String(flag))
        case (_, .number(let number)): return try parse(String(number))
        }
    }
}

/// A preference value: text or a flag.
public enum PreferenceValue: Sendable, Equatable, Codable, CustomStringConvertible {
    case text(String)
    case flag(Bool)
    case number(Int)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .flag(flag)
        } else if let number = try? container.decode(Int.self) {
            self = .number(number)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    /// The bare value (`"JPY"`, `true`, `3`), not the synthesized `{"text": {"_0": …}}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .flag(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number)
        }
    }

    public var description: String {
        switch self {
        case .text(let text): text
        case .flag(let flag): String(flag)
        case .number(let number): String(number)
        }
    }
}

enum Currency {
    /// ISO 4217 active codes (list 1, 2024), funds and precious-metal codes excluded.
    static let isoCodes: Set<String> = [
        "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD",
        "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY",
        "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP",
        "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
        "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT",
        "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
        "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK",
        "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
        "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY",
        "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XCD",
        "XCG", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
    ]
}
