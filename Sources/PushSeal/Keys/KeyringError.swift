/// Why a keyring operation failed. Reasons name the keyring path and kid, never a secret.
public typealias KeyringError = PushSealError<KeyringFailure>

/// The kinds of `KeyringError`.
public enum KeyringFailure: String, Hashable, Sendable {
    /// There is no keyring file at the path.
    case keyringMissing
    /// `keys init` found a keyring already there.
    case keyringExists
    /// The keyring or its folder is open to group or others, or is a symlink.
    case insecurePermissions
    /// The file is not a valid pushseal keyring.
    case corrupt
    /// No key has this id.
    case unknownKey
    /// The key was disabled; it decrypts nothing until enabled again.
    case keyDisabled
    /// The key's secret was destroyed; only its id remains.
    case keyDestroyed
    /// The key's grace period after rotation has passed.
    case keyExpired
    /// No key is primary, so nothing can be encrypted.
    case noPrimary
    /// The change is not allowed in the key's state (disabling the primary, say).
    case notAllowed
    /// A shared secret was named where a recipient key (ps2) is needed.
    case notARecipient
    /// The keyring has no sender key (to rotate, or to export).
    case noSenderKey
    /// A key that is not this keyring's sender key was named to authenticate a message.
    case notASender
    /// An envelope names a sender key this keyring does not allow (unknown, disabled,
    /// retired, destroyed, or not a sender's key at all).
    case senderNotAllowed
    /// Only the device can do this: its keyring holds the private half of the key (the
    /// primary here is the device's public key, or a public key was to be made here).
    case deviceKey
    /// A share string that could not be read.
    case invalidShare
    /// An import that would replace an existing key with different bytes.
    case conflict
    /// Reading or writing the keyring failed.
    case io
    /// The keyring could not be created.
    case cannotCreate
    /// Another process held the keyring's lock for longer than the caller would wait.
    case lockTimeout
}
