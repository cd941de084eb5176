#!/usr/bin/env python3
"""Real APNs clients pointed at `pushseal receive --listen`, for the listener's tests.

Each subcommand prints one JSON line of what the client saw. Nothing here is pushseal's
code: tokens are signed with Python's `cryptography`, requests go out through `httpx`
(HTTP/2), the `h2` state machine over a plain socket, or `aioapns`.

  keypair DIR                              AuthKey.p8 and AuthKey.pub.pem in DIR
  token P8 KID TEAM [IAT]                  an ES256 provider token
  httpx URL CACERT PATH TOPIC TOKEN FILE   one POST; prints status, apns-id, body, version
  h2 HOST PORT HEADERS_JSON FILE|-         one request with exactly these headers (plaintext)
  aioapns PORT CACERT P8 KID TEAM DEVICE TOPIC FILE   aioapns' send_notification
  hostile HOST PORT KIND                   misbehave on one connection: garbage, silent,
                                           slow, flood, half-request, bad-frame
"""
import asyncio
import base64
import json
import socket
import sys
import time


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def keypair(folder):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    with open(folder + "/AuthKey.p8", "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    with open(folder + "/AuthKey.pub.pem", "wb") as out:
        out.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo))
    print(json.dumps({"p8": folder + "/AuthKey.p8", "public": folder + "/AuthKey.pub.pem"}))


def token(p8, kid, team, iat=None):
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    with open(p8, "rb") as source:
        key = serialization.load_pem_private_key(source.read(), password=None)
    header = b64(json.dumps({"alg": "ES256", "kid": kid}).encode())
    claims = b64(json.dumps({"iss": team, "iat": int(iat) if iat is not None else int(time.time())}).encode())
    r, s = decode_dss_signature(key.sign(f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256())))
    return f"{header}.{claims}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def with_httpx(url, cacert, path, topic, provider_token, payload_file):
    import httpx

    headers = {"apns-topic": topic, "apns-push-type": "alert"}
    if provider_token:
        headers["authorization"] = "bearer " + provider_token
    with open(payload_file, "rb") as source:
        body = source.read()
    with httpx.Client(http2=True, http1=False, verify=cacert) as client:
        response = client.post(url + path, headers=headers, content=body)
    print(json.dumps({"status": response.status_code, "apns-id": response.headers.get("apns-id"),
                      "content-type": response.headers.get("content-type"),
                      "body": response.text, "version": response.http_version}))


def with_h2(host, port, headers_json, payload_file):
    import h2.config
    import h2.connection
    import h2.events

    headers = [tuple(pair) for pair in json.loads(headers_json)]
    body = b""
    if payload_file != "-":
        with open(payload_file, "rb") as source:
            body = source.read()
    sock = socket.create_connection((host, int(port)), timeout=10)
    # Header validation off: these tests send what a careless client might (duplicates).
    config = h2.config.H2Configuration(client_side=True, validate_outbound_headers=False,
                                       normalize_outbound_headers=False)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, headers, end_stream=not body)
    if body:
        conn.send_data(stream, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    status, answer, response_headers = None, b"", {}
    done = False
    while not done:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                response_headers = {k.decode(): v.decode() for k, v in event.headers}
                status = int(response_headers[":status"])
            elif isinstance(event, h2.events.DataReceived):
                answer += event.data
                conn.acknowledge_received_data(len(event.data), event.stream_id)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                done = True
        sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps({"status": status, "apns-id": response_headers.get("apns-id"),
                      "content-type": response_headers.get("content-type"), "body": answer.decode(),
                      "max_concurrent_streams": conn.remote_settings.max_concurrent_streams}))


def with_aioapns(port, cacert, p8, kid, team, device, topic, payload_file):
    import ssl
    import uuid

    from aioapns import APNs, NotificationRequest, PushType
    from aioapns import connection

    # aioapns always dials Apple; point its production protocol at the listener instead.
    connection.APNsProductionClientProtocol.APNS_SERVER = "localhost"
    connection.APNsProductionClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=cacert)
    with open(payload_file) as source:
        payload = json.load(source)
    with open(p8) as source:
        key = source.read()

    async def send():
        client = APNs(key=key, key_id=kid, team_id=team, topic=topic, use_sandbox=False, ssl_context=context)
        identifier = str(uuid.uuid4())
        result = await client.send_notification(NotificationRequest(
            device_token=device, message=payload, notification_id=identifier, push_type=PushType.ALERT))
        return identifier, result

    identifier, result = asyncio.run(send())
    print(json.dumps({"sent-id": identifier, "apns-id": result.notification_id, "status": result.status,
                      "successful": result.is_successful, "description": result.description}))


def hostile(host, port, kind):
    """Misbehaves on one connection and reports how the server ended it."""
    sock = socket.create_connection((host, int(port)), timeout=20)
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    started = time.monotonic()
    try:
        if kind == "garbage":
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)) * 8)
        elif kind == "silent":
            pass  # connect and say nothing: the idle timeout ends it
        elif kind == "slow":
            for byte in preface:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
        elif kind == "flood":
            # Pings without reading the answers, then an invalid frame.
            sock.sendall(preface + settings)
            ping = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"12345678"
            for _ in range(5000):
                try:
                    sock.sendall(ping)
                except OSError:
                    break
        elif kind == "half-request":
            # HEADERS without END_STREAM, then nothing: the stream never ends.
            import h2.connection
            conn = h2.connection.H2Connection()
            conn.initiate_connection()
            conn.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":path", "/3/device/ab"),
                                  (":authority", "x")])
            sock.sendall(conn.data_to_send())
        elif kind == "bad-frame":
            # A DATA frame on stream 0 is a connection error (RFC 9113 §6.1).
            sock.sendall(preface + settings + b"\x00\x00\x04\x00\x00\x00\x00\x00\x00" + b"abcd")
        else:
            raise SystemExit("unknown kind " + kind)
        closed = False
        while time.monotonic() - started < 20:
            data = sock.recv(65536)
            if not data:
                closed = True
                break
    except (ConnectionResetError, BrokenPipeError):
        closed = True
    except socket.timeout:
        closed = False
    sock.close()
    print(json.dumps({"kind": kind, "closed": closed, "seconds": round(time.monotonic() - started, 2)}))


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "keypair":
        keypair(*args)
    elif command == "token":
        print(token(*args))
    elif command == "httpx":
        with_httpx(*args)
    elif command == "h2":
        with_h2(*args)
    elif command == "aioapns":
        with_aioapns(*args)
    elif command == "hostile":
        hostile(*args)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
