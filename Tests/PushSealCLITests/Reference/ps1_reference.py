#!/usr/bin/env python3
"""An independent ps1 implementation on Python's `cryptography` package, for cross-checks.

    ps1_reference.py open SHARE < payload.json    prints the sealed alert JSON
    ps1_reference.py seal SHARE < alert.json      prints a payload sealed under SHARE's key

SHARE is `psk1.<kid>.<base64url secret>`, as `pushseal keys export` prints it.
"""
import base64
import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def read_share(share):
    prefix, rest = share.strip().split(".", 1)
    assert prefix == "psk1"
    kid, secret = rest.rsplit(".", 1)
    return kid, b64url_decode(secret)


def open_payload(share, payload):
    kid, key = read_share(share)
    header, sealed = json.loads(payload)["enc"].rsplit(".", 1)
    assert header == "ps1." + kid, header
    box = b64url_decode(sealed)
    nonce, ciphertext_and_tag = box[:12], box[12:]
    plaintext = AESGCM(key).decrypt(nonce, ciphertext_and_tag, header.encode("ascii"))
    return json.loads(plaintext)


def seal_payload(share, alert):
    kid, key = read_share(share)
    header = "ps1." + kid
    plaintext = json.dumps(alert, separators=(",", ":")).encode("utf-8")
    plaintext += b" " * (-len(plaintext) % 32)
    nonce = os.urandom(12)
    box = nonce + AESGCM(key).encrypt(nonce, plaintext, header.encode("ascii"))
    return {"aps": {"alert": {"title": "New notification", "body": "Open the app to read it"},
                    "mutable-content": 1},
            "enc": header + "." + b64url_encode(box)}


def main():
    command, share = sys.argv[1], sys.argv[2]
    text = sys.stdin.read()
    if command == "open":
        print(json.dumps(open_payload(share, text), separators=(",", ":"), ensure_ascii=False))
    elif command == "seal":
        print(json.dumps(seal_payload(share, json.loads(text)), separators=(",", ":")))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
