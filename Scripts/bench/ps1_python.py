#!/usr/bin/env python3
"""The same jobs as pushseal, in Python with the `cryptography` package: the baseline that
Scripts/bench.sh measures pushseal against. It reads the same keyring and writes the same
ps1 payloads and delivery records.

    ps1_python.py encrypt KEYS TITLE BODY     one payload, like `pushseal encrypt -t -b`
    ps1_python.py batch KEYS < alerts.jsonl   one payload per line, like `encrypt --batch`
    ps1_python.py receive KEYS < payloads     one record per line, like `receive --json -`
    ps1_python.py batch2 KEYS KID < alerts    ps2 to KID's public key, like `encrypt --batch --to KID`
    ps1_python.py receive2 KEYS < payloads    ps2 records with the device's private keys

ps2 is cryptography's HPKE (`hpke.Suite`: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
AES-256-GCM), info = the header `ps2.<kid>`.
"""
import base64
import json
import os
import sys
import time
import uuid

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

FALLBACK = {"title": "New notification", "body": "Open the app to read it"}


def load_keyring(folder):
    with open(os.path.join(folder, "keyring.json")) as handle:
        keys = json.load(handle)["keys"]
    ring = {k["id"]: (k["state"], base64.b64decode(k["secret"])) for k in keys if k.get("secret")}
    primary = next((k["id"] for k in keys if k["state"] == "primary"), None)
    return ring, primary


def recipient_keys(folder):
    """kid -> public key object, and kid -> private key object, of a /2 keyring."""
    from cryptography.hazmat.primitives.asymmetric import ec
    with open(os.path.join(folder, "keyring.json")) as handle:
        keys = json.load(handle)["keys"]
    public = {k["id"]: ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), base64.b64decode(k["public"]))
              for k in keys if k.get("kind") in ("private", "public") and k.get("public")}
    private = {k["id"]: ec.derive_private_key(int.from_bytes(base64.b64decode(k["secret"]), "big"), ec.SECP256R1())
               for k in keys if k.get("kind") == "private" and k.get("secret")}
    return public, private


def suite():
    from cryptography.hazmat.primitives import hpke
    return hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


def seal2(alert, kid, point, hpke_suite, now):
    plaintext = padded(alert, now)
    header = "ps2." + kid
    sealed = hpke_suite.encrypt(plaintext, point, info=header.encode())
    payload = {"aps": {"alert": FALLBACK, "mutable-content": 1}, "enc": header + "." + b64url(sealed)}
    return json.dumps(payload, separators=(",", ":"))


def receive2(line, seq, private, hpke_suite):
    def open2(header, kid, data):
        return hpke_suite.decrypt(data, private[kid], info=header.encode())
    return record(line, seq, open2)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def padded(alert, now):
    """The sealed alert's plaintext: the alert with an id and the time, padded to 32 bytes."""
    alert = dict(alert)
    alert.setdefault("id", os.urandom(8).hex())
    alert["sent"] = now
    plaintext = json.dumps(alert, separators=(",", ":"), ensure_ascii=False).encode()
    return plaintext + b" " * (-len(plaintext) % 32)


def seal(alert, kid, key, now):
    plaintext = padded(alert, now)
    header = "ps1." + kid
    nonce = os.urandom(12)
    box = nonce + AESGCM(key).encrypt(nonce, plaintext, header.encode())
    payload = {"aps": {"alert": FALLBACK, "mutable-content": 1}, "enc": header + "." + b64url(box)}
    return json.dumps(payload, separators=(",", ":"))


def receive(line, seq, ring):
    def open1(header, kid, box):
        return AESGCM(ring[kid][1]).decrypt(box[:12], box[12:], header.encode())
    return record(line, seq, open1)


def record(line, seq, open_sealed):
    """One delivery record, as pushseal's: `open_sealed(header, kid, bytes)` gives the plaintext."""
    started = time.perf_counter()
    result = {"seq": seq, "apns-id": str(uuid.uuid4()).upper()}
    try:
        payload = json.loads(line)
        header, sealed = payload["enc"].rsplit(".", 1)
        kid = header.split(".", 1)[1]
        data = base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
        opened = json.loads(open_sealed(header, kid, data))
        result.update(status="decrypted", title=opened.get("title", ""), subtitle=opened.get("subtitle", ""),
                      body=opened.get("body", ""), kid=kid)
    except Exception as error:  # every input yields a record, as pushseal's do
        result.update(status="malformed", title="", subtitle="", body="", kid=None, reason=str(error))
    result["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False)


def main():
    command, folder = sys.argv[1], sys.argv[2]
    ring, primary = load_keyring(folder)
    now = int(time.time())
    out = sys.stdout
    if command == "batch2":
        kid = sys.argv[3]
        point = recipient_keys(folder)[0][kid]
        hpke_suite = suite()
        for line in sys.stdin:
            if line.strip():
                out.write(seal2(json.loads(line), kid, point, hpke_suite, now) + "\n")
    elif command == "receive2":
        private = recipient_keys(folder)[1]
        hpke_suite = suite()
        for seq, line in enumerate((l for l in sys.stdin if l.strip()), start=1):
            out.write(receive2(line, seq, private, hpke_suite) + "\n")
    elif command == "encrypt":
        out.write(seal({"title": sys.argv[3], "body": sys.argv[4]}, primary, ring[primary][1], now) + "\n")
    elif command == "batch":
        key = ring[primary][1]
        for line in sys.stdin:
            if line.strip():
                out.write(seal(json.loads(line), primary, key, now) + "\n")
    elif command == "receive":
        for seq, line in enumerate((l for l in sys.stdin if l.strip()), start=1):
            out.write(receive(line, seq, ring) + "\n")
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
