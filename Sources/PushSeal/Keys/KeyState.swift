/// Where a key is in its life.
public enum KeyState: String, Sendable, CaseIterable {
    /// Encrypts new messages and decrypts; exactly one key at a time.
    case primary
    /// Decrypts only, until its `expires` passes.
    case enabled
    /// Decrypts nothing, but can be enabled again.
    case disabled
    /// Secret wiped; the id stays so receivers can say why a message cannot be read.
    case destroyed
}
