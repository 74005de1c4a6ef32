// swift-tools-version: 6.0
import PackageDescription

/// Release binaries are the shipping binaries: plain `swift build -c release` must produce exactly what
/// `tools/bench` measures, so the link settings live here rather than in a script.
///
/// The executables start often and must start fast: a fully static executable (Swift runtime,
/// glibc and Debian's libsqlite3.a; no Foundation anywhere) skips the dynamic loader's work.
/// Measured in docs/performance.md. The linker's note that `dlopen` in a static glibc program
/// needs the same glibc at run time is expected: nothing here loads plug-ins.
let fullyStatic: [SwiftSetting] = [.unsafeFlags(["-static-executable"], .when(configuration: .release))]

/// Links `executable` fully static with lld, placing the functions listed in
/// `Sources/<executable>/startup-order.txt` (made by `tools/startup-order`) next to each other:
/// code that runs together shares pages, so start-up faults in fewer of them (the widget's peak RSS
/// falls by about a fifth). Names missing from the binary are skipped without a warning.
/// Without `ordered`, just the static link (an executable whose start-up has not been profiled).
func fullyStaticLink(_ executable: String, ordered: Bool = true) -> [LinkerSetting] {
    let order = Context.packageDirectory + "/Sources/\(executable)/startup-order.txt"
    let ordering = ordered ? ["-Xlinker", "--symbol-ordering-file=\(order)", "-Xlinker", "--no-warn-symbol-ordering"] : []
    return [.unsafeFlags(["-static-executable", "-use-ld=lld"] + ordering, .when(configuration: .release))]
}

let package = Package(
    name: "TripBoard",
    products: [
        .executable(name: "app", targets: ["app"]),
        .executable(name: "widget", targets: ["widget"]),
        .executable(name: "share-extension", targets: ["share-extension"]),
        .executable(name: "pdf-worker", targets: ["pdf-worker"]),
        .executable(name: "container-migration", targets: ["container-migration"]),
        .executable(name: "sync-agent", targets: ["sync-agent"]),
        // The sealed-page VFS as a SQLite loadable extension, for `app container sqlite`.
        .library(name: "TripBoardSealedPages", type: .dynamic, targets: ["SealedPagesExtension"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(name: "CSystem"),
        // poppler's C++ API and libpng, for PopplerShim (pdf-worker's only link to poppler).
        .systemLibrary(
            name: "CPopplerCpp",
            pkgConfig: "poppler-cpp libpng",
            providers: [.apt(["libpoppler-cpp-dev", "libpng-dev"])]
        ),
        // cairo: the tests draw their fixture PDFs with its PDF surface (nothing ships with it).
        .systemLibrary(
            name: "CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"])]
        ),
        // libpq: linked by `sync-agent` alone (it has no static build: GSSAPI, LDAP, OpenSSL).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The basement: the only modules that import Glibc, CSQLite or CSodium (docs/architecture.md).
        .target(
            name: "TripBoardSystem",
            dependencies: ["CSystem"]
        ),
        // The sealed-page VFS (C, over SQLite's unix VFS and libsodium): every page of a sealed
        // database's main file and WAL sealed with XChaCha20-Poly1305 (docs/security.md).
        .target(
            name: "SealedPages",
            dependencies: ["CSQLite", "CSodium"]
        ),
        .target(
            name: "SealedPagesExtension",
            dependencies: ["SealedPages", "CSQLite", "CSodium"]
        ),
        .target(
            name: "TripBoardSQLite",
            dependencies: ["CSQLite", "SealedPages", "TripBoardSystem", "TripBoardKeys"]
        ),
        // The small module of keys and sealing (SecureBytes, BLAKE2b, XChaCha20-Poly1305,
        // secretstream, X25519 sealed boxes, key derivation): what the device's keys and the sealed
        // files need, and all the share extension links of libsodium's wrappers — no password hashing.
        .target(
            name: "TripBoardKeys",
            dependencies: ["CSodium", "TripBoardSystem"]
        ),
        .target(
            name: "TripBoardSodium",
            dependencies: ["CSodium", "TripBoardSystem", "TripBoardKeys"]
        ),
        // What `share-extension` and `pdf-worker` say to each other: the worker links this and the
        // basement's System, never SQLite, Sodium or the store.
        .target(
            name: "TripBoardWorkerContract",
            dependencies: ["TripBoardSystem"]
        ),
        // What `app` and `sync-agent` say to each other: the frames, the wire records (identity and
        // versions in the clear, fields sealed), the limits both sides hold to. The agent links this
        // and the basement, never the store, the keychain or the engine.
        .target(
            name: "TripBoardSyncProtocol",
            dependencies: ["TripBoardSystem"]
        ),
        // The model: the records and their rules, each kind declared once; the schema; the
        // container's layout and its read-only open; the store's rows as the modules above see them;
        // the next-trip query. All the widget needs besides the command line (docs/architecture.md).
        .target(
            name: "TripBoardModel",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardKeys", "TripBoardDevice"]
        ),
        .target(
            name: "TripBoardStorage",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardKeys", "TripBoardWorkerContract", "TripBoardModel", "TripBoardDevice"]
        ),
        // The device: its key (outside any container), its keybag of protection class keys, and
        // its lock, whose unlocked keys the kernel keyring holds. Low, beside the basement: it
        // knows no store, so whatever opens sealed data can link it alone.
        .target(
            name: "TripBoardDevice",
            dependencies: ["TripBoardSystem", "TripBoardKeys"]
        ),
        // The keychain: its items, sealed under the container key and the device key. Above the
        // store, beside it in the container.
        .target(
            name: "TripBoardKeychain",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardModel", "TripBoardStorage", "TripBoardDevice"]
        ),
        // Backup and restore: the age + tar archive of the whole container, keychain included, and
        // its verification before anything is published.
        .target(
            name: "TripBoardBackup",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardModel", "TripBoardStorage", "TripBoardKeychain", "TripBoardDevice"]
        ),
        // The one-shot move of TripBoard 1's private store, attachments and preferences into the
        // shared container: above the store, whose writers and files it uses; the container only
        // asks, through the layout, whether a migration is unfinished (docs/architecture.md).
        .target(
            name: "TripBoardMigration",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardModel", "TripBoardStorage", "TripBoardKeychain", "TripBoardDevice"]
        ),
        // The command line every executable shares: the command model (parsing, help, errors),
        // the console, exit statuses, the single-command frame. No SQLite: the store's rows come
        // through the model's `StoreCursor`.
        .target(
            name: "TripBoardCommandLine",
            dependencies: ["TripBoardSystem"]
        ),
        // The widget links this, the command line, the model and the basement's System (and
        // SQLite through the model): no keychain, migration, ticket, backup or sync code
        // (docs/architecture.md).
        .target(
            name: "TripBoardWidget",
            dependencies: ["TripBoardSystem", "TripBoardModel", "TripBoardCommandLine", "TripBoardDevice"]
        ),
        // Ticket filing: what a ticket's text says (dates, route, reference, lodging) and the
        // importer that runs `pdf-worker` on a shared PDF and files it through the store.
        .target(
            name: "TripBoardTickets",
            dependencies: ["TripBoardSystem", "TripBoardModel", "TripBoardWorkerContract", "TripBoardStorage"]
        ),
        // `share-extension`: files a ticket through the store and the tickets' reader, on the command
        // line; no sync engine, migration, keychain or backup code (docs/architecture.md).
        .target(
            name: "TripBoardShareExtension",
            dependencies: ["TripBoardSystem", "TripBoardModel", "TripBoardWorkerContract", "TripBoardStorage", "TripBoardTickets", "TripBoardCommandLine"]
        ),
        // The sync engine: pull, merge, push, blobs, keychain items, the reconcile; above the store,
        // whose methods it composes (it runs no SQL of its own), talking to `sync-agent`.
        .target(
            name: "TripBoardSync",
            dependencies: ["TripBoardSystem", "TripBoardSodium", "TripBoardKeys", "TripBoardModel", "TripBoardStorage", "TripBoardKeychain", "TripBoardSyncProtocol"]
        ),
        .target(
            name: "TripBoardCLI",
            dependencies: ["TripBoardStorage", "TripBoardKeychain", "TripBoardDevice", "TripBoardBackup", "TripBoardMigration", "TripBoardTickets", "TripBoardSync", "TripBoardSyncProtocol", "TripBoardCommandLine",
                           "TripBoardWidget", "TripBoardShareExtension"]
        ),
        .executableTarget(
            name: "app",
            dependencies: ["TripBoardCLI"],
            exclude: ["startup-order.txt"],
            swiftSettings: fullyStatic,
            linkerSettings: fullyStaticLink("app")
        ),
        .executableTarget(
            name: "widget",
            dependencies: ["TripBoardWidget", "TripBoardCommandLine", "TripBoardSystem"],
            exclude: ["startup-order.txt"],
            swiftSettings: fullyStatic,
            linkerSettings: fullyStaticLink("widget")
        ),
        .executableTarget(
            name: "share-extension",
            dependencies: ["TripBoardShareExtension", "TripBoardSystem"],
            swiftSettings: fullyStatic,
            linkerSettings: fullyStaticLink("share-extension", ordered: false)
        ),
        // PDF parsing lives in its own process: untrusted files are parsed by `pdf-worker` under
        // memory and CPU limits, so nothing else links poppler (which has no static library).
        .target(
            name: "PopplerShim",
            dependencies: ["CPopplerCpp"]
        ),
        .target(
            name: "PDFReader",
            dependencies: ["PopplerShim", "TripBoardSystem", "TripBoardCommandLine", "TripBoardWorkerContract"]
        ),
        .executableTarget(
            name: "pdf-worker",
            dependencies: ["PDFReader", "TripBoardSystem"],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // Runs once per device: a static link like the others, without a start-up symbol order.
        .executableTarget(
            name: "container-migration",
            dependencies: ["TripBoardCLI", "TripBoardMigration"],
            swiftSettings: fullyStatic,
            linkerSettings: [.unsafeFlags(["-static-executable"], .when(configuration: .release))]
        ),
        // The sync server's client: PostgreSQL through libpq, in its own process, so that `app`,
        // `widget` and `share-extension` stay fully static and never link libpq. It holds no key
        // and opens no container: it moves sealed records between `app` and the server.
        .target(
            name: "TripBoardSyncServer",
            dependencies: ["CLibPQ", "TripBoardSystem", "TripBoardCommandLine", "TripBoardSodium", "TripBoardKeys", "TripBoardSyncProtocol"]
        ),
        .executableTarget(
            name: "sync-agent",
            dependencies: ["TripBoardSyncServer", "TripBoardSystem"],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // What the test targets share: a temp directory per test, a store with a clock of its own,
        // hex literals, a lock held by another process. Linked by tests only.
        .target(
            name: "TripBoardTestSupport",
            dependencies: ["TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardModel", "TripBoardStorage", "TripBoardDevice"],
            path: "Tests/TripBoardTestSupport"
        ),
        // One test target per module, named after it; a module's tests may set up through the
        // modules above it (a store fixture for the model's queries).
        .testTarget(name: "TripBoardSystemTests", dependencies: ["TripBoardSystem", "TripBoardModel", "TripBoardStorage", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardSQLiteTests", dependencies: ["TripBoardSQLite", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardSodiumTests", dependencies: ["TripBoardSodium", "TripBoardKeys", "TripBoardSystem", "TripBoardKeychain", "TripBoardStorage", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardModelTests", dependencies: ["TripBoardModel", "TripBoardSystem", "TripBoardSQLite", "TripBoardStorage", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardStorageTests", dependencies: ["TripBoardStorage", "TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardModel",
                                                                  "TripBoardDevice", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardKeychainTests", dependencies: ["TripBoardKeychain", "TripBoardDevice", "TripBoardSodium", "TripBoardKeys", "TripBoardStorage", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardDeviceTests", dependencies: ["TripBoardDevice", "TripBoardSodium", "TripBoardKeys", "TripBoardSystem", "TripBoardTestSupport"]),
        .testTarget(
            name: "TripBoardBackupTests",
            dependencies: ["TripBoardBackup", "TripBoardSodium", "TripBoardKeys", "TripBoardSystem", "TripBoardStorage", "TripBoardTestSupport"],
            // The age test kit's vectors and the Python helpers the interoperability tests run.
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "TripBoardMigrationTests", dependencies: ["TripBoardMigration", "TripBoardModel", "TripBoardSystem", "TripBoardStorage", "TripBoardTestSupport"]),
        .testTarget(name: "TripBoardTicketsTests", dependencies: ["TripBoardTickets", "TripBoardModel", "TripBoardSystem", "TripBoardStorage"]),
        .testTarget(name: "TripBoardCommandLineTests", dependencies: ["TripBoardCommandLine"]),
        .testTarget(name: "TripBoardSyncTests", dependencies: ["TripBoardSync", "TripBoardKeys", "TripBoardStorage", "TripBoardSystem", "TripBoardModel"]),
        .testTarget(name: "TripBoardSyncProtocolTests", dependencies: ["TripBoardSyncProtocol", "TripBoardSystem"]),
        .testTarget(
            name: "PDFReaderTests",
            dependencies: ["PDFReader", "CCairo", "TripBoardSystem", "TripBoardWorkerContract", "TripBoardModel", "TripBoardStorage", "TripBoardTestSupport"]
        ),
        // The command model in process: parsing, errors, suggestions, help, completion, man pages.
        .testTarget(
            name: "TripBoardCLITests",
            dependencies: ["TripBoardCLI", "TripBoardCommandLine", "TripBoardWidget", "TripBoardShareExtension", "TripBoardStorage", "TripBoardSystem",
                           "TripBoardSQLite", "TripBoardModel"]
        ),
        // The built executables as a user runs them, and the architecture as built.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["TripBoardStorage", "TripBoardKeychain", "TripBoardDevice", "TripBoardBackup", "TripBoardTickets", "TripBoardSync", "TripBoardSyncProtocol",
                           "TripBoardSystem", "TripBoardSQLite", "TripBoardSodium", "TripBoardKeys", "TripBoardWorkerContract", "TripBoardModel"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every target: strict concurrency is the Swift 6 default; also treat imports as internal unless
// marked public, so C modules never leak through a public API.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // The regex runtime (_StringProcessing, _RegexParser) is 1.1 MB of code that a static
    // executable would page in for nothing: TripBoard does not use regexes, so do not import it.
    if target.type != .test {
        settings.append(.unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"]))
    }
    target.swiftSettings = settings
}
