/// A certificate chain and its private key, as PEM files, for serving HTTPS.
public struct TLSIdentity: Sendable, Equatable {
    public let certificateFile: String
    public let keyFile: String

    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
