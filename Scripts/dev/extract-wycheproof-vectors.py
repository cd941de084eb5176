#!/usr/bin/env python3
"""Extract the Wycheproof vectors that fit pushseal's primitives from a checkout of
C2SP/wycheproof into one JSON file for the tests: AES-GCM with 256-bit keys, 96-bit nonces
and 128-bit tags (ps1's AES-256-GCM), and every ECDH test on P-256 with points as bytes
(ps2's key agreement).

    git clone https://github.com/C2SP/wycheproof
    Scripts/dev/extract-wycheproof-vectors.py wycheproof \
        > Tests/SealCryptoTests/Fixtures/wycheproof-aes256gcm-ecdh-p256.json
"""
import json
import sys

root = sys.argv[1]
gcm = json.load(open(f"{root}/testvectors_v1/aes_gcm_test.json"))
ecdh = json.load(open(f"{root}/testvectors_v1/ecdh_secp256r1_ecpoint_test.json"))
aes = [dict(test, flags=test.get("flags", []))
       for group in gcm["testGroups"] if (group["keySize"], group["ivSize"], group["tagSize"]) == (256, 96, 128)
       for test in group["tests"]]
points = [dict(test, flags=test.get("flags", [])) for group in ecdh["testGroups"] for test in group["tests"]]
json.dump({"source": "C2SP/wycheproof testvectors_v1/aes_gcm_test.json and ecdh_secp256r1_ecpoint_test.json",
           "aesGcm": aes, "ecdh": points}, sys.stdout, indent=1)
print()
