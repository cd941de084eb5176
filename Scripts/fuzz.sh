#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time and prints executions and coverage.
#   Scripts/fuzz.sh [SECONDS]      (default 60 per target)
# Targets and seeds: Tests/Fuzz/. Crashes land in .build/fuzz/crashes/ and fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

Scripts/setup.sh >/dev/null 2>&1 || Scripts/setup.sh
out=.build/fuzz
mkdir -p "$out/crashes"
flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -Onone -package-name pushseal -I "$out" -I Sources/COpenSSL -I Sources/CSystem/include
       -I Sources/CHPKE/include -I Sources/CNGHTTP2)

# The product's modules, instrumented; -enable-testing lets targets reach internal parsers.
build_module() { # name sources...
  local name=$1; shift
  swiftc "${flags[@]}" -enable-testing -wmo -c -module-name "$name" \
    -emit-module -emit-module-path "$out/$name.swiftmodule" "$@" -o "$out/$name.o" 2> "$out/$name.log" \
    || { cat "$out/$name.log" >&2; exit 1; }
}
echo "fuzz: building instrumented modules" >&2
# The C targets, built with the toolchain's clang: the system calls Swift cannot make
# (CSystem) and HPKE's curve and HKDF code (CHPKE).
clang=$(dirname "$(command -v swiftc)")/clang
"$clang" -c -O1 -fsanitize=fuzzer-no-link,address -I Sources/CSystem/include Sources/CSystem/csystem.c -o "$out/csystem.o"
"$clang" -c -O1 -fsanitize=fuzzer-no-link,address -I Sources/CHPKE/include Sources/CHPKE/chpke.c -o "$out/chpke.o"
build_module Locking Sources/Locking/*.swift
build_module PushSealJSON Sources/PushSealJSON/*.swift
build_module NotificationText Sources/NotificationText/*.swift
build_module EnvelopeFormat Sources/EnvelopeFormat/*.swift
build_module SeenMessages Sources/SeenMessages/*.swift
build_module SealCrypto Sources/SealCrypto/*.swift
build_module MonotonicTime Sources/MonotonicTime/*.swift
# HTTP/2 on both sides: the listener under --listen, the client under send.
build_module HTTP2 Sources/HTTP2/*.swift
build_module PushSeal $(find Sources/PushSeal -name '*.swift' | sort)
build_module PushSealSend $(find Sources/PushSealSend -name '*.swift' | sort)
build_module PushSealReceiver $(find Sources/PushSealReceiver -name '*.swift' | sort)
# The web app's files are embedded by SwiftPM (embedInCode) in a source of its own, which
# setup.sh's release build has written.
build_module PushSealWebApp Sources/PushSealWebApp/*.swift "$(ls .build/*/release/PushSealWebApp.build/DerivedSources/embedded_resources.swift | head -1)"
build_module PushSealCLI $(find Sources/PushSealCLI -name '*.swift' ! -name main.swift | sort)

targets=(envelope receive keyring arguments http1)
status=0
printf '%-10s %12s %10s %8s %8s  %s\n' target executions exec/s cov ft result
for target in "${targets[@]}"; do
  source="Tests/Fuzz/Fuzz$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}.swift"
  swiftc "${flags[@]}" "$source" "$out/Locking.o" "$out/PushSealJSON.o" "$out/NotificationText.o" "$out/EnvelopeFormat.o" "$out/SeenMessages.o" "$out/SealCrypto.o" "$out/MonotonicTime.o" "$out/HTTP2.o" "$out/PushSeal.o" "$out/PushSealSend.o" "$out/PushSealReceiver.o" "$out/PushSealWebApp.o" "$out/PushSealCLI.o" "$out/csystem.o" "$out/chpke.o" \
    -lnghttp2 -lssl -lcrypto \
    -o "$out/fuzz-$target" 2> "$out/fuzz-$target.log" || { cat "$out/fuzz-$target.log" >&2; exit 1; }
  work="$out/corpus/$target"
  mkdir -p "$work"
  # New inputs go to the work corpus; the committed seeds are only read.
  set +e
  "$out/fuzz-$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$out/crashes/$target-" "$work" "Tests/Fuzz/Corpus/$target" > "$out/fuzz-$target.run" 2>&1
  rc=$?
  set -e
  runs=$(awk '/^stat::number_of_executed_units/ {print $2}' "$out/fuzz-$target.run")
  rate=$(awk '/^stat::average_exec_per_sec/ {print $2}' "$out/fuzz-$target.run")
  last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|REDUCE|NEW|pulse|INITED)' "$out/fuzz-$target.run" | tail -1 || true)
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<< "$last")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<< "$last")
  if [ "$rc" -eq 0 ]; then result=clean; else result="FOUND (see $out/fuzz-$target.run)"; status=1; fi
  printf '%-10s %12s %10s %8s %8s  %s\n' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
exit "$status"
