import TripBoardSystem

/// The local time zone every executable reads times in (`TZ`, as `date` reads it). glibc reads a
/// `TZ` that names no zone as UTC without a word — `TZ=Europe/Lisbn app booking add … 07:35` would
/// store a time an hour off in summer — so a `TZ` that is set must name a zone of the system's
/// database or be a POSIX rule; otherwise the command is refused (64) before it reads or writes
/// anything. Unset or empty, the system's zone (`/etc/localtime`) applies, as for glibc.
package enum LocalZone {
    package static func check(_ environment: [String: String]) throws(CommandLineError) {
        guard let value = environment["TZ"], !value.isEmpty else { return }
        do {
            _ = try TimeZoneRules.fromEnvironmentValue(value)
        } catch {
            switch error {
            case .unknownZone:
                throw .usage("TZ='\(value.prefix(64))' names no time zone; set it to an IANA name such as Europe/Lisbon "
                             + "(see \(TimeZoneRules.databaseDirectory)) or a POSIX rule such as UTC0, or unset it")
            case .unreadableZone:
                throw .usage("TZ='\(value.prefix(64))': \(error)")
            }
        }
    }
}
