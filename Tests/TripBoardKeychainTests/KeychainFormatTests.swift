@testable import TripBoardKeychain
@testable import TripBoardDevice
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
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

        let associatedData = Keychain.itemAssociatedData(service: "api", account: "alice", accessibility: .thisDeviceOnly,
                                                         keyID: Keychain.deviceKeyID(device), rowID: 1)
        #expect(Sodium.hexString(associatedData) == """
            0000001a74726970626f6172642d6b6579636861696e2d6974656d2f76310000000361706900000005616c6963650000000e746869734465766963\
            654f6e6c79000000276465766963653a3561383137393936653832666532643339346532346564313161383564393966000000013\
            1
            """)
        let sealed = try XChaCha20Poly1305.seal(plaintext: Array("token-1".utf8), key: itemKey, nonce: Array(0..<24),
                                                associatedData: associatedData)
        #expect(Sodium.hexString(sealed) == "087c931f7de7e419eda1eb08af6a6a89e989df8cdf0402")
    }
}
