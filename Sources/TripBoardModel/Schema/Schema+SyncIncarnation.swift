extension Schema {
    /// Version 11 → 12: deletions as authenticated as edits (docs/sync.md, Deletions sealed to an
    /// incarnation). `sync_incarnations`: this device's current incarnation of each record (a
    /// random id sealed with the record, renewed when a trash restore brings it back; no row: a
    /// record of an earlier build, whose incarnation is the empty one). `sync_dead`: the
    /// incarnations this device knows deleted or replaced — the ledger a purge of the trash does
    /// not empty, so that neither a replayed deletion nor a replayed live copy of one is believed.
    /// `sync_account.unsealed_before`: the change sequence this device had reached when it first
    /// ran this build; a tombstone without a sealed deletion (an earlier build's) is believed only
    /// at or below it.
    package static let syncIncarnation = """
        CREATE TABLE sync_incarnations (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            PRIMARY KEY (kind, id)
        );
        CREATE TABLE sync_dead (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            PRIMARY KEY (kind, id, incarnation)
        );
        ALTER TABLE sync_account ADD COLUMN unsealed_before INTEGER NOT NULL DEFAULT 0;
        UPDATE sync_account SET unsealed_before = change_sequence;
        """

    /// Version 12 → 13: `sync_deletions_seen`, the sealed deletions this device has seen (pulled
    /// and believed, or made and acknowledged by the server), by their stamps. A deletion of an
    /// incarnation since replaced that arrives again is a replay when this device saw it before
    /// (refused and counted); one it never saw is a genuine deletion of the old life that reached
    /// it late (not applied, not counted). docs/sync.md, Deletions sealed to an incarnation.
    /// `sync_send_whole`: records the server knows none of the values of (it lost them, or this
    /// device refused what it served), sent again whole with the stamps this device knew
    /// (`Store.markSentWhole`). docs/sync.md, No going back.
    package static let syncDeletionsSeen = """
        CREATE TABLE sync_deletions_seen (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            stamp TEXT NOT NULL,
            PRIMARY KEY (kind, id, stamp)
        );
        CREATE TABLE sync_send_whole (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            PRIMARY KEY (kind, id)
        );
        """
}
