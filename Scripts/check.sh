#!/usr/bin/env bash
# The whole suite again under AddressSanitizer and ThreadSanitizer (the receiver is
# concurrent). Both the test process and the pushseal binary the tests run are instrumented.
#   Scripts/check.sh [address|thread ...]      (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests' Python clients and reference implementation.
# shellcheck source=Scripts/python-env.sh
. Scripts/python-env.sh

sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address thread)
status=0
for sanitizer in "${sanitizers[@]}"; do
  path=".build/sanitize-$sanitizer"
  log=$(mktemp)
  echo "check: building with --sanitize=$sanitizer" >&2
  # shellcheck disable=SC2086 # SWIFT_FLAGS is a list of flags
  swift build --build-tests --sanitize="$sanitizer" --build-path "$path" ${SWIFT_FLAGS:-} > "$log" 2>&1 \
    || { cat "$log" >&2; exit 1; }
  echo "check: running the suite under --sanitize=$sanitizer" >&2
  set +e
  # Leak checking stays off: XCTest and Foundation's file reading leak in the test harness
  # itself, not in pushseal. Every other ASan and TSan finding fails the run.
  ASAN_OPTIONS=detect_leaks=0 swift test --skip-build --sanitize="$sanitizer" --build-path "$path" > "$log" 2>&1
  rc=$?
  set -e
  grep -E '^(✘|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY: )' "$log" | head -40 >&2 || true
  # The first report in full (its stacks say where), kept for a failed run.
  if [ "$rc" -ne 0 ]; then
    sed -n '/^\(WARNING: ThreadSanitizer\|==[0-9]*==ERROR: AddressSanitizer\)/,/^SUMMARY: /p' "$log" | head -120 >&2 || true
    cp "$log" ".build/check-$sanitizer.log" && echo "check: the whole log is in .build/check-$sanitizer.log" >&2
  fi
  summary=$(grep -E '^[✔✘] Test run with' "$log" | tail -1)
  echo "check ($sanitizer): ${summary:-no summary} (exit $rc)"
  [ "$rc" -eq 0 ] || status=1
  rm -f "$log"
done
# The device kit's threaded parts (the adapter's per-request state and time-up, the delivery
# rule) under ThreadSanitizer, when swift-crypto is at hand.
if Scripts/device-test.sh --vendor >/dev/null 2>&1; then
  Scripts/device-test.sh --sanitize thread 2>/dev/null | tail -1 || status=1
fi
exit "$status"
