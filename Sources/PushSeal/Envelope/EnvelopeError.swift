/// Why an envelope could not be read or opened, in the one vocabulary of outcomes: its
/// `code` is the `DeliveryStatus` the runner, `doctor` and PushSealKit give such a message.
/// - `malformed`: not an envelope (no `version.kid.sealed` shape, bad base64, a short box,
///   a bad kid), or opened but not a sealed alert;
/// - `unsupported`: a version this build does not read;
/// - `authenticationFailed`: the tag did not verify (altered in transit, or sealed under
///   another key);
/// - `passthrough`: the payload has no envelope field, so it is shown as it came.
public typealias EnvelopeError = PushSealError<DeliveryStatus>
