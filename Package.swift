// swift-tools-version: 6.0
import PackageDescription

/// Release binaries are the shipping binaries: plain `swift build -c release` must produce exactly what
/// `tools/bench` measures, so the link settings live here rather than in a script.
let staticStdlib: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]

let package = Package(
    name: "TripBoard",
    products: [
        .executable(name: "app", targets: ["app"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "TripBoardStorage",
            dependencies: ["CSQLite"]
        ),
        .target(
            name: "TripBoardCLI",
            dependencies: ["TripBoardStorage"]
        ),
        .executableTarget(
            name: "app",
            dependencies: ["TripBoardCLI"],
            linkerSettings: staticStdlib
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
    target.swiftSettings = settings
}
