import Foundation
import PushSeal
import PushSealJSON
import SealCrypto
import Testing

/// The published test vectors (docs/vectors/ps1.json, ps2.json): the committed files are
/// what `pushseal-vectors` writes; pushseal's sealer, given each case's inputs, makes its
/// payload byte for byte; and the binary opens every positive case and gives every negative
/// one the status the file states.
@Suite("test vectors: docs/vectors")
struct VectorTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Vectors {
        let version: String
        let text: String
        let document: [String: Any]
        var keys: [String: [String: String]] { document["keys"] as! [String: [String: String]] }
        var positive: [[String: Any]] { document["positive"] as! [[String: Any]] }
        var negative: [[String: Any]] { document["negative"] as! [[String: Any]] }
        /// ps3: the lines a receiver imports (its prk1 and the allowed senders' pss1).
        var receiver: [String]? { document["receiver"] as? [String] }
        /// ps3: messages that arrive more than once, with each arrival's status.
        var repeats: [[String: Any]] { document["repeat"] as? [[String: Any]] ?? [] }

        init(_ version: String) throws {
            self.version = version
            text = try String(contentsOf: VectorTests.repository.appendingPathComponent("docs/vectors/\(version).json"), encoding: .utf8)
            document = jsonObject(text)
        }
    }

    static func bytes(base64url text: String) throws -> [UInt8] {
        try Base64.decode(text, alphabet: .url)
    }

    static func bytes(hex text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    /// A keyring folder holding every key of the file, as a receiver would: ps1's shares
    /// imported with `keys import`, ps2's private keys (which never leave a device) written
    /// through the library.
    static func receiverKeys(_ vectors: Vectors, in scratch: TemporaryFolder) throws -> String {
        let folder = scratch.file("Keys")
        if let lines = vectors.receiver {
            // ps3 names its receiver: the device's prk1 line and the allowed sender's pss1.
            let run = try pushseal(["keys", "import", "--keys", folder, "-"], stdin: lines.joined(separator: "\n") + "\n")
            #expect(run.status == 0, "\(run.stderr)")
        } else if vectors.version == "ps1" {
            for (_, key) in vectors.keys.sorted(by: { $0.key < $1.key }) {
                let run = try pushseal(["keys", "import", "--keys", folder, "-"], stdin: key["share"]!)
                #expect(run.status == 0, "\(run.stderr)")
            }
        } else {
            var entries: [KeyEntry] = []
            for (kid, key) in vectors.keys.sorted(by: { $0.key < $1.key }) {
                let privateKey = try P256PrivateKey(scalar: try bytes(base64url: key["private"]!))
                entries.append(
                    KeyEntry(
                        id: kid, kind: .private, privateKey: privateKey, publicKey: privateKey.publicKey,
                        state: entries.isEmpty ? .primary : .enabled, created: 1_765_000_000))
            }
            try KeyringStore(folder: folder).create(Keyring(keys: entries))
        }
        return folder
    }

    @Test(arguments: ["ps1", "ps2", "ps3"])
    func theCommittedFileIsWhatTheGeneratorWrites(version: String) throws {
        let generator = URL(fileURLWithPath: pushsealBinary).deletingLastPathComponent().appendingPathComponent("pushseal-vectors").path
        let run = try runProcess(generator, [version])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == (try Vectors(version).text), "docs/vectors/\(version).json is stale: run Scripts/vectors.sh")
    }

    @Test(arguments: ["ps1", "ps2", "ps3"])
    func theSealerMakesEveryPositivePayloadByteForByte(version: String) throws {
        let vectors = try Vectors(version)
        #expect(vectors.positive.count >= 3)
        for entry in vectors.positive {
            let name = entry["name"] as! String
            let kid = entry["kid"] as! String
            let key = vectors.keys[kid]!
            let keyring: Keyring
            var fixed = EnvelopeSealer.FixedRandomness()
            if version == "ps1" {
                keyring = Keyring(keys: [
                    KeyEntry(
                        id: kid, secret: try SymmetricKey(bytes: try Self.bytes(base64url: key["secret"]!)),
                        state: .primary, created: 0)
                ])
                fixed.nonce = Self.bytes(hex: entry["nonce"] as! String)
            } else {
                let point = try P256PublicKey(x963Representation: try Self.bytes(base64url: key["public"]!))
                var entries = [KeyEntry(id: kid, kind: .public, privateKey: nil, publicKey: point, state: .primary, created: 0)]
                if let sender = entry["sender"] as? String {
                    // ps3: the sender's own key pair, which vouches for what it seals.
                    let pair = try P256PrivateKey(scalar: try Self.bytes(base64url: vectors.keys[sender]!["sender_private"]!))
                    entries.append(KeyEntry(id: sender, kind: .sender, privateKey: pair, publicKey: nil, state: .primary, created: 0))
                }
                keyring = Keyring(keys: entries)
                fixed.ephemeral = try P256PrivateKey(scalar: try Self.bytes(base64url: entry["ephemeral_private"] as! String))
            }
            let fallbackMembers = entry["fallback"] as! [String: String]
            let sealer = try PayloadSealer(
                keyring: keyring, to: version != "ps1" ? kid : nil, field: entry["field"] as! String,
                pad: entry["pad"] as! Int,
                fallback: FallbackAlert(title: fallbackMembers["title"]!, body: fallbackMembers["body"]!), now: 0)
            // The alert as the file lists it, read with pushseal's own parser (members in order).
            guard case .object(let document) = try JSONParser.parse(Array(vectors.text.utf8)),
                case .array(let listed)? = document["positive"],
                case .object(let listedCase)? = listed.first(where: { $0.objectValue?["name"] == .string(name) }),
                case .object(let members)? = listedCase["alert"]
            else {
                Issue.record("\(name): no alert")
                continue
            }
            let alert = try SealedAlert(json: members)
            // Member order is the sender's choice, and the file's plaintext fixes it.
            #expect(String(decoding: alert.plaintext(paddedTo: entry["pad"] as! Int), as: UTF8.self) == entry["plaintext"] as? String, "\(name)")
            let payload = String(decoding: try sealer.payload(for: alert, fixed: fixed), as: UTF8.self)
            #expect(payload == entry["payload"] as? String, "\(version) '\(name)'")
        }
    }

    @Test(arguments: ["ps1", "ps2", "ps3"])
    func theReceiverOpensEveryPositiveCaseAndGivesEveryNegativeOneItsStatus(version: String) throws {
        let vectors = try Vectors(version)
        let scratch = TemporaryFolder()
        let keys = try Self.receiverKeys(vectors, in: scratch)
        #expect(vectors.negative.count >= 9)
        let cases = vectors.positive + vectors.negative
        for field in Set(cases.map { $0["field"] as? String ?? "enc" }).sorted() {
            let chosen = cases.filter { ($0["field"] as? String ?? "enc") == field }
            let input = chosen.map { $0["payload"] as! String }.joined(separator: "\n") + "\n"
            // Each case as a receiver that opened nothing before would judge it (docs/FORMAT.md §8).
            let run = try pushseal(["receive", "--json", "--keys", keys, "--field", field, "--seen", "none", "-"], stdin: input)
            #expect(run.status == 0, "\(run.stderr)")
            let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
            #expect(records.count == chosen.count)
            for (entry, record) in zip(chosen, records) {
                let name = entry["name"] as! String
                #expect(record["status"] as? String == entry["status"] as? String, "\(version) '\(name)': \(record["reason"] ?? "")")
                if let alert = entry["alert"] as? [String: Any] {
                    #expect(record["title"] as? String == alert["title"] as? String, "\(name)")
                    #expect(record["body"] as? String == alert["body"] as? String, "\(name)")
                }
            }
        }
    }

    /// ps3's repeats: each message's arrivals, in order, to one receiver that remembers
    /// (its keyring folder's store), across a restart: each arrival is a run of its own.
    @Test func aMessageArrivingAgainIsADuplicateAcrossRestarts() throws {
        let vectors = try Vectors("ps3")
        #expect(vectors.repeats.count >= 3)
        for entry in vectors.repeats {
            let name = entry["name"] as! String
            let scratch = TemporaryFolder()
            let keys = try Self.receiverKeys(vectors, in: scratch)
            for (payload, status) in zip(entry["payloads"] as! [String], entry["statuses"] as! [String]) {
                let run = try pushseal(["receive", "--json", "--keys", keys, "-"], stdin: payload + "\n")
                #expect(run.status == 0, "\(run.stderr)")
                let record = jsonObject(run.stdout)
                #expect(record["status"] as? String == status, "'\(name)': \(record["reason"] ?? "")")
            }
        }
    }
}
