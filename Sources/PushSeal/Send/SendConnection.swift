import HTTP2
import SealCrypto

/// Where `send` delivers: an `https://` (or `http://`, HTTP/2 without TLS) address, checked.
package struct SendEndpoint: Sendable, Equatable, CustomStringConvertible {
    let engine: ClientEndpoint

    package init(url: String) throws(SendError) {
        do {
            engine = try ClientEndpoint(url: url)
        } catch {
            throw SendError(.setup, error.message, underlying: error)
        }
    }

    /// True for `https://`.
    package var secure: Bool { engine.secure }
    package var host: String { engine.host }
    /// True when the host is this machine (`localhost`, 127.0.0.0/8, `::1`).
    package var isLoopback: Bool { engine.isLoopback }
    package var description: String { engine.description }
}

/// How `send` reaches its endpoint: through which proxy, trusting what besides the system's
/// CAs, over how many connections and streams, and how long it waits.
package struct SendConnection: Sendable {
    let engine: HTTP2Client.Settings

    /// The proxy chosen (from `--proxy`, or the environment less `NO_PROXY`), as `host:port`;
    /// nil when the connection goes direct.
    package var proxyAddress: String? { engine.proxy.map { "\($0.host):\($0.port)" } }

    /// How long a notification waits for its answer unless a timeout is chosen (`--timeout`'s
    /// default, and its help's).
    package static let defaultTimeout = Duration.seconds(30)

    /// - Parameters:
    ///   - proxy: an `http://HOST:PORT` proxy; empty for none; nil to take `https_proxy`
    ///     (or `http_proxy`) and `no_proxy` from the environment.
    ///   - trustFile: a PEM file of certificates trusted besides the system's.
    ///   - timeout: how long a notification waits for its answer once sent; a connection
    ///     attempt gets no longer (and at most 10 s), so a server that accepts and then says
    ///     nothing is given up on as soon as a silent answer would be.
    package init(
        endpoint: SendEndpoint, proxy: String?, trustFile: String?, connections: Int, streams: Int,
        timeout: Duration, clientIdentity: TLSClientIdentity? = nil
    ) throws(SendError) {
        let chosen: ClientProxy?
        do {
            if let proxy {
                chosen = proxy.isEmpty ? nil : try ClientProxy(url: proxy)
            } else {
                chosen = try ClientProxy.fromEnvironment(for: endpoint.engine)
            }
        } catch {
            throw SendError(.setup, error.message, underlying: error)
        }
        engine = HTTP2Client.Settings(
            endpoint: endpoint.engine, trustFile: trustFile, proxy: chosen, connections: connections,
            maximumStreams: streams, timeout: timeout, connectTimeout: min(timeout, .seconds(10)),
            clientIdentity: clientIdentity)
    }
}
