#!/usr/bin/env bash
# The listener's soak and fault rows for Scripts/bench.sh (or alone):
#   Scripts/bench/soak.sh PUSHSEAL [SECONDS]
# - soak: SECONDS (600 by default) of h2load at a fixed rate (200 requests/s, a tenth of them
#   held 5 s by a slow extension) beside 200 idle connections that only PING: peak RSS, RSS
#   at the end, and the listener's CPU per request over the first and the last minute (flat
#   means nothing leaks into the per-request cost).
# - descriptors: the listener under a limit of 128 descriptors with 300 connections held
#   open: the time a fresh request takes to be answered.
# - stalled stdout: records into a pipe nobody reads, 20,000 refused requests to fill it:
#   the time a fresh request takes to be answered (a 503), and SIGTERM to exit.
# - slow extension: 20,000 requests at once to an extension that never answers: how many are
#   answered 503 past the 16,384 waiting, the records written, and the peak RSS.
# Prints `row: value` lines. A benchmark, not a test: it never fails on a number.
set -euo pipefail
# The same payloads go to the receiver again and again: each judged afresh, nothing remembered
# (an older binary ignores the variable).
export PUSHSEAL_SEEN=none
pushseal=$1
seconds=${2:-600}
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../../Tests/PushSealCLITests/Reference/hostile_peers.py"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cd "$work"
"$pushseal" keys init --keys Keys >/dev/null
device=$(printf 'ab%.0s' $(seq 32))
token=$(python3 - <<'PY'
import base64, json, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
print(b(json.dumps({"alg": "ES256", "kid": "ABC123DEFG"}).encode()) + "." + b(json.dumps({"iss": "DEF123GHIJ", "iat": int(time.time())}).encode()) + "." + b(bytes([7]) * 64))
PY
)
echo '{"aps":{"alert":{"title":"fast","body":"b"},"mutable-content":1}}' > fast.json
echo '{"aps":{"alert":{"title":"slow","body":"b"},"mutable-content":1}}' > slow.json
cat > extension.sh <<'SH'
#!/bin/sh
request=$(cat)
case "$request" in *'"slow"'*) sleep 5 ;; esac
echo '{"title":"seen","body":"by the soak extension"}'
SH
chmod +x extension.sh
# Starts a listener in this shell (so its pid can be waited on) and sets $listener and $url.
start_listener() { # stdout-file command...
  local out=$1; shift
  : > err
  "$@" 2> err > "$out" &
  listener=$!
  pids+=("$listener")
  for _ in $(seq 200); do grep -q 'listening on' err 2>/dev/null && break; sleep 0.05; done
  url=$(grep -o 'http://[^ ]*' err)
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
request_json=$(python3 -c "
import json,sys
print(json.dumps({'headers':[[':method','POST'],[':scheme','http'],[':path','/3/device/$device'],[':authority','localhost'],['apns-topic','com.example.app'],['authorization','bearer $token']],'body':open('fast.json').read()}))")

# Soak.
start_listener records.jsonl "$pushseal" receive --listen 0 --plaintext --json --extension ./extension.sh
port=${url##*:}
python3 "$peers" idle-crowd 127.0.0.1 "$port" 200 "$seconds" "$request_json" > crowd.json &
pids+=($!)
h2load -c 4 -m 10 --rps 45 -D "$seconds" -H "apns-topic: com.example.app" -H "authorization: bearer $token" \
  -d fast.json "$url/3/device/$device" > fast.txt 2>&1 &
pids+=($!)
h2load -c 1 -m 10 --rps 20 -D "$seconds" -H "apns-topic: com.example.app" -H "authorization: bearer $token" \
  -d slow.json "$url/3/device/$device" > slow.txt 2>&1 &
pids+=($!)
window=$(( seconds < 120 ? seconds / 4 : 60 ))
sleep 5
cpu0=$(cpu "$listener"); n0=$(wc -l < records.jsonl)
sleep "$window"
cpu1=$(cpu "$listener"); n1=$(wc -l < records.jsonl)
sleep $(( seconds - 2 * window - 10 > 0 ? seconds - 2 * window - 10 : 0 ))
cpu2=$(cpu "$listener"); n2=$(wc -l < records.jsonl)
sleep "$window"
cpu3=$(cpu "$listener"); n3=$(wc -l < records.jsonl)
end_rss=$(rss "$listener" VmRSS); peak_rss=$(rss "$listener" VmHWM)
ticks=$(getconf CLK_TCK)
per() { python3 -c "print(f'{($2 - $1) / $ticks / max(1, $4 - $3) * 1e6:.1f} us')"; }
echo "soak ${seconds}s, 200 idle connections, 200 req/s (a tenth held 5 s): peak RSS ${peak_rss} kB, RSS at the end ${end_rss} kB"
echo "soak CPU per request: first ${window}s $(per "$cpu0" "$cpu1" "$n0" "$n1"), last ${window}s $(per "$cpu2" "$cpu3" "$n2" "$n3")"
wait "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
grep -h 'status codes' fast.txt slow.txt | sed 's/^/soak h2load /'
kill -TERM "$listener"; wait "$listener" 2>/dev/null || true

# Descriptors: 128 of them, 300 connections held open, then one fresh request.
start_listener /dev/null prlimit --nofile=128:128 "$pushseal" receive --listen 0 --plaintext --keys Keys
python3 "$peers" idle-crowd 127.0.0.1 "${url##*:}" 300 3 "$request_json" > /dev/null &
pids+=($!)
sleep 1.5
curl -s -o /dev/null -w "descriptors (limit 128, 300 connections held): a fresh request answered %{http_code} in %{time_total} s\n" \
  --max-time 20 --http2-prior-knowledge -H "apns-topic: com.example.app" -H "authorization: bearer $token" \
  --data-binary @fast.json "$url/3/device/$device"
wait "${pids[-1]}" || true
kill -TERM "$listener"; wait "$listener" 2>/dev/null || true

# Stalled stdout: a FIFO this shell holds open and never reads.
mkfifo stalled
exec 3<>stalled
start_listener stalled "$pushseal" receive --listen 0 --plaintext --json --keys Keys
h2load -n 20000 -c 4 -m 50 -H "apns-topic: com.example.app" -H "authorization: bearer $token" -d fast.json "$url/3/devices/x" > /dev/null 2>&1
curl -s -o /dev/null -w "stalled stdout (20,000 records backed up): a fresh request answered %{http_code} in %{time_total} s\n" \
  --max-time 20 --http2-prior-knowledge -H "apns-topic: com.example.app" -H "authorization: bearer $token" \
  --data-binary @fast.json "$url/3/device/$device"
started=$(date +%s.%N)
kill -TERM "$listener"
status=0; wait "$listener" || status=$?
echo "stalled stdout: SIGTERM to exit $(python3 -c "print(f'{$(date +%s.%N) - $started:.2f}')") s, status $status"
exec 3>&-

# A slow extension under a burst: past 16,384 notifications waiting, 503, and memory bounded.
cat > never.sh <<'SH'
#!/bin/sh
exec sleep 100
SH
chmod +x never.sh
start_listener slow.jsonl "$pushseal" receive --listen 0 --plaintext --json --extension ./never.sh --budget 5s
h2load -n 20000 -c 4 -m 50 -H "apns-topic: com.example.app" -H "authorization: bearer $token" -d fast.json "$url/3/device/$device" \
  | grep 'status codes' | sed 's/^ */slow extension, 20,000 at once: h2load /'
peak=$(rss "$listener" VmHWM)
kill -TERM "$listener"; wait "$listener" 2>/dev/null || true
echo "slow extension, 20,000 at once: $(grep -c '' slow.jsonl) records, $(grep -c '"http-status":503' slow.jsonl || true) answered 503, peak RSS $((peak / 1024)) MB"
