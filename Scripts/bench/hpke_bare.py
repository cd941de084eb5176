"""Python cryptography's HPKE (hpke.Suite, the suite ps2 uses) in a bare loop: N seals of a
padded 160-byte alert to one P-256 key, then N opens. Prints "SEALS_PER_S OPENS_PER_S", the
anchor Scripts/bench.sh holds pushseal's ps2 rows against (no JSON, files or records here)."""
import sys
import time

from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric import ec

count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
suite = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
private = ec.generate_private_key(ec.SECP256R1())
public = private.public_key()
alert = b'{"title":"Build 1 finished","body":"pipeline green on main, 4m12s","data":{"n":1},"id":"0123456789abcdef","sent":1700000000}'.ljust(160)
info = b"ps2.device1"

started = time.perf_counter()
sealed = [suite.encrypt(alert, public, info=info) for _ in range(count)]
seal_seconds = time.perf_counter() - started
started = time.perf_counter()
for message in sealed:
    suite.decrypt(message, private, info=info)
open_seconds = time.perf_counter() - started
print(f"{count / seal_seconds:.0f} {count / open_seconds:.0f}")
