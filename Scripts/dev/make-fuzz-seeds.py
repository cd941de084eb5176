#!/usr/bin/env python3
"""Writes the seed corpora under Tests/Fuzz/Corpus/ (run from the project root).

Envelopes are sealed under the fuzz targets' fixed test keys (32 bytes of 0x42, kid
fuzzkey1, for ps1; the P-256 pair whose scalar is 32 bytes of 0x42, kid fuzzkey2, for ps2
with cryptography's HPKE) so that mutations reach authentication and the alert parser.
"""
import base64
import json
import os
import sys
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY = bytes([0x42]) * 32
KID = "fuzzkey1"
root = Path("Tests/Fuzz/Corpus")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def envelope(alert, nonce):
    header = "ps1." + KID
    plaintext = json.dumps(alert, separators=(",", ":")).encode()
    plaintext += b" " * (-len(plaintext) % 32)
    return header + "." + b64url(nonce + AESGCM(KEY).encrypt(nonce, plaintext, header.encode()))


def write(target, name, data):
    folder = root / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


alerts = [
    {"title": "T", "body": "B", "id": "1", "sent": 0},
    {"title": "Disk", "subtitle": "db-3", "body": "91% used", "badge": 2, "sound": "default",
     "thread-id": "ops", "category": "C", "interruption-level": "time-sensitive",
     "relevance-score": 0.5, "data": {"url": "https://example.com/a", "n": 1}, "id": "2", "sent": 0, "exp": 60},
    {"body": "é ✅ \u0000 \\\" /", "id": "3", "sent": 0},
]
envelopes = [envelope(alert, bytes([index]) * 12) for index, alert in enumerate(alerts)]
for index, text in enumerate(envelopes):
    write("envelope", f"valid-{index}", text)
write("envelope", "short-box", "ps1.fuzzkey1.AAAA")
write("envelope", "other-version", "ps9.fuzzkey1." + envelopes[0].split(".")[2])

from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric import ec

PAIR = ec.derive_private_key(int.from_bytes(bytes([0x42]) * 32, "big"), ec.SECP256R1())
SUITE = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


def envelope2(alert):
    header = "ps2.fuzzkey2"
    plaintext = json.dumps(alert, separators=(",", ":")).encode()
    plaintext += b" " * (-len(plaintext) % 32)
    return header + "." + b64url(SUITE.encrypt(plaintext, PAIR.public_key(), info=header.encode()))


for index, alert in enumerate(alerts[:2]):
    write("envelope", f"ps2-valid-{index}", envelope2(alert))
write("envelope", "ps2-short", "ps2.fuzzkey2." + b64url(bytes(70)))
write("envelope", "ps2-relabelled", "ps2.fuzzkey1." + envelopes[0].split(".")[2])

# ps3: to fuzzkey2's pair, vouched for by fuzzsend (a scalar of 32 bytes of 0x43), with the
# auth mode the Python example writes by hand (cryptography's hpke has base mode only).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../examples/python"))
import pushseal_format  # noqa: E402

SENDER = ec.derive_private_key(int.from_bytes(bytes([0x43]) * 32, "big"), ec.SECP256R1())


def envelope3(alert):
    header = "ps3.fuzzkey2.fuzzsend"
    plaintext = json.dumps(alert, separators=(",", ":")).encode()
    plaintext += b" " * (-len(plaintext) % 32)
    point = PAIR.public_key().public_bytes(pushseal_format.Encoding.X962, pushseal_format.PublicFormat.UncompressedPoint)
    return header + "." + b64url(pushseal_format.hpke_seal(point, header.encode(), plaintext, sender=SENDER))


for index, alert in enumerate(alerts[:2]):
    write("envelope", f"ps3-valid-{index}", envelope3(alert))
write("envelope", "ps3-no-sender-part", "ps3.fuzzkey2." + envelopes[0].split(".")[2])

aps = {"alert": {"title": "New notification", "body": "Open the app to read it"}, "mutable-content": 1}
for index, text in enumerate(envelopes):
    write("receive", f"sealed-{index}", json.dumps({"aps": aps, "enc": text}))
write("receive", "plain", json.dumps({"aps": {"alert": "hello"}}))
write("receive", "simctl", json.dumps({"Simulator Target Bundle": "com.example.app", "aps": aps, "enc": envelopes[1]}))
write("receive", "wrapped", json.dumps({"apns-id": "ID", "headers": {"apns-push-type": "alert"}, "payload": {"aps": aps, "enc": envelopes[0]}}))
write("receive", "not-json", "garbage {")

secret = base64.b64encode(KEY).decode()
keyring = {"format": "pushseal-keyring/1", "keys": [
    {"id": "3f9a0c1e", "secret": secret, "state": "enabled", "created": "2026-12-02T09:00:00Z", "expires": "2027-01-01T09:00:00Z"},
    {"id": "fuzzkey1", "secret": secret, "state": "primary", "created": "2026-12-02T09:00:00Z", "expires": None},
    {"id": "gone", "secret": None, "state": "destroyed", "created": "2026-12-02T09:00:00Z", "expires": None},
    {"id": "off", "secret": secret, "state": "disabled", "created": "2026-12-02T09:00:00Z", "expires": None},
]}
write("keyring", "four-keys", json.dumps(keyring))
write("keyring", "empty", json.dumps({"format": "pushseal-keyring/1", "keys": []}))
from cryptography.hazmat.primitives import serialization
point = base64.b64encode(PAIR.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)).decode()
write("keyring", "kinds", json.dumps({"format": "pushseal-keyring/2", "keys": [
    {"id": "fuzzkey1", "kind": "secret", "secret": secret, "state": "primary", "created": "2026-12-02T09:00:00Z", "expires": None},
    {"id": "fuzzkey2", "kind": "private", "secret": base64.b64encode(bytes([0x42]) * 32).decode(), "public": point, "state": "enabled", "created": "2026-12-02T09:00:00Z", "expires": None},
    {"id": "device", "kind": "public", "public": point, "state": "enabled", "created": "2026-12-02T09:00:00Z", "expires": None},
    {"id": "gone2", "kind": "private", "state": "destroyed", "created": "2026-12-02T09:00:00Z", "expires": None},
]}))

for name, arguments in {
    "encrypt": ["encrypt", "-t", "T", "--body=B", "-g", "g", "-l", "timeSensitive", "--data", "a=b", "--data", "n:=3", "--ttl", "1h"],
    "batch": ["encrypt", "--batch", "--jobs", "2", "--pad", "64"],
    "keys-rotate": ["keys", "rotate", "--grace", "30d", "--keys", "K"],
    "keys-import": ["keys", "import", "-"],
    "receive": ["receive", "--json", "--budget", "250ms", "--extension", "cmd", "--memory-limit", "24MB", "-"],
    "watch": ["receive", "--watch", "spool", "--once"],
    "help": ["help", "keys", "rotate"],
    "decrypt": ["decrypt", "--field", "x", "-"],
}.items():
    write("arguments", name, b"\0".join(argument.encode() for argument in arguments))
print("seeds written under", root)
