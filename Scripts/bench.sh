#!/usr/bin/env bash
# Side-by-side figures for pushseal, measured in one run on this machine: a C tool (jose),
# the same work in Python (Scripts/bench/ps1_python.py) and OpenSSL's own AES-GCM ceiling.
# Prints one table of medians. A benchmark, not a test: it never fails on a number.
#   Scripts/bench.sh            (BENCH_LINES=100000 BENCH_FILES=10000 BENCH_RUNS=5 by default)
set -euo pipefail
cd "$(dirname "$0")/.."

lines=${BENCH_LINES:-100000}
files=${BENCH_FILES:-10000}
runs=${BENCH_RUNS:-5}

need=()
command -v jose >/dev/null 2>&1 || need+=(jose)
command -v hyperfine >/dev/null 2>&1 || need+=(hyperfine)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
[ -x /usr/bin/time ] || need+=(time)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
# shellcheck source=Scripts/python-env.sh
. Scripts/python-env.sh

Scripts/setup.sh
bin="$(swift build -c release --static-swift-stdlib -Xswiftc -static-executable ${SWIFT_FLAGS:-} --show-bin-path)"
pushseal="$bin/pushseal"
python_ps1="$PWD/Scripts/bench/ps1_python.py"
cores=$(nproc)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$pushseal" keys init --keys Keys >/dev/null
export PUSHSEAL_KEYS="$work/Keys"
echo '{"title":"Disk on db-3","body":"91% used on /var"}' > alert.json
jose jwk gen -i '{"alg":"A256GCM"}' -o key.jwk
python3 - "$lines" <<'PY'
import json, sys
with open("alerts.jsonl", "w") as out:
    for i in range(int(sys.argv[1])):
        out.write(json.dumps({"title": f"Build {i} finished", "body": "pipeline green on main, 4m12s", "data": {"n": i}}) + "\n")
PY
"$pushseal" encrypt --batch < alerts.jsonl > payloads.jsonl

# Median wall time of a command over $runs runs, stdin from a file, stdout discarded.
median() { # input-file command...
  python3 - "$runs" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, source, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times = []
for _ in range(runs):
    with open(source, "rb") as stdin:
        started = time.perf_counter()
        subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
print(statistics.median(times))
PY
}
rate() { python3 -c "print(f'{$1 / $2:,.0f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.1f}×')"; }

echo "bench: one alert from a shell" >&2
hyperfine -N --warmup 5 --runs 40 --export-json one.json \
  "$pushseal encrypt -t 'Disk on db-3' -b '91% used on /var'" \
  "jose jwe enc -I alert.json -k key.jwk -c -o /dev/null" \
  "python3 $python_ps1 encrypt $work/Keys 'Disk on db-3' '91% used on /var'" >/dev/null
read -r one_pushseal one_jose one_python < <(python3 -c "
import json; r = json.load(open('one.json'))['results']
print(' '.join(f\"{x['median'] * 1000:.2f}\" for x in r))")

echo "bench: bulk encrypt and receive, $lines lines" >&2
enc1=$(median alerts.jsonl taskset -c 0 "$pushseal" encrypt --batch --jobs 1)
encn=$(median alerts.jsonl "$pushseal" encrypt --batch --jobs "$cores")
encpy=$(median alerts.jsonl taskset -c 0 python3 "$python_ps1" batch "$work/Keys")
rec1=$(median payloads.jsonl taskset -c 0 "$pushseal" receive --json --jobs 1 -)
recn=$(median payloads.jsonl "$pushseal" receive --json --jobs "$cores" -)
recpy=$(median payloads.jsonl taskset -c 0 python3 "$python_ps1" receive "$work/Keys")
plain_bytes=$("$pushseal" decrypt <(head -1 payloads.jsonl) | wc -c)
pad=$(( (plain_bytes + 31) / 32 * 32 ))
ceiling=$(taskset -c 0 openssl speed -evp aes-256-gcm -bytes "$pad" -seconds 2 2>/dev/null | awk '/^AES-256-GCM/ { sub(/k$/, "", $2); printf "%.0f", $2 * 1000 / '"$pad"' }')

echo "bench: receiver footprint" >&2
rss_stream=$( { /usr/bin/time -f %M "$pushseal" receive --json - < payloads.jsonl > /dev/null; } 2>&1 | tail -1)
head -n $((lines / 10)) payloads.jsonl > tenth.jsonl
rss_tenth=$( { /usr/bin/time -f %M "$pushseal" receive --json - < tenth.jsonl > /dev/null; } 2>&1 | tail -1)
mkdir spool
split -l 1 -a 5 --additional-suffix=.json <(head -n "$files" payloads.jsonl) spool/n
rss_watch=$( { /usr/bin/time -f %M "$pushseal" receive --json --watch spool --once > watch.jsonl; } 2>&1 | tail -1)

echo "bench: deadline accuracy" >&2
deadline=$("$bin/pushseal-bench" deadline 200 100)
for _ in $(seq 200); do echo '{"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1}}'; done > eligible.jsonl
"$pushseal" receive --json --budget 100ms --extension 'exec sleep 60' - < eligible.jsonl > process.jsonl
process_late=$(python3 -c "
import json
late = sorted(json.loads(l)['elapsed_ms'] - 100 for l in open('process.jsonl'))
pick = lambda f: late[min(len(late) - 1, int(len(late) * f + 0.999) - 1)]
print(f'p50 {pick(0.5):.2f} ms, p99 {pick(0.99):.2f} ms, max {late[-1]:.2f} ms')")

k=$((lines / 1000))k
cat <<TABLE

pushseal benchmark — $(date -u +%Y-%m-%d), $cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), medians

| measurement | pushseal | jose (C) | Python cryptography | ratio |
| --- | --- | --- | --- | --- |
| one alert from a shell, wall time | ${one_pushseal} ms | ${one_jose} ms | ${one_python} ms | $(ratio "$one_python" "$one_pushseal") faster than Python; jose takes $(ratio "$one_jose" "$one_pushseal") as long |
| encrypt --batch, payloads/s, 1 core | $(rate "$lines" "$enc1") | | $(rate "$lines" "$encpy") | $(ratio "$encpy" "$enc1") the Python rate |
| encrypt --batch, payloads/s, $cores cores | $(rate "$lines" "$encn") | | | $(ratio "$enc1" "$encn") the 1-core rate |
| receive --json -, deliveries/s, 1 core | $(rate "$lines" "$rec1") | | $(rate "$lines" "$recpy") | $(ratio "$recpy" "$rec1") the Python rate |
| receive --json -, deliveries/s, $cores cores | $(rate "$lines" "$recn") | | | $(ratio "$rec1" "$recn") the 1-core rate |
| AES-256-GCM ceiling at ${pad} bytes, 1 core (openssl speed) | $(python3 -c "print(f'{$ceiling:,}')") ops/s | | | |
| receive peak RSS, $k payloads on stdin | $((rss_stream / 1024)) MB | | | $((rss_tenth / 1024)) MB at $((lines / 10000))k: flat; NSE cap 24 MB |
| receive --watch peak RSS, $files files | $((rss_watch / 1024)) MB | | | |

Deadline lateness past a 100 ms budget, 200 notifications in flight at once:
$(printf '%s\n' "$deadline" | sed 's/^/  /')
  --extension that never answers (killed at the deadline, original shown)	200	$process_late

Commands: pushseal encrypt -t … -b … | jose jwe enc -I alert.json -k key.jwk -c |
python3 Scripts/bench/ps1_python.py encrypt|batch|receive; 1-core rows run under taskset -c 0.
TABLE
