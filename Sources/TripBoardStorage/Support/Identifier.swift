import FoundationEssentials

/// Record ids: lowercase UUID strings, accepted on the command line by unique prefix.
public enum Identifier {
    /// A new random (version 4) id.
    public static func make() -> String { UUID().uuidString.lowercased() }

    /// True for a full lowercase or uppercase UUID string.
    public static func isValid(_ text: String) -> Bool {
        UUID(uuidString: text) != nil
    }

    /// Normalizes a user-typed id or prefix: lowercase hex digits and dashes, 1…36 characters.
    static func normalizedPrefix(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard (1...36).contains(lowered.utf8.count),
              lowered.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2d })
        else { return nil }
        return lowered
    }
}
