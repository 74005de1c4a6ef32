package import TripBoardDevice

/// Sealed files' keys held in memory (`EphemeralFileKeys`): the format alone, or a container
/// in-process, without a device (no device directory, no kernel keyring) — and a lock of its
/// own: the classes in `closed` refuse as a locked device's do.
package struct MemoryFileKeys: FileKeys {
    package let keys: EphemeralFileKeys
    /// Classes whose keys are "locked".
    package var closed: Set<ProtectionClass> = []

    package var keybag: String { keys.keybag }

    package init() throws { keys = try EphemeralFileKeys() }

    package func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey {
        guard protection == .completeUnlessOpen || !closed.contains(protection) else { throw DeviceError.locked }
        return try keys.sealingKey(protection)
    }

    package func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey {
        guard keybag == self.keybag else { throw DeviceError.sealedElsewhere(path: path) }
        guard !closed.contains(protection) else { throw DeviceError.locked }
        return try keys.openingKey(protection, keybag: keybag, path: path)
    }

    package func refusal(_ protection: ProtectionClass) throws -> DeviceError? { closed.contains(protection) ? .locked : nil }

    package func hasKeys() throws -> Bool { true }
}
