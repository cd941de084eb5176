import Foundation
import Testing

/// `encrypt --web`: the web form a backend hands to any Web Push library, which encrypts it
/// for a browser's subscription (RFC 8291); the receiving web app opens the envelope inside.
@Suite("encrypt --web: the envelope for Web Push")
struct WebFormTests {
    @Test func theWebFormIsTheEnvelopeAloneAndDecryptOpensIt() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["--web", "-t", "Deploy", "-b", "main is live"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        let payload = jsonObject(run.stdout)
        #expect(Array(payload.keys) == ["enc"], "no aps: a browser shows nothing by itself")
        #expect((payload["enc"] as? String)?.hasPrefix("ps1.") == true)
        // decrypt judges a payload as receive does, and a payload with no aps is malformed
        // there; the envelope inside, given bare, opens (as the web app opens it).
        #expect(try keyring.decrypt(payload: run.stdout).stderr.hasPrefix("error: malformed: the payload has no 'aps' dictionary"))
        let opened = jsonObject(try keyring.decrypt(payload: try #require(payload["enc"] as? String)).stdout)
        #expect(opened["title"] as? String == "Deploy" && opened["body"] as? String == "main is live")
    }

    @Test func everyBatchLineIsWrittenInTheWebForm() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["--web", "--batch"], stdin: #"{"title":"one"}"# + "\n" + #"{"title":"two","visible-sound":"default"}"# + "\n")
        let lines = run.stdout.split(separator: "\n")
        #expect(run.status == 65 && lines.count == 1 && Array(jsonObject(String(lines[0])).keys) == ["enc"])
        #expect(run.stderr.contains("line 2: visible-sound and visible-level have no place in the web form"), "\(run.stderr)")
    }

    @Test func aFallbackAlertHasNoPlaceInTheWebForm() {
        let run = parsed(["encrypt", "--web", "-t", "T", "--fallback-title", "New message"])
        #expect(run.status == 64 && run.stderr.hasPrefix("error: --web payloads carry no fallback alert"), "\(run.stderr)")
    }

    @Test func aBodyTooLongForOnePushMessageIsRefusedOrCutToFit() throws {
        let keyring = try KeyringFixture()
        let long = String(repeating: "0123456789", count: 390)
        let refused = try keyring.encrypt(["--web", "-t", "T", "-b", long])
        #expect(refused.status == 65 && refused.stderr.contains("over the 3993 bytes one push message carries"), "\(refused.stderr)")
        let cut = try keyring.encrypt(["--web", "--truncate", "-t", "T", "-b", long])
        #expect(cut.status == 0 && cut.stderr.hasSuffix("to fit a Web Push message's 3993-byte payload\n"), "\(cut.stderr)")
        #expect(cut.stdout.utf8.count <= 3_994)
    }
}

/// `keys vapid`: the key a Web Push sender names itself with, kept beside the keyring.
@Suite("keys vapid: the Web Push sender's VAPID key")
struct VAPIDKeyTests {
    @Test func theKeyIsMadeOnceKeptPrivateAndReplacedOnlyByRotate() throws {
        let keyring = try KeyringFixture()
        let first = try keyring.keysCommand(["vapid"])
        let publicKey = first.stdout.trimmingCharacters(in: .newlines)
        #expect(first.status == 0 && publicKey.count == 87, "65 bytes in base64url: \(first.stdout)")
        let file = keyring.keys + "/vapid-key.pem"
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The file's private key is the printed public key's (read by Python's cryptography).
        let derived = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import base64, sys
                from cryptography.hazmat.primitives import serialization
                key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
                point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
                print(base64.urlsafe_b64encode(point).rstrip(b"=").decode())
                """, file
            ])
        #expect(derived.stdout.trimmingCharacters(in: .newlines) == publicKey, "\(derived.stderr)")
        #expect(try keyring.keysCommand(["vapid"]).stdout == first.stdout)
        let rotated = try keyring.keysCommand(["vapid", "--rotate"])
        #expect(rotated.status == 0 && rotated.stdout != first.stdout)
        #expect(rotated.stderr.hasPrefix("warning: a new VAPID key is in ") && rotated.stderr.contains("subscribe again"))
    }

    @Test func withNoKeyringThereIsNoVAPIDKey() throws {
        let folder = TemporaryFolder()
        let run = try pushseal(["keys", "vapid", "--keys", folder.file("none")])
        #expect(run.status == 66 && run.stderr.hasPrefix("error: no keyring at "))
        #expect(!FileManager.default.fileExists(atPath: folder.file("none") + "/vapid-key.pem"))
    }
}
