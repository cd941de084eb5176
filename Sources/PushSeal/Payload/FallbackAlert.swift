/// The visible alert APNs carries in the clear. It is what shows when no extension runs,
/// so it must never hold the secret text.
public struct FallbackAlert: Sendable, Equatable {
    public var title: String
    public var body: String

    public static let standard = FallbackAlert(title: "New notification", body: "Open the app to read it")

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}
