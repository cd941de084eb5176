#!/usr/bin/env bash
# The device kit's resident memory on Linux: a package of its own that depends on pushseal by
# path (as an app does) opens one ps1 payload 1, 1,000 and 100,000 times and prints its
# VmRSS/VmHWM before and after. Built in release on the vendored swift-crypto.
#   Scripts/bench/kit-memory.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
vendor=$(Scripts/device-test.sh --vendor) || { echo "kit-memory: no vendored swift-crypto (see Scripts/device-test.sh)"; exit 1; }
mkdir -p .build/vendor
for archive in "$vendor"/swift-crypto-*.tar.xz "$vendor"/swift-asn1-*.tar.xz; do
  name=$(basename "$archive" | sed -E 's/-[0-9].*//')
  [ -f ".build/vendor/$name/Package.swift" ] || tar -xJf "$archive" -C .build/vendor
done
probe=.build/kit-memory
mkdir -p "$probe/Sources/MemProbe" "$probe/deps"
ln -sfn "$PWD" "$probe/deps/pushseal"
cp Scripts/bench/kit-memory/main.swift "$probe/Sources/MemProbe/main.swift"
cat > "$probe/Package.swift" <<'MANIFEST'
// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "MemProbe", dependencies: [.package(path: "deps/pushseal")],
    targets: [.executableTarget(name: "MemProbe", dependencies: [.product(name: "PushSealKit", package: "pushseal")])])
MANIFEST
SWIFTCI_USE_LOCAL_DEPS=1 PUSHSEAL_SWIFT_CRYPTO="$PWD/.build/vendor/swift-crypto" swift build -c release --package-path "$probe" >&2
swift build --product pushseal >&2
pushseal=.build/debug/pushseal
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pushseal" keys init --keys "$work/K" >/dev/null
share=$("$pushseal" keys export --keys "$work/K")
"$pushseal" encrypt --keys "$work/K" -t "Deploy finished" -b "api-7 is live on 12 hosts" --data run=7 > "$work/one.json"
for count in 1 1000 100000; do
  "$probe/.build/release/MemProbe" "$share" "$count" < "$work/one.json"
done
