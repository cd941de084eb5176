#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
#   Scripts/test.sh
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/test.sh   (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh

# The listener's tests use real clients: curl, and h2load (Debian's nghttp2-client).
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
# send's tests tunnel through a real HTTP proxy, and name a test root by OpenSSL's hash.
command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The shell tools' tests: completions run in bash, zsh and fish; the manual in man and groff;
# QR codes read back by zbar; desktop notifications on a private D-Bus session bus.
command -v zsh >/dev/null 2>&1 || missing+=(zsh)
command -v fish >/dev/null 2>&1 || missing+=(fish)
command -v man >/dev/null 2>&1 || missing+=(man-db)
dpkg -s libzbar0 >/dev/null 2>&1 || missing+=(libzbar0)
command -v dbus-run-session >/dev/null 2>&1 || missing+=(dbus dbus-bin)
command -v notify-send >/dev/null 2>&1 || missing+=(libnotify-bin)
# The test's notification service runs on Debian's own Python, which has D-Bus and GLib bindings.
/usr/bin/python3 -c "import dbus, gi" >/dev/null 2>&1 || missing+=(python3-dbus python3-gi)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The format's examples in examples/ run on Node's built-in WebCrypto (Debian's nodejs, 18 or later).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# The receiving web app runs in a real browser (Debian's chromium, driven through
# chromedriver by selenium), and draws its QR code with Debian's qrcode.js.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
dpkg -s node-qrcode-generator >/dev/null 2>&1 || missing+=(node-qrcode-generator)
# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
install_missing test ${missing[@]+"${missing[@]}"}

# The interoperability tests check pushseal against Python's `cryptography` package, and
# the listener's against Python's HTTP/2 clients.
# shellcheck source=Scripts/python-env.sh
. Scripts/python-env.sh

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
build_started=$SECONDS
swift build --build-tests ${SWIFT_FLAGS:-}
suite_started=$SECONDS
set +e
# shellcheck disable=SC2086
# Every test is a Swift Testing test; XCTest's own "Executed 0 tests" lines would only mislead.
swift test ${SWIFT_FLAGS:-} 2>&1 | grep --line-buffered -v -E "^(Test Suite '.*' (started|passed|failed) at|	 Executed 0 tests, with 0 failures)" | tee "$log"
status=${PIPESTATUS[0]}
set -e
suite_seconds=$((SECONDS - suite_started))

# One plain closing line, whichever test library ran what.
# Counted from the run's own summary ("Test run with N tests ..."): a result line of a test
# can be lost in the interleaved output, the summary cannot; a failing test counts once.
summary=$(grep -E '^[✔✘] Test run with' "$log" | tail -1)
total=$(sed -E 's/.*with ([0-9]+) tests?.*/\1/' <<< "$summary")
failed=$(grep -E '^✘ Test .* failed after' "$log" | grep -v -c '^✘ Test run with' || true)
if [[ $summary == ✘* ]] && [ "$failed" -eq 0 ]; then failed=1; fi
passed=$(( ${total:-0} - failed ))
# The device side (PushSealKit on swift-crypto), whenever swift-crypto is at hand: the vendored
# archives (see Scripts/device-test.sh for where it looks), or PUSHSEAL_SWIFT_CRYPTO=url with
# network access. Its own line comes first, so the suite's count stays the closing one.
device=0
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
if Scripts/device-test.sh --vendor >/dev/null || [ "${PUSHSEAL_SWIFT_CRYPTO:-}" = url ]; then
  # Minutes with nothing to show otherwise: say what runs and what it takes.
  echo "device: building PushSealKit on swift-crypto (with the Apple transcription) and running its tests, which build two"
  echo "device: packages of their own (a new user's, and every Swift block of the README, docs/ and DocC): ~1 min once built, ~5 the first time"
  device_started=$SECONDS
  # Its stdout is the summary, after the first issues of any test that failed.
  Scripts/device-test.sh 2>/dev/null || device=$?
  echo "device: took $(minutes $((SECONDS - device_started)))"
else
  echo "device: not run (no swift-crypto: no vendored archives in \$PUSHSEAL_VENDOR or ../shared/vendor/; PUSHSEAL_SWIFT_CRYPTO=url fetches it)"
fi
# The suite's wall time (docs/performance.md states it; kept under 4 minutes on 2 cores).
echo "test: the suite ran in $(minutes "$suite_seconds") on $(nproc) cores (build $(minutes $((suite_started - build_started))))"
echo "test: ${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] || exit "$status"
exit "$device"
