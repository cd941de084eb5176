import Locking
import PushSeal

/// The decrypting extension first, then the user's own program on what it opened, within
/// the one deadline: what an app's Notification Service Extension does when it decrypts and
/// then, say, downloads an attachment. The program speaks `ProcessExtension`'s protocol and
/// sees the opened alert, never the sealed one.
///
/// - An alert that cannot be opened gets the decrypting extension's placeholder (or is
///   passed through), and the program does not run.
/// - The program's answer is shown (`modified`, with the kid).
/// - A program that fails (an exit status, a crash, output that is not content) leaves the
///   opened alert shown (`decrypted`, the reason in the record).
/// - Time running out before the alert is opened shows the placeholder (`deadline`); while
///   the program works, the opened alert is shown at once (`deadline`) as an extension
///   delivers its best attempt in `serviceExtensionTimeWillExpire`, and the program gets
///   its SIGTERM (and SIGKILL after the grace); what it says after that is not used.
package final class DecryptThenExtension: NotificationServiceExtension {
    private enum Phase {
        case opening
        case running(ProcessExtension, opened: NotificationContent, kid: String?)
        case delivered
    }

    private let decrypting: DecryptingExtension
    private let program: ProcessExtension.Settings
    private let phase = Locked<Phase>(.opening)
    // Set once in didReceive, before anything can deliver.
    private let handler = Locked<ContentHandler?>(nil)

    package init(keys: any KeySource, settings: DecryptingExtension.Settings, program: ProcessExtension.Settings) {
        decrypting = DecryptingExtension(keys: keys, settings: settings)
        self.program = program
    }

    package func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        handler.withLock { $0 = contentHandler }
        decrypting.didReceive(
            request,
            contentHandler: ContentHandler { [self] content, note in
                guard let note, note.status == .decrypted else { return deliver(content, note) }
                let next = ProcessExtension(settings: program)
                let started = phase.withLock { phase -> Bool in
                    guard case .opening = phase else { return false }
                    phase = .running(next, opened: content, kid: note.kid)
                    return true
                }
                guard started else { return }
                let opened = NotificationRequest(request, showing: content)
                next.didReceive(
                    opened,
                    contentHandler: ContentHandler { [self] answer, answerNote in
                        if let answerNote, answerNote.status == .original {
                            // The program gave nothing usable: the opened alert stands.
                            deliver(
                                content,
                                DeliveryNote(
                                    status: .decrypted, kid: note.kid,
                                    reason: "the program run after decrypting gave an answer that was not used: \(answerNote.reason ?? "no content")"))
                        } else {
                            deliver(answer, DeliveryNote(status: answerNote?.status ?? .modified, kid: note.kid, reason: answerNote?.reason))
                        }
                    })
            })
    }

    package func serviceExtensionTimeWillExpire() {
        switch phase.withLock({ $0 }) {
        case .opening:
            decrypting.serviceExtensionTimeWillExpire()
        case .running(let running, let opened, let kid):
            deliver(
                opened,
                DeliveryNote(
                    status: .deadline, kid: kid,
                    reason: "time ran out while the program run after decrypting worked; the opened alert was shown"))
            running.serviceExtensionTimeWillExpire()
        case .delivered:
            break
        }
    }

    /// The first delivery goes to the system; any later one (the program answering after
    /// its deadline, say) is this extension's own business and is dropped here.
    private func deliver(_ content: NotificationContent, _ note: DeliveryNote?) {
        let first = phase.withLock { phase -> Bool in
            if case .delivered = phase { return false }
            phase = .delivered
            return true
        }
        guard first, let handler = handler.withLock({ $0 }) else { return }
        if let note { handler(content, note: note) } else { handler(content) }
    }
}
