// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "pushseal",
    products: [
        .executable(name: "pushseal", targets: ["PushSealCLI"]),
        .library(name: "PushSeal", targets: ["PushSeal"]),
        // Figures for Scripts/bench.sh that only an in-process clock can take.
        .executable(name: "pushseal-bench", targets: ["PushSealBench"]),
    ],
    targets: [
        // OpenSSL's libcrypto (pkg-config libcrypto, from Debian's libssl-dev); SealCrypto is its only user.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "SealCrypto", dependencies: ["COpenSSL"]),
        // Linux calls that Swift's Glibc module does not import (pipe2, renameat2).
        .target(name: "CSystem"),
        .target(name: "PushSeal", dependencies: ["SealCrypto", "CSystem"]),
        .executableTarget(name: "PushSealCLI", dependencies: ["PushSeal"]),
        .executableTarget(name: "PushSealBench", dependencies: ["PushSeal"]),
        .testTarget(
            name: "SealCryptoTests",
            dependencies: ["SealCrypto"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "PushSealTests", dependencies: ["PushSeal", "SealCrypto"]),
        .testTarget(
            name: "PushSealCLITests",
            dependencies: ["PushSealCLI", "PushSeal", "SealCrypto"],
            resources: [.copy("Reference")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
