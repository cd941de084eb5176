/// A failure in the pushseal domain: a code the CLI maps to an exit status, and a reason
/// written for people that never contains secret material.
public protocol PushSealFailure: Error, CustomStringConvertible {
    associatedtype Code: Hashable & Sendable
    var code: Code { get }
    var reason: String { get }
}

extension PushSealFailure {
    public var description: String { reason }
}
