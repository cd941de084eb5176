import Foundation

#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
#endif
#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Keys as files in a folder the app and its extension share (an App Group container, as
/// some apps keep their keys): one file a key, named `psk1.<kid>` (the 32-byte secret) or
/// `prk1.<kid>` (the 32-byte P-256 scalar). Files are replaced atomically and written with
/// the protection `completeUntilFirstUserAuthentication`, so the extension can read them
/// whenever the phone has been unlocked once since it started, and a read before that is
/// `locked`, not `missing`.
public struct AppGroupKeyStore: KeyStore {
    /// The folder, or why there is none (the app is not in the App Group).
    public let folder: Result<URL, KeyStoreError>
    /// Reads a file: its bytes, nil when there is no such file, or the errno. A parameter so
    /// tests can answer as a locked phone does.
    let read: @Sendable (String) -> Result<Data?, POSIXError>

    public init(folder: URL) {
        self.init(folder: .success(folder), read: Self.readFile)
    }

    init(folder: Result<URL, KeyStoreError>, read: @escaping @Sendable (String) -> Result<Data?, POSIXError>) {
        self.folder = folder
        self.read = read
    }

    #if canImport(Darwin)
    /// The container of the App Group `identifier` (as in the app's entitlements), under
    /// `Library/pushseal`. An app outside that group gets a store that answers `misconfigured`.
    public init(appGroup identifier: String) {
        if let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier) {
            self.init(folder: container.appendingPathComponent("Library/pushseal", isDirectory: true))
        } else {
            self.init(
                folder: .failure(KeyStoreError(.misconfigured, "the app is not in App Group \(identifier) (add it under Signing & Capabilities, to the app and the extension)")),
                read: Self.readFile)
        }
    }
    #endif

    public func lookUp(id: String) -> KeyLookup {
        guard SealedEnvelope.isKeyID(Substring(id)) else { return .missing }
        let folder: URL
        switch self.folder {
        case .success(let url): folder = url
        case .failure(let error): return .unavailable(error)
        }
        for kind in StoredKey.kinds {
            switch read(folder.appendingPathComponent("\(kind).\(id)").path) {
            case .success(nil):
                continue
            case .success(let bytes?):
                return StoredKey.key(kind: kind, bytes: bytes, id: id)
            case .failure(let error):
                // Data protection refuses a read before the first unlock with EPERM.
                let code = error.code
                let kind: KeyStoreError.Kind = code == .EPERM || code == .EACCES ? .locked : .failed
                return .unavailable(KeyStoreError(kind, status: code.rawValue, "key \(id) could not be read (errno \(code.rawValue))"))
            }
        }
        return .missing
    }

    /// Keeps `key` under `id`, replacing what was there in one step: a failed write leaves the old key.
    public func store(_ key: OpeningKey, id: String) throws(KeyStoreError) {
        let folder = try folder.get()
        try StoredKey.check(id: id)
        let (name, others, bytes) = StoredKey.entry(for: key, id: id)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeyStoreError(.failed, "the key folder could not be made: \(error.localizedDescription)")
        }
        // A new file, readable by the app alone and protected until the first unlock, renamed
        // over the old one: a reader sees the old key or the new one, never a part.
        let target = folder.appendingPathComponent(name)
        let temporary = folder.appendingPathComponent(".\(name).\(UUID().uuidString)")
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        if #available(macOS 11.0, *) { attributes[.protectionKey] = FileProtectionType.completeUntilFirstUserAuthentication }
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes, attributes: attributes) else {
            throw KeyStoreError(.failed, "key \(id) could not be written in \(folder.lastPathComponent)")
        }
        guard rename(temporary.path, target.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw KeyStoreError(.failed, status: code, "key \(id) could not be put in place (errno \(code))")
        }
        // One id, one key: a key of another kind under this id gives way.
        for other in others { try? FileManager.default.removeItem(at: folder.appendingPathComponent(other)) }
    }

    /// Removes the key under `id`, so the device stops opening what is sealed to it (and says
    /// `key-missing`); true if there was one.
    @discardableResult
    public func remove(id: String) throws(KeyStoreError) -> Bool {
        try StoredKey.check(id: id)
        let folder = try folder.get()
        var removed = false
        for kind in StoredKey.kinds {
            let url = folder.appendingPathComponent("\(kind).\(id)")
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            do {
                try FileManager.default.removeItem(at: url)
                removed = true
            } catch {
                throw KeyStoreError(.failed, "key \(id) could not be removed: \(error.localizedDescription)")
            }
        }
        return removed
    }

    /// The ids of the keys kept, sorted.
    public func ids() throws(KeyStoreError) -> [String] {
        let folder = try folder.get()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return Set(names.compactMap(StoredKey.id(ofName:))).sorted()
    }

    /// Whether an allowed sender's key (`pss1.<kid>`) is kept here. A folder that cannot be
    /// listed answers as a locked phone's does.
    public func knowsSenders() throws(KeyStoreError) -> Bool {
        let folder = try folder.get()
        do {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            return names.contains { $0.hasPrefix("pss1.") && StoredKey.id(ofName: $0) != nil }
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return false
        } catch {
            throw KeyStoreError(.locked, "the key folder could not be listed: \(error.localizedDescription)")
        }
    }

    static let readFile: @Sendable (String) -> Result<Data?, POSIXError> = { path in
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            return code == .ENOENT ? .success(nil) : .failure(POSIXError(code))
        }
        defer { close(descriptor) }
        var bytes = Data()
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            guard count > 0 else {
                if errno == EINTR { continue }
                return .failure(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            // A key file is 32 bytes; anything far larger is not one.
            guard bytes.count + count <= 4096 else { return .success(bytes) }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
