#!/usr/bin/env python3
"""A small APNs stand-in for `pushseal send`'s tests: HTTP/2 over TLS with Python's `h2`,
provider tokens verified with `cryptography`. Nothing here is pushseal's code.

  apns_standin.py FOLDER PUBLIC_KEY KID TEAM TOPIC SCRIPT_JSON

- Writes a self-signed certificate for 127.0.0.1 and localhost to FOLDER/cert.pem (the
  sender trusts it with --cacert), prints "listening PORT" once it accepts connections,
  and serves until stdin closes.
- Checks every request as APNs does: POST, /3/device/<hex token>, apns-topic = TOPIC, a
  UUID apns-id, a known apns-push-type, priority, collapse id, expiration, an ES256 token
  signed by PUBLIC_KEY with this KID and TEAM no older than an hour, and a JSON payload
  with "aps" within 4096 bytes. A request that breaks a rule gets 400 with the rule's
  name in "reason" (and "problem" in the log), so a test sees what the sender got wrong.
- SCRIPT_JSON scripts the answers: {"answers": {"<device>": [[429, "TooManyRequests"],
  [200], ["stall"], ...]}, "goaway_after": N}. Each request for a device takes the next
  answer of its list (200 once the list is used up); "stall" never answers that stream.
  After the Nth processed request the connection gets a GOAWAY naming that request's
  stream as the last one processed; later requests on it are not processed, and it is
  closed when the client closes it (or after two seconds). "apns_id": TEXT answers every
  request with that apns-id instead of the request's own (a server that misbehaves).
  "reset_after": N resets the TCP connection right after processing the Nth request,
  unanswered (a crash). "together": N holds every answer until N requests have been
  processed, then sends them all (a client that waits for one answer before sending the
  next gets 400 "NotTogether" after five seconds). "max_streams": N and "delay": SECONDS
  (before each answer) make a slow server. "plain": true serves HTTP/2 without TLS (prior
  knowledge); "alpn": [...] offers those protocols instead of h2. "retry_after": N adds
  retry-after: N to 429 and 503 answers. "tls": "1.1" offers TLS 1.0 and 1.1 only, "tls":
  "cbc" TLS 1.2 with a CBC suite only (servers pushseal's TLS profile refuses). "garble": true
  answers the handshake with a record that cannot be decrypted. "date_offset": N sends a date header N seconds off
  the real time. The provider token is judged first (403), then the request's fields (400),
  the device token last (BadDeviceToken for one that is not 64 hex digits).
- Appends one JSON line per request it processed to FOLDER/log.jsonl: connection, stream,
  device, apns-id, the token's iat, the answer (or "stall"), and any problem.
"""
import email.utils
import json
import os
import re
import socket
import ssl
import sys
import warnings
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from standin_common import close_quietly, es256_verifies, self_signed, unb64
from cryptography.hazmat.primitives import serialization

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DEVICE = re.compile(r"^/3/device/([0-9a-fA-F]{64})$")
PATH = re.compile(r"^/3/device/([^/?]+)$")
PUSH_TYPES = {"alert", "background", "location", "voip", "complication", "fileprovider", "mdm",
              "liveactivity", "pushtotalk", "widgets"}


class StandIn:
    def __init__(self, folder, public_key, kid, team, topic, script):
        self.folder = folder
        with open(public_key, "rb") as source:
            self.public_key = serialization.load_pem_public_key(source.read())
        self.kid, self.team, self.topic = kid, team, topic
        self.answers = {device.lower(): list(answers) for device, answers in script.get("answers", {}).items()}
        self.goaway_after = script.get("goaway_after")
        self.apns_id = script.get("apns_id") or None
        self.reset_after = script.get("reset_after")
        self.together = script.get("together")
        self.max_streams = script.get("max_streams", 1000)
        self.delay = script.get("delay", 0)
        self.retry_after = script.get("retry_after")
        # Bytes of padding after the reason in every error body, for bodies larger than a client keeps.
        self.padding = script.get("padding", 0)
        # A `date` header this many seconds off the real time: a server whose clock is
        # right while the sender's is not.
        self.date_offset = script.get("date_offset")
        # Certificate-based provider authentication: the TLS client certificate is the
        # credential, and no provider token is asked for.
        self.certificate_auth = bool(script.get("client_ca"))
        # The first connection falls silent after answering this many requests: it sends
        # nothing more, not even a PING's answer, and answers nothing, as a dead path does.
        self.silent_after = script.get("silent_after")
        self.held = []
        self.processed = 0
        self.connections = 0
        self.lock = threading.Lock()
        self.log = open(folder + "/log.jsonl", "a", buffering=1)

    def token_problem(self, authorization):
        """None for a good provider token, else APNs' reason; and the token's iat."""
        if not authorization.startswith("bearer "):
            return "MissingProviderToken", None
        parts = authorization[len("bearer "):].split(".")
        if len(parts) != 3:
            return "InvalidProviderToken", None
        try:
            header, claims, signature = json.loads(unb64(parts[0])), json.loads(unb64(parts[1])), unb64(parts[2])
        except ValueError:
            return "InvalidProviderToken", None
        iat = claims.get("iat")
        if header != {"alg": "ES256", "kid": self.kid} or claims.get("iss") != self.team or len(signature) != 64:
            return "InvalidProviderToken", iat
        if not es256_verifies(self.public_key, parts, signature):
            return "InvalidProviderToken", iat
        if not isinstance(iat, int) or time.time() - iat > 3600:
            return "ExpiredProviderToken", iat
        return None, iat

    def problem(self, headers, body):
        """The first rule the request breaks, as APNs names it (or the header's name)."""
        if headers.get(":method") != "POST":
            return "MethodNotAllowed"
        if not PATH.match(headers.get(":path", "")):
            return "BadPath"
        if headers.get("apns-topic") != self.topic:
            return "BadTopic"
        if not UUID.match(headers.get("apns-id", "")):
            return "BadMessageId"
        if headers.get("apns-push-type") not in PUSH_TYPES:
            return "InvalidPushType"
        if headers.get("apns-priority", "10") not in ("10", "5", "1"):
            return "BadPriority"
        if len(headers.get("apns-collapse-id", "").encode()) > 64:
            return "BadCollapseId"
        if not headers.get("apns-expiration", "0").isdigit():
            return "BadExpirationDate"
        if headers.get("content-type", "application/json") != "application/json":
            return "BadContentType"
        if not body:
            return "PayloadEmpty"
        if len(body) > 4096:
            return "PayloadTooLarge"
        try:
            if "aps" not in json.loads(body):
                return "PayloadNotAPNs"
        except ValueError:
            return "PayloadNotJSON"
        # The token last: a request refused for its device token alone had everything else
        # right (what `pushseal doctor send` relies on).
        if not DEVICE.match(headers.get(":path", "")):
            return "BadDeviceToken"
        return None

    def serve(self, sock):
        with self.lock:
            self.connections += 1
            number = self.connections
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        sock.sendall(conn.data_to_send())
        requests = {}
        closing = False
        silent = False
        flushed_last = False
        answered = 0
        try:
            while True:
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    if self.held:
                        # Not all together in time: each held request fails for good.
                        for stream, _ in self.held:
                            self.reply(conn, stream, [400, "NotTogether"], "")
                        self.held = []
                        sock.sendall(conn.data_to_send())
                        sock.settimeout(None)
                        continue
                    break
                if not data:
                    break
                if closing:
                    # h2 takes no frames after its own GOAWAY; what still comes is
                    # drained unread until the client closes.
                    continue
                try:
                    events = conn.receive_data(data)
                except h2.exceptions.ProtocolError:
                    break
                for event in events:
                    if isinstance(event, h2.events.RequestReceived):
                        requests[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        if event.stream_id in requests:
                            requests[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded) and event.stream_id in requests and silent:
                        requests.pop(event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded) and event.stream_id in requests and not closing:
                        answered += 1
                        if number == 1 and self.silent_after is not None and answered >= self.silent_after:
                            silent = True
                        headers, body = requests.pop(event.stream_id)
                        verdict = self.answer(conn, number, event.stream_id, headers, bytes(body))
                        if verdict == "reset":
                            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                            raise OSError("reset")
                        if self.held:
                            sock.settimeout(5)
                        if verdict:
                            # As a server going away does: no new work, but the client
                            # reads the answers and the GOAWAY before the socket closes
                            # (closing at once could reset them away).
                            closing = True
                            sock.settimeout(2)
                    elif isinstance(event, h2.events.StreamReset):
                        requests.pop(event.stream_id, None)
                pending = conn.data_to_send()
                if not silent or not flushed_last:
                    # The answers up to the silence go out; after them, nothing ever does.
                    sock.sendall(pending)
                    flushed_last = silent
        except (OSError, ssl.SSLError):
            pass
        finally:
            close_quietly(sock)

    def answer(self, conn, number, stream, headers, body):
        """Answers one request; True when the connection is to be closed after it."""
        problem = self.problem(headers, body)
        token_problem, iat = (None, None) if self.certificate_auth else self.token_problem(headers.get("authorization", ""))
        match = DEVICE.match(headers.get(":path", ""))
        device = match.group(1).lower() if match else None
        if problem or token_problem:
            # As APNs: the provider token is judged before the request's other fields.
            status, reason = (403, token_problem) if token_problem else (400, problem)
            answer = [status, reason]
        else:
            with self.lock:
                queue = self.answers.get(device, [])
                answer = queue.pop(0) if queue else [200]
        with self.lock:
            self.processed += 1
            reset = self.reset_after is not None and self.processed == self.reset_after
            if reset:
                self.reset_after = None
                answer = ["reset"]
            goaway = self.goaway_after is not None and self.processed == self.goaway_after
            if goaway:
                self.goaway_after = None
            entry = {"connection": number, "stream": stream, "device": device, "apns-id": headers.get("apns-id"),
                     "authorization": "authorization" in headers,
                     "iat": iat, "answer": answer[0], "reason": answer[1] if len(answer) > 1 else None,
                     "problem": problem or token_problem}
            self.log.write(json.dumps(entry) + "\n")
        if reset:
            return "reset"
        if self.together is not None:
            self.held.append((stream, answer))
            if len(self.held) < self.together:
                return False
            held, self.held, self.together = self.held, [], None
            for waiting, waiting_answer in held:
                self.reply(conn, waiting, waiting_answer, headers.get("apns-id", ""))
        elif answer[0] != "stall":
            if self.delay:
                time.sleep(self.delay)
            self.reply(conn, stream, answer, headers.get("apns-id", ""))
        if goaway:
            conn.close_connection(last_stream_id=stream)
        return goaway


    def reply(self, conn, stream, answer, apns_id):
        status = answer[0]
        reply = [(":status", str(status)), ("apns-id", self.apns_id or apns_id)]
        if self.date_offset is not None:
            reply.append(("date", email.utils.formatdate(time.time() + self.date_offset, usegmt=True)))
        if status == 200:
            conn.send_headers(stream, reply, end_stream=True)
            return
        detail = {"reason": answer[1]}
        if status == 410:
            detail["timestamp"] = int(time.time() * 1000)
        if status in (429, 503) and self.retry_after is not None:
            reply.append(("retry-after", str(self.retry_after)))
        if self.padding:
            detail["padding"] = "x" * self.padding
        payload = json.dumps(detail).encode()
        conn.send_headers(stream, reply + [("content-type", "application/json"),
                                           ("content-length", str(len(payload)))])
        # In frames no larger than the peer allows (16 KB unless it says more).
        size = conn.max_outbound_frame_size
        for start in range(0, len(payload), size):
            conn.send_data(stream, payload[start:start + size], end_stream=start + size >= len(payload))


def main():
    folder, public_key, kid, team, topic, script = sys.argv[1:7]
    self_signed(folder)
    script = json.loads(script)
    standin = StandIn(folder, public_key, kid, team, topic, script)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder + "/cert.pem", folder + "/key.pem")
    if script.get("tls") == "1.1":
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
    elif script.get("tls") == "cbc":
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers("ECDHE-ECDSA-AES128-SHA")
    if script.get("alpn", ["h2"]):
        context.set_alpn_protocols(script.get("alpn", ["h2"]))
    if script.get("client_ca"):
        # As APNs does for certificate-based providers: no client certificate, no connection.
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(script["client_ca"])
    plain = script.get("plain", False)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    connections = []

    def accept():
        while True:
            try:
                client, _ = listener.accept()
                tls = client if plain else context.wrap_socket(client, server_side=True)
            except (OSError, ssl.SSLError):
                continue
            if script.get("garble"):
                # A TLS record that cannot be decrypted, written past OpenSSL: the client's read
                # fails in TLS itself, which is not the server closing the connection.
                os.write(tls.fileno(), b"\x17\x03\x03\x00\x20" + bytes(32))
                connections.append(tls)
                continue
            threading.Thread(target=standin.serve, args=(tls,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    print(f"listening {listener.getsockname()[1]}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
