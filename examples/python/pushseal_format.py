#!/usr/bin/env python3
"""Seal and open pushseal payloads (ps1, ps2 and ps3) in Python, on the `cryptography` package.

An example written from docs/FORMAT.md alone: a backend in Python can send payloads that
pushseal's receivers (the Linux runner, PushSealKit on iOS) open, without the CLI.

  pushseal_format.py seal --share-file FILE      --title T --body B [--pad 32] [--field enc]
  pushseal_format.py seal --share ppk1.KID.POINT  --title T --body B      (ps2: to a device)
  pushseal_format.py seal --share ppk1.KID.POINT --sender-key FILE --title T --body B
        (ps3: to a device, vouched for by this backend's sender key)
  pushseal_format.py sender-key FILE
        makes a sender key in FILE (mode 0600) and prints its pss1 line for the devices
  pushseal_format.py open --share-file FILE      [--field enc] < payload.json
        FILE: a psk1 share (pushseal keys export), kept out of the arguments, which 'ps'
        and shell history show: --share-file <(pushseal keys export) in bash, zsh or fish
        (--share psk1.KID.SECRET works too, for a share that is not secret to you)
  pushseal_format.py open --private FILE [--sender pss1.KID.POINT] [--field enc] < payload.json
        FILE: a prk1 share (pushseal keys export --private), kept out of the arguments;
        --sender allows that sender, and then only what an allowed sender sealed opens
  pushseal_format.py vectors docs/vectors/ps1.json [...]

`open` prints the opened alert as JSON; a payload it does not open ends it with exit 1 and
one line `STATUS: reason` (the statuses of docs/FORMAT.md section 6: malformed,
passthrough, unsupported, key-missing, sender-untrusted, auth-failed, expired, duplicate).
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
    """JSON in the canonical form of docs/FORMAT.md section 4.1: no spaces, UTF-8 as is, '/'
    never escaped, the short escapes \\b \\f \\n \\r \\t and \\u00xx for other control
    characters: exactly what json.dumps writes with these settings."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def private_share(share):
    """A prk1 share (section 7): the kid and the P-256 private key it holds."""
    kind, kid, scalar = share.strip(" \t\r\n").split(".", 2)
    raw = from_b64url(scalar)
    value = int.from_bytes(raw, "big")
    if kind != "prk1" or len(raw) != 32 or not 0 < value < 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551:
        raise ValueError("not a prk1 share of a P-256 scalar")
    return kid, ec.derive_private_key(value, ec.SECP256R1())


def plaintext(alert, pad):
    data = json_text(alert).encode()
    if pad > 1 and len(data) % pad:
        data += b" " * (pad - len(data) % pad)
    return data


def sender_share(share):
    """A pss1 share (section 7): a sender's kid and its P-256 public key."""
    kind, kid, material = share.strip(" \t\r\n").split(".", 2)
    if kind != "pss1" or not KID.match(kid):
        raise ValueError("not a pss1 share")
    return kid, ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), from_b64url(material))


# --- HPKE, RFC 9180: base mode (ps2) and auth mode (ps3), DHKEM(P-256, HKDF-SHA256),
# --- HKDF-SHA256, AES-256-GCM ---------------------------------------------------------

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


def key_schedule(dh, kem_context, info, mode):
    """mode 0 (base): dh = DH(skE, pkR), kem_context = enc || pkR; mode 2 (auth, section 4.4):
    dh = DH(skE, pkR) || DH(skS, pkR), kem_context = enc || pkR || pkS."""
    eae_prk = labeled_extract(KEM_SUITE, b"", b"eae_prk", dh)
    shared = labeled_expand(KEM_SUITE, eae_prk, b"shared_secret", kem_context, 32)
    psk_id_hash = labeled_extract(HPKE_SUITE, b"", b"psk_id_hash", b"")
    info_hash = labeled_extract(HPKE_SUITE, b"", b"info_hash", info)
    context = bytes([mode]) + psk_id_hash + info_hash
    secret = labeled_extract(HPKE_SUITE, shared, b"secret", b"")
    return (labeled_expand(HPKE_SUITE, secret, b"key", context, 32),
            labeled_expand(HPKE_SUITE, secret, b"base_nonce", context, 12))


def hpke_seal(recipient_point, info, message, ephemeral=None, sender=None):
    """enc || ciphertext || tag; in auth mode when `sender` (a private key) is given."""
    recipient = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), recipient_point)
    ephemeral = ephemeral or ec.generate_private_key(ec.SECP256R1())
    enc = point(ephemeral.public_key())
    dh, kem_context = ephemeral.exchange(ec.ECDH(), recipient), enc + recipient_point
    if sender is not None:
        dh += sender.exchange(ec.ECDH(), recipient)
        kem_context += point(sender.public_key())
    key, nonce = key_schedule(dh, kem_context, info, 0x00 if sender is None else 0x02)
    return enc + AESGCM(key).encrypt(nonce, message, b"")


def hpke_open(private_key, info, sealed, sender=None):
    """The plaintext; in auth mode when `sender` (the sender's public key) is given."""
    enc, box = sealed[:65], sealed[65:]
    try:
        ephemeral = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), enc)
    except ValueError:
        raise Refused("auth-failed", "enc is not a point on P-256")
    dh, kem_context = private_key.exchange(ec.ECDH(), ephemeral), enc + point(private_key.public_key())
    if sender is not None:
        dh += private_key.exchange(ec.ECDH(), sender)
        kem_context += point(sender)
    key, nonce = key_schedule(dh, kem_context, info, 0x00 if sender is None else 0x02)
    return AESGCM(key).decrypt(nonce, box, b"")


# --- sealing ------------------------------------------------------------------------------

def seal(share, alert, pad=32, field="enc", fallback=FALLBACK, nonce=None, ephemeral=None, sender=None):
    """The payload for `alert` (a dict in the order its members are to be written) under a
    key share: psk1 (a shared secret: ps1) or ppk1 (a device's public key: ps2; with
    `sender`, a (kid, private key) pair of the sender's own, ps3)."""
    kind, kid, material = share.split(".", 2)
    body = plaintext(alert, pad)
    if kind == "psk1":
        header = f"ps1.{kid}"
        nonce = nonce or os.urandom(12)
        sealed = nonce + AESGCM(from_b64url(material)).encrypt(nonce, body, header.encode())
    elif kind == "ppk1" and sender is not None:
        if "id" not in alert or "sent" not in alert:
            raise ValueError("a ps3 alert carries an id and its sent time")
        header = f"ps3.{kid}.{sender[0]}"
        sealed = hpke_seal(from_b64url(material), header.encode(), body, ephemeral, sender[1])
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
# docs/FORMAT.md section 6, step by step: every refusal carries the status it gives.

INTEGER = re.compile(r"^-?(0|[1-9][0-9]*)$")
VERSION_NAME = re.compile(r"^ps[1-9][0-9]{0,3}$")
TEXT_KEYS = ["title", "subtitle", "body", "title-loc-key", "subtitle-loc-key", "loc-key"]


class Number:
    """A JSON number as it was written: integers are judged by their text (section 2.1)."""

    def __init__(self, text):
        self.text = text

    def plain(self):
        return int(self.text) if INTEGER.match(self.text) else float(self.text)

    def integer(self):
        """The value, when the text is an integer of section 2.1; else None."""
        if not INTEGER.match(self.text):
            return None
        value = int(self.text)
        return value if -2**63 <= value < 2**63 else None


def plain(value):
    """The parsed JSON with numbers as Python numbers."""
    if isinstance(value, Number):
        return value.plain()
    if isinstance(value, dict):
        return {name: plain(member) for name, member in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def strict_json(text):
    """Section 2.1: RFC 8259 JSON with no name twice in any object, at most 64 levels deep,
    no lone surrogate, no byte order mark; numbers kept as their text."""
    def pairs(items):
        names = [name for name, _ in items]
        if len(names) != len(set(names)):
            raise Refused("malformed", "a member is named twice")
        return dict(items)

    def constant(name):
        raise Refused("malformed", f"{name} is not JSON")
    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_int=Number, parse_float=Number, parse_constant=constant)
    except Refused:
        raise
    except (ValueError, RecursionError) as error:
        raise Refused("malformed", f"not JSON: {error}")

    def check(value, depth):
        if isinstance(value, (dict, list)):
            if depth + 1 > 64:
                raise Refused("malformed", "nested deeper than 64 levels")
            for item in (list(value.keys()) + list(value.values())) if isinstance(value, dict) else value:
                check(item, depth + 1)
        elif isinstance(value, str) and any(0xD800 <= ord(char) <= 0xDFFF for char in value):
            raise Refused("malformed", "a lone surrogate escape")
    check(value, 0)
    return value


def strict_object(text):
    value = strict_json(text)
    if not isinstance(value, dict):
        raise Refused("malformed", "not a JSON object")
    return value


def check_alert(alert, field, identity=False):
    """Section 5: every known member of the right type and value, and something to show."""
    for name in ["title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id", "interruption-level"]:
        if alert.get(name) is not None and not isinstance(alert[name], str):
            raise Refused("malformed", f"{name} is not a string")
    if alert.get("interruption-level") not in (None, "passive", "active", "time-sensitive", "critical"):
        raise Refused("malformed", "interruption-level is not passive, active, time-sensitive or critical")
    badge = alert.get("badge")
    if badge is not None and (not isinstance(badge, Number) or badge.integer() is None or badge.integer() < 0):
        raise Refused("malformed", "badge is not an integer, 0 or more")
    score = alert.get("relevance-score")
    if score is not None and (not isinstance(score, Number) or not 0 <= float(score.text) <= 1):
        raise Refused("malformed", "relevance-score is not a number from 0 to 1")
    data = alert.get("data")
    if data is not None and not isinstance(data, dict):
        raise Refused("malformed", "data is not an object")
    if data is not None and ("aps" in data or field in data):
        raise Refused("malformed", "data names aps or the field")
    message_id = alert.get("id")
    if message_id is not None and (not isinstance(message_id, str) or not 1 <= len(message_id.encode()) <= 64):
        raise Refused("malformed", "id is not a string of 1 to 64 bytes")
    for name in ["sent", "exp"]:
        if alert.get(name) is not None and (not isinstance(alert[name], Number) or alert[name].integer() is None):
            raise Refused("malformed", f"{name} is not an integer")
    if not alert.get("title") and not alert.get("body"):
        raise Refused("malformed", "neither a title nor a body to show")
    if identity and (alert.get("id") is None or alert.get("sent") is None):
        raise Refused("malformed", "a ps3 alert carries an id and its sent time")
    return alert


def has_text(aps):
    alert = aps.get("alert")
    if isinstance(alert, str):
        return alert != ""
    return isinstance(alert, dict) and any(isinstance(alert.get(key), str) and alert[key] != "" for key in TEXT_KEYS)


def open_payload(text, secrets=None, privates=None, field="enc", now=None, senders=None, seen=None):
    """The alert sealed in a payload, or `Refused` with the status a receiver gives
    (passthrough included: shown as it came). secrets: {kid: 32-byte key}; privates:
    {kid: P-256 private key}; senders: {kid: public key} of the allowed senders (any at all
    makes them required, section 6.1); seen: a set this receiver remembers opened
    messages in (section 6.2; this example keeps it in memory, and forgets nothing)."""
    payload = strict_object(text)                                               # step 1
    if not isinstance(payload.get("aps"), dict):                                # step 2
        raise Refused("malformed", "no aps dictionary")
    size = len(text.rstrip(" \t\n\r").encode())
    if size > 4096:                                                             # step 3
        raise Refused("malformed", f"{size} bytes, over APNs' 4096")
    aps = payload["aps"]
    mutable = aps.get("mutable-content")
    if not (isinstance(mutable, Number) and mutable.text == "1") or not has_text(aps):  # step 4
        raise Refused("passthrough", "iOS runs no extension for it")
    if field not in payload:                                                    # step 5
        raise Refused("passthrough", f"no '{field}' field")
    envelope = payload[field]
    if not isinstance(envelope, str):
        raise Refused("malformed", f"'{field}' is not a string")
    return plain(open_envelope(envelope, secrets, privates, field, now, senders, seen))


def open_envelope(envelope, secrets=None, privates=None, field="enc", now=None, senders=None, seen=None):
    """Steps 6 to 13, for an envelope's text."""
    version = envelope.split(".", 1)[0]                                         # step 6
    if version not in ("ps1", "ps2", "ps3"):
        if VERSION_NAME.match(version):
            raise Refused("unsupported", f"version '{version}' is not one this reader knows")
        raise Refused("malformed", "not <version>.<kid>.<sealed>")
    parts = envelope.split(".", 3 if version == "ps3" else 2)
    if len(parts) != (4 if version == "ps3" else 3):
        raise Refused("malformed", "not <version>.<kid>.<sealed> (ps3: <kid>.<sender kid>.<sealed>)")
    kid, sender_kid, sealed_text = (parts[1], parts[2], parts[3]) if version == "ps3" else (parts[1], None, parts[2])
    if not KID.match(kid) or (sender_kid is not None and not KID.match(sender_kid)):
        raise Refused("malformed", "a kid is not 1 to 64 of A-Z a-z 0-9 _ -")
    sealed = from_b64url(sealed_text)                                           # step 7
    header = envelope[:len(envelope) - len(sealed_text) - 1].encode()
    if len(sealed) < (28 if version == "ps1" else 81):
        raise Refused("malformed", f"{len(sealed)} sealed bytes, fewer than {'nonce' if version == 'ps1' else 'enc'} and tag")
    keys = secrets if version == "ps1" else privates
    if kid not in (keys or {}):                                                 # step 8
        raise Refused("key-missing", f"no key {kid}")
    sender = None                                                               # step 9
    if sender_kid is not None:
        if sender_kid not in (senders or {}):
            raise Refused("sender-untrusted", f"sender {sender_kid} is not one this receiver allows")
        sender = senders[sender_kid]
    elif senders:
        raise Refused("sender-untrusted", f"{version} names no sender, and this receiver allows only its senders")
    try:                                                                        # step 10
        if version == "ps1":
            opened = AESGCM(secrets[kid]).decrypt(sealed[:12], sealed[12:], header)
        else:
            opened = hpke_open(privates[kid], header, sealed, sender)
    except InvalidTag:
        raise Refused("auth-failed", "the tag does not verify")
    try:                                                                        # step 11
        decoded = opened.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise Refused("malformed", "the plaintext is not UTF-8")
    alert = check_alert(strict_object(decoded), field, identity=version == "ps3")
    exp = alert.get("exp")
    if exp is not None and exp.integer() <= (now if now is not None else int(time.time())):  # step 12
        raise Refused("expired", f"exp {exp.text} has passed")
    if seen is not None and alert.get("id") is not None:                        # step 13
        name = (kid, sender_kid or "", alert["id"])
        if name in seen:
            raise Refused("duplicate", f"message {alert['id']} was opened here before")
        seen.add(name)
    return alert


# --- the vectors --------------------------------------------------------------------------

def check_vectors(path):
    vectors = json.load(open(path, encoding="utf-8"))
    version = vectors["version"]
    secrets, privates, senders = {}, {}, {}
    if "receiver" in vectors:
        # ps3 names what its receiver holds: the device's prk1 line, the allowed senders' pss1.
        for line in vectors["receiver"]:
            if line.startswith("pss1."):
                kid, key = sender_share(line)
                senders[kid] = key
            else:
                kid, key = private_share(line)
                privates[kid] = key
    else:
        for kid, key in vectors["keys"].items():
            if version == "ps1":
                secrets[kid] = from_b64url(key["secret"])
            else:
                privates[kid] = private_share(key["private_share"])[1]
    for case in vectors["positive"]:
        kid = case["kid"]
        if version == "ps1":
            share = f"psk1.{kid}.{vectors['keys'][kid]['secret']}"
            made = seal(share, case["alert"], case["pad"], case["field"], case["fallback"], nonce=bytes.fromhex(case["nonce"]))
        else:
            share = f"ppk1.{kid}.{vectors['keys'][kid]['public']}"
            ephemeral = ec.derive_private_key(int.from_bytes(from_b64url(case["ephemeral_private"]), "big"), ec.SECP256R1())
            sender = None
            if "sender" in case:
                scalar = from_b64url(vectors["keys"][case["sender"]]["sender_private"])
                sender = (case["sender"], ec.derive_private_key(int.from_bytes(scalar, "big"), ec.SECP256R1()))
            made = seal(share, case["alert"], case["pad"], case["field"], case["fallback"], ephemeral=ephemeral, sender=sender)
        assert plaintext(case["alert"], case["pad"]).decode() == case["plaintext"], f"{case['name']}: plaintext differs"
        assert made == case["payload"], f"{case['name']}: payload differs\n{made}\n{case['payload']}"
        assert open_payload(case["payload"], secrets, privates, case["field"], senders=senders) == case["alert"], f"{case['name']}: opened differs"
    for case in vectors["negative"] + vectors.get("edge", []):
        try:
            open_payload(case["payload"], secrets, privates, senders=senders)
            status = "decrypted"
        except Refused as refused:
            status = refused.status
        assert status == case["status"], f"{case['name']}: {status}, not {case['status']}"
    for case in vectors.get("repeat", []):
        seen = set()
        for number, (payload, expected) in enumerate(zip(case["payloads"], case["statuses"]), 1):
            try:
                open_payload(payload, secrets, privates, senders=senders, seen=seen)
                status = "decrypted"
            except Refused as refused:
                status = refused.status
            assert status == expected, f"{case['name']}, arrival {number}: {status}, not {expected}"
    edge = len(vectors.get("edge", []))
    repeats = f", {len(vectors['repeat'])} repeats shown once" if "repeat" in vectors else ""
    return f"{path}: {len(vectors['positive'])} positive reproduced byte for byte, {len(vectors['negative'])} negative refused, {edge} edge cases judged alike{repeats}"


def main(argv):
    if len(argv) < 2 or argv[1] not in ("seal", "open", "vectors", "sender-key"):
        raise SystemExit(__doc__)
    command, rest = argv[1], argv[2:]
    if command == "vectors":
        for path in rest:
            print(check_vectors(path))
        return 0
    if command == "sender-key":
        key = ec.generate_private_key(ec.SECP256R1())
        kid = os.urandom(4).hex()
        descriptor = os.open(rest[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps({"kid": kid, "private": b64url(key.private_numbers().private_value.to_bytes(32, "big"))}) + "\n")
        print(f"pss1.{kid}.{b64url(point(key.public_key()))}")
        return 0
    options = dict(zip(rest[::2], rest[1::2]))
    if "--share-file" in options:
        with open(options["--share-file"], encoding="utf-8") as share:
            options["--share"] = share.read().strip(" \t\r\n")
    field = options.get("--field", "enc")
    if command == "seal":
        alert = {name: options[f"--{name}"] for name in ("title", "subtitle", "body") if f"--{name}" in options}
        alert.update({"id": b64url(os.urandom(12)), "sent": int(time.time())})
        sender = None
        if "--sender-key" in options:
            with open(options["--sender-key"], encoding="utf-8") as kept:
                stored = json.load(kept)
            sender = (stored["kid"], ec.derive_private_key(int.from_bytes(from_b64url(stored["private"]), "big"), ec.SECP256R1()))
        print(seal(options["--share"], alert, int(options.get("--pad", "32")), field, sender=sender))
        return 0
    secrets, privates = {}, {}
    if "--share" in options:
        _, kid, secret = options["--share"].split(".", 2)
        secrets[kid] = from_b64url(secret)
    if "--private" in options:
        kid, key = private_share(open(options["--private"], encoding="utf-8").read())
        privates[kid] = key
    senders = dict([sender_share(options["--sender"])]) if "--sender" in options else {}
    try:
        print(json_text(open_payload(sys.stdin.read(), secrets, privates, field, senders=senders)))
    except Refused as refused:
        print(str(refused), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
