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

/// `pushseal token`: the cached provider token, or a fresh one, on stdout.
func runToken(_ request: TokenRequest, console: Console) throws {
    let tokens = try providerTokens(
        authKey: request.authKey, keyID: request.keyID, teamID: request.teamID,
        keysFolder: request.keysFolder, console: console)
    console.output(try tokens.token())
}
