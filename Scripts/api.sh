#!/usr/bin/env bash
# The public API of the library products against its committed baseline (api/*.json), made
# by swift-api-digester (in the toolchain). A declaration removed, made `package`, or changed
# is a break, named and failed; an addition fails too, until the baseline takes it, so the
# baseline is always the API as shipped.
#   Scripts/api.sh            check (CI runs this)
#   Scripts/api.sh update     write the baseline anew, after an intended change (commit it)
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(PushSeal PushSealSend SealCrypto PushSealJSON EnvelopeFormat NotificationText)
mode=${1:-check}
log=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$log" "$work"' EXIT
# shellcheck disable=SC2086 # SWIFT_FLAGS is a list of flags
swift build ${SWIFT_FLAGS:-} > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
bin=$(swift build --show-bin-path)
# The modules as built, and every C target's module map.
search=(-I "$bin/Modules")
for map in Sources/C*/module.modulemap Sources/C*/include/module.modulemap; do
  [ -f "$map" ] && search+=(-I "$(dirname "$map")")
done

# The digester's dump holds `package` declarations too (marked isInternal) and the module's
# imports: only what a user of the product can name is kept, in a stable, diffable form.
public_only() { # dump output
  python3 - "$1" "$2" <<'PY'
import json, sys
def keep(node):
    if isinstance(node, dict):
        if node.get("isInternal") or node.get("declKind") == "Import":
            return None
        return {k: [c for c in map(keep, v) if c is not None] if isinstance(v, list) else keep(v) for k, v in node.items()}
    return node
with open(sys.argv[2], "w") as out:
    json.dump(keep(json.load(open(sys.argv[1]))), out, indent=1, sort_keys=True)
    out.write("\n")
PY
}

status=0
mkdir -p api
# Checks (or, with update, writes) one module's baseline, finding modules through "$@".
check() { # module search-flags...
  local module=$1
  shift
  # A module that cannot be loaded would dump as empty, and look like every declaration removed.
  if ! swift-api-digester -dump-sdk -module "$module" "$@" -avoid-location -avoid-tool-args -o "$work/$module.full.json" > "$log" 2>&1 \
    || grep -q -E 'error:|Failed to load module' "$log"; then
    cat "$log" >&2
    echo "api: $module: swift-api-digester could not load it" >&2
    exit 1
  fi
  public_only "$work/$module.full.json" "$work/$module.json"
  if [ "$mode" = update ]; then
    cp "$work/$module.json" "api/$module.json"
    echo "api: $module: baseline written to api/$module.json"
    return
  fi
  if [ ! -f "api/$module.json" ]; then
    echo "api: $module has no baseline (Scripts/api.sh update writes it)" >&2
    status=1
    return
  fi
  if cmp -s "api/$module.json" "$work/$module.json"; then
    echo "api: $module matches its baseline"
    return
  fi
  breaks=$(swift-api-digester -diagnose-sdk -input-paths "api/$module.json" -input-paths "$work/$module.json" 2>&1 | grep -v -E '^$|^/\*' || true)
  if [ -n "$breaks" ]; then
    echo "api: $module: the public API broke against api/$module.json:" >&2
    printf '%s\n' "$breaks" | sed 's/^/  /' >&2
  else
    echo "api: $module: public declarations were added; if intended, run Scripts/api.sh update and commit api/$module.json" >&2
    diff <(grep '"printedName"' "api/$module.json" | sort -u) <(grep '"printedName"' "$work/$module.json" | sort -u) | grep '^>' | head -20 | sed 's/^> */  + /' >&2 || true
  fi
  status=1
}

for module in "${modules[@]}"; do check "$module" "${search[@]}"; done

# PushSealKit, as Scripts/device-test.sh built it (on swift-crypto, with the Apple API
# transcription): its modules, and swift-crypto's C module maps.
kit=.build/device/debug/Modules
if [ -f "$kit/PushSealKit.swiftmodule" ]; then
  kit_search=(-I "$kit")
  while IFS= read -r map; do kit_search+=(-I "$(dirname "$map")"); done < <(find .build/vendor/swift-crypto Sources -name module.modulemap)
  check PushSealKit "${kit_search[@]}"
else
  echo "api: PushSealKit not built, not checked (Scripts/device-test.sh builds it)"
fi
exit "$status"
