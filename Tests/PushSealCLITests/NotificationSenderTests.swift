import Foundation
import PushSeal
import PushSealSend
import Testing

/// `NotificationSender`'s promises beyond the article's path: what it refuses before sending,
/// and a key rotated on disk taking effect without a new sender.
@Suite("NotificationSender: refusals and rotation")
struct NotificationSenderTests {
    static let device = String(repeating: "ab", count: 32)

    /// A sender to a listener that verifies its provider tokens, as the article sets one up.
    static func sending(_ keyring: KeyringFixture, folder: TemporaryFolder) throws -> (NotificationSender, Listener) {
        let (p8, publicKey) = try PythonClients.keypair(in: folder)
        let listener = try Listener([
            "--plaintext", "--json", "--keys", keyring.keys, "--provider-key", "KEY1234567=\(publicKey)", "--team", "TEAM123456"
        ])
        let sender = try NotificationSender(
            .init(
                topic: "com.example.app", credentials: .providerToken(keyFile: p8, keyID: "KEY1234567", teamID: "TEAM123456"),
                keysFolder: keyring.keys, endpoint: listener.url))
        return (sender, listener)
    }

    @Test func aTokenThatIsNotOneIsRefusedBeforeAnythingIsSent() async throws {
        let (keyring, folder) = (try KeyringFixture(), TemporaryFolder())
        let (sender, listener) = try Self.sending(keyring, folder: folder)
        let alert = AlertRequest(title: "Deploy finished")
        await #expect(throws: SendError.self) { _ = try await sender.send(alert, to: "not-a-token") }
        #expect(throws: SendError.self) { _ = try sender.send(alert, to: [Self.device, "abc"]) }
        await #expect(throws: PayloadError.self) { _ = try await sender.send(AlertRequest(), to: Self.device) }
        await sender.shutdown()
        #expect(listener.finish().stdout.isEmpty, "nothing reached the listener")
    }

    @Test func aKeyRotatedOnDiskSealsTheNextNotification() async throws {
        let (keyring, folder) = (try KeyringFixture(), TemporaryFolder())
        let (sender, listener) = try Self.sending(keyring, folder: folder)
        let first = try await sender.send(AlertRequest(title: "before"), to: Self.device)
        let rotate = try pushseal(["keys", "rotate", "--keys", keyring.keys])
        #expect(rotate.status == 0, "\(rotate.stderr)")
        let second = try await sender.send(AlertRequest(title: "after"), to: Self.device)
        await sender.shutdown()
        #expect(first.outcome == .ok && second.outcome == .ok)
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.map { $0["status"] as? String } == ["decrypted", "decrypted"])
        #expect(records.map { $0["title"] as? String } == ["before", "after"])
        let kids = records.compactMap { $0["kid"] as? String }
        #expect(kids.count == 2 && kids[0] != kids[1], "the second was sealed under the new primary: \(kids)")
    }
}
