#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Dispatch
import SealCrypto

/// The `pushseal-curl` child that carries `send`'s requests over HTTP/2: frames go to its
/// stdin, answers come back on its stdout to `onResponse`, on a reader thread.
public final class TransportProcess: Sendable {
    private let child: ChildProcess
    /// The write end of the transport's stdin; -1 once closed, so a late send cannot write
    /// to a descriptor number that has been reused.
    private let input: Locked<Int32>
    private let done = DispatchSemaphore(value: 0)

    /// Starts the transport.
    /// - Parameters:
    ///   - program: the `pushseal-curl` executable.
    ///   - endpoint: `https://host[:port]` (or `http://` for HTTP/2 in the clear).
    ///   - caFile: a PEM file of certificates to trust instead of the system's.
    ///   - timeout: how long one request may wait for its answer before it is given up.
    public init(program: String, endpoint: String, caFile: String?, maximumStreams: Int, timeout: Duration,
                onResponse: @escaping @Sendable (TransportFrame.Response) -> Void) throws(SendError) {
        guard access(program, X_OK) == 0 else {
            throw SendError(.transport, "the HTTP/2 transport \(program) is missing (it is built beside pushseal)")
        }
        let arguments = [program, endpoint, caFile ?? "-", String(maximumStreams), String(max(1, Int(timeout.milliseconds)))]
        do {
            child = try ChildProcess(program, arguments, stdin: .pipe, stdout: .pipe)
        } catch {
            throw SendError(.transport, "cannot start \(program): \(error.message)")
        }
        input = Locked(child.descriptor(.input))
        let output = child.descriptor(.output)
        let child = self.child
        let done = self.done
        OwnThread.start {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1_024)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                buffer.append(contentsOf: chunk[..<count])
                for frame in TransportFrame.takeFrames(from: &buffer) {
                    if let response = TransportFrame.decodeResponse(frame) { onResponse(response) }
                }
            }
            child.close(.output)
            done.signal()
        }
    }

    /// Hands one request to the transport.
    public func send(_ request: TransportFrame.Request) throws(SendError) {
        let frame = TransportFrame.encode(request)
        let written = input.withLock { fd in fd >= 0 && (try? FileIO.writeAll(fd, frame)) != nil }
        guard written else { throw SendError(.transport, "the HTTP/2 transport stopped") }
    }

    /// No more requests: waits for the transport to answer the rest and exit.
    /// Returns its exit status.
    @discardableResult
    public func finish() -> Int32 {
        input.withLock { fd in
            if fd >= 0 { child.close(.input) }
            fd = -1
        }
        done.wait()
        return child.wait() ?? 0
    }
}
