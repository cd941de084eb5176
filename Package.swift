// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "pushseal",
    products: [
        .executable(name: "pushseal", targets: ["PushSealCLI"]),
        .library(name: "PushSeal", targets: ["PushSeal"]),
        // QR codes of key shares for `keys export --qr`, on libqrencode and libpng; dynamically
        // linked (Debian ships no static libqrencode), run as a child.
        .executable(name: "pushseal-qr", targets: ["PushSealQR"]),
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
        // Locked and Lock: state shared between threads, on pthread mutexes, which
        // ThreadSanitizer can see (Synchronization.Mutex's futex calls it cannot).
        .target(name: "Locking"),
        .target(name: "SealCrypto", dependencies: ["COpenSSL", "Locking"]),
        // The one monotonic clock and the one saturating Duration conversion, for the server
        // and the runner alike.
        .target(name: "MonotonicTime"),
        // Linux calls that Swift's Glibc module does not import (pipe2, renameat2).
        .target(name: "CSystem"),
        // libnghttp2 and OpenSSL's libssl (Debian's libnghttp2-dev, libssl-dev); HTTP2 is their
        // only user.
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev", "libssl-dev"])]
        ),
        // Both sides of HTTP/2 (TLS or prior knowledge) on one event-loop design: the server of
        // `receive --listen` and the client of `send`; knows nothing of APNs.
        .target(name: "HTTP2", dependencies: ["CNGHTTP2", "MonotonicTime", "Locking"]),
        .target(name: "PushSeal", dependencies: ["SealCrypto", "CSystem", "HTTP2", "MonotonicTime", "Locking"]),
        // libqrencode and libpng (Debian's libqrencode-dev, libpng-dev); PushSealQR is their only user.
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .executableTarget(name: "PushSealQR", dependencies: ["CQRencode", "CPNG"]),
        .executableTarget(name: "PushSealCLI", dependencies: ["PushSeal", "HTTP2", "MonotonicTime", "Locking"]),
        .executableTarget(name: "PushSealBench", dependencies: ["PushSeal"]),
        .testTarget(
            name: "SealCryptoTests",
            dependencies: ["SealCrypto"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "PushSealTests", dependencies: ["PushSeal", "SealCrypto", "MonotonicTime"]),
        .testTarget(
            name: "PushSealCLITests",
            dependencies: ["PushSealCLI", "PushSeal", "SealCrypto", "Locking"],
            resources: [.copy("Reference")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
