import PushSeal
import PushSealJSON

/// Runs `pushseal decrypt`: prints the opened alert as one JSON line. Nothing reaches
/// stdout unless authentication succeeded.
func runDecrypt(_ request: DecryptRequest, console: Console) throws {
    let input = try InputFiles.read(request.source)
    let keyring = try KeyringStore(folder: request.keysFolder).load()
    let opener = PayloadOpener(keyring: keyring, field: request.field)
    let text = String(decoding: input, as: UTF8.self).trimmingASCIIWhitespace()
    let envelope = text.hasPrefix("ps1.") || text.hasPrefix("ps2.")
        ? try SealedEnvelope(parsing: text)
        : try opener.envelope(inPayload: input)
    let now = Timestamp.now()
    let alert: SealedAlert
    do {
        alert = try opener.open(envelope, now: now)
    } catch let error as KeyringError where error.code != .corrupt && error.code != .io {
        // The kid came from the input, not from the user: a kid this keyring cannot use is
        // bad input (65), like any other altered character of the envelope. A key the user
        // names on the command line (keys export KID) stays "missing" (66).
        throw CLIFailure(.dataError, error.reason)
    }
    if let expires = alert.expires, expires <= now {
        console.warning("this message expired at \(Timestamp.format(expires)); receivers show a placeholder instead")
    }
    console.output(JSONWriter.string(.object(alert.json)))
}
