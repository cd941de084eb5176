#!/usr/bin/env bash
# send --webpush measured: per core, beside pywebpush on the same machine and messages, beside
# the floor RFC 8291 sets (one key generation and one ECDH per message), and its memory at
# 100,000 subscriptions across 3 push services. The push services are pushseal-bench's,
# which only answer 201 (the tests' Python stand-in opens every message and would be what is
# measured). Called by Scripts/bench.sh; on its own:
#   Scripts/bench/webpush.sh       (BENCH_WEBPUSH=100000 subscriptions, BENCH_PYWEBPUSH=2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${BENCH_WEBPUSH:-100000}
python_count=${BENCH_PYWEBPUSH:-2000}
bin=$PWD/.build/release/pushseal
bench=$PWD/.build/release/pushseal-bench
[ -x "$bin" ] && [ -x "$bench" ] || Scripts/setup.sh >/dev/null
[ -x "$bench" ] || swift build -c release --product pushseal-bench >/dev/null
# shellcheck source=Scripts/python-env.sh
. Scripts/python-env.sh
python3 -c "import pywebpush" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check pywebpush
work=$(mktemp -d)
service=""
cleanup() { [ -n "$service" ] && kill "$service" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

"$bin" keys init --keys K >/dev/null
"$bin" keys vapid --keys K >/dev/null
mkfifo service.in
# The services on the second core, the senders on the first.
taskset -c 1 "$bench" push-service "$work" 3 < service.in > service.out &
service=$!
exec 3> service.in
until grep -q '^ports' service.out 2>/dev/null; do sleep 0.1; done
read -r -a ports <<< "$(sed -n 's/^ports //p' service.out)"

# The subscriptions: $count across the three services, 1,000 browsers' keys among them.
python3 - "$count" "${ports[@]}" > subscriptions.jsonl <<'PY'
import base64, json, os, sys
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import serialization
count, ports = int(sys.argv[1]), sys.argv[2:]
b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
keys = [b64(ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)) for _ in range(1000)]
out = sys.stdout
for n in range(count):
    out.write(json.dumps({"endpoint": f"https://127.0.0.1:{ports[n % len(ports)]}/push/{n}",
                          "keys": {"p256dh": keys[n % 1000], "auth": b64(os.urandom(16))}}, separators=(",", ":")) + "\n")
PY

echo "bench: send --webpush, $count subscriptions over 3 push services, one core" >&2
/usr/bin/time -f "%e %M" -o send.time taskset -c 0 "$bin" send --webpush subscriptions.jsonl --vapid-subject mailto:bench@pushseal.dev \
  --keys K --cacert cert.pem -t "Deploy finished" -b "api-7 is live" > results.txt
ok=$(grep -c '^ok ' results.txt || true)
read -r seconds rss_kb < send.time
send_rate=$(python3 -c "print($count / $seconds)")

echo "bench: pywebpush, $python_count of them, one core" >&2
"$bin" encrypt --web --keys K -t "Deploy finished" -b "api-7 is live" > message.json
python_line=$(taskset -c 0 python3 "$OLDPWD/Scripts/bench/webpush_python.py" subscriptions.jsonl "$python_count" message.json K/vapid-key.pem)
python_rate=$(sed -E 's/^pywebpush ([0-9]+)\/s.*/\1/' <<< "$python_line")

echo "bench: OpenSSL's floor, one key generation and one ECDH per message" >&2
openssl speed -seconds 2 ecdhp256 ecdsap256 > speed.out 2>/dev/null
ecdh=$(awk '/ecdh \(nistp256\)/ { printf "%.0f", $NF }' speed.out)
ecsign=$(awk '/ecdsa \(nistp256\)/ { printf "%.0f", $(NF - 1) }' speed.out)

exec 3>&-
wait "$service" || true
service=""
served=$(sed -n 's/^requests //p' service.out)

python3 - <<PY
send, py, sign, ecdh = $send_rate, $python_rate, $ecsign, $ecdh
floor = 1 / (1 / sign + 1 / ecdh)
rows = [
    ("send --webpush, 1 core, $count subscriptions over 3 push services", f"{send:,.0f}/s", f"$ok of $count answered ok, the services counted $served"),
    ("pywebpush on the same messages, 1 core (keep-alive session, HTTP/1.1)", f"{py:,.0f}/s", "$python_line"),
    ("send --webpush against pywebpush", f"{send / py:.1f}×", f"goal ≥ 20×; the floor itself is {floor / py:.1f}× pywebpush"),
    ("send --webpush against OpenSSL's floor, 1/(1/keygen + 1/ECDH) = {:,.0f}/s".format(floor), f"{send / floor:.2f}", "RFC 8291: a key pair and an ECDH per message"),
    ("send --webpush's peak memory at $count subscriptions", f"{$rss_kb / 1024:.0f} MB", "maximum resident set (/usr/bin/time)"),
]
width = max(len(r[0]) for r in rows)
for name, figure, note in rows:
    print(f"{name.ljust(width)}  {figure:>10}  {note}")
PY
