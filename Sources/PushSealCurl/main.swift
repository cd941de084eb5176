#if canImport(Glibc)
import Glibc
#endif
import PushSeal

// pushseal-curl BASE-URL CA-FILE|- MAXIMUM-STREAMS TIMEOUT-MS
//
// The HTTP/2 transport of `pushseal send`, run by it as a child: request frames
// (TransportFrame) on stdin, one response frame per request on stdout, in the order the
// answers come. Not meant to be run by hand.
let arguments = CommandLine.arguments
guard arguments.count == 5, let streams = Int(arguments[3]), let timeout = Int(arguments[4]), timeout > 0 else {
    FileHandleless.fail("usage: pushseal-curl BASE-URL CA-FILE|- MAXIMUM-STREAMS TIMEOUT-MS (run by pushseal send)")
}
signal(SIGPIPE, SIG_IGN)
let session = CurlSession(base: arguments[1], caFile: arguments[2] == "-" ? nil : arguments[2], maximumStreams: streams,
                          timeoutMilliseconds: timeout)

OwnThread.start {
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1_024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        buffer.append(contentsOf: chunk[..<count])
        // Every request of one read goes to the session at once: one wake-up, not one each.
        session.enqueue(TransportFrame.takeFrames(from: &buffer).map { frame in
            guard let request = TransportFrame.decodeRequest(frame) else {
                FileHandleless.fail("pushseal-curl: an unreadable request frame")
            }
            return request
        })
    }
    session.endOfInput()
}

var output: [UInt8] = []
session.run { responses in
    for response in responses { output.append(contentsOf: TransportFrame.encode(response)) }
    // Answers go out at once: the sender's results and retries wait on them.
    do {
        try FileIO.writeAll(1, output)
    } catch {
        exit(74)
    }
    output.removeAll(keepingCapacity: true)
}
exit(0)

enum FileHandleless {
    static func fail(_ message: String) -> Never {
        try? FileIO.writeAll(2, Array((message + "\n").utf8))
        exit(64)
    }
}
