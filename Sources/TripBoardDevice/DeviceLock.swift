public import TripBoardKeys
public import TripBoardSystem

/// The device's lock, as a phone has one: a passcode, the keybag it opens, and the unlocked class
/// keys held by the kernel (keyrings(7)) — never on disk.
///
/// The kernel holds them in one keyring per device, `tripboard:device:<fingerprint>`, linked into
/// the user keyring (`@u`, shared by every process and login session of the user) or, with
/// `TRIPBOARD_KEYRING=session`, into the session keyring (tests). Its keys are named
/// `tripboard:<keybag id>:<class>`; an unlock puts `complete`, `complete-unless-open` (the private
/// half) and `until-first-unlock` there, plus `tripboard:<keybag id>:unlocked` (when the auto-lock
/// falls due), the first two and the last with the auto-lock as their kernel timeout, so the
/// device locks at the deadline whether or not any process runs; a lock invalidates them. The
/// `until-first-unlock` key stays until the user keyring goes: at the user's last logout or reboot.
///
/// Every change to the keybag or the attempt record is made under an exclusive flock on
/// `device.lock` in the device directory.
public final class DeviceLock {
    /// The shortest passcode accepted, in characters (Unicode scalars).
    public static let minimumPasscodeLength = 6
    /// The record of wrong passcodes, in the device directory.
    public static let attemptsFileName = "passcode-attempts.json"
    static let lockFileName = "device.lock"

    public let device: DeviceKey
    public let anchor: KernelKeyring.Anchor
    let directory: Directory
    /// The clock of the attempt record (`Timestamp.now` outside tests).
    let clock: @Sendable () -> Timestamp
    /// How a passcode becomes its key: given by a process that sets, changes, resets or unlocks
    /// with the passcode; nil for one that only reads class keys (a sealed file's reader).
    let passcodeDerivation: PasscodeDerivation?

    /// `passcodeDerivation`: Argon2id (`TripBoardSodium`'s `Argon2id.deriveKey`), for the passcode
    /// operations; without it, only the class keys the lock holds are read.
    public init(device: DeviceKey, anchor: KernelKeyring.Anchor, clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
                passcodeDerivation: PasscodeDerivation? = nil) throws {
        self.device = device
        self.anchor = anchor
        self.directory = try Directory.open(path: device.location.directory)
        self.clock = clock
        self.passcodeDerivation = passcodeDerivation
    }

    /// Derives the key a passcode opens the keybag with, under the keybag's Argon2id parameters.
    /// A parameter, not a call into the password hasher, so that this module — which every
    /// process that reads a sealed file links, the share extension among them — carries none.
    public typealias PasscodeDerivation = @Sendable (SecureBytes, PasswordHashParameters) throws -> SecureBytes

    /// `TRIPBOARD_KEYRING`: `user` (the default) or `session`.
    public static func anchor(environment: [String: String]) throws -> KernelKeyring.Anchor {
        switch environment["TRIPBOARD_KEYRING"] ?? "" {
        case "", "user": .user
        case "session": .session
        case let other: throw DeviceError.invalidArgument("TRIPBOARD_KEYRING must be user or session, not '\(terminalSafe(String(other.prefix(40))))'")
        }
    }

    // MARK: - Reading the state

    /// The keybag, or nil when this device has none (it never had a passcode).
    public func keybag() throws -> Keybag? {
        guard let bytes = try keybagBytes() else { return nil }
        // Read every time (another process may have replaced it); decoded — its MAC checked —
        // only when its bytes changed: a bulk reader of sealed files asks once per file.
        if let decoded, decoded.bytes == bytes { return decoded.keybag }
        let keybag = try Keybag.decode(bytes, path: directory.childPath(Keybag.fileName), device: device)
        decoded = (bytes, keybag)
        return keybag
    }

    /// The keybag last decoded, with the bytes it was decoded from.
    private var decoded: (bytes: [UInt8], keybag: Keybag)?

    /// The keybag file's bytes, or nil when there is none: a regular file of this user's that
    /// others cannot read (as `device.key` must be), of at most 64 KiB.
    func keybagBytes() throws -> [UInt8]? {
        let path = directory.childPath(Keybag.fileName)
        let opened: FileDescriptor?
        do {
            opened = try directory.openFileForReadingIfPresent(Keybag.fileName)
        } catch {
            let code = error.code
            guard code == .symbolicLink || code == .notRegularFile else { throw error }
            throw DeviceError.damagedKeybag(path: path, reason: "it is not a regular file (links are not followed in the device directory)")
        }
        guard let file = opened else { return nil }
        let status = try file.status()
        guard status.isOwnedByCurrentUser else { throw DeviceError.insecureDeviceKey(path: path, reason: "it belongs to another user") }
        guard status.permissions & 0o077 == 0 else {
            throw DeviceError.insecureDeviceKey(
                path: path, reason: "group or others may read it (mode \(String(status.permissions, radix: 8))); run chmod 600 on it if you trust it")
        }
        do {
            return try file.readToEnd(limit: 64 << 10)
        } catch {
            guard error.code == .tooLarge else { throw error }
            throw DeviceError.damagedKeybag(path: path, reason: "it is larger than 64 KiB")
        }
    }

    /// The kernel keyring of this device, or nil when there is none (never unlocked since start).
    func deviceKeyring() throws -> KernelKeyring.Serial? {
        do {
            return try KernelKeyring.search(anchor.serial, type: "keyring", description: DeviceLockProbe.keyringName(device: device.fingerprint))
        } catch {
            throw DeviceError.from(error)
        }
    }

    /// The serial of the kernel key `name` for `keybag`, if it is live.
    func kernelKey(_ name: String, keybag: Keybag, in keyring: KernelKeyring.Serial) throws -> KernelKeyring.Serial? {
        do {
            return try KernelKeyring.search(keyring, type: "user", description: DeviceLockProbe.keyName(keybag: keybag.id, name))
        } catch {
            throw DeviceError.from(error)
        }
    }

    /// What the device's lock is now.
    public func status() throws -> DeviceStatus {
        let attempts = try PasscodeAttempts.read(in: directory, now: clock())
        let stored = try keybag()
        guard let keybag = stored, keybag.passcode != nil else {
            return DeviceStatus(state: .noPasscode, keyring: keyringDescription(), autoLockSeconds: nil, locksAt: nil,
                                failedAttempts: attempts.failures, nextAttemptAt: nil, keybag: stored?.id)
        }
        if let reason = KernelKeyring.unavailability(anchor: anchor) {
            return DeviceStatus(state: .keyringUnavailable(reason.description), keyring: "unavailable: \(reason)", autoLockSeconds: keybag.autoLockSeconds,
                                locksAt: nil, failedAttempts: attempts.failures, nextAttemptAt: attempts.nextAttempt(now: clock()), keybag: keybag.id)
        }
        // Told by the keys themselves, not the marker: what a process can read is what counts.
        var state = DeviceStatus.State.lockedSinceStart
        var locksAt: Timestamp?
        if let keyring = try deviceKeyring() {
            let live = { (protection: ProtectionClass) in try self.verifiedKernelKey(protection, keybag: keybag, in: keyring) != nil }
            if try live(.complete) || live(.completeUnlessOpen) {
                state = .unlocked
                locksAt = try kernelKey("unlocked", keybag: keybag, in: keyring).flatMap { try Self.readDeadline($0) }
            } else if try live(.untilFirstUnlock) {
                state = .locked
            }
        }
        return DeviceStatus(state: state, keyring: keyringDescription(), autoLockSeconds: keybag.autoLockSeconds, locksAt: locksAt,
                            failedAttempts: attempts.failures, nextAttemptAt: attempts.nextAttempt(now: clock()), keybag: keybag.id)
    }

    func keyringDescription() -> String { Self.keyringDescription(anchor: anchor) }

    /// Where unlocked keys are held, or `unavailable: <why>`.
    static func keyringDescription(anchor: KernelKeyring.Anchor) -> String {
        if let reason = KernelKeyring.unavailability(anchor: anchor) { return "unavailable: \(reason)" }
        return anchor == .user ? "the user keyring (@u)" : "the session keyring (@s)"
    }

    /// The key of `protection` if this device can use it now: from the keybag for `always` and on a
    /// device without a passcode, else from the kernel. Throws `.locked` or `.notUnlockedSinceStart`
    /// when the kernel does not hold it.
    public func classKey(_ protection: ProtectionClass) throws -> SecureBytes {
        try classKey(protection, creatingKeybag: true)!.key
    }

    /// The key of `protection` and the id of the keybag it belongs to (so that what it sealed can
    /// tell a keybag replaced by `passcode reset` from damage). Without a keybag: one is made when
    /// `creatingKeybag` (a device that never had a passcode has none until something needs a
    /// class key), else nil.
    public func classKey(_ protection: ProtectionClass, creatingKeybag: Bool) throws -> (key: SecureBytes, keybag: String)? {
        let keybag: Keybag
        if let existing = try self.keybag() {
            keybag = existing
        } else {
            guard creatingKeybag else { return nil }
            keybag = try exclusively { try existingOrNewKeybag(writing: true).0 }
        }
        return (try classKey(protection, of: keybag), keybag.id)
    }

    /// The keybag, made now (without a passcode) when this device never had one: what
    /// `complete-unless-open` seals to needs only its public key.
    public func keybagMadeIfAbsent() throws -> Keybag {
        if let existing = try keybag() { return existing }
        return try exclusively { try keybag() ?? existingOrNewKeybag(writing: true).0 }
    }

    /// The key of `protection` that sealed what names the keybag `keybagID`: this keybag's, or an
    /// earlier one's it replaced at a `passcode set` or `change` (opened with this one's key of
    /// the class, so only while the class is open); nil when there is no keybag or it never
    /// replaced `keybagID` (a `passcode reset` did, or another device's).
    public func classKey(_ protection: ProtectionClass, sealedUnder keybagID: String) throws -> SecureBytes? {
        guard let keybag = try self.keybag() else { return nil }
        guard keybagID == keybag.id || keybag.previous.contains(where: { $0.id == keybagID }) else { return nil }
        let current = try classKey(protection, of: keybag)
        if keybagID == keybag.id { return current }
        do {
            return try keybag.previousKey(protection, keybag: keybagID, currentKey: current)
        } catch is CryptoError {
            throw DeviceError.damagedKeybag(path: directory.childPath(Keybag.fileName), reason: "an earlier keybag's key does not open")
        }
    }

    private func classKey(_ protection: ProtectionClass, of keybag: Keybag) throws -> SecureBytes {
        if keybag.passcode == nil || protection == .always {
            return try open(keybag, [protection], passcodeKey: nil)[protection]!
        }
        try requireKeyring()
        guard let keyring = try deviceKeyring(), try verifiedKernelKey(.untilFirstUnlock, keybag: keybag, in: keyring) != nil else {
            throw DeviceError.notUnlockedSinceStart
        }
        guard let key = try verifiedKernelKey(protection, keybag: keybag, in: keyring) else { throw DeviceError.locked }
        return key
    }

    /// The kernel's key of `protection` for `keybag`, when it is there and is the keybag's own
    /// (its check value matches): a key planted in the keyring under the right name is not taken,
    /// neither for data nor for the state.
    func verifiedKernelKey(_ protection: ProtectionClass, keybag: Keybag, in keyring: KernelKeyring.Serial) throws -> SecureBytes? {
        guard let serial = try kernelKey(protection.rawValue, keybag: keybag, in: keyring), let key = try Self.readKey(serial),
              try keybag.isOwnKey(key, of: protection) else { return nil }
        return key
    }

    // MARK: - Changing it

    /// Sets a passcode on a device without one: the class keys (made now if there is no keybag
    /// yet) are wrapped under it, and the device is left unlocked with the auto-lock running.
    public func setPasscode(_ passcode: SecureBytes, autoLockSeconds: UInt32?? = nil) throws -> DeviceStatus {
        try Self.checkNewPasscode(passcode)
        try requireKeyring()
        return try exclusively {
            let existed = try keybag() != nil
            var (keybag, keys) = try existingOrNewKeybag()
            if let autoLockSeconds { keybag.autoLockSeconds = autoLockSeconds }
            let derived = try derive(passcode, parameters: .moderate())
            if existed {
                // New class keys from here on: a copy of the keybag without a passcode (an old
                // backup of the device directory) must open nothing sealed from now on.
                (keybag, keys) = try keybag.rotated(keys: keys, device: device, passcode: derived)
            } else {
                try keybag.wrap(keys, device: device, passcode: derived)
            }
            // The keys first: if the kernel refuses them, no passcode is set either.
            try putInKernel(keys, keybag: keybag)
            try write(keybag)
            return try status()
        }
    }

    /// Changes the passcode, with new class keys: what was sealed under the old ones stays
    /// readable through the new keybag (`Keybag.previous`), and a copy of the old keybag with the
    /// old passcode opens nothing sealed from now on. The device is left unlocked under the new
    /// keys, the auto-lock running. A wrong current passcode counts as a failed attempt.
    public func changePasscode(current: SecureBytes, new: SecureBytes) throws {
        try Self.checkNewPasscode(new)
        try requireKeyring()
        try exclusively {
            guard let old = try keybag(), old.passcode != nil else { throw DeviceError.noPasscode }
            let keys = try openCounting(old, ProtectionClass.allCases, passcode: current)
            let (keybag, newKeys) = try old.rotated(keys: keys, device: device, passcode: try derive(new, parameters: .moderate()))
            try putInKernel(newKeys, keybag: keybag)
            try write(keybag)
            _ = try? dropFromKernel(keybag: old, classes: nil)  // the new keys are in; the old ones only go sooner
        }
    }

    /// Removes the passcode: the keys are wrapped under the device key alone, and the kernel's
    /// copies are dropped (they are not needed: the device is always unlocked from now on).
    public func removePasscode(_ current: SecureBytes) throws {
        try exclusively {
            guard var keybag = try keybag(), keybag.passcode != nil else { throw DeviceError.noPasscode }
            let keys = try openCounting(keybag, ProtectionClass.allCases, passcode: current)
            try keybag.wrap(keys, device: device, passcode: nil)
            try write(keybag)
            if KernelKeyring.unavailability(anchor: anchor) == nil { try dropFromKernel(keybag: keybag, classes: nil) }
        }
    }

    /// A forgotten passcode: a new keybag with new class keys under `new`, the device left
    /// unlocked. The old keybag is copied aside first, as `keybag.<id>.retired.json` (a name never
    /// taken over: `-2`, `-3`… when it is), so that with the old passcode it still opens what was
    /// sealed under it; then the new one replaces it in one rename, so the device is never without
    /// a passcode. Returns the copy's name.
    public func resetPasscode(new: SecureBytes) throws -> String? {
        try Self.checkNewPasscode(new)
        try requireKeyring()
        return try exclusively {
            let oldBytes = try? keybagBytes()
            let old = try? keybag()
            var (keybag, keys) = try Keybag.make(device: device, passcode: nil,
                                                 autoLockSeconds: old.map { $0.autoLockSeconds } ?? Keybag.defaultAutoLockSeconds)
            try keybag.wrap(keys, device: device, passcode: try derive(new, parameters: .moderate()))
            var retiredName: String?
            if let oldBytes = oldBytes ?? nil {
                retiredName = try keepAside(oldBytes, named: "keybag.\(old?.id ?? "unreadable-\(clock().secondsSinceEpoch)").retired")
            } else if try directory.status(of: Keybag.fileName) != nil {
                // Not even readable as bytes (not a regular file): kept where it is under another name.
                let name = "keybag.unreadable-\(clock().secondsSinceEpoch).retired"
                guard try directory.renameUnlessExists(Keybag.fileName, to: directory, as: name) else {
                    throw DeviceError.invalidArgument("\(directory.childPath(name)) exists already; nothing was changed")
                }
                retiredName = name
            }
            try putInKernel(keys, keybag: keybag)
            try write(keybag)
            if let old { _ = try? dropFromKernel(keybag: old, classes: nil) }
            try PasscodeAttempts.clear(in: directory)
            return retiredName
        }
    }

    /// Writes `bytes` under `stem.json`, else `stem-2.json`, `stem-3.json`…: never over a file.
    func keepAside(_ bytes: [UInt8], named stem: String) throws -> String {
        for attempt in 1...100 {
            let name = stem + (attempt == 1 ? "" : "-\(attempt)") + ".json"
            let temporary = Directory.uniqueTemporaryName(for: name)
            let file = try directory.openFile(temporary, .writeOnly, creating: .newFile, mode: 0o600)
            do {
                try file.write(all: bytes)
                try file.synchronize()
                let placed = try directory.linkUnlessExists(temporary, as: name)
                try directory.removeFile(temporary)
                if placed {
                    try directory.synchronize()
                    return name
                }
            } catch {
                try? directory.removeFile(temporary)
                throw error
            }
        }
        throw DeviceError.invalidArgument("too many retired keybags named \(stem)*.json in \(directory.path); nothing was changed")
    }

    /// Unlocks the device with its passcode: the keys of `complete`, `complete-unless-open` and
    /// `until-first-unlock` go to the kernel, the first two (and the marker) for the auto-lock's
    /// time. `autoLockSeconds` overrides the keybag's for this unlock (`.some(nil)`: never).
    public func unlock(_ passcode: SecureBytes, autoLockSeconds: UInt32?? = nil) throws -> DeviceStatus {
        try exclusively {
            guard var keybag = try keybag(), keybag.passcode != nil else { throw DeviceError.noPasscode }
            try requireKeyring()
            let keys = try openCounting(keybag, [.complete, .completeUnlessOpen, .untilFirstUnlock], passcode: passcode)
            if let autoLockSeconds { keybag.autoLockSeconds = autoLockSeconds }
            try putInKernel(keys, keybag: keybag)
            return try status()
        }
    }

    /// Locks the device now: the kernel's `complete` and `complete-unless-open` keys are
    /// invalidated (the kernel wipes them); `until-first-unlock` stays. True when they were
    /// there (false: the device was locked already, here).
    @discardableResult
    public func lock() throws -> Bool {
        guard let keybag = try keybag(), keybag.passcode != nil else { throw DeviceError.noPasscode }
        return try dropFromKernel(keybag: keybag, classes: ProtectionClass.allCases.filter(\.dropsAtLock))
    }

    /// Changes the auto-lock the next unlocks use (`nil`: never); an unlocked device keeps the
    /// deadline it has until it locks.
    public func setAutoLock(_ seconds: UInt32?) throws {
        try exclusively {
            guard var keybag = try keybag(), keybag.passcode != nil else { throw DeviceError.noPasscode }
            // Only the one who unlocked may lengthen the time the device stays unlocked.
            switch try status().state {
            case .unlocked: break
            case .lockedSinceStart: throw DeviceError.notUnlockedSinceStart
            case .keyringUnavailable(let reason): throw DeviceError.keyringUnavailable(reason: reason)
            default: throw DeviceError.locked
            }
            keybag.autoLockSeconds = seconds
            try write(keybag)
        }
    }

    // MARK: - Pieces

    func exclusively<Result>(_ body: () throws -> Result) throws -> Result {
        let file = try directory.openFile(Self.lockFileName, .readWrite, creating: .ifAbsent, mode: 0o600)
        let lock = FileLock(descriptor: file)
        try lock.lock(.exclusive, timeout: 5)
        defer { lock.unlock() }
        return try body()
    }

    func requireKeyring() throws { try Self.requireKeyring(anchor: anchor) }

    /// Throws `.keyringUnavailable` when this process cannot use the kernel keyring at `anchor`:
    /// asked before a passcode is read, so that nobody types one for nothing.
    public static func requireKeyring(anchor: KernelKeyring.Anchor) throws {
        if let reason = KernelKeyring.unavailability(anchor: anchor) { throw DeviceError.keyringUnavailable(reason: reason.description) }
    }

    /// The keybag without a passcode and its keys, made now when there is none (and written when
    /// `writing`); call under `exclusively`.
    func existingOrNewKeybag(writing: Bool = false) throws -> (Keybag, Keybag.ClassKeys) {
        if let keybag = try keybag() {
            guard keybag.passcode == nil else { throw DeviceError.passcodeAlreadySet }
            return (keybag, try open(keybag, ProtectionClass.allCases, passcodeKey: nil))
        }
        if try directory.status(of: Self.keybagMadeFileName) != nil {
            throw DeviceError.keybagMissing(path: directory.childPath(Keybag.fileName))
        }
        let made = try Keybag.make(device: device, passcode: nil, autoLockSeconds: Keybag.defaultAutoLockSeconds)
        if writing { try write(made.0) }
        return made
    }

    /// `.keybagMissing` when this device made a keybag (its marker is there) that is gone now.
    func missingKeybag() throws -> DeviceError? {
        guard try keybagBytes() == nil, try directory.status(of: Self.keybagMadeFileName) != nil else { return nil }
        return .keybagMissing(path: directory.childPath(Keybag.fileName))
    }

    func write(_ keybag: Keybag) throws {
        try directory.writeAtomically(try keybag.encoded(device: device), to: Keybag.fileName, staging: directory)
        if try directory.status(of: Self.keybagMadeFileName) == nil {
            _ = try directory.openFile(Self.keybagMadeFileName, .writeOnly, creating: .ifAbsent, mode: 0o600)
            try directory.synchronize()
        }
    }

    /// An empty file beside the keybag, made with the first one: a keybag missing where one was
    /// made is said (`.keybagMissing`), never replaced by a new one without a passcode behind the
    /// user's back — whichever container asks, and for `passcode set` too.
    static let keybagMadeFileName = "keybag.made"

    /// Opens `classes` without a passcode (a keybag without one, or `always`).
    func open(_ keybag: Keybag, _ classes: [ProtectionClass], passcodeKey: SecureBytes?) throws -> Keybag.ClassKeys {
        do {
            return try keybag.open(classes, device: device, passcodeKey: passcodeKey)
        } catch CryptoError.authenticationFailed {
            throw DeviceError.damagedKeybag(path: directory.childPath(Keybag.fileName), reason: "a class key does not open under the device key")
        }
    }

    /// Opens `classes` with `passcode`, after the attempt record allows a try; a failure is
    /// recorded (and the next allowed time said), a success clears the record.
    func openCounting(_ keybag: Keybag, _ classes: [ProtectionClass], passcode: SecureBytes) throws -> Keybag.ClassKeys {
        let now = clock()
        var attempts = try PasscodeAttempts.read(in: directory, now: now)
        // A record that cannot be read is written as the longest wait from now, so that it ends.
        if attempts.isDamaged { try attempts.write(in: directory) }
        if let retryAt = attempts.nextAttempt(now: now) { throw DeviceError.attemptsDelayed(failures: attempts.failures, retryAt: retryAt) }
        let derived = try derive(passcode, parameters: keybag.passcode!)
        do {
            let keys = try keybag.open(classes, device: device, passcodeKey: derived.key)
            if attempts.failures > 0 { try PasscodeAttempts.clear(in: directory) }
            return keys
        } catch CryptoError.authenticationFailed {
            attempts.recordFailure(at: now)
            try attempts.write(in: directory)
            throw DeviceError.wrongPasscode(failures: attempts.failures, nextAttempt: attempts.nextAttempt(now: now))
        }
    }

    func derive(_ passcode: SecureBytes, parameters: PasswordHashParameters) throws -> (key: SecureBytes, parameters: PasswordHashParameters) {
        guard let passcodeDerivation else { preconditionFailure("a DeviceLock that uses the passcode is made with its derivation") }
        return (try passcodeDerivation(passcode, parameters), parameters)
    }

    /// At least `minimumPasscodeLength` characters of UTF-8 text, without control characters.
    public static func checkNewPasscode(_ passcode: SecureBytes) throws {
        // Decoded scalar by scalar in place: a String would be a copy no one can wipe.
        let (characters, valid) = passcode.withUnsafeBytes { bytes -> (Int, Bool) in
            var iterator = bytes.makeIterator()
            var decoder = UTF8()
            var count = 0
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) { return (count, false) }
                    count += 1
                case .emptyInput: return (count, true)
                case .error: return (count, false)
                }
            }
        }
        guard valid else { throw DeviceError.invalidPasscode("a passcode is UTF-8 text without control characters") }
        guard characters >= minimumPasscodeLength else {
            throw DeviceError.invalidPasscode("a passcode has at least \(minimumPasscodeLength) characters")
        }
    }
}
