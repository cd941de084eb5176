import Foundation
import HTTP2
import PushSeal
import SealCrypto
import Testing

/// Library errors state facts (no flags, no commands to run) and keep the failure beneath.
@Suite("library errors")
struct ErrorPatternTests {
    @Test func aFailedOpenKeepsTheCryptoErrorBeneath() throws {
        let key = try SymmetricKey.generate()
        let envelope = try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: "aaaaaaaa", key: key)).envelope(sealing: Array("hello".utf8)))
        let other = try SymmetricKey.generate()
        #expect {
            try envelope.open(with: other)
        } throws: { error in
            let error = error as? EnvelopeError
            return error?.code == .authenticationFailed && (error?.underlying as? SealCryptoError)?.code == .authenticationFailed
        }
    }

    @Test func openSSLsOwnErrorCodeIsKept() {
        let garbage = Array("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".utf8)
        #expect {
            _ = try ES256Key(pem: garbage)
        } throws: { error in
            let error = error as? SealCryptoError
            return error?.code == .invalidKey && error?.openSSLError != 0 && error?.openSSLReason != nil
        }
    }

    @Test func aSystemFailureKeepsItsErrno() throws {
        let folder = NSTemporaryDirectory() + "pushseal-errors-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: folder, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A keyring folder below a plain file cannot be made: ENOTDIR, kept as the cause.
        let store = KeyringStore(folder: folder + "/Keys")
        #expect {
            try store.create(try Keyring.generate(now: 0))
        } throws: { error in
            let error = error as? KeyringError
            return error?.code == .cannotCreate && error?.errno == ENOTDIR
        }
    }

    @Test func everyLibraryErrorChainsDownToWhatTheSystemOrOpenSSLSaid() throws {
        // A file that is not there: the system's ENOENT beneath the crypto error.
        #expect {
            _ = try TLSPrivateKey(file: "/nonexistent/pushseal-\(UUID().uuidString).pem")
        } throws: { error in
            guard let error = error as? SealCryptoError else { return false }
            return error.systemErrno == ENOENT && error.chain.count == 2 && error.chain.last is SystemCallFailure
        }
        // OpenSSL's own code, as the last link.
        let garbage = Array("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".utf8)
        #expect {
            _ = try ES256Key(pem: garbage)
        } throws: { error in
            guard let error = error as? SealCryptoError, let root = error.chain.last as? OpenSSLFailure else { return false }
            return root.code == error.openSSLError && !root.description.isEmpty
        }
        // A share that is not base64url keeps the decoder's error; a failed open, the crypto error.
        #expect {
            _ = try PublicShare(parsing: "ppk1.abcd1234.not*base64")
        } throws: { error in
            guard let error = error as? KeyringError else { return false }
            return error.code == .invalidShare && error.underlying != nil
        }
        // A listener whose port is taken: the listener's error, the HTTP/2 server's, EADDRINUSE.
        let taken = try HTTP2Server(host: "127.0.0.1", port: 0, tls: nil) { _ in HTTP2Server.Response(status: 200) }
        #expect {
            _ = try HTTP2Server(host: "127.0.0.1", port: taken.port, tls: nil) { _ in HTTP2Server.Response(status: 200) }
        } throws: { error in
            guard let error = error as? HTTP2ServerError else { return false }
            return error.systemErrno == EADDRINUSE
        }
    }

    @Test func reasonsCarryNoCommandLineWords() throws {
        var keyring = try Keyring.generate(now: 0)
        let secretKid = try #require(keyring.primary?.id)
        var devicesKey = Keyring(keys: [
            KeyEntry(
                id: "abcd1234", kind: .public, privateKey: nil,
                publicKey: try P256PrivateKey.generate().publicKey, state: .primary, created: 0)
        ])
        var reasons: [String: String] = [:]
        do { _ = try keyring.sealingKey(to: secretKid, now: 0) } catch let error as KeyringError { reasons["\(error.code)"] = error.reason }
        do { try keyring.destroy(secretKid) } catch let error as KeyringError { reasons["\(error.code)"] = error.reason }
        do { try devicesKey.rotate(grace: .zero, now: 0) } catch let error as KeyringError { reasons["\(error.code)"] = error.reason }
        #expect(Set(reasons.keys) == ["notARecipient", "notAllowed", "deviceKey"])
        for (code, reason) in reasons {
            #expect(!reason.contains("--") && !reason.contains("pushseal ") && !reason.contains("keys ") && !reason.contains("chmod"), "\(code): \(reason)")
        }
    }
}
