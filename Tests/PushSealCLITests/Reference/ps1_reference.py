#!/usr/bin/env python3
"""An independent ps1 and ps2 implementation on Python's `cryptography` package, for
cross-checks.

    ps1_reference.py open SHARE < payload.json      prints the sealed alert JSON
    ps1_reference.py seal SHARE < alert.json        prints a payload sealed under SHARE's key
    ps1_reference.py open2 KEYRING KID < payload.json   opens ps2 with KID's private scalar
    ps1_reference.py seal2 PUBLIC < alert.json      prints a payload sealed to a public share

SHARE is `psk1.<kid>.<base64url secret>`, as `pushseal keys export` prints it; PUBLIC is
`ppk1.<kid>.<base64url point>`, as `pushseal keys export --public` prints it; KEYRING is a
`pushseal-keyring/2` file. ps2 is HPKE base mode with cryptography's `hpke.Suite`
(DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM), info = the header `ps2.<kid>`.
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


def suite():
    from cryptography.hazmat.primitives import hpke
    return hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


def open2_payload(keyring_path, kid, payload):
    from cryptography.hazmat.primitives.asymmetric import ec
    entry = next(k for k in json.load(open(keyring_path))["keys"] if k["id"] == kid)
    assert entry["kind"] == "private", entry["kind"]
    key = ec.derive_private_key(int.from_bytes(base64.b64decode(entry["secret"]), "big"), ec.SECP256R1())
    header, sealed = json.loads(payload)["enc"].rsplit(".", 1)
    assert header == "ps2." + kid, header
    return json.loads(suite().decrypt(b64url_decode(sealed), key, info=header.encode("ascii")))


def seal2_payload(public_share, alert):
    from cryptography.hazmat.primitives.asymmetric import ec
    prefix, rest = public_share.strip().split(".", 1)
    assert prefix == "ppk1"
    kid, point = rest.rsplit(".", 1)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(point))
    header = "ps2." + kid
    plaintext = json.dumps(alert, separators=(",", ":")).encode("utf-8")
    plaintext += b" " * (-len(plaintext) % 32)
    sealed = suite().encrypt(plaintext, key, info=header.encode("ascii"))
    return {"aps": {"alert": {"title": "New notification", "body": "Open the app to read it"},
                    "mutable-content": 1},
            "enc": header + "." + b64url_encode(sealed)}


def main():
    command, share = sys.argv[1], sys.argv[2]
    text = sys.stdin.read()
    if command == "open2":
        print(json.dumps(open2_payload(share, sys.argv[3], text), separators=(",", ":"), ensure_ascii=False))
    elif command == "seal2":
        print(json.dumps(seal2_payload(share, json.loads(text)), separators=(",", ":")))
    elif command == "open":
        print(json.dumps(open_payload(share, text), separators=(",", ":"), ensure_ascii=False))
    elif command == "seal":
        print(json.dumps(seal_payload(share, json.loads(text)), separators=(",", ":")))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
