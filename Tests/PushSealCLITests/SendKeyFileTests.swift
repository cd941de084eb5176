import Foundation
import Testing

/// The `.p8` a sender is given, as people have them: a key Apple issued is used as it is; one
/// a colleague protected with a passphrase is refused at once with one line, on a terminal
/// too, where OpenSSL's default would ask for the passphrase and wait for ever.
@Suite("send: the provider key file")
struct SendKeyFileTests {
    /// Runs `arguments` on a pseudo-terminal that never types anything, for at most 15 s;
    /// what it printed and its exit status, or nil when it was still waiting and was killed.
    static func onATerminal(_ arguments: [String]) throws -> (output: String, status: Int?) {
        let run = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import json, os, pty, select, signal, sys, time
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv(sys.argv[1], sys.argv[1:])
                output, status, deadline = b"", None, time.time() + 15
                while status is None and time.time() < deadline:
                    if select.select([fd], [], [], 0.2)[0]:
                        try:
                            output += os.read(fd, 4096)
                        except OSError:
                            pass
                    done, raw = os.waitpid(pid, os.WNOHANG)
                    if done:
                        status = os.waitstatus_to_exitcode(raw)
                if status is None:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                print(json.dumps({"output": output.decode(errors="replace"), "status": status}))
                """
            ] + arguments)
        let answer = jsonObject(run.stdout)
        return (answer["output"] as? String ?? "", answer["status"] as? Int)
    }

    @Test func aPassphraseProtectedKeyIsRefusedWithOneLineAndNoPrompt() throws {
        let sending = try SendTests.Sending()
        let pkcs8 = sending.folder.file("protected.p8")
        let traditional = sending.folder.file("protected-ec.pem")
        #expect(try runProcess("/usr/bin/env", ["openssl", "pkcs8", "-topk8", "-in", sending.p8, "-out", pkcs8, "-passout", "pass:secret"]).status == 0)
        #expect(try runProcess("/usr/bin/env", ["openssl", "ec", "-in", sending.p8, "-aes256", "-out", traditional, "-passout", "pass:secret"]).status == 0)
        for key in [pkcs8, traditional] {
            chmod(key, 0o600)
            let arguments = [pushsealBinary, "token", "--keys", sending.keyring.keys, "--auth-key", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456"]
            let terminal = try Self.onATerminal(arguments)
            #expect(terminal.status == 65, "never waits for a passphrase: \(terminal.output)")
            #expect(!terminal.output.contains("pass phrase"), "\(terminal.output)")
            let run = try pushseal(Array(arguments.dropFirst()))
            #expect(run.status == 65 && run.stdout.isEmpty)
            #expect(
                run.stderr
                    == "error: \(key) is encrypted with a passphrase, which pushseal never asks for; decrypt a copy once (openssl pkey -in \(key) -out AuthKey.p8) or give the .p8 file Apple made\n",
                "\(run.stderr)")
        }
        // The key as Apple issues it still signs.
        let plain = try pushseal(["token", "--keys", sending.keyring.keys, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456"])
        #expect(plain.status == 0 && plain.stdout.split(separator: ".").count == 3)
    }
}
