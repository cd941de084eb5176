#!/usr/bin/env python3
"""A small Web Push service stand-in (RFC 8030) for pushseal's tests: HTTP/2 over TLS with
Python's `h2`, VAPID tokens (RFC 8292) verified with `cryptography`, each message opened with
`http_ece` (RFC 8291). Nothing here is pushseal's code.

  webpush_standin.py FOLDER SCRIPT_JSON

- Writes a self-signed certificate for 127.0.0.1 to FOLDER/cert.pem (the sender trusts it),
  prints "listening PORT" once it accepts connections, and serves until stdin closes.
- SCRIPT_JSON: {"subscriptions": {"/push/NAME": {"key": PRIVATE_SCALAR_B64URL, "auth": B64URL}},
  "answers": {"/push/NAME": [[410], [429, RETRY_AFTER], [500], ["stall"], ["reset"], [201], ...]},
  "goaway_after": N, "subject": "mailto:…"}. Each request for a path takes the next answer of
  its list (201 once it is used up): "stall" never answers that stream, "reset" resets it
  (RST_STREAM). After the Nth request the connection gets a GOAWAY naming it as the last
  stream processed, and closes: the requests after it on that connection were not taken.
  "http1": true speaks HTTP/1.1 instead (ALPN http/1.1, keep-alive, one request at a time),
  as push services behind some load balancers do; "chunked": true answers with a chunked body,
  "close_every": N closes the connection after every N answers (Connection: close), and
  "reset" closes the connection without an answer.
- Checks every request as a push service does: POST to a known subscription, a TTL,
  content-encoding aes128gcm, an `authorization: vapid t=JWT, k=KEY` whose ES256 signature
  verifies with k, whose aud is this origin, whose exp is within 24 hours and whose sub is
  the expected subject (403 otherwise), and a body http_ece opens with the subscription's
  key (400 otherwise); a body over 4096 bytes is 413.
- Appends one JSON line per request to FOLDER/log.jsonl: path, connection, the answer, the
  headers it checked, the opened message (text), and any problem.
"""
import json
import socket
import ssl
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events
import http_ece
from standin_common import close_quietly, es256_verifies, self_signed, unb64
from cryptography.hazmat.primitives.asymmetric import ec


class StandIn:
    def __init__(self, folder, script, origin):
        self.origin = origin
        self.subject = script.get("subject")
        self.subscriptions = {
            path: (ec.derive_private_key(int.from_bytes(unb64(keys["key"]), "big"), ec.SECP256R1()), unb64(keys["auth"]))
            for path, keys in script.get("subscriptions", {}).items()}
        self.answers = {path: list(answers) for path, answers in script.get("answers", {}).items()}
        self.goaway_after = script.get("goaway_after")
        self.chunked = script.get("chunked", False)
        self.close_every = script.get("close_every")
        self.processed = 0
        self.lock = threading.Lock()
        self.connections = 0
        self.log = open(folder + "/log.jsonl", "a", buffering=1)

    def vapid_problem(self, authorization):
        if not authorization.startswith("vapid "):
            return "no vapid authorization"
        fields = dict(part.strip().split("=", 1) for part in authorization[len("vapid "):].split(","))
        token, key = fields.get("t", ""), fields.get("k", "")
        parts = token.split(".")
        if len(parts) != 3:
            return "the token is not a JWT"
        header, claims, signature = json.loads(unb64(parts[0])), json.loads(unb64(parts[1])), unb64(parts[2])
        if header.get("alg") != "ES256" or len(signature) != 64:
            return "not ES256"
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
        if not es256_verifies(public, parts, signature):
            return "the signature does not verify with k"
        if claims.get("aud") != self.origin:
            return f"aud {claims.get('aud')!r} is not {self.origin!r}"
        if not 0 < claims.get("exp", 0) - time.time() <= 24 * 3600:
            return "exp is not within 24 hours"
        if claims.get("sub") != self.subject:
            return f"sub {claims.get('sub')!r}"
        return None

    def answer(self, number, headers, body):
        path = headers.get(":path", "")
        problem, opened, answer = None, None, None
        subscription = self.subscriptions.get(path)
        if headers.get(":method") != "POST" or subscription is None:
            answer = [404]
        elif len(body) > 4096:
            answer = [413]
        else:
            problem = self.vapid_problem(headers.get("authorization", ""))
            if problem is None and not headers.get("ttl", "").isdigit():
                problem = "no TTL"
            if problem is None and headers.get("content-encoding") != "aes128gcm":
                problem = "not aes128gcm"
            if problem is None:
                try:
                    opened = http_ece.decrypt(body, private_key=subscription[0], auth_secret=subscription[1],
                                              version="aes128gcm").decode()
                except Exception as error:  # noqa: BLE001 - any failure is the sender's
                    problem = f"http_ece cannot open it: {error}"
            if problem:
                answer = [403] if "vapid" in problem or "JWT" in problem or "aud" in problem or "sub" in problem \
                    or "exp" in problem or "signature" in problem or "ES256" in problem else [400]
            else:
                with self.lock:
                    queue = self.answers.get(path, [])
                    answer = queue.pop(0) if queue else [201]
        entry = {"path": path, "connection": number, "answer": answer[0], "problem": problem, "message": opened,
                 "ttl": headers.get("ttl"), "urgency": headers.get("urgency"), "topic": headers.get("topic")}
        self.log.write(json.dumps(entry) + "\n")
        return answer

    def serve(self, sock):
        with self.lock:
            self.connections += 1
            number = self.connections
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        requests = {}
        going_away = False
        goaway_sent_at = None
        sock.settimeout(0.3)
        try:
            while True:
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    if goaway_sent_at:
                        break
                    continue
                if not data:
                    break
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        requests[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        if event.stream_id in requests:
                            requests[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded) and event.stream_id in requests:
                        if going_away:
                            # Past the GOAWAY's last stream: not taken, not logged.
                            requests.pop(event.stream_id)
                            continue
                        headers, body = requests.pop(event.stream_id)
                        answer = self.answer(number, headers, bytes(body))
                        with self.lock:
                            self.processed += 1
                            going_away = self.goaway_after is not None and self.processed == self.goaway_after
                            if going_away:
                                self.goaway_after = None
                        if answer[0] == "stall":
                            pass
                        elif answer[0] == "reset":
                            conn.reset_stream(event.stream_id)
                        else:
                            reply = [(":status", str(answer[0]))]
                            if answer[0] == 201:
                                reply.append(("location", f"{self.origin}/message/{number}-{event.stream_id}"))
                            if answer[0] == 429 and len(answer) > 1:
                                reply.append(("retry-after", str(answer[1])))
                            conn.send_headers(event.stream_id, reply, end_stream=True)
                        if going_away:
                            conn.close_connection(last_stream_id=event.stream_id)
                            goaway_sent_at = time.time()
                    elif isinstance(event, h2.events.StreamReset):
                        requests.pop(event.stream_id, None)
                sock.sendall(conn.data_to_send())
                # The client reads the answers and the GOAWAY before the socket closes.
                if goaway_sent_at and time.time() - goaway_sent_at > 0.2:
                    break
        except (OSError, ssl.SSLError):
            pass
        finally:
            close_quietly(sock)


    def serve_http1(self, sock):
        """HTTP/1.1 with keep-alive: each request read whole (Content-Length), then answered."""
        with self.lock:
            self.connections += 1
            number = self.connections
        buffered = b""
        answered = 0
        try:
            while True:
                while b"\r\n\r\n" not in buffered:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buffered += data
                head, buffered = buffered.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method, path, version = lines[0].split(" ")
                assert version == "HTTP/1.1", version
                headers = {":method": method, ":path": path}
                for line in lines[1:]:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                while len(buffered) < length:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buffered += data
                body, buffered = buffered[:length], buffered[length:]
                answer = self.answer(number, headers, body)
                if answer[0] == "stall":
                    while sock.recv(65536):
                        pass
                    return
                if answer[0] == "reset":
                    return
                answered += 1
                closing = self.close_every is not None and answered % self.close_every == 0
                fields = []
                if answer[0] == 201:
                    fields.append(f"Location: {self.origin}/message/{number}-{answered}")
                if answer[0] == 429 and len(answer) > 1:
                    fields.append(f"Retry-After: {answer[1]}")
                if closing:
                    fields.append("Connection: close")
                reason = '{"reason": "the stand-in said so"}' if answer[0] >= 400 else ""
                if self.chunked:
                    fields.append("Transfer-Encoding: chunked")
                    payload = (f"{len(reason):x}\r\n{reason}\r\n" if reason else "") + "0\r\n\r\n"
                else:
                    fields.append(f"Content-Length: {len(reason)}")
                    payload = reason
                sock.sendall((f"HTTP/1.1 {answer[0]} X\r\n" + "".join(f + "\r\n" for f in fields) + "\r\n" + payload).encode())
                if closing:
                    return
        except (OSError, ssl.SSLError, ValueError, AssertionError):
            pass
        finally:
            close_quietly(sock)


def main():
    folder, script = sys.argv[1], json.loads(sys.argv[2])
    self_signed(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder + "/cert.pem", folder + "/key.pem")
    http1 = script.get("http1", False)
    context.set_alpn_protocols(["http/1.1"] if http1 else ["h2"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    standin = StandIn(folder, script, f"https://127.0.0.1:{port}")

    def accept():
        while True:
            try:
                client, _ = listener.accept()
                tls = context.wrap_socket(client, server_side=True)
            except (OSError, ssl.SSLError):
                continue
            threading.Thread(target=standin.serve_http1 if http1 else standin.serve, args=(tls,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    print(f"listening {port}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
