import TripBoardSystem
import TripBoardModel

/// The typed preferences with their defaults filled in.
public struct Preferences: Sendable, Equatable {
    /// Values the user has set; the others read as their default.
    public private(set) var explicitValues: [PreferenceKey: PreferenceValue]

    public init(explicitValues: [PreferenceKey: PreferenceValue] = [:]) { self.explicitValues = explicitValues }

    public subscript(key: PreferenceKey) -> PreferenceValue { explicitValues[key] ?? key.defaultValue }

    public func isSet(_ key: PreferenceKey) -> Bool { explicitValues[key] != nil }

    mutating func set(_ key: PreferenceKey, _ value: PreferenceValue) { explicitValues[key] = value }
}

/// `preferences/preferences.json`: a flat JSON object, replaced atomically on every change.
/// Read-modify-write holds an exclusive `flock` on the `preferences/` directory, so two processes
/// setting different keys at once both keep their change.
public struct PreferencesFile {
    let directory: Directory
    let staging: Directory
    let clock: @Sendable () -> Timestamp

    /// Warnings about the file, meant for stderr once (e.g. it was corrupt and moved aside).
    public private(set) var warnings: [String] = []

    public init(container: Container) throws {
        directory = try container.directory(ContainerLayout.preferencesDirectory)
        staging = try container.stagingDirectory()
        clock = container.options.clock
    }

    public var path: String { directory.childPath(ContainerLayout.preferencesFile) }

    /// The current preferences. A file that cannot be parsed is moved aside
    /// (`preferences.json.corrupt-<time>`) and the defaults are used; a key with a bad value
    /// reads as its default. Both are reported in `warnings`.
    public mutating func load() throws -> Preferences {
        try withDirectoryLock { try read() }
    }

    /// Sets one key (value already validated by `PreferenceKey.parse`), keeping the others and any
    /// key a newer TripBoard wrote.
    public mutating func set(_ key: PreferenceKey, to value: PreferenceValue) throws {
        try update([key: value])
    }

    /// Sets several keys in one atomic replace.
    public mutating func update(_ values: [PreferenceKey: PreferenceValue]) throws {
        try withDirectoryLock {
            var raw = try readRawObject() ?? [:]
            for (key, value) in values { raw[key.rawValue] = try JSON.makeValue(try key.validate(value)) }
            let document = JSONValue.object(raw.map { (key: $0.key, value: $0.value) })
            try directory.writeAtomically(document.serialized() + [0x0a], to: ContainerLayout.preferencesFile, staging: staging)
        }
    }

    /// Removes one key, so that it reads as its default again; keeps the others and any key a
    /// newer TripBoard wrote. Returns false (and writes nothing) when the key was not set.
    @discardableResult
    public mutating func unset(_ key: PreferenceKey) throws -> Bool {
        try withDirectoryLock {
            guard var raw = try readRawObject(), raw[key.rawValue] != nil else { return false }
            raw[key.rawValue] = nil
            let document = JSONValue.object(raw.map { (key: $0.key, value: $0.value) })
            try directory.writeAtomically(document.serialized() + [0x0a], to: ContainerLayout.preferencesFile, staging: staging)
            return true
        }
    }

    /// The file's bytes exactly as they are (for a backup), or `nil` when there is none; read
    /// under the same lock as every read, never moved aside or repaired.
    /// A file over the limit (`maximumBytes`) is moved aside, as everywhere it is met, and the
    /// backup holds none.
    public mutating func rawBytes() throws -> [UInt8]? {
        let (bytes, warning) = try withDirectoryLock { () throws -> ([UInt8]?, String?) in
            do {
                return (try directory.openFileForReading(ContainerLayout.preferencesFile).readToEnd(limit: Self.maximumBytes), nil)
            } catch let error as FileSystemError where error.code == .notFound {
                return (nil, nil)
            } catch let error as FileSystemError where error.code == .tooLarge {
                return (nil, try moveAside(because: "is larger than 1 MiB"))
            }
        }
        if let warning { warnings.append(warning) }
        return bytes
    }

    /// The most a preferences file may hold: a few dozen typed values take a few hundred bytes.
    public static let maximumBytes = 1 << 20

    private mutating func read() throws -> Preferences {
        guard let raw = try readRawObject() else { return Preferences() }
        var preferences = Preferences()
        for (name, value) in raw {
            guard let key = PreferenceKey(rawValue: name) else { continue }  // a newer build's key: kept, not used
            do {
                preferences.set(key, try key.validate(try JSON.decode(PreferenceValue.self, from: value)))
            } catch {
                warnings.append("preference \(name) in \(path) has an invalid value; using the default \(key.defaultValue)")
            }
        }
        return preferences
    }

    /// The file as a flat object, or `nil` when there is none (or it was not a JSON object and was
    /// moved aside). Values are kept as they are: one odd value never costs the others.
    private mutating func readRawObject() throws -> [String: JSONValue]? {
        let read: [UInt8]?
        // (A `catch … where` on a typed error crashes the 6.3 compiler here.)
        do {
            read = try directory.readFileIfPresent(ContainerLayout.preferencesFile, limit: Self.maximumBytes)
        } catch {
            guard error.code == .tooLarge else { throw error }
            warnings.append(try moveAside(because: "is larger than 1 MiB"))
            return nil
        }
        guard let bytes = read else { return nil }
        if case .object(let members)? = try? JSONValue.parse(bytes) {
            return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        }
        warnings.append(try moveAside(because: "could not be read"))
        return nil
    }

    /// The file renamed `preferences.json.corrupt-<time>` (kept for the user, never deleted);
    /// the defaults are used. Returns the warning that says so, once.
    private func moveAside(because reason: String) throws -> String {
        let asideName = ContainerLayout.preferencesFile + ".corrupt-" + clock().utcStamp.filter { $0 != ":" && $0 != "-" }
        try directory.rename(ContainerLayout.preferencesFile, to: directory, as: asideName)
        try directory.synchronize()
        return "\(path) \(reason) and was moved aside to \(asideName); using the default preferences"
    }

    private func withDirectoryLock<T>(_ body: () throws -> T) throws -> T {
        let lock = FileLock(descriptor: directory.descriptor)
        try lock.lock(.exclusive, timeout: 5)
        defer { lock.unlock() }
        return try body()
    }
}
