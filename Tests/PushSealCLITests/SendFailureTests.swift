import Foundation
import PushSeal
import PushSealSend
import SealCrypto
import Testing

@testable import PushSealCLI

/// Why `send` could not run, typed and mapped once: every `SendError` exits with the code the
/// exit-code table gives `send` for it, and the provider token's failures are `SendError`s.
@Suite("send: failures of the whole run")
struct SendFailureTests {
    @Test func everySendFailureHasItsExitCode() {
        #expect(exitStatus(for: SendError(.unreachable, "cannot reach it")) == .temporaryFailure)
        #expect(exitStatus(for: SendError(.untrusted, "not trusted")) == .configuration)
        #expect(exitStatus(for: SendError(.refused, "no h2")) == .configuration)
        // Set-up (an address or trust file that cannot be used) is configuration, not I/O.
        #expect(exitStatus(for: SendError(.setup, "the proxy cannot be used")) == .configuration)
        #expect(exitStatus(for: SendError(.token, "the clock")) == .configuration)
        let disk = FileIOFailure(code: ENOSPC, message: "no space left on device")
        #expect(exitStatus(for: SendError(.token, "cannot keep the provider token", underlying: disk)) == .ioError)
        for code in [SendFailure.token, .unreachable, .untrusted, .refused, .setup] {
            let status = exitStatus(for: SendError(code, "x", underlying: code == .token ? disk : nil))
            #expect(ExitCodes.send.contains { $0.status == status }, "send exits \(status.rawValue) for \(code), which its table lacks")
        }
    }

    /// A token that cannot be kept is the sender's failure (`SendError`, `.token`), with the
    /// file's own failure beneath it, not the keyring's.
    @Test func aTokenThatCannotBeKeptIsASendError() throws {
        let scratch = TemporaryFolder()
        let generated = try shell("openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt")
        let key = try ES256Key(pem: Array(generated.stdout.utf8))
        let cache = ProviderTokenCache(folder: scratch.path, key: key, keyID: "KEY1234567", teamID: "TEAM123456")
        // Where the token should be kept, a folder stands.
        try FileManager.default.createDirectory(atPath: cache.path, withIntermediateDirectories: false)
        do {
            _ = try cache.token()
            Issue.record("a token was kept where a folder stands")
        } catch let error as SendError {
            #expect(error.code == .token && error.reason.contains("cannot keep the provider token"))
            #expect(error.underlying is FileIOFailure)
        }
    }
}
