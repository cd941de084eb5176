#!/usr/bin/env bash
# Builds PushSealKit (the device side) on swift-crypto and runs its tests; ends with one line
# "device: N passed, M failed". swift-crypto comes from its vendored archives when they are
# at hand (built offline, SWIFTCI_USE_LOCAL_DEPS), else from its repository URL.
#   Scripts/device-test.sh
#   Scripts/device-test.sh --vendor   # print the archives' folder, or fail when there is none
#   Scripts/device-test.sh --crypto   # unpack them and print swift-crypto's folder
#   Scripts/device-test.sh --sanitize thread   # the adapter's and the delivery rule's tests under
#                                              # ThreadSanitizer (time-up comes on another thread)
# The kit's build lives in .build/device (.build/device-thread under TSan), apart from the
# CLI's, whose manifest stays without it.
set -euo pipefail
cd "$(dirname "$0")/.."

# The archives' folder: $PUSHSEAL_VENDOR, else ../shared/vendor beside the project, else beside
# the repository this one was cloned from (a fresh clone in a temporary folder).
find_vendor() {
  local origin dir
  origin=$(git remote get-url origin 2>/dev/null || true)
  for dir in "${PUSHSEAL_VENDOR:-}" ../shared/vendor ${origin:+"$origin/../shared/vendor"}; do
    if [ -n "$dir" ] && ls "$dir"/swift-crypto-*.tar.xz >/dev/null 2>&1; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}
if [ "${1:-}" = --vendor ]; then
  find_vendor
  exit
fi
sanitizer=""
if [ "${1:-}" = --sanitize ]; then
  sanitizer=${2:?--sanitize takes thread or address}
fi

if vendor=$(find_vendor); then
  mkdir -p .build/vendor
  for archive in "$vendor"/swift-crypto-*.tar.xz "$vendor"/swift-asn1-*.tar.xz; do
    name=$(basename "$archive" | sed -E 's/-[0-9].*//')
    [ -f ".build/vendor/$name/Package.swift" ] || tar -xJf "$archive" -C .build/vendor
  done
  export SWIFTCI_USE_LOCAL_DEPS=1 PUSHSEAL_SWIFT_CRYPTO="$PWD/.build/vendor/swift-crypto"
else
  export PUSHSEAL_SWIFT_CRYPTO=url
fi
# --crypto: print where swift-crypto is (unpacked), for the other scripts that build the kit.
if [ "${1:-}" = --crypto ]; then
  echo "$PUSHSEAL_SWIFT_CRYPTO"
  exit
fi
# The Apple adapter is compiled against the transcribed Apple API (Tests/AppleAPI) and tested.
export PUSHSEAL_APPLE_TRANSCRIPTION=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The tests open what the pushseal binary seals. SWIFT_FLAGS is not passed on: it would reach
# swift-crypto too; the kit's own targets treat warnings as errors in the manifest.
build=.build/device
filter=PushSealKitTests
sanitize=()
if [ -n "$sanitizer" ]; then
  # The suites whose code runs on more than one thread; the crypto suites gain nothing from it.
  build=.build/device-$sanitizer
  filter='PushSealKitTests\.(AppleAdapterTests|PendingDeliveryTests|KeyStoreTests)'
  sanitize=(--sanitize="$sanitizer")
fi
swift build --build-path "$build" --product pushseal >&2
export PUSHSEAL_BIN="$PWD/$build/debug/pushseal"
set +e
swift test --build-path "$build" "${sanitize[@]}" --filter "$filter" 2>&1 | tee "$log" >&2
set -e
if grep -qE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)' "$log"; then
  echo "device: the $sanitizer sanitizer reported a fault (above)"
  exit 1
fi
summary=$(grep -E '^[✔✘] Test run with' "$log" | tail -1)
total=$(sed -E 's/.*with ([0-9]+) tests?.*/\1/' <<< "$summary")
failed=$(grep -oE 'with [0-9]+ issues?' <<< "$summary" | grep -oE '[0-9]+' || echo 0)
failing_tests=$(grep -cE '^✘ Test [^r].* failed after' "$log" || true)
[ -n "$total" ] || { echo "device: no test summary"; exit 1; }
# What failed, in a few lines, where a caller that keeps only stdout (Scripts/test.sh) shows it.
grep -E '^✘ Test [^r].*recorded an issue' "$log" | head -5 | cut -c1-300 | sed 's/^/device: /' || true
echo "device${sanitizer:+ ($sanitizer)}: $((total - failing_tests)) passed, $failing_tests failed"
[ "$failing_tests" -eq 0 ] && [ "${failed:-0}" -eq 0 ]
