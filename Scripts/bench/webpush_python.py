#!/usr/bin/env python3
"""pywebpush, the reference Web Push sender in Python, on the same subscriptions and message as
`send --webpush` in Scripts/bench/webpush.sh: each message encrypted for its subscription (RFC
8291, pywebpush's own http_ece) with a VAPID token (py_vapid), posted with one keep-alive
`requests` session to a Python HTTP/1.1 server over TLS that answers 201 (pywebpush speaks no
HTTP/2), run in a process of its own so the two do not share a core's interpreter.

  webpush_python.py SUBSCRIPTIONS COUNT MESSAGE_FILE VAPID_PEM
  webpush_python.py --serve FOLDER        (the server: prints "port P")

Prints "pywebpush N/s (COUNT messages, every answer 201)".
"""
import http.server
import json
import os
import ssl
import subprocess
import sys
import time


class Answer201(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(201)
        self.send_header("location", "/message/1")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *arguments):
        pass


def serve(folder):
    # The server's work on a core of its own, as the push service's is for send --webpush.
    if hasattr(os, "sched_setaffinity") and os.cpu_count() > 1:
        os.sched_setaffinity(0, {1})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer201)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


def main():
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
        return
    import requests
    from py_vapid import Vapid02
    from pywebpush import webpush

    subscriptions_file, count, message_file, vapid_pem = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    folder = os.path.dirname(os.path.abspath(subscriptions_file))
    server = subprocess.Popen([sys.executable, __file__, "--serve", folder], stdout=subprocess.PIPE, text=True)
    port = server.stdout.readline().split()[1]
    try:
        subscriptions = []
        with open(subscriptions_file) as lines:
            for line in lines:
                subscription = json.loads(line)
                path = subscription["endpoint"].split("/", 3)[3]
                subscription["endpoint"] = f"https://127.0.0.1:{port}/{path}"
                subscriptions.append(subscription)
                if len(subscriptions) == count:
                    break
        message = open(message_file).read().strip()
        vapid = Vapid02.from_file(vapid_pem)
        session = requests.Session()
        # The TLS work is the same either way; Python's checks refuse the bench's certificate
        # as a trust anchor (it is made for OpenSSL's clients), so it is not checked here.
        session.verify = False
        session.trust_env = False
        import urllib3
        urllib3.disable_warnings()
        started = time.perf_counter()
        for subscription in subscriptions:
            answer = webpush(subscription, message, vapid_private_key=vapid, vapid_claims={"sub": "mailto:bench@pushseal.dev"},
                             ttl=3600, requests_session=session)
            if answer.status_code != 201:
                raise SystemExit(f"pywebpush: answered {answer.status_code}")
        elapsed = time.perf_counter() - started
    finally:
        server.kill()
    print(f"pywebpush {len(subscriptions) / elapsed:.0f}/s ({len(subscriptions)} messages, every answer 201)")


if __name__ == "__main__":
    main()
