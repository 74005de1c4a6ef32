/// Why a sync command failed. Descriptions are one line, name no secret, no field value and no
/// password, and say what to do.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `sync-agent` is missing or cannot run.
    case agentMissing(path: String, detail: String)
    /// The agent stopped, timed out or answered nonsense: it was killed.
    case agentFailed(detail: String)
    /// The server cannot be reached or refused the login.
    case serverUnavailable(String)
    /// The server asked to try again later (timeout, shutdown, serialization failure).
    case serverBusy(String)
    /// The server schema is missing or too old.
    case serverSchema(String)
    /// The server reported something else.
    case serverFailed(String)
    /// The container is not set up for sync (`app sync setup`).
    case notSetUp
    /// `sync setup` on a container already joined to another server or zone.
    case alreadySetUp(server: String, zone: String)
    /// The passphrase does not open the zone key.
    case wrongPassphrase
    /// The zone key is not in this device's keychain.
    case zoneKeyMissing(zone: String)
    /// The zone does not exist on the server (it was removed, or the server was reset).
    case zoneMissing(zone: String)
    /// What the server holds is not what a TripBoard client wrote.
    case damagedServerData(String)
    /// The server served what this device refused (`SyncReport.refused`: older values, deletions
    /// no device sealed or of a replaced incarnation, a deleted record live again): not applied,
    /// this device's own state sent again; the rest of the sync went through.
    case refusedServerData(count: Int)
    /// An attachment's file changed while it was being uploaded (nothing of it stays on the server).
    case attachmentChanged(id: String)
    /// `sync conflicts --dismiss ID`: no kept conflict has that id.
    case noSuchConflict(id: String)
    /// Bad input: a conninfo with a password in it, a zone name out of bounds.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .agentMissing(let path, let detail):
            "the sync agent \(path) cannot be run (\(detail)); reinstall TripBoard or set \(SyncAgentClient.environmentVariable)"
        case .agentFailed(let detail): "the sync agent failed: \(detail); nothing more was changed"
        case .serverUnavailable(let message): "the sync server cannot be reached: \(message)"
        case .serverBusy(let message): "the sync server asked to try again later: \(message)"
        case .serverSchema(let message): message
        case .serverFailed(let message): "the sync server reported an error: \(message)"
        case .notSetUp: "this container is not set up for sync; run `app sync setup --server CONNINFO` first"
        case .alreadySetUp(let server, let zone):
            "this container already syncs with zone \(zone) on \(server); run `app sync leave` first to join another"
        case .wrongPassphrase: "the passphrase does not open the zone's key; nothing was changed"
        case .zoneKeyMissing(let zone):
            "this device's keychain has no key for zone \(zone); run `app sync leave`, then `app sync setup` again with the passphrase"
        case .zoneMissing(let zone): "zone \(zone) does not exist on the server (removed, or the server was reset); nothing was changed"
        case .damagedServerData(let detail): "the sync server holds data TripBoard cannot trust: \(detail)"
        case .refusedServerData(let count):
            "this device refused \(count == 1 ? "1 record" : "\(count) records") the sync server served (the warnings above say why): "
                + "not applied, and this device's own were sent again; everything else was synced"
        case .attachmentChanged(let id): "the file of attachment \(id) changed while it was being uploaded; nothing of it was kept on the server. Run `app container check`, then sync again"
        case .noSuchConflict(let id): "no kept conflict has id \(id) (`app sync conflicts` lists them); nothing was changed"
        case .invalidArgument(let message): message
        }
    }
}
