import Foundation
import PushSealJSON
import Testing

/// Every alert field, with the value a test gives it: each must arrive unchanged everywhere.
/// (Read-only after start-up, hence safe to share; `Any` is what JSONSerialization gives.)
nonisolated(unsafe) let everyField: [(key: String, option: String, value: String, json: Any)] = [
    ("title", "--title", "Deploy", "Deploy"),
    ("subtitle", "--subtitle", "api", "api"),
    ("body", "--body", "api-7 is live", "api-7 is live"),
    ("badge", "--badge", "3", 3),
    ("sound", "--sound", "chime", "chime"),
    ("thread-id", "--group", "ops", "ops"),
    ("category", "--category", "DEPLOY", "DEPLOY"),
    ("target-content-id", "--target-content-id", "window-2", "window-2"),
    ("interruption-level", "--level", "time-sensitive", "time-sensitive"),
    ("relevance-score", "--relevance-score", "0.75", 0.75)
]

func same(_ value: Any?, _ expected: Any) -> Bool {
    switch (value, expected) {
    case (let value as String, let expected as String): value == expected
    case (let value as NSNumber, let expected as Int): value.intValue == expected
    case (let value as NSNumber, let expected as Double): value.doubleValue == expected
    default: false
    }
}

@Suite("one alert model")
struct AlertFieldTravelTests {
    @Test func everyFieldTravelsFromTheOptionsToTheExtensionAndTheRecord() throws {
        let keyring = try KeyringFixture()
        let options = everyField.flatMap { [$0.option, $0.value] }
        let payload = try keyring.encrypt(options)
        #expect(payload.status == 0, "\(payload.stderr)")
        // No field is visible in the payload: only the fallback is.
        #expect(!payload.stdout.contains("api-7") && !payload.stdout.contains("window-2"))

        // The decrypting receiver's record shows every field.
        let received = try pushseal(["receive", "--json", "--keys", keyring.keys, "-"], stdin: payload.stdout)
        let record = try #require(records(received.stdout).first)
        #expect(record["status"] as? String == "decrypted")
        for field in everyField {
            #expect(same(record[field.key], field.json), "record lacks \(field.key): \(received.stdout)")
        }

        // An extension program gets every field of what it is asked to change, and its
        // answer's fields reach the record too.
        let decrypted = try keyring.decrypt(payload: payload.stdout)
        let sealed = jsonObject(decrypted.stdout)
        var content: [String: Any] = [:]
        for field in everyField { content[field.key] = sealed[field.key] }
        let wrapped = try JSONSerialization.data(withJSONObject: [
            "aps": [
                "alert": ["title": sealed["title"]!, "subtitle": sealed["subtitle"]!, "body": sealed["body"]!],
                "mutable-content": 1, "badge": 3, "sound": "chime", "thread-id": "ops",
                "category": "DEPLOY", "target-content-id": "window-2",
                "interruption-level": "time-sensitive", "relevance-score": 0.75
            ]
        ])
        let folder = TemporaryFolder()
        let requestCopy = folder.file("request.json")
        let answer = #"{"title":"Changed","target-content-id":"window-9","relevance-score":0.25,"interruption-level":"passive"}"#
        let run = try pushseal(
            ["receive", "--json", "--extension", "cat > \(requestCopy); echo '\(answer)'", "-"],
            stdin: String(decoding: wrapped, as: UTF8.self) + "\n")
        let request = jsonObject(folder.read("request.json"))
        let asked = try #require(request["content"] as? [String: Any])
        for field in everyField {
            #expect(same(asked[field.key], field.json), "extension request lacks \(field.key): \(folder.read("request.json"))")
        }
        let changed = try #require(records(run.stdout).first)
        #expect(changed["status"] as? String == "modified")
        #expect(changed["title"] as? String == "Changed" && changed["target-content-id"] as? String == "window-9")
        #expect(same(changed["relevance-score"], 0.25) && changed["interruption-level"] as? String == "passive")
        #expect(changed["category"] as? String == "DEPLOY")
    }

    @Test func aBatchLineSealsTheSameAlertAsTheOptions() throws {
        let keyring = try KeyringFixture()
        var line: [String: Any] = ["id": "fixed-id"]
        for field in everyField { line[field.key] = field.json }
        let batch = try keyring.encrypt(["--batch"], stdin: String(decoding: try JSONSerialization.data(withJSONObject: line), as: UTF8.self) + "\n")
        let fromFlags = try keyring.encrypt(everyField.flatMap { [$0.option, $0.value] })
        let openedBatch = jsonObject(try keyring.decrypt(payload: batch.stdout).stdout)
        let openedFlags = jsonObject(try keyring.decrypt(payload: fromFlags.stdout).stdout)
        for field in everyField {
            #expect(same(openedBatch[field.key], field.json), "batch lost \(field.key)")
            #expect(same(openedFlags[field.key], field.json), "options lost \(field.key)")
        }
    }

    @Test(arguments: [["--level", "loud"], ["--relevance-score", "2"], ["--relevance-score", "x"], ["--badge", "-1"]])
    func aBadFieldValueIsAUsageError(_ option: [String]) throws {
        let run = parsed(["encrypt", "--keys", "Keys", "-t", "T"] + option)
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("error: \(option[0]): "))
    }

    /// Receivers keep the payload's own aps and envelope field, so data naming either would be lost.
    @Test(arguments: [[String](), ["--field", "sealed"]])
    func dataMayNotSetApsOrTheEnvelopeField(_ field: [String]) throws {
        let keyring = try KeyringFixture()
        let name = field.last ?? "enc"
        for key in ["aps", name] {
            let run = try keyring.encrypt(["-t", "T", "--data", "\(key)=x"] + field)
            #expect(run.status == 65 && run.stdout.isEmpty)
            #expect(run.stderr == "error: data may not set '\(key)': the receiver keeps the payload's own\n")
        }
        let batch = try keyring.encrypt(["--batch"] + field, stdin: #"{"title":"a","data":{"aps":1}}"# + "\n" + #"{"title":"b","data":{"ok":1}}"# + "\n")
        #expect(batch.status == 65 && batch.stdout.split(separator: "\n").count == 1)
        #expect(batch.stderr.hasPrefix("error: line 1: data may not set 'aps'"))
    }
}
