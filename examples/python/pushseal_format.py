#!/usr/bin/env python3
"""Seal and open pushseal payloads (ps1 and ps2) in Python, on the `cryptography` package.

An example written from docs/FORMAT.md alone: a backend in Python can send payloads that
pushseal's receivers (the Linux runner, PushSealKit on iOS) open, without the CLI.

  pushseal_format.py seal --share psk1.KID.SECRET --title T --body B [--pad 32] [--field enc]
  pushseal_format.py seal --share ppk1.KID.POINT  --title T --body B      (ps2: to a device)
  pushseal_format.py open --share psk1.KID.SECRET [--field enc] < payload.json
  pushseal_format.py open --private KID=SCALAR    [--field enc] < payload.json
        SCALAR: the device's P-256 private key, 32 bytes in base64 or base64url
  pushseal_format.py vectors docs/vectors/ps1.json [...]

`open` prints the opened alert as JSON; a payload it must refuse ends it with exit 1 and
one line `STATUS: reason` (the statuses of docs/FORMAT.md: malformed, key-missing,
auth-failed, expired, unsupported).
"""
import base64
import hashlib
import hmac
import json
import os
import re
import sys
import time

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

KID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
B64URL = re.compile(r"^[A-Za-z0-9_-]*$")
FIELDS = ["title", "subtitle", "body", "badge", "sound", "thread-id", "category", "target-content-id",
          "interruption-level", "relevance-score"]
FALLBACK = {"title": "New notification", "body": "Open the app to read it"}


class Refused(Exception):
    """A payload a receiver must refuse, with the status it gives."""

    def __init__(self, status, reason):
        super().__init__(f"{status}: {reason}")
        self.status = status


# --- encodings -------------------------------------------------------------------------

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text):
    """Strict base64url without padding: the alphabet only, no lone last character, and
    no set bits left over (one text per byte string)."""
    if not B64URL.match(text) or len(text) % 4 == 1:
        raise Refused("malformed", "the sealed box is not canonical base64url without padding")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url(data) != text:
        raise Refused("malformed", "the sealed box's last character has unused bits set")
    return data


def json_text(value):
    """JSON as pushseal writes it: no spaces, UTF-8 as is, '/' never escaped, and control
    characters other than \\n, \\r and \\t as \\u00XX."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\\b", "\\u0008").replace("\\f", "\\u000c")


def plaintext(alert, pad):
    data = json_text(alert).encode()
    if pad > 1 and len(data) % pad:
        data += b" " * (pad - len(data) % pad)
    return data


# --- HPKE, RFC 9180: base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM ---

KEM_SUITE = b"KEM" + (0x0010).to_bytes(2, "big")
HPKE_SUITE = b"HPKE" + (0x0010).to_bytes(2, "big") + (0x0001).to_bytes(2, "big") + (0x0002).to_bytes(2, "big")


def extract(salt, ikm):
    return hmac.new(salt or b"\0" * 32, ikm, hashlib.sha256).digest()


def expand(prk, info, length):
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def labeled_extract(suite, salt, label, ikm):
    return extract(salt, b"HPKE-v1" + suite + label + ikm)


def labeled_expand(suite, prk, label, info, length):
    return expand(prk, length.to_bytes(2, "big") + b"HPKE-v1" + suite + label + info, length)


def point(public_key):
    return public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)


def key_schedule(dh, enc, recipient_point, info):
    eae_prk = labeled_extract(KEM_SUITE, b"", b"eae_prk", dh)
    shared = labeled_expand(KEM_SUITE, eae_prk, b"shared_secret", enc + recipient_point, 32)
    psk_id_hash = labeled_extract(HPKE_SUITE, b"", b"psk_id_hash", b"")
    info_hash = labeled_extract(HPKE_SUITE, b"", b"info_hash", info)
    context = b"\x00" + psk_id_hash + info_hash
    secret = labeled_extract(HPKE_SUITE, shared, b"secret", b"")
    return (labeled_expand(HPKE_SUITE, secret, b"key", context, 32),
            labeled_expand(HPKE_SUITE, secret, b"base_nonce", context, 12))


def hpke_seal(recipient_point, info, message, ephemeral=None):
    recipient = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), recipient_point)
    ephemeral = ephemeral or ec.generate_private_key(ec.SECP256R1())
    enc = point(ephemeral.public_key())
    key, nonce = key_schedule(ephemeral.exchange(ec.ECDH(), recipient), enc, recipient_point, info)
    return enc + AESGCM(key).encrypt(nonce, message, b"")


def hpke_open(private_key, info, sealed):
    enc, box = sealed[:65], sealed[65:]
    try:
        ephemeral = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), enc)
    except ValueError:
        raise Refused("auth-failed", "enc is not a point on P-256")
    key, nonce = key_schedule(private_key.exchange(ec.ECDH(), ephemeral), enc, point(private_key.public_key()), info)
    return AESGCM(key).decrypt(nonce, box, b"")


# --- sealing ------------------------------------------------------------------------------

def seal(share, alert, pad=32, field="enc", fallback=FALLBACK, nonce=None, ephemeral=None):
    """The payload for `alert` (a dict in the order its members are to be written) under a
    key share: psk1 (a shared secret: ps1) or ppk1 (a device's public key: ps2)."""
    kind, kid, material = share.split(".", 2)
    body = plaintext(alert, pad)
    if kind == "psk1":
        header = f"ps1.{kid}"
        nonce = nonce or os.urandom(12)
        sealed = nonce + AESGCM(from_b64url(material)).encrypt(nonce, body, header.encode())
    elif kind == "ppk1":
        header = f"ps2.{kid}"
        sealed = hpke_seal(from_b64url(material), header.encode(), body, ephemeral)
    else:
        raise ValueError("a share is psk1.<kid>.<secret> or ppk1.<kid>.<point>")
    payload = {"aps": {"alert": fallback, "mutable-content": 1}, field: f"{header}.{b64url(sealed)}"}
    text = json_text(payload)
    if len(text.encode()) > 4096:
        raise ValueError(f"the payload is {len(text.encode())} bytes, over APNs' 4096")
    return text


# --- opening ------------------------------------------------------------------------------

def strict_object(text):
    """A JSON object with no member named twice (two parsers could read it differently)."""
    def pairs(items):
        names = [name for name, _ in items]
        if len(names) != len(set(names)):
            raise Refused("malformed", "a member is named twice")
        return dict(items)
    try:
        value = json.loads(text, object_pairs_hook=pairs)
    except (ValueError, UnicodeDecodeError) as error:
        if isinstance(error, Refused):
            raise
        raise Refused("malformed", f"not JSON: {error}")
    if not isinstance(value, dict):
        raise Refused("malformed", "not a JSON object")
    return value


def check_alert(alert):
    for name in ["title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id", "interruption-level"]:
        if name in alert and alert[name] is not None and not isinstance(alert[name], str):
            raise Refused("malformed", f"{name} is not a string")
    if "badge" in alert and alert["badge"] is not None and (not isinstance(alert["badge"], int) or isinstance(alert["badge"], bool) or alert["badge"] < 0):
        raise Refused("malformed", "badge is not a whole number, 0 or more")
    if alert.get("interruption-level") not in (None, "passive", "active", "time-sensitive", "critical"):
        raise Refused("malformed", "interruption-level is not passive, active, time-sensitive or critical")
    score = alert.get("relevance-score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1):
        raise Refused("malformed", "relevance-score is not a number from 0 to 1")
    if "data" in alert and alert["data"] is not None and not isinstance(alert["data"], dict):
        raise Refused("malformed", "data is not an object")
    for name in ["sent", "exp"]:
        if name in alert and alert[name] is not None and (not isinstance(alert[name], int) or isinstance(alert[name], bool)):
            raise Refused("malformed", f"{name} is not a whole number")
    return alert


def open_payload(text, secrets=None, privates=None, field="enc", now=None):
    """The alert sealed in a payload, or `Refused` with the status a receiver gives.
    secrets: {kid: 32-byte key}; privates: {kid: P-256 private key}."""
    payload = strict_object(text)
    envelope = payload.get(field)
    if not isinstance(envelope, str):
        raise Refused("malformed", f"no '{field}' string in the payload")
    parts = envelope.split(".", 2)
    if len(parts) != 3:
        raise Refused("malformed", "not <version>.<kid>.<sealed>")
    version, kid, sealed_text = parts
    if version not in ("ps1", "ps2"):
        raise Refused("unsupported", f"version '{version}' is not one this reader knows")
    if not KID.match(kid):
        raise Refused("malformed", "the kid is not 1 to 64 of A-Z a-z 0-9 _ -")
    sealed = from_b64url(sealed_text)
    header = f"{version}.{kid}".encode()
    if version == "ps1":
        if len(sealed) < 28:
            raise Refused("malformed", f"{len(sealed)} sealed bytes, fewer than nonce and tag")
        if kid not in (secrets or {}):
            raise Refused("key-missing", f"no key {kid}")
        try:
            opened = AESGCM(secrets[kid]).decrypt(sealed[:12], sealed[12:], header)
        except InvalidTag:
            raise Refused("auth-failed", "the tag does not verify")
    else:
        if len(sealed) < 81:
            raise Refused("malformed", f"{len(sealed)} sealed bytes, fewer than enc and tag")
        if kid not in (privates or {}):
            raise Refused("key-missing", f"no key {kid}")
        try:
            opened = hpke_open(privates[kid], header, sealed)
        except InvalidTag:
            raise Refused("auth-failed", "the tag does not verify")
    alert = check_alert(strict_object(opened.decode("utf-8", errors="strict")))
    if alert.get("exp") is not None and alert["exp"] <= (now if now is not None else int(time.time())):
        raise Refused("expired", f"exp {alert['exp']} has passed")
    return alert


# --- the vectors --------------------------------------------------------------------------

def check_vectors(path):
    vectors = json.load(open(path, encoding="utf-8"))
    version = vectors["version"]
    secrets, privates = {}, {}
    for kid, key in vectors["keys"].items():
        if version == "ps1":
            secrets[kid] = from_b64url(key["secret"])
        else:
            privates[kid] = ec.derive_private_key(int.from_bytes(from_b64url(key["private"]), "big"), ec.SECP256R1())
    for case in vectors["positive"]:
        kid = case["kid"]
        if version == "ps1":
            share = f"psk1.{kid}.{vectors['keys'][kid]['secret']}"
            made = seal(share, case["alert"], case["pad"], case["field"], case["fallback"], nonce=bytes.fromhex(case["nonce"]))
        else:
            share = f"ppk1.{kid}.{vectors['keys'][kid]['public']}"
            ephemeral = ec.derive_private_key(int.from_bytes(from_b64url(case["ephemeral_private"]), "big"), ec.SECP256R1())
            made = seal(share, case["alert"], case["pad"], case["field"], case["fallback"], ephemeral=ephemeral)
        assert plaintext(case["alert"], case["pad"]).decode() == case["plaintext"], f"{case['name']}: plaintext differs"
        assert made == case["payload"], f"{case['name']}: payload differs\n{made}\n{case['payload']}"
        assert open_payload(case["payload"], secrets, privates, case["field"]) == case["alert"], f"{case['name']}: opened differs"
    for case in vectors["negative"]:
        try:
            open_payload(case["payload"], secrets, privates)
            raise AssertionError(f"{case['name']}: opened, but must be {case['status']}")
        except Refused as refused:
            assert refused.status == case["status"], f"{case['name']}: {refused.status}, not {case['status']} ({refused})"
    return f"{path}: {len(vectors['positive'])} positive reproduced byte for byte, {len(vectors['negative'])} negative refused"


def main(argv):
    if len(argv) < 2 or argv[1] not in ("seal", "open", "vectors"):
        raise SystemExit(__doc__)
    command, rest = argv[1], argv[2:]
    if command == "vectors":
        for path in rest:
            print(check_vectors(path))
        return 0
    options = dict(zip(rest[::2], rest[1::2]))
    field = options.get("--field", "enc")
    if command == "seal":
        alert = {name: options[f"--{name}"] for name in ("title", "subtitle", "body") if f"--{name}" in options}
        alert.update({"id": b64url(os.urandom(12)), "sent": int(time.time())})
        print(seal(options["--share"], alert, int(options.get("--pad", "32")), field))
        return 0
    secrets, privates = {}, {}
    if "--share" in options:
        _, kid, secret = options["--share"].split(".", 2)
        secrets[kid] = from_b64url(secret)
    if "--private" in options:
        kid, scalar = options["--private"].split("=", 1)
        raw = base64.urlsafe_b64decode(scalar.replace("+", "-").replace("/", "_") + "=" * (-len(scalar) % 4))
        privates[kid] = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
    try:
        print(json_text(open_payload(sys.stdin.read(), secrets, privates, field)))
    except Refused as refused:
        print(str(refused), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
