#!/usr/bin/env python3
"""Extract the NIST CAVS AES-256-GCM vectors that pushseal's parameters use (96-bit IV,
128-bit tag) from the `cryptography_vectors` package into one JSON file for the tests.

    pip download --no-deps cryptography_vectors && unzip cryptography_vectors-*.whl
    Scripts/dev/extract-gcm-vectors.py cryptography_vectors/ciphers/AES/GCM \
        > Tests/SealCryptoTests/Fixtures/nist-aes256-gcm.json
"""
import json
import sys
from pathlib import Path


def cases(path):
    section, case = {}, None
    for line in Path(path).read_text().splitlines() + [""]:
        line = line.strip()
        if line.startswith("[") and "=" in line:
            name, value = line[1:-1].split("=")
            section[name.strip()] = int(value)
        elif line.startswith("Count"):
            case = {"section": dict(section), "Count": line.split("=")[1].strip()}
        elif case is not None and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            case[name] = value
        elif line == "FAIL" and case is not None:
            case["FAIL"] = True
        elif line == "" and case is not None:
            yield case
            case = None


def wanted(case):
    section = case["section"]
    return section.get("Keylen") == 256 and section.get("IVlen") == 96 and section.get("Taglen") == 128


def main(folder):
    folder = Path(folder)
    out = {"source": "NIST CAVS 14.0 gcmEncryptExtIV256.rsp and gcmDecrypt256.rsp, via the cryptography_vectors package; IVlen=96, Taglen=128",
           "vectors": []}
    for name in ("gcmEncryptExtIV256.rsp", "gcmDecrypt256.rsp"):
        for case in cases(folder / name):
            if not wanted(case):
                continue
            valid = not case.get("FAIL", False)
            out["vectors"].append({
                "file": name, "count": int(case["Count"]),
                "key": case["Key"], "iv": case["IV"], "aad": case.get("AAD", ""),
                "pt": case.get("PT", "") if valid else "", "ct": case.get("CT", ""), "tag": case["Tag"],
                "result": "valid" if valid else "invalid",
            })
    json.dump(out, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
