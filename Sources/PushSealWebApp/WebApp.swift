import NotificationText
import PushSealJSON

/// The receiving web app: a page and a service worker on WebCrypto (files/, plain HTML and
/// JavaScript, no build step) that pair a browser, open what `send --webpush` delivers by
/// docs/FORMAT.md's receiver steps and show it, or a placeholder that names why not. The
/// files are embedded in the binary, so `webapp export` and `webapp serve` need nothing
/// installed beside it; `config.js` is the one file made per sender.
package struct WebApp: Sendable {
    /// What the app is filled in with.
    package struct Settings: Sendable {
        /// The VAPID public key (base64url, 65-byte point) the page subscribes with.
        package var vapidPublicKey: String
        /// Shown as the page's heading and as the title of what arrives unsealed.
        package var sender: String
        /// The payload's field holding the envelope.
        package var field: String
        package var placeholder: Placeholder
        /// Debian's `qrcode.js` (node-qrcode-generator), which draws the pairing string as
        /// a QR code; nil leaves the code out and the page shows the string as text only.
        package var qrLibrary: [UInt8]?

        package init(vapidPublicKey: String, sender: String, field: String, placeholder: Placeholder = .standard, qrLibrary: [UInt8]?) {
            self.vapidPublicKey = vapidPublicKey
            self.sender = sender
            self.field = field
            self.placeholder = placeholder
            self.qrLibrary = qrLibrary
        }
    }

    /// Where Debian's node-qrcode-generator puts its browser script.
    package static let systemQRLibrary = "/usr/share/javascript/qrcode-generator/qrcode.js"
    /// The one line of index.html that loads the QR library.
    static let qrScriptTag = "<script src=\"qrcode.js\"></script>\n"

    /// Path → bytes, every file the app is made of, in a stable order.
    package let files: [(path: String, bytes: [UInt8])]

    package init(_ settings: Settings) {
        var index = String(decoding: PackageResources.index_html, as: UTF8.self)
        if settings.qrLibrary == nil { index = index.replacing(Self.qrScriptTag, with: "") }
        var files: [(String, [UInt8])] = [
            ("index.html", Array(index.utf8)),
            ("app.js", PackageResources.app_js),
            ("sw.js", PackageResources.sw_js),
            ("format.js", PackageResources.format_js),
            ("store.js", PackageResources.store_js),
            ("style.css", PackageResources.style_css),
            ("icon.svg", PackageResources.icon_svg),
            ("manifest.json", PackageResources.manifest_json),
            ("config.js", Self.config(settings))
        ]
        if let qr = settings.qrLibrary { files.append(("qrcode.js", qr)) }
        self.files = files
    }

    /// `self.PUSHSEAL_CONFIG = {…};`: the sender's settings and the placeholder's words, the
    /// same the runner and the device kit show, for each status a push can end with.
    static func config(_ settings: Settings) -> [UInt8] {
        var bodies = JSONObject()
        let statuses: [DeliveryStatus] = [
            .keyMissing, .keyDisabled, .keyExpired, .senderUntrusted, .authenticationFailed, .malformed, .expired, .duplicate, .deadline, .unsupported
        ]
        for status in statuses { bodies.append(status.rawValue, .string(settings.placeholder.body(for: status))) }
        var placeholder = JSONObject()
        placeholder.append("title", .string(settings.placeholder.title))
        placeholder.append("bodies", .object(bodies))
        placeholder.append("locked", .string("This browser could not read its keys; the message may open later."))
        var config = JSONObject()
        config.append("vapidKey", .string(settings.vapidPublicKey))
        config.append("sender", .string(settings.sender))
        config.append("field", .string(settings.field))
        config.append("placeholder", .object(placeholder))
        return Array("// Written by pushseal webapp: the sender's settings.\nself.PUSHSEAL_CONFIG = ".utf8) + JSONWriter.bytes(.object(config))
            + Array(";\n".utf8)
    }

    /// The Content-Type a file is served with.
    package static func contentType(of path: String) -> String {
        if path.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if path.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if path.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if path.hasSuffix(".svg") { return "image/svg+xml" }
        if path.hasSuffix(".json") { return "application/manifest+json" }
        return "application/octet-stream"
    }
}
