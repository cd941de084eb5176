#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
#   Scripts/test.sh
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/test.sh   (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh

# The interoperability tests check pushseal against Python's `cryptography` package.
if ! python3 -c "import cryptography.hazmat.primitives.ciphers.aead" >/dev/null 2>&1; then
  echo "test: installing Python's cryptography package" >&2
  python3 -m pip install --quiet cryptography
fi

# Keys must never be committed: only Keys/README.md and Keys/.gitignore may be tracked.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tracked=$(git ls-files Keys | grep -v -E '^Keys/(README\.md|\.gitignore)$' || true)
  if [ -n "$tracked" ]; then
    echo "test: key files are tracked in git: $tracked" >&2
    exit 1
  fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
swift build --build-tests ${SWIFT_FLAGS:-}
set +e
# shellcheck disable=SC2086
swift test ${SWIFT_FLAGS:-} 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# One plain closing line, whichever test library ran what.
passed=$(grep -E '^✔ Test .* passed' "$log" | grep -v -c '^✔ Test run with' || true)
failed=$(grep -E '^✘ Test .* failed' "$log" | grep -v -c '^✘ Test run with' || true)
echo "test: ${passed} passed, ${failed} failed"
exit "$status"
