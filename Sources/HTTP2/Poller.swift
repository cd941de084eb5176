// epoll and eventfd come with the nghttp2 shim's headers (sys/epoll.h, sys/eventfd.h).
internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// What each event-loop thread of both sides is built on: one epoll instance, the eventfd
/// other threads wake it with, and the scratch buffer reads land in (one read runs at a
/// time on a loop). Owned by one loop; only `wakeUp` may be called from other threads.
final class Poller {
    let scratch: UnsafeMutableRawBufferPointer
    private let epoll: Int32
    private let wake: Int32

    /// Why a poller could not be made: the system's words and its errno.
    struct Failure: Error {
        let message: String
        let errno: Int32
    }

    init(scratchBytes: Int) throws(Failure) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = epoll >= 0 ? eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) : -1
        guard epoll >= 0, wake >= 0 else {
            // The deinit does not run for an object that never finished its init: close
            // here whichever of the two was made.
            let code = errno
            if epoll >= 0 { close(epoll) }
            throw Failure(message: "cannot make an event loop: \(String(cString: strerror(code)))", errno: code)
        }
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: scratchBytes, alignment: 16)
        watch(wake, events: EPOLLIN.rawValue, add: true)
    }

    deinit {
        scratch.deallocate()
        close(epoll)
        close(wake)
    }

    /// Watches `descriptor` for `events` (EPOLL_CTL_ADD when `add`, else a change).
    func watch(_ descriptor: Int32, events: UInt32, add: Bool = false) {
        var event = epoll_event()
        event.events = events
        event.data.fd = descriptor
        epoll_ctl(epoll, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event)
    }

    func forget(_ descriptor: Int32) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// From any thread: the loop's next wait returns at once.
    func wakeUp() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// Waits at most `timeout` ms for events; their count, or -1 with errno. A wake-up is
    /// taken here, and its event's descriptor reads -1.
    func wait(_ events: inout [epoll_event], timeout: Int32) -> Int32 {
        let count = epoll_wait(epoll, &events, Int32(events.count), timeout)
        for index in 0..<max(0, Int(count)) where events[index].data.fd == wake {
            var value: UInt64 = 0
            _ = read(wake, &value, 8)
            events[index].data.fd = -1
        }
        return count
    }
}
