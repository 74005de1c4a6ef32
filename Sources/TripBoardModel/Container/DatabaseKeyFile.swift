public import TripBoardDevice
public import TripBoardSQLite
public import TripBoardSystem
import TripBoardKeys

/// The page key of a sealed database (docs/security.md, "Sealed stores"): the file
/// `<database>-key` beside it — `store/TripBoard.sqlite-key`, `keychain/Keychain.sqlite-key` — a
/// sealed file (docs/security.md, "Sealed files") of class `until-first-unlock` whose 48 plaintext
/// bytes are the page key (32) and the database's file id (16).
///
/// A database with a key file is opened through the sealed-page VFS under that key; one without is
/// a database an earlier build made, in the clear until `app container protect` seals it. A key
/// file is written once, before its database has a page, and never replaced: losing it loses the
/// database, as losing the database would.
public enum DatabaseKeyFile {
    /// What follows the database's name in its key file's.
    public static let suffix = "-key"
    /// The class every key file is sealed under: the widget and `sync watch` read the store while
    /// the device is locked, once it has been unlocked since it started.
    public static let protection = ProtectionClass.untilFirstUnlock
    static let plaintextLength = PageKey.keyLength + PageKey.fileIDLength

    /// The key file's name for the database named `database`.
    public static func name(for database: String) -> String { database + suffix }

    /// The page key of `database` in `directory`; nil when it has no key file (a database in the
    /// clear). Throws the device's refusals as they are (`.notUnlockedSinceStart`,
    /// `.sealedElsewhere`, `.damagedSealedFile`…): a key file is never read as absent.
    ///
    /// `refreshing` (a writer's open): a key file sealed under an earlier keybag (a passcode set
    /// or changed since; this keybag keeps the last 32's keys) is sealed again under this one's,
    /// in one rename, so that it never falls out of reach of the keybag's memory.
    public static func read(in directory: Directory, database: String, keys: any FileKeys, refreshing: Bool = false) throws -> PageKey? {
        let name = name(for: database)
        let path = directory.childPath(name)
        let opened: FileDescriptor?
        do {
            opened = try directory.openFileForReadingIfPresent(name)
        } catch {
            guard error.code == .symbolicLink || error.code == .notRegularFile else { throw error }
            throw DeviceError.damagedSealedFile(path: path, reason: "it is not a regular file (links are not followed in the container)")
        }
        guard let file = opened else { return nil }
        let reader = try SealedFileReader(input: file, path: path, keys: keys)
        var plaintext = try reader.readToEnd(limit: plaintextLength)
        guard plaintext.count == plaintextLength else {
            throw DeviceError.damagedSealedFile(path: path, reason: "a database's key file holds \(plaintextLength) bytes, not \(plaintext.count)")
        }
        let fileID = Array(plaintext[PageKey.keyLength...])
        var key = Array(plaintext[..<PageKey.keyLength])
        for index in plaintext.indices { plaintext[index] = 0 }
        let pageKey = PageKey(key: try SecureBytes(wiping: &key), fileID: fileID)
        if refreshing, reader.header.protection != .completeUnlessOpen, try keys.sealingKeybag(reader.header.protection) != reader.header.keybag {
            try write(pageKey, in: directory, database: database, keys: keys, replacing: true)
        }
        return pageKey
    }

    /// A new page key for `database`, sealed into its key file in `directory` (a temporary file
    /// there, fsynced, renamed into place unless a key file is there already, the directory
    /// fsynced); the key file already there, if one is (never replaced).
    public static func create(in directory: Directory, database: String, keys: any FileKeys) throws -> PageKey {
        let key = try PageKey.random()
        guard try write(key, in: directory, database: database, keys: keys, replacing: false) else {
            guard let existing = try read(in: directory, database: database, keys: keys) else {
                throw DeviceError.damagedSealedFile(path: directory.childPath(name(for: database)), reason: "it vanished while it was being made")
            }
            return existing
        }
        return key
    }

    /// Seals `key` into `database`'s key file in `directory` under `keys`, durably. Unless
    /// `replacing` — a restore's staging directory, whose key files move from its transient keys
    /// to the device's — an existing key file is kept and false returned.
    @discardableResult
    public static func write(_ key: PageKey, in directory: Directory, database: String, keys: any FileKeys, replacing: Bool) throws -> Bool {
        let name = name(for: database)
        let temporary = Directory.uniqueTemporaryName(for: name)
        do {
            let output = try directory.openFile(temporary, .writeOnly, creating: .newFile, mode: 0o600)
            let writer = try SealedFileWriter(output: output, key: try keys.sealingKey(protection))
            try key.key.withUnsafeBytes { try writer.write($0) }
            try writer.write(key.fileID)
            try writer.finish()
            try output.synchronize()
            var renamed = true
            if replacing {
                try directory.rename(temporary, to: directory, as: name)
            } else {
                renamed = try directory.renameUnlessExists(temporary, to: directory, as: name)
                if !renamed { try directory.removeFile(temporary) }
            }
            try directory.synchronize()
            return renamed
        } catch {
            try? directory.removeFile(temporary)
            throw error
        }
    }
}
