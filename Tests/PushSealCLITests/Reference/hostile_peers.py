#!/usr/bin/env python3
"""Hostile and careless peers of `pushseal receive --listen`, for the service's tests.

Each subcommand plays one peer against HOST PORT and prints one JSON line of what it saw.
Frames are built with the `h2` package's state machine or, where a peer breaks the rules
on purpose, by hand; every loop is bounded in count and time.

  tls-churn HOST PORT CACERT REQUEST_JSON CLIENTS
        one TLS connection sends a request every 50 ms while CLIENTS others connect,
        request once and drop their socket; reports what the long-lived one got
  idle-crowd HOST PORT CONNECTIONS SECONDS REQUEST_JSON
        CONNECTIONS connections that send the preface and a PING every 2 s and nothing else;
        after a second, one more connection makes a request; reports its status and how
        many idle ones were sent GOAWAY
  idle-goaway HOST PORT SECONDS       preface and PINGs only; reports the GOAWAY before close
  stalled-body HOST PORT REQUEST_JSON SECONDS
        headers and half a body, then silence; reports the RST_STREAM it got
  rapid-reset HOST PORT REQUEST_JSON COUNT
        COUNT requests on one connection, each reset at once; reports the GOAWAY
  hpack-bomb HOST PORT FRAMES   a 4 KB header in the HPACK table, then HEADERS frames of
        16 KB that name it again and again; reports the GOAWAY and the frames it took
  unfinished HOST PORT REQUEST_JSON STREAMS
        STREAMS requests with ~7 KB of headers and 5 KB of body that never end; reports the
        streams refused
  token-updates HOST PORT REQUEST_JSON TOKEN...
        one request per token on one connection; reports the statuses
  broken-requests HOST PORT REQUEST_JSON
        requests nghttp2 resets: content-length mismatch, NUL in the path, an empty bearer
  header-table HOST PORT REQUEST_JSON COUNT
        COUNT requests on one connection, then one with a priority APNs refuses; reports the answers'
        apns-ids and the names in the client's HPACK table after them
  flood-and-polite HOST PORT CACERT|- REQUEST_JSON SECONDS
        one connection sends an endless request body for SECONDS while ten polite ones each
        make five requests; reports how many polite answers came while the flood went on

  reset-flood HOST PORT REQUEST_JSON SECONDS
        for SECONDS, requests that nghttp2 must reset (an upper-case header name) on new
        streams of one connection whose client never reads (CVE-2019-9514); reports how many
        went out, whether the connection was closed, and the GOAWAY once it reads again

  over-limit HOST PORT REQUEST_JSON COUNT
        COUNT requests whose bodies never come, past the 1,000 streams SETTINGS allow;
        reports the streams refused (RST_STREAM REFUSED_STREAM)

REQUEST_JSON is {"headers": [[name, value], ...], "body": "..."} for a request that the
listener accepts.
"""
import json
import resource
import socket
import ssl
import struct
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


SETTINGS = frame(4, 0, 0)
SETTINGS_ACK = frame(4, 1, 0)
PING = frame(6, 0, 0, b"12345678")


def read_frames(sock, buffer):
    """Parses whole frames from buffer; returns (frames, rest)."""
    frames = []
    while len(buffer) >= 9:
        length = int.from_bytes(buffer[:3], "big")
        if len(buffer) < 9 + length:
            break
        frames.append((buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF, buffer[9:9 + length]))
        buffer = buffer[9 + length:]
    return frames, buffer


def watch_until_closed(sock, seconds, on_frame=None, sender=None):
    """Reads frames until the server closes or `seconds` pass; returns (closed, frames seen)."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + seconds
    buffer, seen = b"", []
    while time.monotonic() < deadline:
        if sender:
            sender()
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True, seen
        if not data:
            return True, seen
        frames, buffer = read_frames(sock, buffer + data)
        for item in frames:
            seen.append(item)
            if on_frame:
                on_frame(item)
    return False, seen


def goaway_of(frames):
    for kind, _, _, payload in frames:
        if kind == 7:
            return {"last-stream": int.from_bytes(payload[:4], "big") & 0x7FFFFFFF,
                    "code": int.from_bytes(payload[4:8], "big")}
    return None


def request_parts(request_json):
    request = json.loads(request_json)
    return [tuple(pair) for pair in request["headers"]], request["body"].encode()


def h2_connection():
    import h2.config
    import h2.connection

    config = h2.config.H2Configuration(client_side=True, validate_outbound_headers=False,
                                       normalize_outbound_headers=False, validate_inbound_headers=False)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    return conn


def send_request(conn, headers, body, end=True):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, headers, end_stream=not body and end)
    if body:
        conn.send_data(stream, body, end_stream=end)
    return stream


def exchange(sock, conn, streams, seconds=10):
    """Sends what conn has and reads until every stream in `streams` ended or was reset."""
    import h2.events

    sock.sendall(conn.data_to_send())
    results = {}
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    while len(results) < len(streams) and time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except (socket.timeout, ConnectionResetError):
            break
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                fields = dict(event.headers)
                entry = results.setdefault(event.stream_id, {})
                entry["status"] = int(fields[b":status"])
                if b"apns-id" in fields:
                    entry["apns-id"] = fields[b"apns-id"].decode()
            elif isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(len(event.data), event.stream_id)
                entry = results.setdefault(event.stream_id, {})
                entry["body"] = entry.get("body", b"") + event.data
            elif isinstance(event, h2.events.StreamReset):
                results[event.stream_id] = {"reset": int(event.error_code)}
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
    for entry in results.values():
        if "body" in entry:
            entry["body"] = entry["body"].decode(errors="replace")
    return results


def tls_socket(host, port, cacert):
    context = ssl.create_default_context(cafile=cacert)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((host, int(port)), timeout=10)
    return context.wrap_socket(raw, server_hostname="localhost")


def tls_churn(host, port, cacert, request_json, clients):
    headers, body = request_parts(request_json)
    answered, asked, closed_early = 0, 0, False
    sock = tls_socket(host, port, cacert)
    conn = h2_connection()
    sock.sendall(conn.data_to_send())
    stop = threading.Event()

    def churn():
        for _ in range(int(clients)):
            try:
                other = tls_socket(host, port, cacert)
                other_conn = h2_connection()
                stream = send_request(other_conn, headers, body)
                exchange(other, other_conn, [stream], seconds=5)
                # Leave without close_notify: the server's shutdown then fails on its side.
                other.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                other.close()
            except OSError:
                pass
            time.sleep(0.05)
        stop.set()

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        while not stop.is_set() or asked < 10:
            stream = send_request(conn, headers, body)
            asked += 1
            result = exchange(sock, conn, [stream], seconds=5)
            if result.get(stream, {}).get("status") == 200:
                answered += 1
            else:
                closed_early = True
                break
            time.sleep(0.05)
    except OSError:
        closed_early = True
    worker.join()
    sock.close()
    print(json.dumps({"asked": asked, "answered": answered, "closed-early": closed_early}))


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def idle_crowd(host, port, connections, seconds, request_json):
    raise_descriptor_limit()
    headers, body = request_parts(request_json)
    crowd = []
    for _ in range(int(connections)):
        try:
            sock = socket.create_connection((host, int(port)), timeout=5)
            sock.sendall(PREFACE + SETTINGS)
            crowd.append(sock)
        except OSError:
            break
    # Keep the crowd alive with PINGs (which must not count as work) for a moment.
    deadline = time.monotonic() + float(seconds)
    status = None
    asked = False
    while time.monotonic() < deadline:
        for sock in crowd:
            try:
                sock.sendall(PING)
            except OSError:
                pass
        if not asked and time.monotonic() > deadline - float(seconds) + 1:
            asked = True
            try:
                sock = socket.create_connection((host, int(port)), timeout=5)
                conn = h2_connection()
                stream = send_request(conn, headers, body)
                status = exchange(sock, conn, [stream], seconds=10).get(stream, {}).get("status")
                sock.close()
            except OSError as error:
                status = str(error)
        time.sleep(2)
    goaways = 0
    for sock in crowd:
        sock.setblocking(False)
        try:
            data = sock.recv(65536)
            frames, _ = read_frames(sock, data)
            if goaway_of(frames) is not None:
                goaways += 1
        except (BlockingIOError, OSError):
            pass
        sock.close()
    print(json.dumps({"opened": len(crowd), "status": status, "goaways": goaways}))


def silent_crowd(host, port, connections, request_json):
    """A provider's connection that worked and sits idle, then a crowd that connects and never
    says a word (not even the preface): which of them the server lets go at its cap."""
    raise_descriptor_limit()
    headers, body = request_parts(request_json)
    provider = socket.create_connection((host, int(port)), timeout=5)
    conn = h2_connection()
    stream = send_request(conn, headers, body)
    first = exchange(provider, conn, [stream]).get(stream, {}).get("status")
    time.sleep(0.3)
    crowd = []
    for _ in range(int(connections)):
        try:
            crowd.append(socket.create_connection((host, int(port)), timeout=5))
        except OSError:
            break
    time.sleep(1)
    second = None
    try:
        stream = send_request(conn, headers, body)
        second = exchange(provider, conn, [stream], seconds=5).get(stream, {}).get("status")
    except Exception:  # noqa: BLE001 (a closed connection, in any of h2's words)
        pass
    closed = 0
    for sock in crowd:
        # A GOAWAY may come before the end: read to the end, or to what is not there yet.
        sock.setblocking(False)
        try:
            while True:
                if sock.recv(65536) == b"":
                    closed += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        sock.close()
    print(json.dumps({"first": first, "second": second, "opened": len(crowd), "silent-closed": closed}))


def silent_for(host, port):
    """One connection that says nothing: how long until the server closes it."""
    sock = socket.create_connection((host, int(port)), timeout=30)
    started = time.monotonic()
    try:
        data = sock.recv(65536)
        while data and time.monotonic() - started < 30:
            data = sock.recv(65536)
    except OSError:
        pass
    print(json.dumps({"closed-after": round(time.monotonic() - started, 1)}))


def idle_goaway(host, port, seconds):
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.sendall(PREFACE + SETTINGS)
    last = [0.0]

    def ping():
        if time.monotonic() - last[0] > 0.3:
            last[0] = time.monotonic()
            try:
                sock.sendall(PING)
            except OSError:
                pass

    started = time.monotonic()
    closed, frames = watch_until_closed(sock, float(seconds), sender=ping)
    sock.close()
    print(json.dumps({"closed": closed, "goaway": goaway_of(frames), "seconds": round(time.monotonic() - started, 2)}))


def stalled_body(host, port, request_json, seconds):
    headers, body = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=5)
    conn = h2_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, headers, end_stream=False)
    conn.send_data(stream, body[: len(body) // 2], end_stream=False)
    result = exchange(sock, conn, [stream], seconds=float(seconds))
    sock.close()
    print(json.dumps({"stream": result.get(stream)}))


def rapid_reset(host, port, request_json, count):
    headers, body = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(PREFACE + SETTINGS)
    import h2.connection  # noqa: F401  (HPACK encoding through h2's encoder)
    import hpack

    encoder = hpack.Encoder()
    sent = 0
    closed = False
    for number in range(int(count)):
        stream = 1 + 2 * number
        block = encoder.encode(headers)
        try:
            # HEADERS (END_HEADERS), DATA (END_STREAM), then RST_STREAM CANCEL at once.
            sock.sendall(frame(1, 0x4, stream, block) + frame(0, 0x1, stream, body) + frame(3, 0, stream, struct.pack(">I", 8)))
            sent += 1
        except OSError:
            closed = True
            break
    report_flood(sock, sent, closed)


def report_flood(sock, sent, closed):
    """Waits for the server's verdict on a flood and prints it: how much went out, whether
    the connection was closed, and the GOAWAY it was sent."""
    closed_now, frames = watch_until_closed(sock, 5)
    sock.close()
    print(json.dumps({"sent": sent, "closed": closed or closed_now, "goaway": goaway_of(frames)}))


def empty_data(host, port, request_json, count):
    """One request whose body never comes: empty DATA frames without END_STREAM (CVE-2019-9518)."""
    headers, _ = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(PREFACE + SETTINGS)
    import hpack

    block = hpack.Encoder().encode(headers)
    sock.sendall(frame(1, 0x4, 1, block))
    sent = 0
    closed = False
    empty = frame(0, 0, 1)
    for _ in range(int(count) // 100):
        try:
            sock.sendall(empty * 100)
            sent += 100
        except OSError:
            closed = True
            break
    report_flood(sock, sent, closed)


def hpack_bomb(host, port, frames_to_send):
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(PREFACE + SETTINGS)
    name, value = b"x-bomb", b"b" * 4000

    def literal_indexed(name, value):
        # Literal with incremental indexing, new name (RFC 7541 §6.2.1), lengths < 127 or
        # encoded with the 7-bit prefix integer.
        def length(n):
            if n < 127:
                return bytes([n])
            out, n = [127], n - 127
            while n >= 128:
                out.append((n % 128) + 128)
                n //= 128
            out.append(n)
            return bytes(out)
        return b"\x40" + length(len(name)) + name + length(len(value)) + value

    base = b"\x83\x86\x84" + literal_indexed(b":authority", b"x")  # POST, http, /
    # Stream 1 puts the 4 KB entry into the table.
    sock.sendall(frame(1, 0x5, 1, base + literal_indexed(name, value)))
    sent = 0
    started = time.monotonic()
    for number in range(int(frames_to_send)):
        stream = 3 + 2 * number
        # Index 62 is the newest dynamic entry: ~16,000 references, 64 MB once decoded.
        block = b"\x83\x86\x84\xbe" + b"\xbe" * 16_000
        try:
            sock.sendall(frame(1, 0x5, stream, block))
            sent += 1
        except OSError:
            break
    closed, frames = watch_until_closed(sock, 10)
    sock.close()
    print(json.dumps({"sent": sent, "closed": closed, "goaway": goaway_of(frames),
                      "seconds": round(time.monotonic() - started, 2)}))


def unfinished(host, port, request_json, streams):
    import h2.events

    headers, body = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    conn = h2_connection()
    padding = [(f"x-pad-{index}", "p" * 60) for index in range(70)]
    chunk = (body * 40)[:5000]
    opened, refused, answered = [], set(), set()

    def pump(wait):
        sock.settimeout(wait)
        try:
            data = sock.recv(1 << 20)
        except socket.timeout:
            return True
        if not data:
            return False
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamReset) and event.error_code == 7:
                refused.add(event.stream_id)
            elif isinstance(event, h2.events.ResponseReceived):
                answered.add(event.stream_id)
        sock.sendall(conn.data_to_send())
        return True

    sock.sendall(conn.data_to_send())
    deadline = time.monotonic() + 20
    for _ in range(int(streams)):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, headers + padding, end_stream=False)
        opened.append(stream)
        sock.sendall(conn.data_to_send())
        # The body, as fast as the server's flow-control window lets it in, never ended.
        sent = 0
        while sent < len(chunk) and stream not in refused and time.monotonic() < deadline:
            room = min(conn.local_flow_control_window(stream), len(chunk) - sent, conn.max_outbound_frame_size)
            if room <= 0:
                if not pump(0.2):
                    break
                continue
            conn.send_data(stream, chunk[sent:sent + room], end_stream=False)
            sent += room
            sock.sendall(conn.data_to_send())
        pump(0.001)
    end = time.monotonic() + 1
    while time.monotonic() < end and pump(0.2):
        pass
    sock.close()
    print(json.dumps({"opened": len(opened), "refused": len(refused), "answered": len(answered)}))


def token_updates(host, port, request_json, *tokens):
    headers, body = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    conn = h2_connection()
    statuses = []
    for token in tokens:
        own = [(name, value) for name, value in headers if name != "authorization"] + [("authorization", "bearer " + token)]
        stream = send_request(conn, own, body)
        result = exchange(sock, conn, [stream]).get(stream, {})
        statuses.append({"status": result.get("status"), "body": result.get("body")})
    sock.close()
    print(json.dumps({"answers": statuses}))


def header_table(host, port, request_json, count):
    headers, body = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    conn = h2_connection()
    answers = []
    for own in [headers] * int(count) + [headers + [("apns-priority", "7")]]:
        stream = send_request(conn, own, body)
        answers.append(exchange(sock, conn, [stream]).get(stream, {}))
    table = [name.decode() for name, _ in conn.decoder.header_table.dynamic_entries]
    sock.close()
    print(json.dumps({"statuses": [answer.get("status") for answer in answers],
                      "ids": [answer.get("apns-id", "") for answer in answers], "table": table}))


def broken_requests(host, port, request_json):
    headers, body = request_parts(request_json)
    outcomes = {}
    cases = {
        "content-length": (headers + [("content-length", str(len(body) + 5))], body),
        "nul-in-path": ([(n, v + "\x00" if n == ":path" else v) for n, v in headers], body),
        "empty-bearer": ([(n, "bearer " if n == "authorization" else v) for n, v in headers], body),
    }
    for name, (own, data) in cases.items():
        sock = socket.create_connection((host, int(port)), timeout=10)
        conn = h2_connection()
        stream = send_request(conn, own, data)
        outcomes[name] = exchange(sock, conn, [stream], seconds=5).get(stream)
        sock.close()
    print(json.dumps(outcomes))


def flood_and_polite(host, port, cacert, request_json, seconds):
    import h2.events

    headers, body = request_parts(request_json)
    stop = threading.Event()
    flooded = [0]

    def connect():
        if cacert == "-":
            return socket.create_connection((host, int(port)), timeout=10)
        return tls_socket(host, port, cacert)

    def flood():
        # One request whose body never ends, sent as fast as flow control lets it in: the
        # server keeps reading it, and must still serve the others on the same thread.
        sock = connect()
        conn = h2_connection()
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, headers, end_stream=False)
        sock.sendall(conn.data_to_send())
        chunk = b"f" * 16384
        deadline = time.monotonic() + float(seconds)
        sock.settimeout(0.001)
        try:
            while time.monotonic() < deadline and not stop.is_set():
                room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
                if room > 0:
                    conn.send_data(stream, chunk[:room], end_stream=False)
                    out = conn.data_to_send()
                    sock.sendall(out)
                    flooded[0] += room
                try:
                    data = sock.recv(1 << 20)
                    if not data:
                        break
                    conn.receive_data(data)
                except (socket.timeout, ssl.SSLWantReadError):
                    pass
        except OSError:
            pass
        sock.close()

    flooder = threading.Thread(target=flood)
    flooder.start()
    time.sleep(0.5)
    answered = [0]
    lock = threading.Lock()

    def polite():
        for _ in range(5):
            try:
                sock = connect()
                conn = h2_connection()
                stream = send_request(conn, headers, body)
                if exchange(sock, conn, [stream], seconds=float(seconds)).get(stream, {}).get("status") == 200:
                    with lock:
                        answered[0] += 1 if flooder.is_alive() else 0
                sock.close()
            except OSError:
                pass

    workers = [threading.Thread(target=polite) for _ in range(10)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    flooder.join()
    print(json.dumps({"polite-answered-during-flood": answered[0], "polite-asked": 50, "flood-bytes": flooded[0]}))


def reset_flood(host, port, request_json, seconds):
    headers, _ = request_parts(request_json)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A small receive window: the server's answers and resets back up at once.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(PREFACE + SETTINGS)
    import hpack

    encoder = hpack.Encoder()
    sent = 0
    closed = False
    sock.settimeout(0.5)
    deadline = time.monotonic() + float(seconds)
    stream = 1
    while time.monotonic() < deadline and stream < 2**31 - 200:
        batch = b""
        for _ in range(100):
            # RFC 9113 8.2.1: field names are lower case; nghttp2 resets the stream.
            block = encoder.encode(headers + [("X-Upper-Case", "1")])
            batch += frame(1, 0x5, stream, block)
            stream += 2
        try:
            sock.sendall(batch)
            sent += 100
        except socket.timeout:
            # The server stopped reading: it holds the line, as it should.
            continue
        except OSError:
            closed = True
            break
    report_flood(sock, sent, closed)


def over_limit(host, port, request_json, count):
    headers, _ = request_parts(request_json)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(PREFACE + SETTINGS)
    import hpack

    encoder = hpack.Encoder()
    sock.sendall(b"".join(frame(1, 0x4, 1 + 2 * number, encoder.encode(headers)) for number in range(int(count))))
    refused = set()

    def on_frame(item):
        kind, _, stream, payload = item
        if kind == 3 and int.from_bytes(payload[:4], "big") == 7:
            refused.add(stream)

    watch_until_closed(sock, 3, on_frame)
    sock.close()
    print(json.dumps({"refused": len(refused)}))


def main(argv):
    command, args = argv[1], argv[2:]
    table = {
        "tls-churn": tls_churn, "idle-crowd": idle_crowd, "idle-goaway": idle_goaway,
        "stalled-body": stalled_body, "rapid-reset": rapid_reset, "hpack-bomb": hpack_bomb, "empty-data": empty_data,
        "silent-crowd": silent_crowd, "silent-for": silent_for, "reset-flood": reset_flood, "over-limit": over_limit,
        "unfinished": unfinished, "token-updates": token_updates, "broken-requests": broken_requests,
        "flood-and-polite": flood_and_polite, "header-table": header_table,
    }
    if command not in table:
        raise SystemExit(__doc__)
    table[command](*args)


if __name__ == "__main__":
    main(sys.argv)
