#!/usr/bin/env bash
# Writes the published test vectors, docs/vectors/ps1.json, ps2.json and ps3.json, with
# pushseal-vectors (pushseal's own sealer, from fixed keys, nonces and ephemeral keys).
# A test fails while the committed files differ from what this writes.
#   Scripts/vectors.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2086 # SWIFT_FLAGS is a list of flags
swift build --product pushseal-vectors ${SWIFT_FLAGS:-} >/dev/null
bin="$(swift build --show-bin-path)"
mkdir -p docs/vectors
for version in ps1 ps2 ps3; do
  "$bin/pushseal-vectors" "$version" > "docs/vectors/$version.json.tmp"
  mv "docs/vectors/$version.json.tmp" "docs/vectors/$version.json"
  echo "vectors: docs/vectors/$version.json"
done
