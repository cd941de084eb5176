// What `send`, `token` and `doctor send` share to make provider tokens: the credentials
// from the options, the signing key read and wiped, and the cache folder.

import PushSeal
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The provider token cache for a .p8, team and key id: `send`'s and `token`'s alike.
func providerTokens(authKey: String, keyID: String, teamID: String, keysFolder: String, console: Console) throws -> ProviderTokenCache {
    let (key, exposedMode) = try signingKey(authKey)
    // As ssh does for a private key: a signing key others can read is said out loud.
    if let exposedMode {
        console.warning("\(authKey) can be read by group or others (mode \(FileIO.modeText(exposedMode))); make it private: chmod 600 \(authKey)")
    }
    return ProviderTokenCache(folder: try tokenFolder(keysFolder: keysFolder), key: key, keyID: keyID, teamID: teamID)
}

/// The APNs signing key in the .p8 `authKey`, and its mode when group or others can read it.
/// An encrypted key is refused (never prompted for), as is anything but a P-256 private key.
func signingKey(_ authKey: String) throws -> (key: ES256Key, exposedMode: mode_t?) {
    var keyBytes = try InputFiles.read(authKey, bound: .pem)
    defer { SecureMemory.wipe(&keyBytes) }
    var info = stat()
    let exposed = authKey != "-" && stat(authKey, &info) == 0 && info.st_mode & 0o077 != 0
    do {
        let key = try ES256Key(pem: keyBytes)
        guard key.canSign else { throw SealCryptoError(.invalidKey, "a public key cannot sign") }
        return (key, exposed ? info.st_mode & 0o777 : nil)
    } catch let error as SealCryptoError where error.code == .encryptedKey {
        throw CLIFailure(
            .dataError, "\(authKey) is encrypted with a passphrase, which pushseal never asks for; decrypt a copy once (openssl pkey -in \(authKey) -out AuthKey.p8) or give the .p8 file Apple made")
    } catch let error as SealCryptoError {
        throw CLIFailure(.dataError, "\(authKey) is not an APNs signing key (\(error.reason)); give the .p8 file Apple made")
    }
}

/// Where the provider token is kept: beside the keys when there is a keyring folder;
/// otherwise in the user's cache folder (`$XDG_CACHE_HOME/pushseal`, or
/// `~/.cache/pushseal`), so that sending a ready payload leaves no `./Keys` behind.
func tokenFolder(keysFolder: String) throws -> String {
    var info = stat()
    if stat(keysFolder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return keysFolder }
    let cacheHome: String
    if let cache = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), cache.hasPrefix("/") {
        cacheHome = cache
    } else if let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
        cacheHome = home + "/.cache"
    } else {
        throw CLIFailure(.cannotCreate, "no keyring folder (\(keysFolder)) and no HOME or XDG_CACHE_HOME for the provider token; give --keys DIR")
    }
    let folder = cacheHome + "/pushseal"
    for path in [cacheHome, folder] where mkdir(path, 0o700) != 0 && errno != EEXIST {
        throw CLIFailure(.cannotCreate, "cannot create \(path) for the provider token: \(String(cString: strerror(errno)))")
    }
    return folder
}

/// The .p8 file, key id and team id a provider token is made from, each required and the
/// ids checked for Apple's shape.
func providerCredentials(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> (authKey: String, keyID: String, teamID: String) {
    func required(_ option: String, _ what: String) throws(UsageError) -> String {
        try requiredValue(parsed, option, what, command: spec.name)
    }
    let authKey = try required("auth-key", "the .p8 file from Apple")
    // Apple's key and team ids are 10 capital letters and digits; anything else is a typo
    // that APNs would answer only with InvalidProviderToken.
    let keyID = try required("key-id", "the .p8 key's id")
    let teamID = try required("team-id", "your Apple team id")
    for option in ["key-id", "team-id"] { _ = try CheckedValues.appleID(parsed, option, command: spec.name) }
    return (authKey, keyID, teamID)
}
