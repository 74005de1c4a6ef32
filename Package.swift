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
let fullyStaticLink: [LinkerSetting] = [.unsafeFlags(["-static-executable"], .when(configuration: .release))]

let package = Package(
    name: "TripBoard",
    products: [
        .executable(name: "app", targets: ["app"]),
        .executable(name: "widget", targets: ["widget"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(name: "CSystem"),
        .target(
            name: "TripBoardStorage",
            dependencies: ["CSQLite", "CSystem"]
        ),
        .target(
            name: "TripBoardCLI",
            dependencies: ["TripBoardStorage"]
        ),
        .executableTarget(
            name: "app",
            dependencies: ["TripBoardCLI"],
            swiftSettings: fullyStatic,
            linkerSettings: fullyStaticLink
        ),
        .executableTarget(
            name: "widget",
            dependencies: ["TripBoardCLI"],
            swiftSettings: fullyStatic,
            linkerSettings: fullyStaticLink
        ),
        .testTarget(
            name: "TripBoardStorageTests",
            dependencies: ["TripBoardStorage"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["TripBoardStorage"]
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
