import Foundation
import Testing

/// `pushseal doctor PAYLOAD`: every fault it names, in a table of broken payloads, each with
/// the check that finds it, its words, its fix, and the status the receiver gives the same
/// payload (`receive --json` with the same keyring), so doctor and receiver never disagree.
@Suite("doctor: why a notification does not arrive, or does not open")
struct DoctorTests {
    /// A keyring holding the ps1 vectors' keys, and the vectors' first good payload.
    struct Fixture {
        let scratch = TemporaryFolder()
        let keys: String
        let good: String
        let vectors: VectorTests.Vectors

        init() throws {
            vectors = try VectorTests.Vectors("ps1")
            keys = scratch.file("Keys")
            for (_, key) in vectors.keys.sorted(by: { $0.key < $1.key }) {
                #expect(try pushseal(["keys", "import", "--keys", keys, "-"], stdin: key["share"]!).status == 0)
            }
            good = vectors.positive[0]["payload"] as! String
        }

        func negative(_ name: String) -> String {
            vectors.negative.first { $0["name"] as? String == name }!["payload"] as! String
        }

        /// The good payload with `change` applied to its JSON object.
        func changed(_ change: (inout [String: Any]) -> Void) -> String {
            var object = jsonObject(good)
            change(&object)
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        }

        func doctor(_ payload: String, _ extra: [String] = []) throws -> (run: Run, report: [String: Any]) {
            let file = scratch.file("payload-\(UUID().uuidString).json")
            try payload.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try pushseal(["doctor", "--json", "--keys", keys] + extra + [file])
            return (run, jsonObject(run.stdout))
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let check: String
        let says: String
        let status: String?
        let extra: [String]
        var testDescription: String { name }

        init(_ name: String, check: String, says: String, status: String?, extra: [String] = []) {
            self.name = name
            self.check = check
            self.says = says
            self.status = status
            self.extra = extra
        }
    }

    /// Each broken payload: how it is made from a good one, and what doctor must say.
    static let cases: [Case] = [
        Case("not JSON", check: "json", says: "not strict JSON", status: "malformed"),
        Case("a member twice in the payload", check: "json", says: "duplicate key", status: "malformed"),
        Case("no mutable-content", check: "extension", says: "no mutable-content: iOS shows the fallback as it came", status: "passthrough"),
        Case("mutable-content as a string", check: "extension", says: "only the number 1 makes iOS run the extension", status: "passthrough"),
        Case("content-available only", check: "extension", says: "a background push (content-available only)", status: "passthrough"),
        Case("no alert text", check: "extension", says: "no alert text", status: "passthrough"),
        Case("over the size limit", check: "size", says: "over the 4096 bytes APNs takes for an alert push", status: "malformed"),
        Case(
            "sent as a background push", check: "push type", says: "sent as a background push, an alert is not shown", status: "decrypted",
            extra: ["--push-type", "background", "--priority", "5"]),
        Case("no envelope field", check: "envelope", says: "no 'enc' field: nothing is sealed", status: "passthrough"),
        Case("the envelope in another field", check: "envelope", says: "but 'sealed' holds an envelope", status: "passthrough"),
        Case("the envelope not a string", check: "envelope", says: "is an object, not an envelope string", status: "malformed"),
        Case("padding in the base64", check: "envelope", says: "ends with '=' padding", status: "malformed"),
        Case("standard base64 alphabet", check: "envelope", says: "standard base64 alphabet", status: "malformed"),
        Case("a space inside", check: "envelope", says: "has a space at character 1", status: "malformed"),
        Case("wrapped at 76 columns", check: "envelope", says: "has a line break at character 77", status: "malformed"),
        Case("truncated box", check: "envelope", says: "it was cut off on the way", status: "malformed"),
        Case("a later version", check: "envelope", says: "envelope version 'ps9' is not supported", status: "unsupported"),
        Case("a bad kid", check: "envelope", says: "is not 1 to 64 of A-Z a-z 0-9 _ -", status: "malformed"),
        Case("unknown kid", check: "key", says: "no key 0badc0de in", status: "key-missing"),
        Case("kid of another key", check: "opens", says: "authentication failed", status: "auth-failed"),
        Case("tampered tag", check: "opens", says: "authentication failed", status: "auth-failed"),
        Case("exp passed", check: "exp", says: "it expired at 2001-09-09T01:46:40Z", status: "expired"),
        Case("duplicate member", check: "opens", says: "duplicate key \\\"title\\\"", status: "malformed"),
        Case("wrong member type", check: "opens", says: "'badge' must be a whole number", status: "malformed"),
        Case("a disabled key", check: "key", says: "key 3f9a0c1e is disabled", status: "key-disabled")
    ]

    func payload(_ name: String, _ fixture: Fixture) throws -> String {
        let envelope = jsonObject(fixture.good)["enc"] as! String
        switch name {
        case "not JSON": return String(fixture.good.dropLast())
        case "a member twice in the payload": return String(fixture.good.dropLast()) + #","enc":"ps1.x.y"}"#
        case "no mutable-content":
            return fixture.changed { object in
                var aps = object["aps"] as! [String: Any]
                aps["mutable-content"] = nil
                object["aps"] = aps
            }
        case "mutable-content as a string":
            return fixture.changed { object in
                var aps = object["aps"] as! [String: Any]
                aps["mutable-content"] = "1"
                object["aps"] = aps
            }
        case "content-available only": return fixture.changed { $0["aps"] = ["content-available": 1, "mutable-content": 1] }
        case "no alert text": return fixture.changed { $0["aps"] = ["alert": ["title": ""], "mutable-content": 1] }
        case "over the size limit": return fixture.changed { $0["padding"] = String(repeating: "x", count: 4_000) }
        case "sent as a background push": return fixture.good
        case "no envelope field": return fixture.changed { $0["enc"] = nil }
        case "the envelope in another field":
            return fixture.changed { object in
                object["sealed"] = object["enc"]
                object["enc"] = nil
            }
        case "the envelope not a string": return fixture.changed { $0["enc"] = ["box": envelope] }
        case "wrapped at 76 columns":
            return fixture.changed { object in
                let header = "ps1.3f9a0c1e."
                let sealed = envelope.dropFirst(header.count)
                object["enc"] = header + sealed.prefix(76) + "\n" + sealed.dropFirst(76)
            }
        case "a bad kid": return fixture.changed { $0["enc"] = envelope.replacingOccurrences(of: "ps1.3f9a0c1e.", with: "ps1.3f9a 0c1e.") }
        case "a disabled key": return fixture.good
        default: return fixture.negative(name)
        }
    }

    @Test(arguments: cases)
    func doctorNamesTheFaultAndAgreesWithTheReceiver(_ entry: Case) throws {
        let fixture = try Fixture()
        if entry.name == "a disabled key" {
            #expect(try pushseal(["keys", "disable", "3f9a0c1e", "--keys", fixture.keys]).status == 0)
        }
        let payload = try payload(entry.name, fixture)
        let (run, report) = try fixture.doctor(payload, entry.extra)
        #expect(run.status == 65, "a problem exits 65: \(run.stdout) \(run.stderr)")
        let findings = report["findings"] as? [[String: Any]] ?? []
        let problems = findings.filter { $0["level"] as? String == "problem" }
        let found = problems.first { $0["check"] as? String == entry.check }
        #expect(found != nil, "no problem in '\(entry.check)': \(run.stdout)")
        #expect(
            (found?["says"] as? String)?.contains(entry.says.replacingOccurrences(of: "\\\"", with: "\"")) == true,
            "\(found?["says"] ?? run.stdout)")
        #expect((found?["fix"] as? String)?.isEmpty == false, "every problem has its fix: \(found ?? [:])")
        #expect(report["status"] as? String == entry.status, "\(report["status"] ?? "nil")")
        // The receiver, given the same payload and keys, gives the same status.
        if let status = entry.status, entry.check != "size", entry.check != "push type" {
            let received = try pushseal(["receive", "--json", "--keys", fixture.keys, "-"], stdin: payload.replacingOccurrences(of: "\n", with: "\\n") + "\n")
            if entry.name != "wrapped at 76 columns" {
                #expect(jsonObject(received.stdout)["status"] as? String == status, "receive: \(received.stdout) \(received.stderr)")
            }
        }
    }

    @Test func aGoodPayloadPassesEveryCheckAndSaysWhatIsShown() throws {
        let fixture = try Fixture()
        let (run, report) = try fixture.doctor(fixture.good)
        #expect(run.status == 0, "\(run.stdout)")
        #expect(report["status"] as? String == "decrypted")
        #expect((report["shown"] as? [String: Any])?["title"] as? String == "Deploy finished")
        let checks = (report["findings"] as? [[String: Any]] ?? []).map { "\($0["level"]!) \($0["check"]!)" }
        #expect(checks == ["ok json", "ok size", "ok extension", "ok push type", "ok envelope", "ok key", "ok exp", "ok opens"], "\(checks)")
        let text = try pushseal(["doctor", "--keys", fixture.keys, "-"], stdin: fixture.good)
        #expect(text.status == 0)
        #expect(text.stdout.hasSuffix("verdict: it opens: the device shows the sealed alert\n"), "\(text.stdout)")
        #expect(text.stdout.contains(#"ok       opens      the device shows "Deploy finished" / "api-7 is live""#), "\(text.stdout)")
    }

    @Test func withoutKeysItStopsAtTheEnvelopeAndSaysWhichKeyItNeeds() throws {
        let fixture = try Fixture()
        let run = try pushseal(["doctor", "-"], stdin: fixture.good, environment: ["PUSHSEAL_KEYS": ""])
        // Nothing wrong was found, and the seal was not checked either: neither 0 nor 65.
        #expect(run.status == 66, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("note     key        could not check the seal without --keys: it needs key 3f9a0c1e (a shared secret)"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("verdict: could not check the seal without --keys: it reaches the extension sealed; give --keys DIR to check that it opens\n"), "\(run.stdout)")
    }

    /// What the listener received is what doctor reads: a payload delivered through
    /// `receive --listen` by curl has the same verdict as the file.
    @Test func aPayloadThroughTheListenerGetsTheVerdictDoctorGaveIt() throws {
        let fixture = try Fixture()
        // Asked first: once the listener has shown the good one, doctor (like the runner)
        // calls it a duplicate.
        let verdicts = try [fixture.good, fixture.negative("tampered tag"), fixture.negative("exp passed")].map {
            try fixture.doctor($0).report["status"] as? String
        }
        let listener = try Listener(["--plaintext", "--json", "--keys", fixture.keys])
        for payload in [fixture.good, fixture.negative("tampered tag"), fixture.negative("exp passed")] {
            let reply = try curl(listener.url + "/3/device/" + deviceToken, headers: acceptable, body: payload)
            #expect(reply.status == 200)
        }
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.map { $0["status"] as? String } == verdicts, "\(records.map { $0["status"] ?? "" }) \(verdicts)")
    }

    @Test func usageErrorsAreOneLine() throws {
        let none = try pushseal(["doctor"])
        #expect(none.status == 64)
        #expect(none.stderr.hasPrefix("error: missing the payload: a FILE, or '-' to read it from stdin"), "\(none.stderr)")
        let missing = try pushseal(["doctor", "/nonexistent/payload.json"])
        #expect(missing.status == 66, "\(missing.stderr)")
    }
}
