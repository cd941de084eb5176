/// A certificate chain and its private key, as PEM files, for serving HTTPS.
package struct TLSIdentity: Sendable, Equatable {
    package let certificateFile: String
    package let keyFile: String

    package init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
