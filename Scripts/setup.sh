#!/usr/bin/env bash
# Installs what pushseal needs on a fresh Debian machine, then builds the release binary.
#   Scripts/setup.sh              install missing packages, build .build/release/pushseal
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift 6 toolchain is not on PATH" >&2; exit 1; }

# One self-contained binary: the Swift runtime and libcrypto linked in, so it starts in
# about a millisecond and can be copied to any Linux machine of the same architecture.
static="--static-swift-stdlib -Xswiftc -static-executable"
# shellcheck disable=SC2086 # flags are word lists
swift build -c release $static ${SWIFT_FLAGS:-} >&2
# shellcheck disable=SC2086
echo "setup: built $(swift build -c release $static ${SWIFT_FLAGS:-} --show-bin-path)/pushseal" >&2
