import CSystem
import MonotonicTime
import PushSeal
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request to stop taking input that a blocked read or a sleep notices at once: a flag,
/// and a pipe that becomes readable when the flag is set, for `poll` to wait on.
package final class StopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    private let readEnd: Int32
    private let writeEnd: Int32

    package init() throws(FileIOFailure) {
        var ends: [Int32] = [-1, -1]
        guard pushseal_pipe_cloexec(&ends) == 0 else { throw FileIOFailure(code: errno) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Asks everything waiting on this request to stop; safe to call more than once.
    package func request() {
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    package var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Waits until `descriptor` has input (true) or a stop is requested (false).
    package func waitForInput(on descriptor: Int32) -> Bool {
        wait(descriptor, timeout: -1)
    }

    /// Sleeps for `duration`; returns false at once when a stop is requested.
    package func sleep(_ duration: Duration) -> Bool {
        wait(nil, timeout: Int32(clamping: max(0, duration.saturatingMilliseconds)))
    }

    private func wait(_ descriptor: Int32?, timeout: Int32) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let descriptor { fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        while !isRequested {
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno == EINTR { continue }
            // A closed or failing input counts as having input: the read then tells.
            return !isRequested
        }
        return false
    }
}
