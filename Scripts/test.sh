#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
#   Scripts/test.sh
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/test.sh   (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh

# The interoperability tests check pushseal against Python's `cryptography` package. Debian's
# own Python refuses `pip install` outside a virtual environment, so: Debian's package where
# python3 is Debian's, otherwise a virtual environment under .build/ that the tests then use.
has_cryptography() { python3 -c "import cryptography.hazmat.primitives.ciphers.aead" >/dev/null 2>&1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! has_cryptography && [ "$(command -v python3)" = /usr/bin/python3 ]; then
  echo "test: installing Debian's python3-cryptography" >&2
  $sudo apt-get install -y -qq python3-cryptography >/dev/null 2>&1 || true
fi
if ! has_cryptography; then
  venv=.build/python
  if [ ! -x "$venv/bin/python3" ]; then
    echo "test: making a Python virtual environment in $venv for cryptography" >&2
    python3 -m venv "$venv" 2>/dev/null || {
      $sudo apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$venv"
    }
  fi
  "$venv/bin/python3" -c "import cryptography" 2>/dev/null || "$venv/bin/python3" -m pip install --quiet cryptography
  export PATH="$PWD/$venv/bin:$PATH"
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
# Every test is a Swift Testing test; XCTest's own "Executed 0 tests" lines would only mislead.
swift test ${SWIFT_FLAGS:-} 2>&1 | grep --line-buffered -v -E "^(Test Suite '.*' (started|passed|failed) at|	 Executed 0 tests, with 0 failures)" | tee "$log"
status=${PIPESTATUS[0]}
set -e

# One plain closing line, whichever test library ran what.
passed=$(grep -E '^✔ Test .* passed' "$log" | grep -v -c '^✔ Test run with' || true)
failed=$(grep -E '^✘ Test .* failed' "$log" | grep -v -c '^✘ Test run with' || true)
echo "test: ${passed} passed, ${failed} failed"
exit "$status"
