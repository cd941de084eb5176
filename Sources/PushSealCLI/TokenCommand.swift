import PushSeal
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

extension Specs {
    static let authKeyOption = OptionSpec("auth-key", value: "file", environment: "PUSHSEAL_AUTH_KEY", help: "The .p8 signing key from Apple (read from the file; never give it as an argument).")

    static let keyIDOption = OptionSpec("key-id", value: "keyid", environment: "PUSHSEAL_KEY_ID", help: "The .p8 key's id (kid).")

    static let teamIDOption = OptionSpec("team-id", value: "teamid", environment: "PUSHSEAL_TEAM_ID", help: "Your Apple team id (iss).")

    static let token = CommandSpec(
        name: ["token"], overview: "Print an APNs provider token for curl and other tools.",
        usage: "pushseal token --auth-key F.p8 --key-id K --team-id T [--keys DIR]",
        options: [authKeyOption, keyIDOption, teamIDOption, keysOption],
        discussion: """
            Prints the ES256 provider token (a JWT) that send uses, from the same cache: a token is
            reused for 50 minutes, as Apple asks, so a loop of curl calls never meets
            TooManyProviderTokenUpdates. The cache lives in the keyring folder when there is one
            (--keys, default ./Keys), else in ~/.cache/pushseal, mode 0600. The token lets anyone
            send to your apps for up to an hour: it goes to stdout only, never to a log.

            EXAMPLE:
              curl --http2 -H "authorization: bearer $(pushseal token)" -H "apns-topic: $TOPIC" \\
                   -H "apns-push-type: alert" --data @payload.json \\
                   "https://api.push.apple.com/3/device/$DEVICE_TOKEN"
            """)
}

/// `pushseal token`: whose provider token, and where its cache is looked for.
struct TokenRequest: Equatable {
    var authKey: String
    var keyID: String
    var teamID: String
    var keysFolder: String
}

func parseToken(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.token
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    guard parsed.positionals.isEmpty else { throw UsageError("token takes no arguments", command: spec.name) }
    let (authKey, keyID, teamID) = try providerCredentials(parsed, spec: spec)
    return .token(TokenRequest(authKey: authKey, keyID: keyID, teamID: teamID, keysFolder: keysFolder(parsed)))
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
    var keyBytes = try InputFiles.read(authKey)
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

/// `pushseal token`: the cached provider token, or a fresh one, on stdout.
func runToken(_ request: TokenRequest, console: Console) throws {
    let tokens = try providerTokens(
        authKey: request.authKey, keyID: request.keyID, teamID: request.teamID,
        keysFolder: request.keysFolder, console: console)
    console.output(try tokens.token())
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
