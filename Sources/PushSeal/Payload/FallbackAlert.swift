import PushSealJSON

/// The visible alert APNs carries in the clear. It is what shows when no extension runs (or
/// the seal cannot be opened), so it must never hold the secret text.
///
/// Besides the text it may carry what should still ring when nothing opens: a sound and an
/// interruption level. Those are metadata anyone on the path can read (that this message is
/// critical, which sound it plays), so they are left out unless the sender asks.
public struct FallbackAlert: Sendable, Equatable {
    public var title: String
    public var body: String
    /// `aps.alert.loc-key`: the app's localized string for the body, shown instead of `body`
    /// (iOS shows the key itself when the app has no such string).
    public var localizationKey: String?
    /// The visible metadata: what still sounds and how urgently, when nothing opens.
    public var visible = VisibleMetadata()

    public static let standard = FallbackAlert(title: "New notification", body: "Open the app to read it")

    public init(title: String, body: String, localizationKey: String? = nil, visible: VisibleMetadata = VisibleMetadata()) {
        self.title = title
        self.body = body
        self.localizationKey = localizationKey
        self.visible = visible
    }

    /// Whether iOS has text to show, and so runs the extension.
    package var hasText: Bool { !title.isEmpty || !body.isEmpty || localizationKey?.isEmpty == false }

    /// The payload's `aps`: this alert, the visible metadata, and `mutable-content`.
    func aps() -> JSONObject {
        var alert = JSONObject()
        if !title.isEmpty { alert["title"] = .string(title) }
        if let localizationKey, !localizationKey.isEmpty {
            alert["loc-key"] = .string(localizationKey)
        } else if !body.isEmpty {
            alert["body"] = .string(body)
        }
        var aps = JSONObject()
        aps["alert"] = .object(alert)
        if let sound = visible.sound {
            // A critical alert's sound is a dictionary, as APNs documents it; any other is its name.
            if visible.level == .critical {
                var critical = JSONObject()
                critical["critical"] = .integer(1)
                critical["name"] = .string(sound)
                critical["volume"] = .number("1.0")
                aps["sound"] = .object(critical)
            } else {
                aps["sound"] = .string(sound)
            }
        }
        if let level = visible.level { aps["interruption-level"] = .string(level.rawValue) }
        aps["mutable-content"] = .integer(1)
        return aps
    }
}

/// What stays visible (audible) of an alert when its seal cannot be opened: `--visible-sound`
/// and `--visible-level`, or a batch line's `visible-sound` and `visible-level`.
public struct VisibleMetadata: Sendable, Equatable {
    public var sound: String?
    public var level: InterruptionLevel?

    public init(sound: String? = nil, level: InterruptionLevel? = nil) {
        self.sound = sound
        self.level = level
    }

    public var isEmpty: Bool { sound == nil && level == nil }

    /// These, with every member `other` sets in their place.
    package func overridden(by other: VisibleMetadata) -> VisibleMetadata {
        VisibleMetadata(sound: other.sound ?? sound, level: other.level ?? level)
    }

    /// A sound name as APNs takes it: 1 to 256 bytes, no control characters.
    package static func isSoundName(_ name: String) -> Bool {
        (1...256).contains(name.utf8.count) && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
