@testable import TripBoardKeychain
@testable import TripBoardDevice
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardTestSupport

/// The worked example of docs/security.md ("Test vector"), computed by TripBoard's own code: if
/// this test fails, the document no longer describes what TripBoard writes. The values were
/// computed independently from the document alone (Python's hashlib and libsodium through ctypes).
struct KeychainFormatTests {
    static func hex(_ bytes: SecureBytes) -> String { bytes.withUnsafeBytes { Sodium.hexString(Array($0)) } }

    @Test func theDocumentedTestVectorHolds() throws {
        let temporary = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temporary.child("device"), withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try temporary.write(Array(0..<32), to: "device/device.key")
        chmod(temporary.child("device/device.key"), 0o600)
        try temporary.write("machine-one\n", to: "machine-id")
        let location = DeviceLocation(directory: temporary.child("device"), machineIDFile: temporary.child("machine-id"))
        let device = try #require(try DeviceKey.existing(at: location))

        #expect(Sodium.hexString(try DeviceKey.appSpecificMachineID(file: location.machineIDFile))
                == "c6140c1c3134401ddfa84220fc1a97517f4c946b756d5adc62f82af956dfc2d7")
        #expect(Self.hex(device.key) == "3d3f12f657d6009c63531f7e253c65d2f99b48287fa6b68c7c1224ff5cac5ebc")
        #expect(device.fingerprint == "5a817996e82fe2d394e24ed11a85d99f")
        let itemKey = try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 1, context: "TBitems1")
        #expect(Self.hex(itemKey) == "062844bac3b26dd04265c478065ac9fb09f2fda15fe315afcdf7ac65847f2787")
        #expect(Self.hex(try Keychain.deviceWrappingKey(device)) == "15d2992a21dce718b1caaf6cec34bac1dc099c8c3b26e76b53a27db888547658")

        let associatedData = Keychain.itemAssociatedData(service: "api", account: "alice", accessibility: .afterFirstUnlockThisDeviceOnly, legacy: true,
                                                         keyID: Keychain.deviceKeyID(device), keybag: nil, rowID: 1)
        #expect(Sodium.hexString(associatedData) == """
            0000001a74726970626f6172642d6b6579636861696e2d6974656d2f76310000000361706900000005616c6963650000000e746869734465766963\
            654f6e6c79000000276465766963653a3561383137393936653832666532643339346532346564313161383564393966000000013\
            1
            """)
        let sealed = try XChaCha20Poly1305.seal(plaintext: Array("token-1".utf8), key: itemKey, nonce: Array(0..<24),
                                                associatedData: associatedData)
        #expect(Sodium.hexString(sealed) == "087c931f7de7e419eda1eb08af6a6a89e989df8cdf0402")

        // Sealed by class (docs/security.md, "Keys by class"), with the class key 20 21 … 3f, the
        // keybag 00112233445566778899aabbccddeeff and the root container key 40 41 … 5f.
        let classKey = try SecureBytes(copying: Array(0x20..<0x40))
        let itemKeyV2 = try Keychain.deviceItemKey(classKey: classKey, device: device, .afterFirstUnlockThisDeviceOnly)
        #expect(Self.hex(itemKeyV2) == "f4bcdc9930d648f77493273c7badcd77144431ddfa2bdfd6349f5aae7e208da3")
        let associatedDataV2 = Keychain.itemAssociatedData(service: "api", account: "alice", accessibility: .afterFirstUnlockThisDeviceOnly,
                                                           legacy: false, keyID: Keychain.deviceKeyID(device),
                                                           keybag: "00112233445566778899aabbccddeeff", rowID: 1)
        #expect(Sodium.hexString(associatedDataV2) == """
            0000001a74726970626f6172642d6b6579636861696e2d6974656d2f76320000000361706900000005616c6963650000000e746869734465766963\
            654f6e6c790000001261667465722d66697273742d756e6c6f636b000000276465766963653a3561383137393936653832666532643339346532\
            346564313161383564393966000000203030313132323333343435353636373738383939616162626363646465656666000000013\
            1
            """)
        let sealedV2 = try XChaCha20Poly1305.seal(plaintext: Array("token-1".utf8), key: itemKeyV2, nonce: Array(0..<24),
                                                  associatedData: associatedDataV2)
        #expect(Sodium.hexString(sealedV2) == "759866ab39bbf85f2d552d6f8bc8cad773a1de3aa2a946")
        #expect(Self.hex(try Keychain.classWrappingKey(classKey: classKey, device: device, .complete))
                == "4547d6e868a9304c5dca1b95b03591c2bf2dd4c7ae3fd77c76e0167eef0f3b9e")
        let root = try SecureBytes(copying: Array(0x40..<0x60))
        #expect(Self.hex(try Keychain.classContainerKey(root: root, .complete)) == "69320c0dc2083f582b30f6730c40dfaab5b4082d5a812445521889a030eb1b0a")
        let afterFirstUnlock = try Keychain.classContainerKey(root: root, .untilFirstUnlock)
        #expect(Self.hex(afterFirstUnlock) == "f7c879d0525da278bd2051c25aa38e153cec4e55d27e5e50730cebf6f6546ea8")
        #expect(Self.hex(try Keychain.itemKey(fromContainerKey: afterFirstUnlock)) == "8f9efd74125f0c82c15224be85dd8f524bf415f8afb7859400677d580eef0090")
    }
}
