internal import CSystem
import Glibc

/// The Linux kernel's key retention service (keyrings(7)), through the `add_key(2)` and
/// `keyctl(2)` system calls: small secrets held in kernel memory, never on disk, gone at reboot,
/// optionally expiring by themselves at a deadline (a key timeout) whether or not any process runs.
///
/// Keys are reached by **serial number**. A process *possesses* a key it can reach from its thread,
/// process or session keyring; other processes of the same user see only what the key's *user*
/// permissions allow, and by default those are "view" alone. So every key made here is made in the
/// process keyring (possessed), given the user's full permissions (`userPermissions`), then linked
/// where it belongs and unlinked from the process keyring: every process of the user — the widget,
/// a `sync watch` started in another login session — can then read it, set its timeout, and
/// invalidate it. Group and others get nothing.
public enum KernelKeyring {
    /// A key's or keyring's serial number.
    public struct Serial: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public var description: String { String(rawValue) }
    }

    /// The keyring a process reaches by a special id (keyrings(7)).
    public enum Anchor: String, Sendable, CaseIterable {
        /// `@u`: one per user id, shared by all the user's processes and sessions, destroyed when the
        /// user's last process ends, or at reboot (user-keyring(7)).
        case user
        /// `@s`: the session keyring, inherited across fork and exec; a new one per
        /// `keyctl session` (session-keyring(7)). Tests anchor here to stay apart.
        case session
        /// The process keyring (`@p`): where new keys are made before they are linked elsewhere.
        case process

        var specialID: Int32 {
            switch self {
            case .user: KEY_SPEC_USER_KEYRING
            case .session: KEY_SPEC_SESSION_KEYRING
            case .process: KEY_SPEC_PROCESS_KEYRING
            }
        }

        /// The serial of this anchor, as a special id the kernel resolves for the calling process.
        public var serial: Serial { Serial(rawValue: specialID) }
    }

    /// Possessor and user: view, read, write, search, link, set attributes (`0x3f3f0000`); group
    /// and others: nothing.
    public static let userPermissions: UInt32 = 0x3f3f_0000

    /// Whether the service answers this process: `nil` when it does, else why not (a seccomp profile
    /// such as Docker's default refuses `add_key`/`keyctl` with EPERM; a kernel without keys gives
    /// ENOSYS). Asks for the anchor's id without creating it.
    public static func unavailability(anchor: Anchor) -> KeyringError? {
        let result = tripboard_keyctl(KEYCTL_GET_KEYRING_ID, UInt(bitPattern: Int(anchor.specialID)), 1, 0, 0)
        if result >= 0 { return nil }
        return KeyringError(operation: "keyctl(GET_KEYRING_ID)", errorNumber: errno)
    }

    /// The key of `type` named `description` reachable from `keyring` (searched recursively), or
    /// `nil` when there is none, or it has expired, or it was revoked or invalidated.
    public static func search(_ keyring: Serial, type: String, description: String) throws(KeyringError) -> Serial? {
        let result = type.withCString { type in
            description.withCString { description in
                tripboard_keyctl(KEYCTL_SEARCH, UInt(bitPattern: Int(keyring.rawValue)),
                                 UInt(bitPattern: type), UInt(bitPattern: description), 0)
            }
        }
        if result >= 0 { return Serial(rawValue: Int32(truncatingIfNeeded: result)) }
        let failure = errno
        if failure == ENOKEY || failure == EKEYEXPIRED || failure == EKEYREVOKED { return nil }
        throw KeyringError(operation: "keyctl(SEARCH)", errorNumber: failure)
    }

    /// A new keyring named `description`, linked into `destination`, readable and writable by every
    /// process of this user (see the type's comment).
    public static func addKeyring(_ description: String, into destination: Serial) throws(KeyringError) -> Serial {
        try add(type: "keyring", description: description, payload: nil, into: destination)
    }

    /// A new `user` key named `description` holding `payload`, expiring `timeout` seconds from now
    /// (0: never), linked into `destination`, where it replaces a key of that name. The timeout is
    /// set before the key is linked: a process killed in between leaves the key in its own process
    /// keyring only, which goes with it — never a key without its expiry where others find it.
    public static func addUserKey(_ description: String, payload: UnsafeRawBufferPointer, timeout: UInt32 = 0,
                                  into destination: Serial) throws(KeyringError) -> Serial {
        try add(type: "user", description: description, payload: payload, timeout: timeout, into: destination)
    }

    private static func add(type: String, description: String, payload: UnsafeRawBufferPointer?, timeout: UInt32 = 0,
                            into destination: Serial) throws(KeyringError) -> Serial {
        let made = type.withCString { type in
            description.withCString { description in
                tripboard_add_key(type, description, payload?.baseAddress, payload?.count ?? 0, Anchor.process.specialID)
            }
        }
        guard made >= 0 else { throw KeyringError(operation: "add_key", errorNumber: errno) }
        let key = Serial(rawValue: Int32(truncatingIfNeeded: made))
        do {
            try call("keyctl(SETPERM)", KEYCTL_SETPERM, key, UInt(userPermissions))
            if timeout > 0 { try call("keyctl(SET_TIMEOUT)", KEYCTL_SET_TIMEOUT, key, UInt(timeout)) }
            try call("keyctl(LINK)", KEYCTL_LINK, key, UInt(bitPattern: Int(destination.rawValue)))
        } catch {
            _ = tripboard_keyctl(KEYCTL_INVALIDATE, UInt(bitPattern: Int(key.rawValue)), 0, 0, 0)
            throw error
        }
        _ = tripboard_keyctl(KEYCTL_UNLINK, UInt(bitPattern: Int(key.rawValue)), UInt(bitPattern: Int(Anchor.process.specialID)), 0, 0)
        return key
    }

    /// Reads a key's payload into `buffer`; returns the payload's whole length, which may exceed
    /// the buffer (then only the buffer's worth was copied). `nil` when the key has expired, been
    /// revoked or invalidated, or no longer exists.
    public static func read(_ key: Serial, into buffer: UnsafeMutableRawBufferPointer) throws(KeyringError) -> Int? {
        let result = tripboard_keyctl(KEYCTL_READ, UInt(bitPattern: Int(key.rawValue)),
                                      UInt(bitPattern: buffer.baseAddress), UInt(buffer.count), 0)
        if result >= 0 { return result }
        let failure = errno
        if failure == ENOKEY || failure == EKEYEXPIRED || failure == EKEYREVOKED { return nil }
        throw KeyringError(operation: "keyctl(READ)", errorNumber: failure)
    }

    /// Makes a key expire `seconds` from now (0: never). The kernel then refuses every use of it
    /// and collects it, with no process running.
    public static func setTimeout(_ key: Serial, seconds: UInt32) throws(KeyringError) {
        try call("keyctl(SET_TIMEOUT)", KEYCTL_SET_TIMEOUT, key, UInt(seconds))
    }

    /// Marks a key invalid at once: no process can use it from now on, and the kernel wipes and
    /// frees it (a `user` key's payload is zeroed when freed). A key already gone is fine.
    public static func invalidate(_ key: Serial) throws(KeyringError) {
        do {
            try call("keyctl(INVALIDATE)", KEYCTL_INVALIDATE, key, 0)
        } catch where error.isGone {
            return
        }
    }

    /// Removes the link from `keyring` to `key`; a link already gone is fine.
    public static func unlink(_ key: Serial, from keyring: Serial) throws(KeyringError) {
        do {
            try call("keyctl(UNLINK)", KEYCTL_UNLINK, key, UInt(bitPattern: Int(keyring.rawValue)))
        } catch where error.isGone {
            return
        }
    }

    private static func call(_ name: String, _ operation: Int32, _ key: Serial, _ argument: UInt) throws(KeyringError) {
        if tripboard_keyctl(operation, UInt(bitPattern: Int(key.rawValue)), argument, 0, 0) < 0 {
            throw KeyringError(operation: name, errorNumber: errno)
        }
    }
}

/// A failed call to the kernel's key retention service.
public struct KeyringError: Error, Sendable, CustomStringConvertible {
    /// The system call and operation, e.g. `keyctl(SEARCH)`.
    public let operation: String
    public let errorNumber: Int32

    public init(operation: String, errorNumber: Int32) {
        self.operation = operation
        self.errorNumber = errorNumber
    }

    /// The service itself refuses this process (seccomp, a kernel without keys), rather than one key.
    public var isUnavailable: Bool { errorNumber == ENOSYS || (errorNumber == EPERM && operation == "keyctl(GET_KEYRING_ID)") }
    /// The user's key quota is spent (`/proc/sys/kernel/keys/maxkeys`, `maxbytes`).
    public var isQuotaExceeded: Bool { errorNumber == EDQUOT }
    /// The key no longer exists, expired, or was revoked or invalidated.
    public var isGone: Bool { errorNumber == ENOKEY || errorNumber == EKEYEXPIRED || errorNumber == EKEYREVOKED }

    public var description: String {
        let reason = String(cString: strerror(errorNumber))
        if isQuotaExceeded { return "\(operation): \(reason) (this user's kernel key quota is full: keyrings(7), /proc/key-users)" }
        return "\(operation): \(reason)"
    }
}
