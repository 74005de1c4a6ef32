import TripBoardKeychain
import Foundation
import Testing

/// The module boundaries as the linker sees them (docs/architecture.md): each executable carries
/// only the floors it stands on. Read from the built binaries with binutils' `nm` and `ldd`, so a
/// dependency that slips in (an import, a type moved to the wrong module) fails here.
@Suite struct ModuleBoundaryTests {
    /// Defined symbols of `executable`, one per line (mangled: a Swift module appears as its
    /// length-prefixed name, e.g. `16TripBoardStorage`).
    static func definedSymbols(_ executable: String) throws -> String {
        let result = try ProcessRunner.run("/usr/bin/nm", ["--defined-only", ProcessRunner.executable(executable)],
                                           environment: ProcessRunner.environment(container: nil))
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    static func mangled(_ module: String) -> String { "\(module.utf8.count)\(module)" }

    /// The process that parses untrusted PDFs holds no store, no keys and no keychain code, and
    /// loads no library poppler's own tools do without.
    @Test func pdfWorkerLinksNeitherSQLiteNorSodiumNorTheStore() throws {
        let libraries = try ProcessRunner.run("/usr/bin/ldd", [ProcessRunner.executable("pdf-worker")],
                                              environment: ProcessRunner.environment(container: nil))
        #expect(libraries.status == 0, "\(libraries.stderr)")
        #expect(!libraries.stdout.contains("libsqlite3"), "\(libraries.stdout)")
        #expect(!libraries.stdout.contains("libsodium"), "\(libraries.stdout)")
        // Every library is mapped and relocated on each start: GLib, cairo and X11's (21 more,
        // through poppler-glib) were a third of a ticket's import (docs/performance.md).
        for library in ["libglib", "libgobject", "libgio", "libcairo", "libX11"] {
            #expect(!libraries.stdout.contains(library), "pdf-worker links \(library): \(libraries.stdout)")
        }
        let symbols = try Self.definedSymbols("pdf-worker")
        for module in ["TripBoardStorage", "TripBoardMigration", "TripBoardSQLite", "TripBoardSodium", "TripBoardModel", "TripBoardCLI"] {
            #expect(!symbols.contains(Self.mangled(module)), "pdf-worker links \(module)")
        }
        #expect(symbols.contains(Self.mangled("TripBoardCommandLine")), "pdf-worker reads its words through the shared command line")
        for name in ["Keychain", "Migration", "sqlite3_", "crypto_"] {
            #expect(!symbols.contains(name), "pdf-worker defines a \(name) symbol")
        }
        #expect(symbols.contains(Self.mangled("TripBoardWorkerContract")), "the test reads the wrong binary")
    }

    /// The widget runs one read-only query: no keychain, migration, ticket, backup or sync code,
    /// no Argon2 — and libsodium's AEAD, to open the sealed store's pages.
    @Test func widgetLinksOnlyTheModelAndTheCommandLine() throws {
        let symbols = try Self.definedSymbols("widget")
        for module in ["TripBoardStorage", "TripBoardMigration", "TripBoardSodium", "TripBoardCLI", "PDFReader",
                       "TripBoardWorkerContract", "TripBoardTickets",
                       "TripBoardSync", "TripBoardSyncProtocol", "TripBoardSyncServer"] {
            #expect(!symbols.contains(Self.mangled(module)), "widget links \(module)")
        }
        for name in ["Keychain", "MigrationJournal", "Ticket", "SyncEngine", "SyncAgentClient", "ZoneKey", "WireRecord", "crypto_pwhash"] {
            #expect(!symbols.contains(name), "widget defines a \(name) symbol")
        }
        #expect(symbols.contains("tripboard_open_page"), "the widget opens sealed pages")
        #expect(symbols.contains(Self.mangled("TripBoardModel")), "the test reads the wrong binary")
    }

    /// The process that takes untrusted files from other apps files a ticket through the store and
    /// the tickets' reader, and seals it with the device's keys: it links the small keys module
    /// (TripBoardKeys: BLAKE2b, XChaCha20-Poly1305, secretstream, sealed boxes) and the device
    /// (its key, keybag and class keys) — and no password hashing (no Argon2id, no scrypt, no
    /// TripBoardSodium), no sync engine, migration, keychain or backup code, nothing of `app`'s
    /// commands, and none of the lock's passcode operations' derivation. (`container diagnose`'s
    /// report, in the store's module, names the keychain's counts, `KeychainStatistics`.)
    @Test func shareExtensionLinksTheKeysButNoPasswordHashingSyncMigrationKeychainOrBackup() throws {
        let symbols = try Self.definedSymbols("share-extension")
        for module in ["TripBoardSodium", "TripBoardKeychain", "TripBoardBackup", "TripBoardMigration", "TripBoardSync", "TripBoardSyncProtocol",
                       "TripBoardSyncServer", "TripBoardCLI", "TripBoardWidget", "PDFReader"] {
            #expect(!symbols.contains(Self.mangled(module)), "share-extension links \(module)")
        }
        for name in ["8Argon2id", "6Scrypt", "crypto_pwhash", "8KeychainC", "KeychainError", "KeychainAccessibility", "KeychainSchema",
                     "MigrationJournal", "LegacyStore", "SyncEngine", "SyncAgentClient", "ZoneKey", "WireRecord", "AgeWriter", "AgeReader",
                     "TarWriter", "TarReader", "ContainerRestore", "ContainerBackup"] {
            #expect(!symbols.contains(name), "share-extension defines a \(name) symbol")
        }
        for module in ["TripBoardShareExtension", "TripBoardTickets", "TripBoardKeys", "TripBoardDevice"] {
            #expect(symbols.contains(Self.mangled(module)), "share-extension should link \(module)")
        }
        #expect(symbols.contains("14SealedFileWriter") || symbols.contains("SealedFileWriter"), "it seals what it files")
    }

    /// The PostgreSQL client moves sealed records between `app` and the server: it links the
    /// frames it speaks (TripBoardSyncProtocol), the command line every executable reads its
    /// words with, and the basement's System and Sodium, and holds
    /// no store, no SQLite, no keychain, no migration and no sync engine (which has the keys).
    @Test func syncAgentLinksOnlyTheProtocolAndTheBasement() throws {
        let libraries = try ProcessRunner.run("/usr/bin/ldd", [ProcessRunner.executable("sync-agent")],
                                              environment: ProcessRunner.environment(container: nil))
        #expect(libraries.status == 0, "\(libraries.stderr)")
        #expect(!libraries.stdout.contains("libsqlite3"), "\(libraries.stdout)")
        let symbols = try Self.definedSymbols("sync-agent")
        for module in ["TripBoardStorage", "TripBoardMigration", "TripBoardSync", "TripBoardTickets", "TripBoardSQLite", "TripBoardModel",
                       "TripBoardCLI"] {
            #expect(!symbols.contains(Self.mangled(module)), "sync-agent links \(module)")
        }
        #expect(symbols.contains(Self.mangled("TripBoardCommandLine")), "sync-agent reads its words through the shared command line")
        for name in ["Keychain", "Migration", "Store", "sqlite3_", "SyncEngine", "ZoneKey"] {
            #expect(!symbols.contains(name), "sync-agent defines a \(name) symbol")
        }
        #expect(symbols.contains(Self.mangled("TripBoardSyncProtocol")), "the test reads the wrong binary")
    }
}
