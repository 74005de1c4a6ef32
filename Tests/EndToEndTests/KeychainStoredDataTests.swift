import TripBoardKeychain
import Foundation
import Testing

/// Keychain rows changed behind TripBoard's back: refused with one line and a documented status,
/// never an internal error, never work an attacker chose.
@Suite struct KeychainStoredDataTests {
    static let salt = "00112233445566778899aabbccddeeff"

    /// The recovery wrap's Argon2id parameters, replaced with junk or with costs out of range
    /// (2^32 passes, 1 TiB of memory would run for hours or fail late): refused (65) before
    /// Argon2id runs, in well under the second the real parameters take.
    @Test(arguments: [
        "NULL", "'not json'", "'[]'", "'{}'",
        #"'{"algorithm":"scrypt","operationsLimit":3,"memoryLimit":268435456,"salt":"\#(salt)"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":4294967296,"memoryLimit":268435456,"salt":"\#(salt)"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":-1,"memoryLimit":268435456,"salt":"\#(salt)"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":3,"memoryLimit":1099511627776,"salt":"\#(salt)"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":3,"memoryLimit":1,"salt":"\#(salt)"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":3,"memoryLimit":268435456,"salt":"00"}'"#,
        #"'{"algorithm":"argon2id13","operationsLimit":3,"memoryLimit":268435456,"salt":"not hex at all, 32 characters!"}'"#,
    ])
    func tamperedRecoveryParametersAreBadDataInOneLine(parameters: String) throws {
        let container = try KeychainCommandTests.makeContainer()
        let home = KeychainCommandTests.deviceEnvironment(container, device: "home")
        #expect(try container.app(arguments: ["keychain", "set", "sync", "bob", "--accessibility", "migratable"], stdin: "shared",
                                  environment: home).status == 0)
        #expect(try container.app(arguments: ["keychain", "set-recovery-passphrase"], stdin: "correct horse battery",
                                  environment: home).status == 0)
        // Recovered on another device: a container whose databases are in the clear (a sealed one
        // opens on its own device only).
        try container.unsealDatabases(environment: home)
        let tampered = try container.sqlite("UPDATE container_key_wraps SET password_hash_parameters = \(parameters) WHERE wrapped_by = 'passphrase'",
                                            database: container.keychainPath)
        #expect(tampered.status == 0, "\(tampered)")

        let away = KeychainCommandTests.deviceEnvironment(container, device: "away")
        let started = Date()
        let recover = try container.app(arguments: ["keychain", "recover"], stdin: "correct horse battery", environment: away)
        #expect(Date().timeIntervalSince(started) < 0.5, "refused before any key derivation")
        #expect(recover.status == 65, "\(recover)")
        #expect(recover.stderrLines.count == 1 && recover.stderr.contains("stored parameters are damaged"), "\(recover)")
        #expect(!recover.stderr.contains("DecodingError"), "\(recover)")
        let list = try container.app(arguments: ["keychain", "list"], environment: away)
        #expect(list.stdout.contains("locked"), "nothing was unlocked: \(list)")
    }
}
