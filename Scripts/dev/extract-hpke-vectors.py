#!/usr/bin/env python3
"""Extract the RFC 9180 test vectors of the one suite `ps2` uses (DHKEM(P-256, HKDF-SHA256),
HKDF-SHA256, AES-256-GCM), in base mode and in auth mode (a sender's static key, for
authenticated envelopes), from the `cryptography_vectors` package into one JSON file for the
tests.

    pip download --no-deps cryptography_vectors && unzip cryptography_vectors-*.whl
    Scripts/dev/extract-hpke-vectors.py cryptography_vectors/HPKE/test-vectors.json \
        > Tests/SealCryptoTests/Fixtures/hpke-p256-sha256-aes256gcm.json
"""
import json
import sys

vectors = json.load(open(sys.argv[1]))
chosen = [v for v in vectors if v["mode"] in (0, 2) and (v["kem_id"], v["kdf_id"], v["aead_id"]) == (0x10, 0x01, 0x02)]
for vector in chosen:
    vector.pop("exports", None)
json.dump({"source": "cryptography_vectors HPKE/test-vectors.json (RFC 9180 appendix A)", "vectors": chosen},
          sys.stdout, indent=1)
print()
