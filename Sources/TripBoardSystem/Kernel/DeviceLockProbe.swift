/// The part of the device lock a process without libsodium or the device key may ask — the
/// widget's question: has this device been unlocked since the computer started? Answered from the
/// keybag's public fields (its id, the device's fingerprint, whether a passcode is set:
/// docs/security.md, "The keybag") and from whether the kernel holds the device's
/// `until-first-unlock` key. Reads one small file and asks the kernel; writes nothing, creates
/// nothing. The names of the kernel's keyring and keys are made here for `DeviceLock` too.
public enum DeviceLockProbe {
    /// The device directory the environment names: `TRIPBOARD_DEVICE_DIR` ›
    /// `$XDG_STATE_HOME/tripboard` › `~/.local/state/tripboard`; nil when none is absolute.
    public static func deviceDirectory(environment: [String: String]) -> String? {
        if let explicit = environment["TRIPBOARD_DEVICE_DIR"], !explicit.isEmpty { return explicit }
        if let stateHome = environment["XDG_STATE_HOME"], stateHome.hasPrefix("/") { return stateHome + "/tripboard" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/tripboard" }
        return nil
    }

    /// The keyring of the device whose fingerprint is `fingerprint`.
    public static func keyringName(device fingerprint: String) -> String { "tripboard:device:" + fingerprint }

    /// The kernel key `name` (a class, or `unlocked`) of the keybag `keybag`.
    public static func keyName(keybag: String, _ name: String) -> String { "tripboard:\(keybag):\(name)" }

    /// The keybag's file in the device directory.
    public static let keybagFileName = "keybag.json"

    /// True when the device has a passcode and the kernel holds none of its keys: it has not
    /// been unlocked since the computer started (or its user keyring went). False on a device
    /// without a passcode (no keybag, or one without). When the question cannot be answered — a
    /// keybag that cannot be read, a kernel that refuses — true: the answer that shows nothing.
    public static func awaitsFirstUnlock(environment: [String: String]) -> Bool {
        guard let path = deviceDirectory(environment: environment) else { return false }
        guard let read = publicFields(directory: path) else { return true }
        guard let fields = read, fields.hasPasscode else { return false }
        let anchor: KernelKeyring.Anchor = environment["TRIPBOARD_KEYRING"] == "session" ? .session : .user
        do {
            guard let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: keyringName(device: fields.device)) else {
                return true
            }
            return try KernelKeyring.search(keyring, type: "user", description: keyName(keybag: fields.id, "until-first-unlock")) == nil
        } catch {
            return true
        }
    }

    /// The keybag's id, device and whether a passcode is set: `.some(nil)` when there is no
    /// keybag, nil when there is one that is not a small regular file of JSON with those fields.
    static func publicFields(directory path: String) -> (id: String, device: String, hasPasscode: Bool)?? {
        do {
            guard let directory = try Directory.openIfPresent(path: path),
                  let file = try directory.openFileForReadingIfPresent(keybagFileName) else { return .some(nil) }
            // Read from the parsed document, not through `Codable` (the widget's start-up).
            let document = try JSONValue.parse(try file.readToEnd(limit: 64 << 10))
            let hex = { (text: String) in text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
            guard case .string(let id)? = document["id"], case .string(let device)? = document["device"], hex(id), hex(device) else { return nil }
            // Any value but null: the passcode's parameters are `DeviceLock`'s to check.
            let passcode = document["passcode"]
            return (id, device, passcode != nil && passcode != .null)
        } catch {
            return nil
        }
    }
}
