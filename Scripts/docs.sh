#!/usr/bin/env bash
# DocC documentation for the library products, as static HTML:
#   Scripts/docs.sh            → .build/docs/PushSeal (and .build/docs/PushSealKit with swift-crypto at hand)
# Every symbol link and every warning fails the build (`--warnings-as-errors`), so CI catches
# a catalog that names a symbol the code no longer has. Open index.html through any static
# file server (the pages are made for static hosting).
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/docs
mkdir -p "$out"

# Converts the catalog of `module` with the symbol graphs in `graphs` (a folder SwiftPM
# wrote), keeping only that module's graphs so its links are judged against its own API.
convert() { # module catalog graphs
  local module=$1 catalog=$2 graphs=$3
  local only
  only=$(mktemp -d)
  cp "$graphs/$module".symbols.json "$only"/
  cp "$graphs/$module"@*.symbols.json "$only"/ 2>/dev/null || true
  rm -rf "${out:?}/$module"
  docc convert "$catalog" --additional-symbol-graph-dir "$only" --fallback-display-name "$module" \
    --fallback-bundle-identifier "dev.pushseal.$module" --output-path "$out/$module" \
    --transform-for-static-hosting --hosting-base-path "$module" --warnings-as-errors > "$only/log" 2>&1 \
    || { cat "$only/log" >&2; rm -rf "$only"; echo "docs: $module: the catalog has warnings (above)" >&2; return 1; }
  rm -rf "$only"
  echo "docs: $module → $out/$module ($(find "$out/$module/data/documentation" -name '*.json' | wc -l) pages)"
}

# PushSeal, the library product of the main package.
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift package dump-symbol-graph --minimum-access-level public > "$build_log" 2>&1 || { cat "$build_log" >&2; exit 1; }
graphs=$(dirname "$(find .build -path '*symbolgraph/PushSeal.symbols.json' -newer Package.swift | head -1)")
convert PushSeal Sources/PushSeal/PushSeal.docc "$graphs"
convert PushSealSend Sources/PushSealSend/PushSealSend.docc "$graphs"

# PushSealKit, built on swift-crypto with the Apple API transcription (so its Apple adapter
# is documented too), when swift-crypto is at hand (see Scripts/device-test.sh).
if Scripts/device-test.sh --vendor >/dev/null 2>&1; then
  # The device tests' build folder, so a build they made is reused.
  kit=.build/device
  SWIFTCI_USE_LOCAL_DEPS=1 PUSHSEAL_SWIFT_CRYPTO="$(Scripts/device-test.sh --crypto)" PUSHSEAL_APPLE_TRANSCRIPTION=1 \
    swift package --scratch-path "$kit" dump-symbol-graph --minimum-access-level public > "$build_log" 2>&1 \
    || { cat "$build_log" >&2; exit 1; }
  graphs=$(dirname "$(find "$kit" -path '*symbolgraph/PushSealKit.symbols.json' | head -1)")
  convert PushSealKit Sources/PushSealKit/PushSealKit.docc "$graphs"
else
  echo "docs: PushSealKit not built (no swift-crypto: see Scripts/device-test.sh)"
fi
