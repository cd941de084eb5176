// A transcription for Linux, for tests only: CryptoKit's API is swift-crypto's `Crypto`
// (https://developer.apple.com/documentation/cryptokit), so the device kit's
// `import CryptoKit` compiles against the same declarations it gets on an iPhone.
@_exported import Crypto
