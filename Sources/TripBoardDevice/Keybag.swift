public import TripBoardKeys
import TripBoardSystem

/// The keybag: one random key per protection class, each stored only wrapped, in `keybag.json` in
/// the device directory — never in the container, a backup or on a server. docs/security.md
/// ("The keybag") specifies it byte by byte:
///
/// - `always` is wrapped under the device key alone, so it opens at any time on this device;
/// - the others under a key derived from the passcode (Argon2id) *and* the device key, so neither a
///   copied container with the passcode, nor the device directory without it, opens them; without
///   a passcode, under the device key alone (the device is then always unlocked, as a phone
///   without a passcode is);
/// - `complete-unless-open` is an X25519 key pair: its public half is in the clear (anything can be
///   sealed to it while locked), its private half wrapped like the other keys.
public struct Keybag: Sendable, Equatable {
    /// The file's name in the device directory.
    public static let fileName = DeviceLockProbe.keybagFileName
    /// The format this build writes; it reads 1 too (no check values, no earlier generations).
    public static let format = 2
    /// `--auto-lock` bounds: a kernel key timeout is whole seconds; a week is the longest.
    public static let autoLockRange: ClosedRange<UInt32> = 1...604_800
    /// The auto-lock of a new keybag: five minutes after unlocking.
    public static let defaultAutoLockSeconds: UInt32 = 300

    /// One wrapped key: `ciphertext` = XChaCha20-Poly1305 of the 32-byte key (and its tag).
    public struct Wrap: Sendable, Equatable {
        public var nonce: [UInt8]
        public var ciphertext: [UInt8]
    }

    /// Random 16 bytes in hex: what data sealed under these class keys names, so that after a
    /// `passcode reset` it can tell it was sealed under a keybag that is gone.
    public var id: String
    /// The fingerprint of the device key the keybag was made for.
    public var device: String
    /// The passcode's Argon2id parameters; `nil` when the device has no passcode.
    public var passcode: PasswordHashParameters?
    /// Seconds from an unlock to the automatic lock; `nil`: never.
    public var autoLockSeconds: UInt32?
    /// The public half of the `complete-unless-open` key pair.
    public var completeUnlessOpenPublicKey: [UInt8]
    /// Every class's wrapped key (for `complete-unless-open`, its private half).
    public var wraps: [ProtectionClass: Wrap]
    /// Every class key's check value (`checkValue`), so that a key read from the kernel is known to
    /// be this keybag's and not one planted there; empty in a format-1 keybag.
    public var checks: [ProtectionClass: [UInt8]] = [:]
    /// The class keys of the keybags this one replaced at a `passcode set` or `change` (the newest
    /// first), each wrapped under this keybag's key of the same class: what was sealed under them
    /// still opens, only while that class is open, and a copy of an earlier keybag opens nothing
    /// sealed since.
    public var previous: [Generation] = []

    /// An earlier keybag's class keys, kept in the keybag that replaced it.
    public struct Generation: Sendable, Equatable {
        public var id: String
        public var wraps: [ProtectionClass: Wrap]
    }

    /// How many earlier keybags a rotation keeps.
    public static let previousLimit = 32


    /// The keys a keybag's wraps open, in guarded memory.
    public typealias ClassKeys = [ProtectionClass: SecureBytes]

    /// A new keybag with new random class keys, wrapped under `passcodeKey` (nil: no passcode) and
    /// the device key. Returns the keys too, for a caller that unlocks at once.
    public static func make(device: DeviceKey, passcode: (key: SecureBytes, parameters: PasswordHashParameters)?,
                            autoLockSeconds: UInt32?) throws -> (Keybag, ClassKeys) {
        let pair = try SealedBox.makeKeyPair()
        var keys: ClassKeys = [.completeUnlessOpen: pair.privateKey]
        for protection in ProtectionClass.allCases where protection != .completeUnlessOpen {
            keys[protection] = try XChaCha20Poly1305.makeKey()
        }
        var keybag = Keybag(id: Sodium.hexString(Sodium.randomBytes(count: 16)), device: device.fingerprint, passcode: nil,
                            autoLockSeconds: autoLockSeconds, completeUnlessOpenPublicKey: pair.publicKey, wraps: [:])
        try keybag.wrap(keys, device: device, passcode: passcode)
        return (keybag, keys)
    }

    /// A new keybag with new class keys that replaces `self` (whose keys are `keys`): what was
    /// sealed under this one and the ones before it stays readable through `previous`, wrapped
    /// under the new keys; the auto-lock is kept.
    public func rotated(keys: ClassKeys, device: DeviceKey, passcode: (key: SecureBytes, parameters: PasswordHashParameters)?) throws
        -> (Keybag, ClassKeys) {
        var (next, newKeys) = try Keybag.make(device: device, passcode: passcode, autoLockSeconds: autoLockSeconds)
        var generations = [Generation(id: id, wraps: try Self.wrapGeneration(id: id, keys: keys, under: newKeys, newID: next.id, device: device))]
        for earlier in previous {
            let earlierKeys = try openGeneration(earlier, currentKeys: keys)
            generations.append(Generation(id: earlier.id, wraps: try Self.wrapGeneration(id: earlier.id, keys: earlierKeys, under: newKeys,
                                                                                            newID: next.id, device: device)))
        }
        // The newest 32: the file stays far below its 64 KiB bound however often the passcode
        // changes (what only an older generation sealed, in a keychain not opened since, is lost).
        next.previous = Array(generations.prefix(Self.previousLimit))
        return (next, newKeys)
    }

    /// The key of `protection` of the earlier keybag `id`, from this keybag's key of that class;
    /// nil when `id` is not one this keybag replaced.
    public func previousKey(_ protection: ProtectionClass, keybag id: String, currentKey: SecureBytes) throws -> SecureBytes? {
        guard let generation = previous.first(where: { $0.id == id }), let wrap = generation.wraps[protection] else { return nil }
        return try XChaCha20Poly1305.open(ciphertext: wrap.ciphertext, nonce: wrap.nonce, key: try Self.previousWrappingKey(currentKey),
                                          associatedData: Self.previousAssociatedData(newID: self.id, oldID: id, device: device, protection))
    }

    /// Every class key of `generation`, from this keybag's `currentKeys`.
    func openGeneration(_ generation: Generation, currentKeys: ClassKeys) throws -> ClassKeys {
        var keys: ClassKeys = [:]
        for protection in ProtectionClass.allCases {
            guard let current = currentKeys[protection] else { continue }
            keys[protection] = try previousKey(protection, keybag: generation.id, currentKey: current)
        }
        return keys
    }

    static func wrapGeneration(id: String, keys: ClassKeys, under newKeys: ClassKeys, newID: String, device: DeviceKey) throws -> [ProtectionClass: Wrap] {
        var wraps: [ProtectionClass: Wrap] = [:]
        for (protection, key) in keys {
            guard let wrappingKey = newKeys[protection] else { continue }
            let sealed = try XChaCha20Poly1305.seal(plaintext: key, key: try previousWrappingKey(wrappingKey),
                                                    associatedData: previousAssociatedData(newID: newID, oldID: id, device: device.fingerprint, protection))
            wraps[protection] = Wrap(nonce: sealed.nonce, ciphertext: sealed.ciphertext)
        }
        return wraps
    }

    /// `BLAKE2b-256("tripboard keybag previous v1", key = the current class key)`.
    static func previousWrappingKey(_ classKey: SecureBytes) throws -> SecureBytes {
        var digest = try blake2b(Array("tripboard keybag previous v1".utf8), outputLength: 32, key: classKey)
        defer { for index in digest.indices { digest[index] = 0 } }
        return try SecureBytes(copying: digest)
    }

    /// `"tripboard-keybag-previous/v1"`, the new keybag's id, the old one's, the device, the class.
    static func previousAssociatedData(newID: String, oldID: String, device: String, _ protection: ProtectionClass) -> [UInt8] {
        lengthPrefixed(["tripboard-keybag-previous/v1", newID, oldID, device, protection.rawValue])
    }

    /// `BLAKE2b-128("tripboard class key check v1", key = the class key)`: says whether a key is
    /// this keybag's without revealing anything of it.
    public static func checkValue(of key: SecureBytes) throws -> [UInt8] {
        try blake2b(Array("tripboard class key check v1".utf8), outputLength: 16, key: key)
    }

    /// Whether `key` is this keybag's key of `protection` (true for a format-1 keybag, which has
    /// no check values: its keys are taken as the kernel holds them).
    public func isOwnKey(_ key: SecureBytes, of protection: ProtectionClass) throws -> Bool {
        guard let check = checks[protection] else { return checks.isEmpty }
        return try Sodium.constantTimeEqual(check, Self.checkValue(of: key))
    }

    /// Wraps `keys` again, under `passcode` (nil: the device key alone), with fresh nonces; the
    /// keys themselves do not change, so what was sealed under them stays readable.
    public mutating func wrap(_ keys: ClassKeys, device: DeviceKey, passcode: (key: SecureBytes, parameters: PasswordHashParameters)?) throws {
        precondition(Set(keys.keys) == Set(ProtectionClass.allCases), "every class key is wrapped")
        self.passcode = passcode?.parameters
        var wraps: [ProtectionClass: Wrap] = [:]
        for (protection, key) in keys {
            checks[protection] = try Self.checkValue(of: key)
            let wrappingKey = try Self.wrappingKey(for: protection, device: device, passcodeKey: passcode?.key)
            let sealed = try XChaCha20Poly1305.seal(plaintext: key, key: wrappingKey,
                                                    associatedData: associatedData(protection, underPasscode: passcode != nil && protection.needsPasscode))
            wraps[protection] = Wrap(nonce: sealed.nonce, ciphertext: sealed.ciphertext)
        }
        self.wraps = wraps
    }

    /// The keys of `classes`, unwrapped with `passcodeKey` (ignored for `always`, and required
    /// when the keybag has a passcode). `.wrongPasscode`-worthy failures come out as
    /// `CryptoError.authenticationFailed`.
    public func open(_ classes: [ProtectionClass], device: DeviceKey, passcodeKey: SecureBytes?) throws -> ClassKeys {
        var keys: ClassKeys = [:]
        for protection in classes {
            guard let wrap = wraps[protection] else { continue }
            let underPasscode = passcode != nil && protection.needsPasscode
            let wrappingKey = try Self.wrappingKey(for: protection, device: device, passcodeKey: underPasscode ? passcodeKey : nil)
            keys[protection] = try XChaCha20Poly1305.open(ciphertext: wrap.ciphertext, nonce: wrap.nonce, key: wrappingKey,
                                                          associatedData: associatedData(protection, underPasscode: underPasscode))
        }
        if let privateKey = keys[.completeUnlessOpen], try SealedBox.publicKey(of: privateKey) != completeUnlessOpenPublicKey {
            throw CryptoError.authenticationFailed
        }
        return keys
    }

    /// `KDF(deviceKey, 3, "TBkeybag")`, and with a passcode `BLAKE2b("tripboard keybag passcode v1"
    /// || passcodeKey, 32, key = that)`.
    static func wrappingKey(for protection: ProtectionClass, device: DeviceKey, passcodeKey: SecureBytes?) throws -> SecureBytes {
        let deviceBagKey = try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 3, context: "TBkeybag")
        guard protection.needsPasscode, let passcodeKey else { return deviceBagKey }
        return try KeyDerivation.combine(deviceBagKey, with: passcodeKey, label: "tripboard keybag passcode v1")
    }

    /// `"tripboard-keybag/v1"`, the keybag id, the device fingerprint, the class, and `passcode` or
    /// `device` (what the wrapping key came from): each as a 4-byte big-endian length and its bytes.
    func associatedData(_ protection: ProtectionClass, underPasscode: Bool) -> [UInt8] {
        Self.lengthPrefixed(["tripboard-keybag/v1", id, device, protection.rawValue, underPasscode ? "passcode" : "device"])
    }

    static func lengthPrefixed(_ fields: [String]) -> [UInt8] { Sodium.lengthPrefixed(fields) }
}

// MARK: - The file

extension Keybag {
    private struct Document: Codable {
        var format: Int
        var id: String
        var device: String
        var passcode: PasswordHashParameters?
        var autoLockSeconds: UInt32?
        var completeUnlessOpenPublicKey: String
        var classes: [Entry]
        var previous: [PreviousEntry]?
        var mac: String
    }

    private struct Entry: Codable {
        var `class`: String
        var nonce: String
        var wrapped: String
        var check: String?
    }

    private struct PreviousEntry: Codable {
        var id: String
        var classes: [Entry]
    }

    /// Reading the document without `Codable`: every reader of the keybag (the widget first) pays
    /// for it at start-up, and a decoder's generic containers cost more than the rest of the read
    /// (docs/performance.md). The same shape as `Document`'s synthesized `Decodable`: unknown
    /// members ignored, `null` for an absent optional.
    private struct Shape: Error, CustomStringConvertible {
        var description: String
    }

    private static func document(_ value: JSONValue) throws -> Document {
        func member(_ object: JSONValue, _ key: String) -> JSONValue? {
            guard let found = object[key], found != .null else { return nil }
            return found
        }
        func text(_ object: JSONValue, _ key: String) throws -> String {
            guard case .string(let text)? = member(object, key) else { throw Shape(description: "'\(key)' is not a text") }
            return text
        }
        func optionalText(_ object: JSONValue, _ key: String) throws -> String? {
            member(object, key) == nil ? nil : try text(object, key)
        }
        func integer<T: FixedWidthInteger>(_ object: JSONValue, _ key: String, as type: T.Type) throws -> T? {
            guard let found = member(object, key) else { return nil }
            guard case .number(let digits) = found, let number = T(digits) else { throw Shape(description: "'\(key)' is not an integer") }
            return number
        }
        func array(_ object: JSONValue, _ key: String) throws -> [JSONValue]? {
            guard let found = member(object, key) else { return nil }
            guard case .array(let elements) = found else { throw Shape(description: "'\(key)' is not an array") }
            return elements
        }
        func entries(_ elements: [JSONValue]) throws -> [Entry] {
            try elements.map { try Entry(class: text($0, "class"), nonce: text($0, "nonce"), wrapped: text($0, "wrapped"), check: optionalText($0, "check")) }
        }
        guard case .object = value else { throw Shape(description: "not an object") }
        guard let format = try integer(value, "format", as: Int.self) else { throw Shape(description: "'format' is missing") }
        guard let classes = try array(value, "classes") else { throw Shape(description: "'classes' is missing") }
        return Document(format: format, id: try text(value, "id"), device: try text(value, "device"),
                        passcode: try member(value, "passcode").map { try JSON.decode(PasswordHashParameters.self, from: $0) },
                        autoLockSeconds: try integer(value, "autoLockSeconds", as: UInt32.self),
                        completeUnlessOpenPublicKey: try text(value, "completeUnlessOpenPublicKey"),
                        classes: try entries(classes),
                        previous: try array(value, "previous").map { try $0.map { PreviousEntry(id: try text($0, "id"), classes: try entries(array($0, "classes") ?? [])) } },
                        mac: try text(value, "mac"))
    }

    /// The format the keybag is written in: 2 once every class has its check value (a format-1
    /// keybag read and written again without new wraps stays format 1).
    var writtenFormat: Int { checks.count == ProtectionClass.allCases.count ? 2 : 1 }

    /// The file's bytes: a JSON object (docs/security.md), with its MAC under the device key.
    public func encoded(device key: DeviceKey) throws -> [UInt8] {
        let format = writtenFormat
        let entries = ProtectionClass.allCases.compactMap { protection in
            wraps[protection].map { Entry(class: protection.rawValue, nonce: Sodium.hexString($0.nonce), wrapped: Sodium.hexString($0.ciphertext),
                                          check: format >= 2 ? checks[protection].map(Sodium.hexString) : nil) }
        }
        let previousEntries = previous.map { generation in
            PreviousEntry(id: generation.id, classes: ProtectionClass.allCases.compactMap { protection in
                generation.wraps[protection].map { Entry(class: protection.rawValue, nonce: Sodium.hexString($0.nonce), wrapped: Sodium.hexString($0.ciphertext)) }
            })
        }
        return try JSON.encode(Document(format: format, id: id, device: device, passcode: passcode, autoLockSeconds: autoLockSeconds,
                                        completeUnlessOpenPublicKey: Sodium.hexString(completeUnlessOpenPublicKey), classes: entries,
                                        previous: format >= 2 ? previousEntries : nil, mac: Sodium.hexString(try mac(device: key, format: format))))
    }

    /// Keyed BLAKE2b-256, under `KDF(deviceKey, 4, "TBkeybgM")`, of every other field: a keybag
    /// changed by hand (a flipped bit, a swapped wrap, a passcode taken out) is damaged before any
    /// passcode is tried, not a wrong passcode that counts toward the waits.
    func mac(device key: DeviceKey, format: Int) throws -> [UInt8] {
        var fields = ["tripboard-keybag-mac/v1", String(format), id, device]
        if let passcode {
            fields += [PasswordHashParameters.algorithm, String(passcode.operationsLimit), String(passcode.memoryLimit), Sodium.hexString(passcode.salt)]
        } else {
            fields += ["", "", "", ""]
        }
        fields += [autoLockSeconds.map(String.init) ?? "", Sodium.hexString(completeUnlessOpenPublicKey)]
        for protection in ProtectionClass.allCases {
            fields += [protection.rawValue, wraps[protection].map { Sodium.hexString($0.nonce) } ?? "",
                       wraps[protection].map { Sodium.hexString($0.ciphertext) } ?? ""]
            if format >= 2 { fields.append(checks[protection].map(Sodium.hexString) ?? "") }
        }
        if format >= 2 {
            fields += ["previous", String(previous.count)]
            for generation in previous {
                fields.append(generation.id)
                for protection in ProtectionClass.allCases {
                    fields += [protection.rawValue, generation.wraps[protection].map { Sodium.hexString($0.nonce) } ?? "",
                               generation.wraps[protection].map { Sodium.hexString($0.ciphertext) } ?? ""]
                }
            }
        }
        let macKey = try KeyDerivation.deriveSubkey(from: key.key, subkeyID: 4, context: "TBkeybgM")
        return try blake2b(Self.lengthPrefixed(fields), outputLength: 32, key: macKey)
    }

    /// A keybag read from `bytes`, checked before anything is derived from it: the format, hex of
    /// the right lengths, every class once, costs within bounds and at least libsodium's moderate
    /// level, an auto-lock within `autoLockRange`, and its MAC under `device`'s key. Anything else
    /// is `.damagedKeybag`; a keybag of another device key is `.keybagOfAnotherDevice`.
    public static func decode(_ bytes: [UInt8], path: String, device key: DeviceKey) throws -> Keybag {
        func damaged(_ reason: String) -> DeviceError { .damagedKeybag(path: path, reason: reason) }
        let document: Document
        do { document = try Self.document(try JSONValue.parse(bytes)) } catch { throw damaged("not a keybag document: \(error)") }
        guard document.format == 1 || document.format == format else {
            throw damaged("format \(document.format), this build reads formats 1 and \(format)")
        }
        guard let id = hex(document.id, count: 16), let device = hex(document.device, count: 16) else {
            throw damaged("the id or the device is not 32 hex digits")
        }
        if let parameters = document.passcode, !parameters.isAtLeastModerate {
            throw damaged("the passcode's Argon2id costs are below the moderate level")
        }
        if let seconds = document.autoLockSeconds, !autoLockRange.contains(seconds) { throw damaged("auto-lock out of range") }
        guard let publicKey = hex(document.completeUnlessOpenPublicKey, count: SealedBox.publicKeyLength) else {
            throw damaged("the complete-unless-open public key is not 64 hex digits")
        }
        func entries(_ list: [Entry], checked: Bool) throws -> ([ProtectionClass: Wrap], [ProtectionClass: [UInt8]]) {
            var wraps: [ProtectionClass: Wrap] = [:]
            var checks: [ProtectionClass: [UInt8]] = [:]
            for entry in list {
                guard let protection = ProtectionClass(rawValue: entry.class) else { throw damaged("unknown class '\(entry.class)'") }
                guard wraps[protection] == nil else { throw damaged("class \(protection) appears twice") }
                guard let nonce = hex(entry.nonce, count: XChaCha20Poly1305.nonceLength),
                      let ciphertext = hex(entry.wrapped, count: 32 + XChaCha20Poly1305.tagLength) else {
                    throw damaged("the wrap of class \(protection) is not of the right length")
                }
                wraps[protection] = Wrap(nonce: nonce, ciphertext: ciphertext)
                if checked {
                    guard let check = entry.check.flatMap({ hex($0, count: 16) }) else { throw damaged("class \(protection) has no check value") }
                    checks[protection] = check
                }
            }
            guard wraps.count == ProtectionClass.allCases.count else { throw damaged("a class key is missing") }
            return (wraps, checks)
        }
        let formatTwo = document.format >= 2
        let (wraps, checks) = try entries(document.classes, checked: formatTwo)
        var generations: [Generation] = []
        for earlier in formatTwo ? document.previous ?? [] : [] {
            guard let earlierID = hex(earlier.id, count: 16) else { throw damaged("an earlier keybag's id is not 32 hex digits") }
            guard earlier.classes.allSatisfy({ $0.check == nil }), Sodium.hexString(earlierID) != Sodium.hexString(id) else {
                throw damaged("an earlier keybag carries a check value or this keybag's own id")
            }
            generations.append(Generation(id: Sodium.hexString(earlierID), wraps: try entries(earlier.classes, checked: false).0))
        }
        guard generations.count <= 64 else { throw damaged("more than 64 earlier keybags") }
        let keybag = Keybag(id: Sodium.hexString(id), device: Sodium.hexString(device), passcode: document.passcode,
                            autoLockSeconds: document.autoLockSeconds, completeUnlessOpenPublicKey: publicKey, wraps: wraps,
                            checks: checks, previous: generations)
        guard keybag.device == key.fingerprint else { throw DeviceError.keybagOfAnotherDevice(path: path) }
        guard let mac = hex(document.mac, count: 32), try Sodium.constantTimeEqual(mac, keybag.mac(device: key, format: document.format)) else {
            throw damaged("its MAC does not match its contents: it was changed by hand or damaged")
        }
        return keybag
    }

    /// Lowercase hex of exactly `count` bytes, else nil.
    private static func hex(_ text: String, count: Int) -> [UInt8]? {
        guard text.utf8.count == count * 2, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return Sodium.bytes(hex: text)
    }
}
