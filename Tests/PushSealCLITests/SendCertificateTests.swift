import Foundation
import Testing

/// Certificate-based provider authentication, as many APNs users still have it: a client
/// certificate and its key (PEM, or a .p12 with a passphrase read from a file or the
/// environment), against a server that demands one, as APNs does for such providers.
@Suite("send: certificate-based provider authentication")
struct SendCertificateTests {
    /// A provider CA and a client certificate it issued, in every form people have them.
    struct Certificates {
        let folder = TemporaryFolder()
        func file(_ name: String) -> String { folder.file(name) }

        init() throws {
            let script = """
                set -e
                cd "$1"
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=Test Provider CA" 2>/dev/null
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr -subj "/CN=Apple Push Services: com.example.app" 2>/dev/null
                openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.crt -days 2 2>/dev/null
                cat client.crt client.key > client.pem
                openssl pkcs12 -export -in client.crt -inkey client.key -out client.p12 -passout pass:secret
                openssl pkey -in client.key -aes256 -passout pass:secret -out client-encrypted.key
                cat client.crt client-encrypted.key > client-encrypted.pem
                printf 'secret\\n' > passphrase.txt
                printf 'wrong\\n' > wrong.txt
                chmod 600 client.pem client.p12 client-encrypted.pem passphrase.txt wrong.txt
                """
            let made = try runProcess("/bin/sh", ["-c", script, "sh", folder.path])
            guard made.status == 0 else { throw CertificatesNotMade(stderr: made.stderr) }
        }

        struct CertificatesNotMade: Error { let stderr: String }
    }

    /// `send` with a client certificate and no provider token.
    static func send(_ sending: SendTests.Sending, to standIn: APNsStandIn, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try pushseal(
            [
                "send", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
                "--topic", topic, "--device", deviceToken, "-b", "by certificate"
            ] + arguments, environment: environment)
    }

    @Test func aClientCertificateAuthenticatesInEveryFormAndNeedsNoToken() throws {
        let sending = try SendTests.Sending()
        let certificates = try Certificates()
        let standIn = try APNsStandIn(for: sending, script: #"{"client_ca": "\#(certificates.file("ca.pem"))"}"#)
        let forms: [([String], [String: String])] = [
            (["--cert", certificates.file("client.pem")], [:]),
            (["--cert", certificates.file("client.p12")], ["PUSHSEAL_CERT_PASSPHRASE": "secret"]),
            (["--cert", certificates.file("client.p12"), "--cert-passphrase-file", certificates.file("passphrase.txt")], [:]),
            (["--cert", certificates.file("client-encrypted.pem"), "--cert-passphrase-file", certificates.file("passphrase.txt")], [:]),
            ([], ["PUSHSEAL_CERT": certificates.file("client.pem")])
        ]
        for (arguments, environment) in forms {
            let run = try Self.send(sending, to: standIn, arguments, environment: environment)
            #expect(run.status == 0, "\(arguments) \(environment.keys.sorted()): \(run.stderr)")
            #expect(run.stdout.hasPrefix("ok \(deviceToken) "), "\(run.stdout)")
            #expect(!run.stderr.contains("secret"))
        }
        let log = standIn.log
        #expect(
            log.count == forms.count && log.allSatisfy { $0["authorization"] as? Bool == false && $0["problem"] is NSNull },
            "no provider token is sent with a certificate: \(log)")
        #expect(!FileManager.default.fileExists(atPath: sending.tokenFile), "and none is made")
    }

    @Test func eachCertificateProblemIsOneLineAndTheTwoWaysDoNotMix() throws {
        let sending = try SendTests.Sending()
        let certificates = try Certificates()
        let standIn = try APNsStandIn(for: sending, script: #"{"client_ca": "\#(certificates.file("ca.pem"))"}"#)
        let refusals: [([String], [String: String], Int32, String)] = [
            (
                ["--cert", certificates.file("client.p12"), "--cert-passphrase-file", certificates.file("wrong.txt")], [:], 65,
                "error: \(certificates.file("client.p12")) cannot be used as a client certificate: the .p12 does not open with the passphrase given\n"
            ),
            (
                ["--cert", certificates.file("client.p12")], [:], 65,
                "error: \(certificates.file("client.p12")) cannot be used as a client certificate: the .p12 needs a passphrase and none was given\n"
            ),
            (
                ["--cert", certificates.file("client-encrypted.pem")], [:], 65,
                "error: \(certificates.file("client-encrypted.pem")) cannot be used as a client certificate: its private key is encrypted and no passphrase was given\n"
            ),
            (
                ["--cert", certificates.file("ca.key")], [:], 65,
                "error: \(certificates.file("ca.key")) cannot be used as a client certificate: no PEM certificate (-----BEGIN CERTIFICATE-----) in it\n"
            )
        ]
        for (arguments, environment, status, message) in refusals {
            let run = try Self.send(sending, to: standIn, arguments, environment: environment)
            #expect(run.status == status && run.stderr == message, "\(arguments): \(run.status) \(run.stderr)")
        }
        // The two ways to authenticate do not mix; a passphrase is never an argument.
        let both = try Self.send(sending, to: standIn, ["--cert", certificates.file("client.pem"), "--auth-key", sending.p8])
        #expect(both.status == 64 && both.stderr.hasPrefix("error: --cert authenticates with a client certificate; --auth-key belongs to a provider token"), "\(both.stderr)")
        let inline = try Self.send(sending, to: standIn, ["--cert", certificates.file("client.p12"), "--cert-passphrase", "secret"])
        #expect(inline.status == 64, "\(inline.stderr)")
        // Without a certificate, a server that demands one does not let the token in either.
        let tokenOnly = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
        #expect(tokenOnly.status != 0 && tokenOnly.stdout.hasPrefix("fail \(deviceToken) 0 "), "\(tokenOnly.status) \(tokenOnly.stderr)")
        #expect(standIn.log.isEmpty, "nothing got through")
    }
}
