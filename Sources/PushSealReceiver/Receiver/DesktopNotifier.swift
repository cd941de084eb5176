import Dispatch
import Locking
import MonotonicTime
import PushSeal

#if canImport(Glibc)
import Glibc
#endif

/// `receive --notify`: each delivery also shown on the desktop, through the freedesktop
/// notification service (D-Bus `org.freedesktop.Notifications`) by `notify-send`, with what
/// the phone would show: the decrypted title and body, or the placeholder.
///
/// Notifications are shown one at a time, off the delivering threads, so a slow or absent
/// notification service never holds back a record. At most `backlog` wait; beyond that
/// they are counted and skipped (a desktop cannot show thousands a second anyway).
package final class DesktopNotifier: Sendable {
    package struct Tally: Sendable, Equatable {
        package var shown = 0
        package var failed = 0
        package var skipped = 0
    }

    package static let backlog = 64

    private let program: String
    private let queue = DispatchQueue(label: "pushseal.notify")
    private let state = Locked<(waiting: Int, tally: Tally, warned: Bool)>((0, Tally(), false))
    private let warn: @Sendable (String) -> Void

    /// - Parameters:
    ///   - program: the path of `notify-send`.
    ///   - warn: told once, on the first notification that could not be shown.
    package init(program: String, warn: @escaping @Sendable (String) -> Void) {
        self.program = program
        self.warn = warn
    }

    /// `notify-send`'s path on `PATH`, or nil when it is not installed.
    package static func findProgram(path: String?) -> String? {
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/notify-send"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    package func show(_ content: NotificationContent, status: DeliveryStatus) {
        let accepted = state.withLock { state -> Bool in
            guard state.waiting < Self.backlog else {
                state.tally.skipped += 1
                return false
            }
            state.waiting += 1
            return true
        }
        guard accepted else { return }
        let arguments = Self.arguments(for: content, status: status)
        queue.async { [self] in
            let outcome = run(arguments)
            let first = state.withLock { state -> Bool in
                state.waiting -= 1
                if outcome == nil { state.tally.shown += 1 } else { state.tally.failed += 1 }
                defer { if outcome != nil { state.warned = true } }
                return outcome != nil && !state.warned
            }
            if first, let outcome { warn(outcome) }
        }
    }

    /// Waits for the notifications still waiting, then says how it went.
    package func finish() -> Tally {
        queue.sync {}
        return state.withLock { $0.tally }
    }

    /// notify-send's arguments: the summary is the title (the subtitle joins the body, as
    /// the desktop has one line of summary); the body is escaped, since notification
    /// services may read it as markup.
    static func arguments(for content: NotificationContent, status: DeliveryStatus) -> [String] {
        let urgency =
            switch content.interruptionLevel {
            case .critical?: "critical"
            case .passive?: "low"
            default: "normal"
            }
        let body = [content.subtitle, content.body].filter { !$0.isEmpty }.joined(separator: "\n")
        return [
            "notify-send", "--app-name=pushseal", "--urgency=\(urgency)",
            "--hint=string:x-pushseal-status:\(status.rawValue)", "--",
            content.title.isEmpty ? "(no title)" : content.title, markupEscaped(body)
        ]
    }

    static func markupEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Nil when notify-send showed it; otherwise why not.
    private func run(_ arguments: [String]) -> String? {
        let child: ChildProcess
        do {
            child = try ChildProcess(program, arguments, stdin: .null, stdout: .null, stderr: .null)
        } catch {
            return "cannot run \(program): \(error.message)"
        }
        // A bus that never answers must not stall the rest: 5 s, then it is given up.
        guard let status = child.wait(within: .seconds(5)) else {
            child.signal(SIGKILL)
            _ = child.wait()
            return "notify-send got no answer within 5 s: is a notification service running on the session bus?"
        }
        guard status != 0 else { return nil }
        return "notify-send failed (\(CommandOutcome.Ending(waitStatus: status).description)): "
            + "is a desktop session's D-Bus (DBUS_SESSION_BUS_ADDRESS) and a notification service there?"
    }
}
