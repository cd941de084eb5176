#!/usr/bin/env bash
# Installs what pushseal needs on a fresh Debian machine, then builds the release binary.
#   Scripts/setup.sh              install missing packages, build .build/release/pushseal
#   SWIFT_FLAGS="-Xswiftc -warnings-as-errors" Scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
# The --listen endpoint's HTTP/2, and send's transport.
dpkg -s libnghttp2-dev >/dev/null 2>&1 || missing+=(libnghttp2-dev)
dpkg -s libcurl4-openssl-dev >/dev/null 2>&1 || missing+=(libcurl4-openssl-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
install_missing setup ${missing[@]+"${missing[@]}"}

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift 6 toolchain is not on PATH" >&2; exit 1; }

# One self-contained binary: the Swift runtime, libcrypto, libssl and libnghttp2 linked in, so it starts in
# about a millisecond and can be copied to any Linux machine of the same architecture.
static="--static-swift-stdlib -Xswiftc -static-executable"
# The static link makes glibc warn that libcrypto's host lookup and DSO loading (BIO_lookup,
# dlopen) would need glibc's shared libraries at run time. pushseal never calls those paths
# (it only seals and opens), so those lines are dropped here; any other line is shown.
# shellcheck disable=SC2086 # flags are word lists
for product in pushseal pushseal-bench; do
  swift build -c release $static ${SWIFT_FLAGS:-} --product "$product" 2>&1 \
    | grep -v -E "warning: Using '(gethostbyname|getaddrinfo|dlopen)' in statically linked applications" >&2 \
    || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "setup: the release build of $product failed" >&2; exit 1; }
done
# send's HTTP/2 transport runs libcurl, which Debian cannot link statically (its static
# dependencies include Kerberos and LDAP): it is its own, dynamically linked program, run
# by `pushseal send` from beside the pushseal binary. pushseal itself stays static, so no
# other command pays for loading libcurl.
# shellcheck disable=SC2086
swift build -c release --static-swift-stdlib ${SWIFT_FLAGS:-} --product pushseal-curl --build-path .build/transport >&2 \
  || { echo "setup: the release build of pushseal-curl failed" >&2; exit 1; }
# shellcheck disable=SC2086
bin="$(swift build -c release $static ${SWIFT_FLAGS:-} --show-bin-path)"
cp .build/transport/release/pushseal-curl "$bin/pushseal-curl.tmp" && mv "$bin/pushseal-curl.tmp" "$bin/pushseal-curl"
echo "setup: built $bin/pushseal (and pushseal-curl beside it, for send)" >&2
