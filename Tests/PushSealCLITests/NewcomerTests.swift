import Foundation
import Testing

/// What a newcomer's first trial hit: each a one-line answer now.
@Suite("a newcomer's rough edges")
struct NewcomerTests {
    /// `df -h | pushseal encrypt -t Disk`: the '-' was forgotten, and stdin is said to be unread.
    @Test func aPipeWithoutTheDashIsSaidToBeUnread() throws {
        let keyring = try KeyringFixture()
        let piped = try shell(#"echo "91% on /var" | "$PUSHSEAL" encrypt --keys "$K" -t Disk"#, environment: ["K": keyring.keys])
        #expect(piped.status == 0)
        #expect(piped.stderr == "warning: stdin is a pipe or a file, and it is not read: the alert has no body from it; give '-' to seal stdin as the body\n")
        // With the dash, or with nothing on stdin (a terminal, /dev/null, an empty file), nothing is said.
        let read = try shell(#"echo "91% on /var" | "$PUSHSEAL" encrypt --keys "$K" -t Disk -"#, environment: ["K": keyring.keys])
        let opened = jsonObject(try keyring.decrypt(payload: read.stdout).stdout)
        #expect(read.status == 0 && read.stderr.isEmpty && opened["body"] as? String == "91% on /var")
        let quiet = try shell(#""$PUSHSEAL" encrypt --keys "$K" -t Disk < /dev/null"#, environment: ["K": keyring.keys])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty)
    }

    /// Two sources for the sealed data.url: neither silently wins.
    @Test func urlGivenTwiceIsRefused() throws {
        let keyring = try KeyringFixture()
        let run = parsed(["encrypt", "-t", "T", "--url", "https://a.example", "--data", "url=https://b.example"])
        #expect(run.status == 64 && run.stderr.hasPrefix("error: --url and --data url=… both set the sealed data.url; give one"))
        let batch = try keyring.encrypt(["--batch"], stdin: #"{"title": "T", "url": "https://a.example", "data": {"url": "https://b.example"}}"# + "\n")
        #expect(batch.status == 65 && batch.stderr.contains("'url' and data.url both set the sealed data.url"), "\(batch.stderr)")
    }

    /// Only 4,097 bytes of stdin are read, so the note does not claim to know its length.
    @Test func theTruncationNoteOnStdinDoesNotInventALength() throws {
        let keyring = try KeyringFixture()
        let long = String(repeating: "0123456789", count: 2_000)
        let run = try keyring.encrypt(["-t", "T", "--truncate", "-"], stdin: long)
        #expect(run.status == 0)
        #expect(run.stderr.hasPrefix("note: the body was cut to ") && run.stderr.hasSuffix(" characters of stdin's more than 4096 bytes to fit APNs' 4096-byte payload\n"), "\(run.stderr)")
        #expect(!run.stderr.contains("20000"))
    }

    /// Input that is not a payload: doctor and receive agree that nothing is shown.
    @Test(arguments: ["not json", #"{"aps":"#, "[1,2]", #"{"aps":1}"#])
    func doctorAndReceiveAgreeOnWhatIsNotAPayload(_ input: String) throws {
        let keyring = try KeyringFixture()
        let doctor = try pushseal(["doctor", "--keys", keyring.keys, "-"], stdin: input + "\n")
        let received = jsonObject(try pushseal(["receive", "--json", "--keys", keyring.keys, "-"], stdin: input + "\n").stdout)
        #expect(received["status"] as? String == "malformed" && received["title"] as? String == "" && received["body"] as? String == "")
        #expect(doctor.status == 65 && doctor.stdout.hasSuffix("verdict: nothing is shown: it is not a payload a device could receive (malformed)\n"), "\(doctor.stdout)")
        // Byte offsets count what receive reads: the line without its break.
        if input == #"{"aps":"# { #expect(doctor.stdout.contains("at byte 7") && (received["reason"] as? String)?.contains("at byte 7") == true) }
    }
}
