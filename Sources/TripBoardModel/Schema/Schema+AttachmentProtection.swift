extension Schema {
    /// Version 16 → 17: the protection class an attachment's file is sealed under
    /// (docs/security.md, Sealed files): `complete-unless-open` unless chosen otherwise, so that
    /// a ticket can be filed and downloaded while the device is locked. Files written before
    /// stay in the clear until `app container protect` seals them.
    package static let attachmentProtection = """
        ALTER TABLE attachments ADD COLUMN protection TEXT NOT NULL DEFAULT 'complete-unless-open'
            CHECK (protection IN ('complete', 'complete-unless-open', 'until-first-unlock', 'none'));
        """
}
