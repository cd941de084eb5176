import Foundation
import Testing

/// One judge: every case of docs/vectors (the negative cases and the `edge` list, each of
/// which names the section of docs/FORMAT.md it checks) gets the status the file states from
/// `pushseal receive`, `pushseal doctor` and `pushseal decrypt` alike, with keys that came in
/// the way a receiver's do (`keys import` of the psk1 and prk1 lines). The kit
/// (FormatVectorTests) and both examples (ExampleTests) run the same cases.
@Suite("conformance: the runner, doctor and decrypt judge every vector alike")
struct ConformanceTests {
    struct Case {
        let name: String
        let payload: String
        let status: String
    }

    static func cases(_ version: String) throws -> (keys: [String: [String: String]], cases: [Case], edge: Int) {
        let document = try VectorTests.Vectors(version).document
        let list = (document["negative"] as! [[String: Any]]) + (document["edge"] as? [[String: Any]] ?? [])
        return (
            document["keys"] as! [String: [String: String]],
            list.map { Case(name: $0["name"] as! String, payload: $0["payload"] as! String, status: $0["status"] as! String) },
            (document["edge"] as? [[String: Any]] ?? []).count
        )
    }

    @Test(arguments: ["ps1", "ps2", "ps3"])
    func theRunnerDoctorAndDecryptGiveEveryCaseItsStatus(version: String) throws {
        let (keys, cases, edge) = try Self.cases(version)
        #expect(edge >= ["ps1": 60, "ps2": 4, "ps3": 0][version]!, "the edge cases are the table the spec is held to")
        let scratch = TemporaryFolder()
        let folder = scratch.file("Keys")
        if let lines = try VectorTests.Vectors(version).receiver {
            // ps3 names what its receiver holds: the device's prk1 line, the allowed sender's pss1.
            let run = try pushseal(["keys", "import", "--keys", folder, "-"], stdin: lines.joined(separator: "\n") + "\n")
            #expect(run.status == 0, "\(run.stderr)")
        } else {
            for (kid, key) in keys.sorted(by: { $0.key < $1.key }) {
                // A receiver's keys: a psk1 share, or the device's own prk1 line.
                let run = try pushseal(["keys", "import", "--keys", folder, "-"], stdin: key["private_share"] ?? key["share"]!)
                #expect(run.status == 0 && run.stdout.hasPrefix(kid), "\(run.stderr)")
            }
        }
        var files: [String] = []
        for (index, entry) in cases.enumerated() {
            let name = "case-\(index).json"
            scratch.write(name, entry.payload)
            files.append(scratch.file(name))
        }
        // Each case is judged by a receiver that has opened nothing before (docs/FORMAT.md §8).
        let received = try pushseal(["receive", "--json", "--keys", folder, "--seen", "none"] + files)
        let records = received.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == cases.count, "one record per input: \(received.stderr)")
        for (entry, (record, file)) in zip(cases, zip(records, files)) {
            let what = "\(version) '\(entry.name)'"
            #expect(record["status"] as? String == entry.status, "receive: \(what): \(record["reason"] ?? "")")
            let doctor = try pushseal(["doctor", "--json", "--keys", folder, file])
            let verdict = jsonObject(doctor.stdout)
            #expect(verdict["status"] as? String == entry.status, "doctor: \(what): \(doctor.stdout)")
            #expect((doctor.status == 0) == (entry.status == "decrypted"), "doctor's exit: \(what): \(doctor.status)")
            let decrypt = try pushseal(["decrypt", "--keys", folder, file])
            if entry.status == "decrypted" {
                #expect(decrypt.status == 0 && !decrypt.stdout.isEmpty, "decrypt: \(what): \(decrypt.stderr)")
            } else {
                #expect(decrypt.status == 65 && decrypt.stdout.isEmpty, "decrypt: \(what)")
                #expect(decrypt.stderr.hasPrefix("error: \(entry.status): "), "decrypt: \(what): \(decrypt.stderr)")
            }
        }
    }

    /// §6 is the whole receiver order: every status a receiver, the kit or doctor can give
    /// is named there.
    @Test func everyStatusIsInTheSpecsReceiverOrder() throws {
        let spec = try String(contentsOf: VectorTests.repository.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        let start = try #require(spec.range(of: "## 6. "))
        let end = try #require(spec.range(of: "## 7. "))
        let section = String(spec[start.upperBound..<end.lowerBound])
        let statuses = [
            "decrypted", "passthrough", "malformed", "unsupported", "key-missing", "key-disabled", "key-expired", "sender-untrusted",
            "auth-failed", "expired", "duplicate", "locked", "deadline", "original", "modified", "rejected", "reset"
        ]
        for status in statuses {
            #expect(section.contains("`\(status)`"), "§6 does not name \(status)")
        }
    }

    /// A bare envelope of a later version is unsupported, not "not JSON".
    @Test func decryptCallsALaterVersionsEnvelopeUnsupported() throws {
        let scratch = TemporaryFolder()
        let folder = scratch.file("Keys")
        #expect(try pushseal(["keys", "init", "--keys", folder]).status == 0)
        let run = try pushseal(["decrypt", "--keys", folder, "-"], stdin: "ps9.kid.AAAA\n")
        #expect(run.status == 65 && run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("error: unsupported: "), "\(run.stderr)")
    }

    /// An opened alert without `id` or `sent` prints without them, rather than as "" and 0.
    @Test func decryptPrintsOnlyTheMembersTheAlertHas() throws {
        let (keys, _, _) = try Self.cases("ps1")
        let document = try VectorTests.Vectors("ps1").document
        let entry = (document["edge"] as! [[String: Any]]).first { $0["name"] as? String == "no id and no sent" }!
        let scratch = TemporaryFolder()
        let folder = scratch.file("Keys")
        #expect(try pushseal(["keys", "import", "--keys", folder, "-"], stdin: keys["3f9a0c1e"]!["share"]!).status == 0)
        let run = try pushseal(["decrypt", "--keys", folder, "-"], stdin: entry["payload"] as? String)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == #"{"title":"T"}"# + "\n")
    }
}
