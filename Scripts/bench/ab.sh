#!/usr/bin/env bash
# Is this commit slower than an earlier one? Builds both release binaries and measures them
# alternately (A, B, A, B, …) on the same input, so the drift of a shared machine falls on
# both alike: one full Scripts/bench.sh run against another can differ by 30 % on rows whose
# code did not change. Prints each run, then the medians and B's rate over A's.
#   Scripts/bench/ab.sh COMMIT [RUNS]     (A = COMMIT, B = the working tree)
# Rows: encrypt --batch and receive --json -, 100,000 lines on one core each; receive
# --listen --plaintext under h2load (50,000 requests, 1 connection, 100 streams) on core 0
# with h2load on core 1, beside nghttpd on the same cores.
# A benchmark, not a test: it never fails on a number.
set -euo pipefail
# The same payloads go to the receiver again and again: each judged afresh, nothing remembered
# (an older binary ignores the variable).
export PUSHSEAL_SEEN=none
cd "$(dirname "$0")/../.."
base=${1:?usage: Scripts/bench/ab.sh COMMIT [RUNS]}
runs=${2:-7}
root=$PWD

need=()
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v nghttpd >/dev/null 2>&1 || [ -x /usr/sbin/nghttpd ] || need+=(nghttp2-server)
# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
install_missing bench ${need[@]+"${need[@]}"}
PATH=$PATH:/usr/sbin

flags=(-c release --static-swift-stdlib -Xswiftc -static-executable --product pushseal)
tree=$(mktemp -d)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree" "$work"' EXIT
git worktree add --detach --force "$tree" "$base" >/dev/null
echo "ab: building $base and the working tree" >&2
(cd "$tree" && swift build "${flags[@]}" >/dev/null)
(swift build "${flags[@]}" >/dev/null)
A="$(cd "$tree" && swift build "${flags[@]}" --show-bin-path)/pushseal"
B="$(swift build "${flags[@]}" --show-bin-path)/pushseal"

cd "$work"
"$B" keys init --keys Keys >/dev/null
export PUSHSEAL_KEYS="$work/Keys"
python3 - <<'PY'
import json
with open("alerts.jsonl", "w") as out:
    for i in range(100000):
        out.write(json.dumps({"title": f"Build {i} finished", "body": "pipeline green on main, 4m12s", "data": {"n": i}}) + "\n")
PY
"$B" encrypt --batch < alerts.jsonl > payloads.jsonl
"$B" encrypt -t 'Build 7 finished' -b 'pipeline green on main, 4m12s' > payload.json
token=$(printf 'ab%.0s' $(seq 32))
mkdir -p docroot/3/device && : > "docroot/3/device/$token"
# A provider token of the right shape, as bench.sh sends: the listener checks it, so every
# request is decrypted and recorded rather than refused.
provider=$(python3 -c "
import base64, json, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b'=').decode()
print(b(json.dumps({'alg': 'ES256', 'kid': 'ABC123DEFG'}).encode()) + '.' + b(json.dumps({'iss': 'DEF123GHIJ', 'iat': int(time.time())}).encode()) + '.' + b(bytes(64)))")

# Lines a second of one command over 100,000 lines, stdin from a file.
per_second() { # input command...
  local input=$1 started ended
  shift
  started=$(date +%s.%N)
  "$@" < "$input" > /dev/null
  ended=$(date +%s.%N)
  python3 -c "print(round(100000 / ($ended - $started)))"
}
# Requests/s of one h2load run; fails unless all 50,000 were answered 200.
h2rate() {
  taskset -c 1 h2load -n 50000 -c 1 -m 100 -d payload.json -H 'apns-topic: com.example.app' \
    -H "authorization: bearer $provider" "$1/3/device/$token" > h2load.out
  grep -q 'status codes: 50000 2xx' h2load.out || { echo "ab: not every request was answered 200:" >&2; cat h2load.out >&2; exit 1; }
  grep -oE '[0-9.]+ req/s' h2load.out | head -1 | cut -d' ' -f1
}
listener() { # binary
  rm -f listen.err
  taskset -c 0 "$1" receive --listen 127.0.0.1:0 --plaintext --json > /dev/null 2> listen.err &
  local pid=$! url=""
  for _ in $(seq 200); do url=$(grep -o 'http://[^ ]*' listen.err 2>/dev/null || true); [ -n "$url" ] && break; sleep 0.05; done
  h2rate "$url"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}
nghttpd_rate() {
  local port
  port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  taskset -c 0 nghttpd --no-tls -d docroot "$port" > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 200); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
  h2rate "http://127.0.0.1:$port"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

: > runs.txt
for run in $(seq "$runs"); do
  line="$(nghttpd_rate)"
  for bin in "$A" "$B"; do
    line="$line $(per_second alerts.jsonl taskset -c 0 "$bin" encrypt --batch --jobs 1)"
    line="$line $(per_second payloads.jsonl taskset -c 0 "$bin" receive --json --jobs 1 -)"
    line="$line $(listener "$bin")"
  done
  echo "$line" >> runs.txt
  echo "ab: run $run of $runs: nghttpd A(encrypt receive listen) B(encrypt receive listen): $line" >&2
done

python3 - "$base" runs.txt <<'PY'
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[2]) if line.strip()]
ng = [r[0] for r in rows]
names = ["encrypt --batch, 1 core, lines/s", "receive --json -, 1 core, lines/s", "receive --listen, requests/s"]
print(f"\nA = {sys.argv[1]}, B = the working tree; {len(rows)} alternating runs, medians (min–max)\n")
print("| measurement | A | B | B / A |")
print("| --- | --- | --- | --- |")
for i, name in enumerate(names):
    a = [r[1 + i] for r in rows]
    b = [r[4 + i] for r in rows]
    print(f"| {name} | {statistics.median(a):,.0f} ({min(a):,.0f}–{max(a):,.0f}) | {statistics.median(b):,.0f} ({min(b):,.0f}–{max(b):,.0f}) | {statistics.median(b) / statistics.median(a):.2f} |")
a = statistics.median([r[3] / r[0] for r in rows])
b = statistics.median([r[6] / r[0] for r in rows])
print(f"| receive --listen against nghttpd (median {statistics.median(ng):,.0f}/s) | {a:.2f} | {b:.2f} | {b / a:.2f} |")
PY
