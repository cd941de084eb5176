/// Why `send` could not run at all (as opposed to a device APNs refused).
package struct SendError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: Sendable {
        /// The provider token could not be made or kept.
        case token
        /// The endpoint cannot be reached (after the connection attempts).
        case unreachable
        /// The endpoint's certificate is not trusted.
        case untrusted
        /// The endpoint does not speak HTTP/2, or the proxy refused to tunnel to it.
        case refused
        /// The endpoint's or the proxy's address, or the trust file, cannot be used at all.
        case setup
    }

    package let code: Code
    package let message: String
    package var description: String { message }

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package static func == (lhs: SendError, rhs: SendError) -> Bool { lhs.code == rhs.code }
}
