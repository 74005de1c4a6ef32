@testable import TripBoardDevice
import Foundation
import Testing
@testable import TripBoardSodium
@testable import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

/// The keybag's format and its wraps, in-process (docs/security.md, "The keybag").
@Suite struct KeybagTests {
    /// A device whose key is the documented test vector's (device.key 00…1f, machine "machine-one").
    static func vectorDevice(_ temporary: TemporaryDirectory) throws -> DeviceKey {
        try FileManager.default.createDirectory(atPath: temporary.child("device"), withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try temporary.write(Array(0..<32), to: "device/device.key")
        chmod(temporary.child("device/device.key"), 0o600)
        try temporary.write("machine-one\n", to: "machine-id")
        return try #require(try DeviceKey.existing(at: DeviceLocation(directory: temporary.child("device"), machineIDFile: temporary.child("machine-id"))))
    }

    static func hex(_ bytes: SecureBytes) -> String { bytes.withUnsafeBytes { Sodium.hexString(Array($0)) } }

    /// Computed from docs/security.md alone, with Python's hashlib and PyNaCl.
    @Test func theDocumentedTestVectorHolds() throws {
        let temporary = try TemporaryDirectory()
        let device = try Self.vectorDevice(temporary)
        #expect(Self.hex(try Keybag.wrappingKey(for: .always, device: device, passcodeKey: nil))
                == "02a88f815f153311cf0e1acb370ae58166186466dccc96b0e91487bb653d2351")
        let passcodeKey = try SecureBytes(copying: Array(0x20..<0x40) as [UInt8])
        #expect(Self.hex(try Keybag.wrappingKey(for: .complete, device: device, passcodeKey: passcodeKey))
                == "8378e6b5ea70bbd9e9b442dd0e7a0497d2af3748cd8fce15b4da1d3cf1e7ebac")
        // `always` ignores the passcode: it opens at any time.
        #expect(Self.hex(try Keybag.wrappingKey(for: .always, device: device, passcodeKey: passcodeKey))
                == "02a88f815f153311cf0e1acb370ae58166186466dccc96b0e91487bb653d2351")

        let keybag = Keybag(
            id: "000102030405060708090a0b0c0d0e0f", device: device.fingerprint, passcode: .moderate(), autoLockSeconds: 300,
            completeUnlessOpenPublicKey: Array(repeating: 9, count: 32),
            wraps: [.complete: .init(nonce: Array(0..<24), ciphertext: Sodium.bytes(hex: """
                93bfb8f49af5df938498274b50deef4eacd52324a1edc09c62bf861d9f13ad4b6181fcb7361e11e4847daadc61b4d5b6
                """)!),
                    .always: .init(nonce: Array(0..<24), ciphertext: Sodium.bytes(hex: """
                4c225eb683978ae2289e123e8fc9ccecf8d1eaf1c361c5269a6e4275cfaeabbb1cb994692f0ef69a51501c726766d765
                """)!)])
        #expect(Sodium.hexString(keybag.associatedData(.complete, underPasscode: true)) == """
            0000001374726970626f6172642d6b65796261672f763100000020303030313032303330343035303630373038303930613062306330643065306600000020\
            356138313739393665383266653264333934653234656431316138356439396600000008636f6d706c6574650000000870617373636f6465
            """)
        let keys = try keybag.open([.complete, .always], device: device, passcodeKey: passcodeKey)
        #expect(Self.hex(try #require(keys[.complete])) == Sodium.hexString(Array(0x40..<0x60) as [UInt8]))
        #expect(Self.hex(try #require(keys[.always])) == Sodium.hexString(Array(0x40..<0x60) as [UInt8]))
        // The MAC over the fields, for the same keybag without a passcode or an auto-lock.
        var bare = keybag
        (bare.passcode, bare.autoLockSeconds) = (nil, nil)
        #expect(Sodium.hexString(try bare.mac(device: device, format: 1)) == "790d3f76cf678b6bd7057daa1132cd6f26e26f6c04531f39be05759dc7fdca6f")
        // Format 2: check values, and an earlier keybag (id 10…1f, its complete key 60…7f wrapped
        // under this one's complete key 40…5f, nonce 00…17).
        let current = try SecureBytes(copying: Array(0x40..<0x60) as [UInt8])
        let check = try Keybag.checkValue(of: current)
        #expect(Sodium.hexString(check) == "eae27f29197b194063b21f98f246826f")
        #expect(Self.hex(try Keybag.previousWrappingKey(current)) == "bf6e401716bb1e5ebd371fae1ca4681f0fe0aebd461c0b0a75b7fa12556d3a27")
        let previousWrap = try XChaCha20Poly1305.seal(
            plaintext: Array(0x60..<0x80) as [UInt8], key: try Keybag.previousWrappingKey(current), nonce: Array(0..<24),
            associatedData: Keybag.previousAssociatedData(newID: keybag.id, oldID: "101112131415161718191a1b1c1d1e1f", device: device.fingerprint, .complete))
        #expect(Sodium.hexString(previousWrap) == """
            2375804ef9f75867ccfb03adf84410719a128c5c60acf5bc4c97b716dbd7cf10df5c105554554f9eb0d7346cb7337ff0
            """)
        var second = bare
        second.checks = [.complete: check, .always: check]
        second.previous = [.init(id: "101112131415161718191a1b1c1d1e1f",
                                 wraps: [.complete: .init(nonce: Array(0..<24), ciphertext: Array(previousWrap))])]
        #expect(Sodium.hexString(try second.mac(device: device, format: 2)) == "85d624f297bfdf7fe8df454036cdcdacecde8b8bbd871490e78ebc0077ebb709")
        #expect(Self.hex(try #require(try second.previousKey(.complete, keybag: "101112131415161718191a1b1c1d1e1f", currentKey: current)))
                == Sodium.hexString(Array(0x60..<0x80) as [UInt8]))
        // Another passcode key, or none, does not open `complete`.
        #expect(throws: CryptoError.authenticationFailed) {
            try keybag.open([.complete], device: device, passcodeKey: try SecureBytes(copying: Array(repeating: 0, count: 32) as [UInt8]))
        }
    }

    @Test func aKeybagRoundTripsThroughItsFileAndKeepsItsKeysAcrossRewraps() throws {
        let temporary = try TemporaryDirectory()
        let device = try Self.vectorDevice(temporary)
        var (keybag, keys) = try Keybag.make(device: device, passcode: nil, autoLockSeconds: 300)
        let decoded = try Keybag.decode(try keybag.encoded(device: device), path: "keybag.json", device: device)
        #expect(decoded == keybag)
        let opened = try decoded.open(ProtectionClass.allCases, device: device, passcodeKey: nil)
        for protection in ProtectionClass.allCases { #expect(opened[protection] == keys[protection], "\(protection)") }
        #expect(try SealedBox.publicKey(of: try #require(opened[.completeUnlessOpen])) == keybag.completeUnlessOpenPublicKey)

        // Under a passcode: the same keys, and only `always` opens without it.
        let parameters = PasswordHashParameters.moderate()
        let passcodeKey = try Argon2id.deriveKey(passphrase: try SecureBytes(copying: Array("correct horse".utf8)), parameters: parameters)
        try keybag.wrap(keys, device: device, passcode: (passcodeKey, parameters))
        let reread = try Keybag.decode(try keybag.encoded(device: device), path: "keybag.json", device: device)
        #expect(try reread.open(ProtectionClass.allCases, device: device, passcodeKey: passcodeKey)[.complete] == keys[.complete])
        #expect(try reread.open([.always], device: device, passcodeKey: nil)[.always] == keys[.always])
        #expect(throws: CryptoError.authenticationFailed) { try reread.open([.untilFirstUnlock], device: device, passcodeKey: nil) }

        // A wrap moved to another class does not open there (the class is in its associated data).
        var swapped = reread
        swapped.wraps[.complete] = reread.wraps[.untilFirstUnlock]
        #expect(throws: CryptoError.authenticationFailed) { try swapped.open([.complete], device: device, passcodeKey: passcodeKey) }
        // Nor a keybag that says "no passcode" over wraps made under one.
        var downgraded = reread
        downgraded.passcode = nil
        #expect(throws: CryptoError.authenticationFailed) { try downgraded.open([.complete], device: device, passcodeKey: nil) }
    }

    /// One way to damage a keybag document.
    static func damage(_ what: String, _ document: inout [String: Any]) {
        var classes = document["classes"] as! [[String: Any]]
        switch what {
        case "format": document["format"] = 3
        case "no check value": classes[0]["check"] = nil
        case "id": document["id"] = "xyz"
        case "device": document["device"] = "00"
        case "auto-lock zero": document["autoLockSeconds"] = 0
        case "auto-lock over a week": document["autoLockSeconds"] = 604_801
        case "public key": document["completeUnlessOpenPublicKey"] = "ab"
        case "missing class": classes.removeLast()
        case "class twice": classes[1]["class"] = classes[0]["class"]
        case "unknown class": classes[0]["class"] = "sometimes"
        case "wrap length": classes[0]["wrapped"] = "00"
        case "a flipped bit":
            let wrapped = classes[3]["wrapped"] as! String
            classes[3]["wrapped"] = (wrapped.first == "0" ? "1" : "0") + wrapped.dropFirst()
        case "wraps swapped": (classes[0]["class"], classes[2]["class"]) = (classes[2]["class"], classes[0]["class"])
        case "auto-lock changed": document["autoLockSeconds"] = 604_800
        case "no mac": document["mac"] = nil
        case "cheap passcode":
            document["passcode"] = ["algorithm": "argon2id13", "operationsLimit": 1, "memoryLimit": 8192, "salt": String(repeating: "00", count: 16)]
        case "costly passcode":
            document["passcode"] = ["algorithm": "argon2id13", "operationsLimit": 3, "memoryLimit": 1 << 40, "salt": String(repeating: "00", count: 16)]
        default: Issue.record("no damage called \(what)")
        }
        document["classes"] = classes
    }

    /// Everything is checked before anything is derived from the file.
    @Test(arguments: ["format", "no check value", "id", "device", "auto-lock zero", "auto-lock over a week", "public key", "missing class", "class twice",
                      "unknown class", "wrap length", "cheap passcode", "costly passcode", "a flipped bit", "wraps swapped",
                      "auto-lock changed", "no mac"])
    func aDamagedKeybagIsRefusedBeforeAnyDerivation(what: String) throws {
        let temporary = try TemporaryDirectory()
        let device = try Self.vectorDevice(temporary)
        let (keybag, _) = try Keybag.make(device: device, passcode: nil, autoLockSeconds: nil)
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try keybag.encoded(device: device))) as? [String: Any])
        Self.damage(what, &document)
        let bytes = Array(try JSONSerialization.data(withJSONObject: document))
        #expect(performing: { try Keybag.decode(bytes, path: "keybag.json", device: device) }, throws: { error in
            guard case DeviceError.damagedKeybag = error else { return false }
            return true
        })
    }

    @Test func aSealedBoxOpensOnlyWithItsPrivateKey() throws {
        let pair = try SealedBox.makeKeyPair()
        let other = try SealedBox.makeKeyPair()
        let message = try SecureBytes(copying: Array("ticket key".utf8))
        let sealed = try SealedBox.seal(message, to: pair.publicKey)
        #expect(sealed.count == message.count + SealedBox.overhead)
        #expect(try SealedBox.open(sealed, publicKey: pair.publicKey, privateKey: pair.privateKey) == message)
        #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(sealed, publicKey: other.publicKey, privateKey: other.privateKey) }
        var damaged = sealed
        damaged[damaged.count - 1] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(damaged, publicKey: pair.publicKey, privateKey: pair.privateKey) }
        #expect(try SealedBox.publicKey(of: pair.privateKey) == pair.publicKey)
    }

    /// The public keys remembered for recent private keys are always the right ones: asked for
    /// more keys than are remembered, in turn and again, each gives the key its pair was made with.
    @Test func aPrivateKeysPublicKeyIsTheSameRememberedOrNot() throws {
        let pairs = try (0..<7).map { _ in try SealedBox.makeKeyPair() }
        for round in 0..<3 {
            for pair in round == 1 ? pairs.reversed() : pairs {
                #expect(try SealedBox.publicKey(of: pair.privateKey) == pair.publicKey)
                #expect(try SealedBox.publicKey(of: pair.privateKey) == pair.publicKey, "asked again at once")
            }
        }
        // A copy of a private key in other memory is the same key.
        let copy = try SecureBytes(copying: pairs[0].privateKey.withUnsafeBytes { Array($0) })
        #expect(try SealedBox.publicKey(of: copy) == pairs[0].publicKey)
    }
}
