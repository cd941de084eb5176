/// When a sender's key stops opening messages, as one line a receiver imports:
/// `psr1.<kid>.<unix seconds>`. It holds no secret. A share carries no state, so without it a
/// receiver's copy of a key would keep opening notifications after the sender's grace ended
/// and its prune destroyed the key.
package struct RetirementNotice: Sendable, Equatable {
    package static let prefix = "psr1."

    package let kid: String
    /// When the key stops opening messages, in seconds since the Unix epoch.
    package let expires: Int64

    package init(kid: String, expires: Int64) {
        self.kid = kid
        self.expires = expires
    }

    package var text: String { "\(Self.prefix)\(kid).\(expires)" }

    /// The last second `keyring.json` can write (9999-12-31T23:59:59Z).
    static let latest: Int64 = 253_402_300_799

    /// Reads a notice; surrounding white space is ignored. The time is decimal digits only,
    /// up to the last second `keyring.json` can hold.
    package init(parsing input: String) throws {
        let (kid, digits) = try KeyShare.splitText(input, prefix: Self.prefix, what: "retirement notice", shape: "psr1.<kid>.<unix seconds>")
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0 >= "0" && $0 <= "9" }), let expires = Int64(digits),
            expires <= Self.latest
        else {
            throw KeyringError(.invalidShare, "not a retirement notice: the time must be seconds since 1970 in decimal digits, before the year 10000")
        }
        self.kid = kid
        self.expires = expires
    }
}

extension Keyring {
    /// The notices of every key that is retiring or retired here: an expiry set by rotation or
    /// promotion, or destroyed (retired as of `now`). A key that only waits to be promoted,
    /// or is disabled without an expiry (reversibly), has none.
    package func retirementNotices(now: Int64) -> [RetirementNotice] {
        keys.compactMap { entry in
            if entry.state == .destroyed { return RetirementNotice(kid: entry.id, expires: min(entry.expires ?? now, now)) }
            return entry.expires.map { RetirementNotice(kid: entry.id, expires: min($0, RetirementNotice.latest)) }
        }
    }
}

/// What importing a retirement notice did to this keyring.
package enum RetirementOutcome: Sendable, Equatable {
    /// The key now stops opening at the notice's time.
    case retires(at: Int64)
    /// The key already stopped sooner (an earlier notice, a rotation here), or was destroyed.
    case alreadySooner
    /// This keyring has no key of that id: nothing to retire.
    case notHeld
}
