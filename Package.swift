// swift-tools-version:6.0
import PackageDescription

/// The receiving web app's files (Sources/PushSealWebApp/files), each embedded in the binary.
let webAppFiles = ["index.html", "app.js", "sw.js", "format.js", "store.js", "style.css", "icon.svg", "manifest.json"]

let package = Package(
    name: "pushseal",
    products: [
        .executable(name: "pushseal", targets: ["PushSealCLI"]),
        .library(name: "PushSeal", targets: ["PushSeal"]),
        // Sending sealed alerts to APNs from Swift (`NotificationSender`): PushSeal and HTTP/2.
        .library(name: "PushSealSend", targets: ["PushSealSend"]),
        // The modules PushSeal's own API speaks in: keys and sealed boxes (SealCrypto) and
        // the JSON values of an alert's data (PushSealJSON). A user names their types, so
        // depends on them, rather than reaching them through a transitive import.
        .library(name: "SealCrypto", targets: ["SealCrypto"]),
        .library(name: "PushSealJSON", targets: ["PushSealJSON"]),
        // The envelope's format and the placeholder words: PushSeal's API and PushSealKit's
        // both speak in their types, so a user can name them too.
        .library(name: "EnvelopeFormat", targets: ["EnvelopeFormat"]),
        .library(name: "NotificationText", targets: ["NotificationText"]),
        // QR codes of key shares for `keys export --qr`, on libqrencode and libpng; dynamically
        // linked (Debian ships no static libqrencode), run as a child.
        .executable(name: "pushseal-qr", targets: ["PushSealQR"]),
        // Figures for Scripts/bench.sh that only an in-process clock can take.
        .executable(name: "pushseal-bench", targets: ["PushSealBench"]),
        // The published test vectors (docs/vectors/), written by Scripts/vectors.sh.
        .executable(name: "pushseal-vectors", targets: ["PushSealVectors"])
    ],
    targets: [
        // OpenSSL's libcrypto (pkg-config libcrypto, from Debian's libssl-dev): SealCrypto calls it,
        // through CHPKE for HPKE's curve code (and HTTP2 reads its error queue, which libssl uses).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Locked and Lock: state shared between threads, on pthread mutexes, which
        // ThreadSanitizer can see (Synchronization.Mutex's futex calls it cannot).
        .target(name: "Locking", dependencies: ["CSystem"]),
        // JSON as pushseal reads and writes it (ordered members, numbers kept as their text);
        // pure Swift, so the device kit shares it and reads sealed alerts by the same rules.
        .target(name: "PushSealJSON"),
        // The words shown in place of a sealed alert, one definition for the Linux runner
        // and the device kit; pure Swift.
        .target(name: "NotificationText"),
        // The sealed field's format (versions, sizes, the key id rule, where the parts lie),
        // one definition for the sender, the Linux receiver and the device kit; pure Swift, no crypto.
        .target(name: "EnvelopeFormat"),
        // The messages a receiver has opened, so one arriving again is a duplicate: a bounded,
        // crash-safe file, one definition for the Linux runner and the device kit; pure Swift
        // on POSIX files, no crypto.
        .target(name: "SeenMessages"),
        // HPKE's P-256 key agreement and HKDF on libcrypto's curve objects: C of its own,
        // compiled with every warning an error, called only by SealCrypto.
        .target(name: "CHPKE", dependencies: ["COpenSSL"]),
        .target(name: "SealCrypto", dependencies: ["COpenSSL", "CHPKE", "Locking"]),
        // The one monotonic clock and the one saturating Duration conversion, for the server
        // and the runner alike.
        .target(name: "MonotonicTime"),
        // Linux calls that Swift's Glibc module does not import: pipe2, renameat2, accept4,
        // pidfd_open, a thread's name, signals passed on to a child, the tied spawn.
        .target(name: "CSystem"),
        // libnghttp2 and OpenSSL's libssl (Debian's libnghttp2-dev, libssl-dev); HTTP2 is their
        // only user. Keys and certificates (reading a key, the self-signed identity) are
        // SealCrypto's, on libcrypto.
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev", "libssl-dev"])]
        ),
        // Both sides of HTTP/2 (TLS or prior knowledge) on one event-loop design: the server of
        // `receive --listen` and the client of `send`; knows nothing of APNs.
        .target(name: "HTTP2", dependencies: ["CNGHTTP2", "CSystem", "SealCrypto", "MonotonicTime", "Locking"]),
        // The core: the format and sealing, keys, APNs' vocabulary and rules, the extension
        // runner's contract. No I/O beyond files: a user who only seals links nothing more.
        .target(name: "PushSeal", dependencies: ["PushSealJSON", "NotificationText", "EnvelopeFormat", "SeenMessages", "SealCrypto", "MonotonicTime", "Locking"]),
        .target(name: "PushSealSend", dependencies: ["PushSeal", "PushSealJSON", "SealCrypto", "HTTP2", "MonotonicTime", "Locking"]),
        .target(name: "PushSealReceiver", dependencies: ["PushSeal", "PushSealJSON", "EnvelopeFormat", "SeenMessages", "SealCrypto", "CSystem", "HTTP2", "MonotonicTime", "Locking"]),
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
        // The receiving web app (files/: HTML, JavaScript and a service worker on WebCrypto, no
        // build step), embedded in the binary for `webapp export` and `webapp serve`.
        .target(name: "PushSealWebApp", dependencies: ["PushSealJSON", "NotificationText"], resources: webAppFiles.map { .embedInCode("files/" + $0) }),
        .executableTarget(
            name: "PushSealCLI",
            dependencies: [
                "PushSeal", "PushSealSend", "PushSealReceiver", "PushSealWebApp", "PushSealJSON", "NotificationText", "SealCrypto", "SeenMessages",
                "MonotonicTime", "Locking"
            ]),
        .executableTarget(name: "PushSealBench", dependencies: ["PushSeal", "PushSealReceiver", "HTTP2", "SealCrypto", "SeenMessages", "MonotonicTime"]),
        .executableTarget(name: "PushSealVectors", dependencies: ["EnvelopeFormat", "PushSeal", "PushSealJSON", "SealCrypto"]),
        .testTarget(
            name: "SealCryptoTests",
            dependencies: ["SealCrypto", "CHPKE", "COpenSSL", "TestRandom"],
            resources: [.copy("Fixtures")]
        ),
        // The tests' one source of random choices, seeded so a failure can be replayed.
        .target(name: "TestRandom", dependencies: ["Locking"], path: "Tests/TestRandom"),
        // The HTTP/2 engine on its own: client and server in one process, and the client's
        // parts that need no socket.
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "SealCrypto", "Locking"]),
        .testTarget(
            name: "PushSealTests",
            dependencies: [
                "PushSeal", "PushSealSend", "PushSealReceiver", "PushSealJSON", "NotificationText", "SealCrypto", "MonotonicTime", "Locking", "HTTP2", "SeenMessages",
                "TestRandom"
            ]),
        .testTarget(
            name: "PushSealCLITests",
            dependencies: ["PushSealCLI", "PushSeal", "PushSealSend", "PushSealReceiver", "PushSealJSON", "NotificationText", "SealCrypto", "Locking", "TestRandom"],
            resources: [.copy("Reference")]
        )
    ],
    swiftLanguageModes: [.v6]
)

// PushSealKit, the device side: what an app's Notification Service Extension adds to open
// what pushseal seals. On Apple platforms it uses CryptoKit and needs nothing else, so an
// app adding this package by URL gets it with no OpenSSL and no swift-crypto. Elsewhere it is
// built on swift-crypto (CryptoKit's API), and only when asked: PUSHSEAL_SWIFT_CRYPTO gives
// swift-crypto's folder (or "url" for its repository), as Scripts/device-test.sh sets it, so
// the CLI's own build never fetches or builds swift-crypto.
#if canImport(Darwin)
// iOS 13 and macOS 10.15 (CryptoKit's first): ps1 opens there; ps2 needs HPKE (iOS 17,
// macOS 14) and interruption level and relevance score iOS 15, each checked where it is used.
package.platforms = [.iOS(.v13), .macOS(.v10_15)]
package.products.append(.library(name: "PushSealKit", targets: ["PushSealKit"]))
package.targets.append(.target(name: "PushSealKit", dependencies: ["PushSealJSON", "NotificationText", "EnvelopeFormat", "SeenMessages"]))
#else
if let crypto = Context.environment["PUSHSEAL_SWIFT_CRYPTO"], !crypto.isEmpty {
    package.dependencies.append(
        crypto == "url"
            ? .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.0")
            : .package(path: crypto))
    package.products.append(.library(name: "PushSealKit", targets: ["PushSealKit"]))
    // Warnings are errors here as in CI, for the kit alone: swift-crypto's own warnings are
    // not this project's to fix (Scripts/device-test.sh does not pass SWIFT_FLAGS on).
    let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]
    var appleAPI: [Target.Dependency] = []
    // The Apple adapter compiled and tested on Linux: PUSHSEAL_APPLE_TRANSCRIPTION (set by
    // Scripts/device-test.sh) adds a test-only transcription of the UserNotifications,
    // Security and CryptoKit declarations it calls, so `canImport` finds them, and of the
    // Intents and os declarations an extension's hooks use. A package that depends on the kit
    // from Linux gets these modules only when it sets the variable too (README: "Compiling
    // your extension on Linux").
    if Context.environment["PUSHSEAL_APPLE_TRANSCRIPTION"] == "1" {
        package.targets += [
            .target(name: "CryptoKit", dependencies: [.product(name: "Crypto", package: "swift-crypto")], path: "Tests/AppleAPI/CryptoKit", swiftSettings: strict),
            .target(name: "UserNotifications", path: "Tests/AppleAPI/UserNotifications", swiftSettings: strict),
            .target(name: "Security", path: "Tests/AppleAPI/Security", swiftSettings: strict),
            .target(name: "Intents", dependencies: ["UserNotifications"], path: "Tests/AppleAPI/Intents", swiftSettings: strict),
            .target(name: "os", path: "Tests/AppleAPI/os", swiftSettings: strict)
        ]
        // Intents and os are not the kit's: they are here so that a package depending on the
        // kit compiles an extension's hooks (a communication notification, a Logger) as written.
        appleAPI = ["CryptoKit", "UserNotifications", "Security", "Intents", "os"]
    }
    package.targets += [
        .target(
            name: "PushSealKit",
            dependencies: ["PushSealJSON", "NotificationText", "EnvelopeFormat", "SeenMessages", .product(name: "Crypto", package: "swift-crypto")] + appleAPI,
            swiftSettings: strict),
        .testTarget(name: "PushSealKitTests", dependencies: ["PushSealKit", "PushSealJSON", "TestRandom"], swiftSettings: strict)
    ]
}
#endif
