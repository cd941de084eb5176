import Locking
import NotificationText
import PushSeal
import PushSealReceiver
import PushSealSend
import PushSealWebApp
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

extension Specs {
    static let senderOption = OptionSpec(
        "sender", value: "name", environment: "PUSHSEAL_SENDER",
        help: "The name the page shows as who sends (default: pushseal).")
    static let noQROption = OptionSpec(
        "no-qr", help: "Leave out the pairing string's QR code (Debian's node-qrcode-generator draws it).")

    static let webappGroup = CommandSpec(
        name: ["webapp"], overview: "The receiving web app: Web Push on any browser, no app to build.",
        usage: "pushseal webapp <subcommand> [options]", options: [],
        discussion: """
            SUBCOMMANDS:
            \(subcommandLines(webapp))

            The page makes a key pair that never leaves the browser, subscribes with the VAPID key
            'pushseal keys vapid' keeps, and shows a pairing string for 'send --webpush'.
            """)

    static let webapp: [CommandSpec] = [
        CommandSpec(
            name: ["webapp", "export"], overview: "Write the web app into a folder, for any static HTTPS host.",
            usage: "pushseal webapp export DIR [--sender NAME] [--no-qr] [--keys DIR]",
            options: [senderOption, fieldOption, noQROption, keysOption],
            discussion: """
                Writes the page, its service worker and config.js (the VAPID public key, the sender's
                name) into DIR, made if missing; files of other names there are left alone. Host DIR
                over HTTPS (a service worker runs in no other page) and open it on the phone: on an
                iPhone (iOS 16.4 or later) add it to the Home Screen first and open it from there.
                Prints each file written.
                """),
        CommandSpec(
            name: ["webapp", "serve"], overview: "Serve the web app over HTTPS, to try it here or on a LAN.",
            usage: "pushseal webapp serve [--listen [HOST:]PORT] [--tls-cert F --tls-key F] [--keys DIR]",
            options: [
                OptionSpec("listen", value: "[host:]port", help: "Where to serve (default 127.0.0.1:8443; port 0: a free one)."),
                OptionSpec("tls-cert", value: "file", help: "The PEM certificate chain to serve (default: a self-signed one in the keyring folder)."),
                OptionSpec("tls-key", value: "file", help: "The PEM private key of --tls-cert."),
                senderOption, fieldOption, noQROption, keysOption
            ],
            discussion: """
                Serves the files 'webapp export' writes, from memory, over HTTP/2 and TLS until SIGINT or
                SIGTERM; one line per request on stderr. Browsers trust the self-signed certificate
                only when told to; a phone on the LAN needs --tls-cert and --tls-key of a name it
                trusts. 'listening on URL' on stderr says where.
                """)
    ]
}

/// `pushseal webapp export|serve`: what both read.
struct WebAppRequest: Equatable {
    enum Action: Equatable {
        case export(folder: String)
        case serve(host: String, port: Int, certificateFile: String?, keyFile: String?)
    }

    var action: Action
    var keysFolder: String
    var sender: String
    var field: String
    var qrCode: Bool
}

func parseWebApp(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let names = Specs.webapp.map { $0.name[1] }
    guard let name = arguments.first, !name.hasPrefix("-") else {
        if arguments.contains("--help") || arguments.contains("-h") { return .help(["webapp"]) }
        throw UsageError("missing a webapp subcommand (\(names.joined(separator: ", ")))", command: ["webapp"])
    }
    guard let spec = Specs.spec(named: ["webapp", name]) else {
        let guess = Suggestion.closest(to: name, among: names)
        throw UsageError("unknown webapp subcommand '\(name)'" + (guess.map { " (did you mean '\($0)'?)" } ?? ""), command: ["webapp"])
    }
    let parsed = try parseArguments(Array(arguments.dropFirst()), spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    let field = parsed.value("field") ?? APNsPayload.defaultField
    do {
        try APNsPayload.validate(field: field)
    } catch {
        throw UsageError("\(parsed.origin("field")): \(error)", command: spec.name)
    }
    let sender = parsed.value("sender") ?? "pushseal"
    guard !sender.isEmpty, sender.count <= 64, !sender.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
        throw UsageError("--sender is a name of 1 to 64 characters, on one line", command: spec.name)
    }
    let action: WebAppRequest.Action
    if name == "export" {
        guard parsed.positionals.count == 1, let folder = parsed.positionals.first, !folder.isEmpty else {
            throw UsageError(parsed.positionals.isEmpty ? "missing the folder to write the web app into" : "expected one folder", command: spec.name)
        }
        action = .export(folder: folder)
    } else {
        if let stray = parsed.positionals.first { throw UsageError("webapp serve takes no arguments, not '\(stray)'", command: spec.name) }
        let (host, port) = try listenAddress(parsed.value("listen") ?? "127.0.0.1:8443", option: "listen", command: spec.name)
        let certificate = parsed.value("tls-cert")
        let key = parsed.value("tls-key")
        if (certificate == nil) != (key == nil) { throw UsageError("--tls-cert and --tls-key go together", command: spec.name) }
        action = .serve(host: host, port: port, certificateFile: certificate, keyFile: key)
    }
    return .webapp(WebAppRequest(action: action, keysFolder: keysFolder(parsed), sender: sender, field: field, qrCode: !parsed.has("no-qr")))
}

/// The app's files for this keyring's VAPID key.
private func webAppFiles(_ request: WebAppRequest) throws -> WebApp {
    guard let vapid = try VAPIDKeyFile.load(folder: request.keysFolder) else {
        throw CLIFailure(
            .configuration, "no VAPID key in \(request.keysFolder): make one with 'pushseal keys vapid' (the page subscribes with its public half)")
    }
    var qrLibrary: [UInt8]?
    if request.qrCode {
        do {
            qrLibrary = try InputFiles.read(WebApp.systemQRLibrary, bound: InputBound(1 << 20, "qrcode.js", because: "Debian's is 60 KB"))
        } catch {
            throw CLIFailure(
                .unavailable,
                "the QR code library \(WebApp.systemQRLibrary) cannot be read: install it (apt install node-qrcode-generator) or give --no-qr")
        }
    }
    return WebApp(
        .init(
            vapidPublicKey: Base64.encode(vapid.publicPoint, alphabet: .url), sender: request.sender, field: request.field,
            qrLibrary: qrLibrary))
}

func runWebApp(_ request: WebAppRequest, console: Console) throws {
    let app = try webAppFiles(request)
    switch request.action {
    case .export(let folder):
        if mkdir(folder, 0o755) != 0, errno != EEXIST {
            throw CLIFailure(.cannotCreate, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        for file in app.files {
            let path = folder + "/" + file.path
            do {
                try FileIO.replace(path, with: file.bytes)
            } catch {
                throw CLIFailure(.cannotCreate, error.message)
            }
            // Read by whatever web server hosts it.
            chmod(path, 0o644)
            console.output(path)
        }
        try console.finish()
    case .serve(let host, let port, let certificateFile, let keyFile):
        try serveWebApp(app, host: host, port: port, certificateFile: certificateFile, keyFile: keyFile, request: request, console: console)
    }
}

private func serveWebApp(
    _ app: WebApp, host: String, port: Int, certificateFile: String?, keyFile: String?, request: WebAppRequest, console: Console
) throws {
    let stop = Locked<(@Sendable () -> Void)?>(nil)
    let signals = StopSignals(
        first: { signal in
            guard let action = stop.withLock({ $0 }) else { exitAtOnce(128 + signal, console: console) }
            action()
        },
        second: { signal in exitAtOnce(128 + signal, console: console) })
    defer { signals.restore() }
    let (identity, note) = try listenerIdentity(certificateFile: certificateFile, keyFile: keyFile, keysFolder: request.keysFolder)
    var files: [String: WebAppServer.File] = [:]
    for file in app.files { files[file.path] = .init(contentType: WebApp.contentType(of: file.path), bytes: file.bytes) }
    // Request lines go to stderr from a thread of their own: the server's loop never waits for
    // a slow terminal. Past the backlog's bound lines are dropped and counted.
    let lines = RecordOutput(descriptor: 2, byteLimit: 1 << 20, render: { _ in ([], "") }, failed: {})
    let server: WebAppServer
    do {
        server = try WebAppServer(host: host, port: port, tls: identity, files: files) { line in
            lines.emit(rendered: (Array((line + "\n").utf8), "request"), keep: false)
        }
    } catch {
        throw CLIFailure(error.code == .address ? .unavailable : error.code == .identity ? .noInput : .ioError, error.reason)
    }
    if let note { console.diagnostic(note) }
    stop.withLock { $0 = { server.stop() } }
    server.start()
    console.diagnostic("listening on \(server.url)")
    server.wait()
    _ = lines.finish(within: .seconds(1))
}
