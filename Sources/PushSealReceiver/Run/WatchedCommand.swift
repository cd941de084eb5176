import CSystem
import MonotonicTime
import PushSeal

#if canImport(Glibc)
import Glibc
#endif

/// How a command run by `pushseal run` ended, and what it last printed.
package struct CommandOutcome: Sendable, Equatable {
    package enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        /// It never ran: 127 when it was not found, 126 when it could not be executed.
        case notStarted(status: Int32, reason: String)

        /// How `waitpid` says a child ended: its exit code, or the signal that killed it.
        package init(waitStatus status: Int32) {
            self = (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        }

        /// `exit 3`, `signal 15`, for messages about programs pushseal runs.
        package var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let number): "signal \(number)"
            case .notStarted(let status, let reason): "not started (\(reason), \(status))"
            }
        }
    }

    package var ending: Ending
    package var duration: Duration
    /// Its last lines of output (stdout and stderr as they came), cleaned for an alert.
    package var lastLines: [String]

    /// The status a shell would give: the exit code, or 128 + the signal.
    package var exitStatus: Int32 {
        switch ending {
        case .exited(let code): code
        case .signalled(let number): 128 + number
        case .notStarted(let status, _): status
        }
    }

    package var succeeded: Bool { ending == .exited(0) }
}

/// Runs one command to its end with its stdin, stdout and stderr passed through, keeping
/// its last lines, and passing on the signals pushseal gets (see `CSystem`).
package enum WatchedCommand {
    /// Lines longer than this are cut: an alert has room for a few short lines only.
    package static let lineLimit = 160

    /// - Parameters:
    ///   - arguments: the program (looked up in PATH) and its arguments.
    ///   - tail: how many of the last lines to keep; 0 leaves the output alone, unread.
    ///   - stdout: where the command's stdout goes (1, or 2 when stdout carries a payload).
    package static func run(_ arguments: [String], tail: Int, stdout: Int32 = 1) -> CommandOutcome {
        let started = MonotonicClock.system.now
        func elapsed() -> Duration { MonotonicClock.system.now - started }
        guard let program = arguments.first else {
            return CommandOutcome(ending: .notStarted(status: 127, reason: "no command"), duration: .zero, lastLines: [])
        }
        pushseal_forward_signals_begin()
        defer { pushseal_forward_signals_end() }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                program, arguments, stdin: .inherit(0),
                stdout: tail > 0 ? .pipe : .inherit(stdout), stderr: tail > 0 ? .pipe : .inherit(2),
                searchPath: true)
        } catch {
            let status: Int32 = error.code == ENOENT ? 127 : 126
            let reason = error.code == ENOENT ? "command not found" : error.message
            return CommandOutcome(ending: .notStarted(status: status, reason: reason), duration: elapsed(), lastLines: [])
        }
        pushseal_forward_signals_to(child.pid)

        var lines = LastLines(keeping: tail)
        if tail > 0 {
            pump([(.output, stdout), (.errorOutput, 2)], of: child, into: &lines)
        }
        // Signals stop being passed on before the reap frees the pid for another process.
        let status = child.wait(beforeReap: { pushseal_forward_signals_stop() }) ?? 0
        return CommandOutcome(ending: .init(waitStatus: status), duration: elapsed(), lastLines: lines.finish())
    }

    /// Copies each of the child's pipes to its destination until both end, feeding `lines`.
    /// Once the child has exited, what is already written is read and the rest let go: a
    /// program it left running in the background may hold the pipes open for good.
    private static func pump(
        _ pairs: [(end: ChildProcess.End, destination: Int32)], of child: ChildProcess,
        into lines: inout LastLines
    ) {
        var open = pairs.enumerated().map {
            (
                index: $0.offset, end: $0.element.end, source: child.descriptor($0.element.end),
                destination: $0.element.destination, passing: true
            )
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var exitedAt: MonotonicClock.Instant?
        let exitSignal = child.exitPollDescriptor
        while !open.isEmpty {
            var polls = open.map { pollfd(fd: $0.source, events: Int16(POLLIN), revents: 0) }
            // The exit wakes the poll where the system says it on a descriptor; else a look every 100 ms.
            if exitedAt == nil, exitSignal >= 0 { polls.append(pollfd(fd: exitSignal, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&polls, nfds_t(polls.count), exitedAt != nil ? 0 : (exitSignal >= 0 ? -1 : 100))
            if ready < 0, errno != EINTR { break }
            // Once it has exited: what it wrote, and at most a second of what a program it
            // left behind keeps writing.
            if let exitedAt, ready == 0 || MonotonicClock.system.now - exitedAt > .seconds(1) { break }
            var ended: [Int] = []
            for (slot, entry) in polls.prefix(open.count).enumerated() where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    ended.append(slot)
                    continue
                }
                let chunk = buffer[..<count]
                lines.add(chunk, from: open[slot].index)
                if open[slot].passing, (try? FileIO.writeAll(open[slot].destination, Array(chunk))) == nil {
                    // Nobody reads pushseal's output: the command finds that out as it would have.
                    open[slot].passing = false
                    ended.append(slot)
                }
            }
            for slot in ended.reversed() {
                child.close(open[slot].end)
                open.remove(at: slot)
            }
            if exitedAt == nil, child.hasExited { exitedAt = MonotonicClock.system.now }
        }
        for entry in open { child.close(entry.end) }
    }
}

/// The last lines of a command's output, as they will read in an alert: terminal escape
/// sequences and other control characters dropped, a progress bar's carriage returns
/// keeping only its last state, each line cut at `WatchedCommand.lineLimit` characters.
struct LastLines {
    private let keeping: Int
    private var kept: [String] = []
    /// The line each stream is in the middle of (stdout and stderr write lines of their own).
    private var partial: [Int: [UInt8]] = [:]

    init(keeping: Int) { self.keeping = keeping }

    mutating func add(_ bytes: ArraySlice<UInt8>, from stream: Int) {
        guard keeping > 0 else { return }
        var line = partial[stream] ?? []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                keep(line)
                line.removeAll(keepingCapacity: true)
            } else if line.count < 4 * WatchedCommand.lineLimit + 64 {
                line.append(byte)
            }
        }
        partial[stream] = line
    }

    mutating func finish() -> [String] {
        for stream in partial.keys.sorted() where !(partial[stream] ?? []).isEmpty {
            keep(partial[stream] ?? [])
        }
        partial = [:]
        return kept
    }

    private mutating func keep(_ bytes: [UInt8]) {
        kept.append(Self.clean(bytes))
        if kept.count > keeping { kept.removeFirst(kept.count - keeping) }
    }

    static func clean(_ bytes: [UInt8]) -> String {
        var line = bytes[...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        // A progress bar redraws itself after each \r: only its last drawing counts.
        if let carriage = line.lastIndex(of: UInt8(ascii: "\r")) { line = line[(carriage + 1)...] }
        var text = ""
        var characters = String(decoding: line, as: UTF8.self).unicodeScalars.makeIterator()
        var count = 0
        while let scalar = characters.next(), count < WatchedCommand.lineLimit {
            if scalar == "\u{1B}" {
                // CSI (ESC [ ... final byte) and OSC (ESC ] ... BEL or ESC \): colours, titles, links.
                switch characters.next() {
                case "[":
                    while let next = characters.next(), !(0x40...0x7E).contains(next.value) {}
                case "]":
                    while let next = characters.next() {
                        if next == "\u{07}" { break }
                        if next == "\u{1B}" {
                            _ = characters.next()
                            break
                        }
                    }
                default: break
                }
                continue
            }
            if scalar == "\t" {
                text += " "
            } else if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                continue
            } else {
                text.unicodeScalars.append(scalar)
            }
            count += 1
        }
        if count == WatchedCommand.lineLimit, characters.next() != nil { text += "…" }
        return text
    }
}
