#!/usr/bin/env bash
# Installs what pushseal needs on a fresh Debian machine, then builds the release binary.
#   Scripts/setup.sh              install missing packages, build .build/release/pushseal
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
# HTTP/2 on both sides: the --listen endpoint's server and send's client.
dpkg -s libnghttp2-dev >/dev/null 2>&1 || missing+=(libnghttp2-dev)
# keys export --qr: libqrencode draws the code, libpng writes --qr-png's image.
dpkg -s libqrencode-dev >/dev/null 2>&1 || missing+=(libqrencode-dev)
dpkg -s libpng-dev >/dev/null 2>&1 || missing+=(libpng-dev)
# webapp export/serve: the web app draws its pairing QR code with Debian's qrcode.js.
dpkg -s node-qrcode-generator >/dev/null 2>&1 || missing+=(node-qrcode-generator)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
install_missing setup ${missing[@]+"${missing[@]}"}

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift 6 toolchain is not on PATH" >&2; exit 1; }

# One self-contained binary: the Swift runtime, libcrypto, libssl and libnghttp2 linked in, so it starts in
# about a millisecond and can be copied to any Linux machine of the same architecture.
static="--static-swift-stdlib -Xswiftc -static-executable"
# The static link makes glibc warn that host lookup (getaddrinfo, which send uses to find
# the endpoint) and DSO loading need glibc's shared NSS modules at run time: they are loaded
# from the machine's own glibc, as for any static program that looks up names, and /etc/hosts
# and DNS work wherever glibc is installed. Those lines are dropped here; any other is shown.
# shellcheck disable=SC2086 # flags are word lists
for product in pushseal pushseal-bench; do
  swift build -c release $static ${SWIFT_FLAGS:-} --product "$product" 2>&1 \
    | grep -v -E "warning: Using '(gethostbyname|getaddrinfo|dlopen)' in statically linked applications" >&2 \
    || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "setup: the release build of $product failed" >&2; exit 1; }
done
# Debian ships libqrencode as a shared library only: QR codes are drawn by a dynamically
# linked program of their own, run by pushseal from beside its binary. pushseal itself
# stays static, so no other command pays for loading it.
for companion in pushseal-qr; do
  # shellcheck disable=SC2086
  swift build -c release --static-swift-stdlib ${SWIFT_FLAGS:-} --product "$companion" --build-path .build/transport >&2 \
    || { echo "setup: the release build of $companion failed" >&2; exit 1; }
done
# shellcheck disable=SC2086
bin="$(swift build -c release $static ${SWIFT_FLAGS:-} --show-bin-path)"
for companion in pushseal-qr; do
  cp ".build/transport/release/$companion" "$bin/$companion.tmp" && mv "$bin/$companion.tmp" "$bin/$companion"
done
echo "setup: built $bin/pushseal (and beside it pushseal-qr for keys export --qr)" >&2
