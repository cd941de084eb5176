import PushSealJSON
import SealCrypto

/// The on-disk text of a keyring, `keyring.json`: one key per line so a person can read it,
/// and strict on reading because a damaged keyring must never be half-used.
///
/// `pushseal-keyring/2` gives each key a `kind` (`secret`, `private`, `public`, `sender`,
/// `allowed-sender`): a key pair (`private`, `sender`) keeps its 32-byte scalar in `secret`
/// and its point in `public`, a public key (`public`, `allowed-sender`) only the point. `/1` files (secret keys only, no `kind`) are read as they are, and become
/// `/2` the next time a command changes the keyring.
enum KeyringFile {
    static let format = "pushseal-keyring/2"
    static let formats = ["pushseal-keyring/1", format]

    static func encode(_ keyring: Keyring) -> [UInt8] {
        var output = Array("{\"format\":\"\(format)\",\"keys\":[".utf8)
        for (index, entry) in keyring.keys.enumerated() {
            output.append(contentsOf: index == 0 ? "\n".utf8 : ",\n".utf8)
            var object = JSONObject()
            object["id"] = .string(entry.id)
            object["kind"] = .string(entry.kind.rawValue)
            switch entry.kind {
            case .secret:
                object["secret"] =
                    entry.secret.map { key in
                        key.withUnsafeBytes { JSONValue.string(Base64.encode($0, alphabet: .standard)) }
                    } ?? .null
            case .private, .sender:
                object["secret"] =
                    entry.privateKey.flatMap { key in
                        try? key.withScalar { scalar in scalar.withUnsafeBytes { JSONValue.string(Base64.encode($0, alphabet: .standard)) } }
                    } ?? .null
                object["public"] = entry.publicKey.map { .string(Base64.encode($0.x963Representation, alphabet: .standard)) } ?? .null
            case .public, .allowedSender:
                object["public"] = entry.publicKey.map { .string(Base64.encode($0.x963Representation, alphabet: .standard)) } ?? .null
            }
            object["state"] = .string(entry.state.rawValue)
            object["created"] = .string(Timestamp.format(entry.created))
            object["expires"] = entry.expires.map { .string(Timestamp.format($0)) } ?? .null
            JSONWriter.write(.object(object), to: &output)
        }
        output.append(contentsOf: "\n]}\n".utf8)
        return output
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> Keyring {
        func corrupt(_ why: String) -> KeyringError {
            KeyringError(.corrupt, "\(path) is not a valid pushseal keyring: \(why)")
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw corrupt("\(error)")
        }
        guard case .object(let object) = root else { throw corrupt("it holds \(root.kindName), not an object") }
        guard let formatText = object["format"]?.stringValue, formats.contains(formatText) else {
            throw corrupt("format is not \"\(format)\" (or \"\(formats[0])\")")
        }
        let hasKinds = formatText != formats[0]
        guard case .array(let entries)? = object["keys"] else { throw corrupt("'keys' is not an array") }

        var keys: [KeyEntry] = []
        var seen = Set<String>()
        for (position, value) in entries.enumerated() {
            guard case .object(let entry) = value else { throw corrupt("key \(position + 1) is not an object") }
            guard let id = entry["id"]?.stringValue, KeyID.isValid(id) else {
                throw corrupt("key \(position + 1) has no valid id")
            }
            guard seen.insert(id).inserted else { throw corrupt("key \(id) appears twice") }
            guard let stateText = entry["state"]?.stringValue, let state = KeyState(rawValue: stateText) else {
                throw corrupt("key \(id) has no valid state")
            }
            guard let createdText = entry["created"]?.stringValue, let created = Timestamp.parse(createdText) else {
                throw corrupt("key \(id) has no valid 'created' time")
            }
            var expires: Int64?
            switch entry["expires"] {
            case nil, .null?: expires = nil
            case .string(let text)?:
                guard let time = Timestamp.parse(text) else { throw corrupt("key \(id) has an invalid 'expires' time") }
                expires = time
            default: throw corrupt("key \(id) has an invalid 'expires' time")
            }
            var kind = KeyKind.secret
            if hasKinds {
                guard let text = entry["kind"]?.stringValue, let given = KeyKind(rawValue: text) else {
                    throw corrupt("key \(id) has no valid kind (secret, private, public, sender or allowed-sender)")
                }
                kind = given
            }
            if kind != .secret {
                keys.append(try recipientEntry(entry, id: id, kind: kind, state: state, created: created, expires: expires, corrupt: corrupt))
                continue
            }
            var secret: SymmetricKey?
            switch (entry["secret"], state) {
            case (nil, .destroyed), (.null?, .destroyed):
                secret = nil
            case (.string(let text)?, _) where state != .destroyed:
                var raw: [UInt8]
                do {
                    raw = try Base64.decode(text, alphabet: .standard)
                } catch {
                    throw corrupt("the secret of key \(id) is not base64")
                }
                defer { SecureMemory.wipe(&raw) }
                guard raw.count == SymmetricKey.byteCount else {
                    throw corrupt("the secret of key \(id) is \(raw.count) bytes, 32 expected")
                }
                secret = try SymmetricKey(bytes: raw)
            case (_, .destroyed):
                throw corrupt("destroyed key \(id) still has a secret")
            default:
                throw corrupt("key \(id) has no secret")
            }
            keys.append(KeyEntry(id: id, secret: secret, state: state, created: created, expires: expires))
        }
        // One primary seals, one sender key vouches: each track has at most one.
        guard keys.filter({ $0.state == .primary && !$0.kind.isSenderKey }).count <= 1 else {
            throw corrupt("more than one key is primary")
        }
        guard keys.filter({ $0.state == .primary && $0.kind.isSenderKey }).count <= 1 else {
            throw corrupt("more than one sender key is primary")
        }
        if let allowed = keys.first(where: { $0.state == .primary && $0.kind == .allowedSender }) {
            throw corrupt("key \(allowed.id) is another sender's key, which is never primary here")
        }
        return Keyring(keys: keys)
    }

    /// A P-256 key: its point, and for a pair (`private`, `sender`) the scalar that must make
    /// that same point.
    private static func recipientEntry(
        _ entry: JSONObject, id: String, kind: KeyKind, state: KeyState, created: Int64,
        expires: Int64?, corrupt: (String) -> KeyringError
    ) throws -> KeyEntry {
        func bytes(_ name: String) throws -> [UInt8]? {
            switch entry[name] {
            case nil, .null?: return nil
            case .string(let text)?:
                guard let decoded = try? Base64.decode(text, alphabet: .standard) else { throw corrupt("the \(name) of key \(id) is not base64") }
                return decoded
            default: throw corrupt("the \(name) of key \(id) is not a string")
            }
        }
        // The scalar moves into storage of its own at once: the decoded array is wiped while
        // it is still its buffer's only reference (a second one would make the wipe reach a
        // copy).
        let scalar: SecureBytes?
        switch entry["secret"] {
        case nil, .null?:
            scalar = nil
        case .string(let text)?:
            guard var decoded = try? Base64.decode(text, alphabet: .standard) else { throw corrupt("the secret of key \(id) is not base64") }
            scalar = SecureBytes(moving: &decoded)
        default:
            throw corrupt("the secret of key \(id) is not a string")
        }
        let point = try bytes("public")
        if state == .destroyed {
            guard scalar == nil, point == nil else { throw corrupt("destroyed key \(id) still has key material") }
            return KeyEntry(id: id, kind: kind, privateKey: nil, publicKey: nil, state: state, created: created, expires: expires)
        }
        guard let point, let publicKey = try? P256PublicKey(x963Representation: point) else {
            throw corrupt("key \(id) has no valid public point")
        }
        guard kind.holdsPair else {
            guard scalar == nil else { throw corrupt("public key \(id) has a secret") }
            return KeyEntry(id: id, kind: kind, privateKey: nil, publicKey: publicKey, state: state, created: created, expires: expires)
        }
        guard let raw = scalar, let privateKey = try? P256PrivateKey(scalar: raw) else {
            throw corrupt("private key \(id) has no valid 32-byte scalar")
        }
        guard privateKey.publicKey.x963Representation == point else {
            throw corrupt("the scalar and the point of key \(id) do not belong together")
        }
        return KeyEntry(id: id, kind: kind, privateKey: privateKey, publicKey: nil, state: state, created: created, expires: expires)
    }
}
