#!/usr/bin/env bash
# The main job end to end, in a temporary folder: make keys, seal alerts, open them,
# rotate, open a payload sealed before the rotation, watch a tampered one fail, post to the
# APNs-compatible listener, deliver to it with pushseal send, seal to a device's public
# key (ps2), pair by QR code and send a command's outcome.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
Scripts/setup.sh
pushseal="$(swift build -c release --static-swift-stdlib -Xswiftc -static-executable ${SWIFT_FLAGS:-} --show-bin-path)/pushseal"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PUSHSEAL_KEYS="$work/Keys"
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; }

step "1. A sender makes a keyring"
show "pushseal keys init"
kid=$("$pushseal" keys init)
echo "$kid"
ls -la "$PUSHSEAL_KEYS" | sed -n '2,$p'

step "2. Seal an alert: APNs sees only the fallback alert"
show 'pushseal encrypt -t "Disk on db-3" -b "91% used on /var" --level time-sensitive > payload.json'
"$pushseal" encrypt -t "Disk on db-3" -b "91% used on /var" --level time-sensitive > "$work/payload.json"
cat "$work/payload.json"
echo "($(wc -c < "$work/payload.json") bytes; APNs allows 4096)"

step "3. Open it again"
show "pushseal decrypt payload.json"
"$pushseal" decrypt "$work/payload.json"

step "4. The body can come from a pipe; --truncate cuts one too long for APNs"
show 'df -h / | pushseal encrypt -t "df on $(hostname)" - | pushseal decrypt -'
df -h / | "$pushseal" encrypt -t "df on $(hostname)" - | "$pushseal" decrypt -
show 'seq 5000 | pushseal encrypt --truncate -t "A long log" - | wc -c'
seq 5000 | "$pushseal" encrypt --truncate -t "A long log" - | wc -c

step "5. Rotate: new payloads use the new key, old ones still open during the grace period"
show "pushseal keys rotate --grace 30d"
"$pushseal" keys rotate --grace 30d
"$pushseal" keys list
"$pushseal" encrypt -b "after rotation" > "$work/after.json"
printf 'new payload carries kid: '; sed -E 's/.*"enc":"ps1\.([^.]*)\..*/\1/' "$work/after.json"
show "pushseal decrypt payload.json   # sealed before the rotation"
"$pushseal" decrypt "$work/payload.json"

step "6. A receiver imports the key and opens the payload"
show "pushseal keys export $kid | pushseal keys import - --keys phone-keys"
"$pushseal" keys export "$kid" | "$pushseal" keys import - --keys "$work/phone-keys"
"$pushseal" decrypt --keys "$work/phone-keys" "$work/payload.json"

step "7. One changed character: refused, and no plaintext comes out"
python3 - "$work/payload.json" "$work/tampered.json" <<'PY'
import json, sys
payload = json.load(open(sys.argv[1]))
enc = payload["enc"]
i = len(enc) - 30
payload["enc"] = enc[:i] + ("A" if enc[i] != "A" else "B") + enc[i + 1:]
json.dump(payload, open(sys.argv[2], "w"), separators=(",", ":"))
PY
show "pushseal decrypt tampered.json"
set +e
"$pushseal" decrypt "$work/tampered.json"
status=$?
set -e
echo "exit status $status (65: failed authentication)"
[ "$status" -eq 65 ] || { echo "demo: the tampered payload was not refused" >&2; exit 1; }

step "8. An alert too large for APNs is refused with the overshoot"
set +e
"$pushseal" encrypt -b "$(head -c 5000 /dev/zero | tr '\0' x)" > /dev/null
status=$?
set -e
echo "exit status $status"
[ "$status" -eq 65 ] || exit 1

step "9. What the phone would show: pushseal receive runs each payload through the extension"
inbox="$work/inbox"
mkdir -p "$inbox"
"$pushseal" encrypt -t "Old key" -b "sealed before an emergency rotation" > "$inbox/3-rotated-out.json"
show "pushseal keys rotate --grace 0s   # retire the current key at once"
"$pushseal" keys rotate --grace 0s
"$pushseal" encrypt -t "Deploy finished" -b "api-7 is live" --data build:=41 > "$inbox/1-good.json"
"$pushseal" keys init --keys "$work/other-keys" > /dev/null
"$pushseal" encrypt --keys "$work/other-keys" -t "Stranger" -b "sealed under a key this phone never got" > "$inbox/2-unknown-key.json"
cp "$work/tampered.json" "$inbox/4-tampered.json"
printf '%s\n' '{"aps":{"alert":{"title":"Plain notification","body":"not sealed, no extension"}}}' > "$inbox/5-plain.json"
cd "$work"
show "pushseal receive inbox/*.json"
"$pushseal" receive inbox/*.json
show "pushseal receive --json inbox/1-good.json   # the same message again: shown once, so now a duplicate"
"$pushseal" receive --json inbox/1-good.json | tee "$work/again.jsonl"
grep -q '"status":"duplicate"' "$work/again.jsonl" || { echo "demo: a message arriving again was shown again" >&2; exit 1; }

step "10. The 30-second rule, shortened: an extension that hangs is cut at the budget; --then runs yours after decrypting"
show "pushseal receive --budget 300ms --extension 'sleep 5' inbox/1-good.json"
"$pushseal" receive --budget 300ms --extension 'sleep 5' inbox/1-good.json
cat > "$work/shout.py" <<'PY'
#!/usr/bin/env python3
import json, sys
content = json.load(sys.stdin)["content"]
print(json.dumps({"title": content["title"].upper() + "!", "body": content["body"]}))
PY
chmod +x "$work/shout.py"
show "pushseal encrypt -t 'Deploy finished' -b 'api-8 is live' | pushseal receive --then ./shout.py -   # your program sees the opened alert"
"$pushseal" encrypt -t 'Deploy finished' -b 'api-8 is live' | "$pushseal" receive --then "$work/shout.py" - | tee "$work/shout.txt"
grep -q 'DEPLOY FINISHED!' "$work/shout.txt" || { echo "demo: --then's program did not change the opened alert" >&2; exit 1; }

step "11. An APNs-compatible endpoint: your backend (here curl) posts, the extension runs"
command -v curl >/dev/null 2>&1 || install_missing demo curl
device=$(printf 'ab%.0s' $(seq 32))
# A provider token of the right shape and age; give --provider-key to verify real ones.
provider=$(python3 -c "
import base64, json, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b'=').decode()
print(b(json.dumps({'alg': 'ES256', 'kid': 'ABC123DEFG'}).encode()) + '.' + b(json.dumps({'iss': 'DEF123GHIJ', 'iat': int(time.time())}).encode()) + '.' + b(bytes(64)))")
show "pushseal receive --listen 0 --json > records.jsonl &"
"$pushseal" receive --listen 0 --json > "$work/records.jsonl" 2> "$work/listen.err" &
listener=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/listen.err" && break; sleep 0.05; done
cat "$work/listen.err"
url=$(grep -o 'https://[^ ]*' "$work/listen.err")
show "curl --http2 --cacert Keys/tls-cert.pem -H 'authorization: bearer …' -H 'apns-topic: com.example.app' --data-binary @inbox/1-good.json $url/3/device/$device"
curl -s --http2 --cacert "$PUSHSEAL_KEYS/tls-cert.pem" -o /dev/null -w 'HTTP/%{http_version} %{http_code}\n' \
  -H "authorization: bearer $provider" -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \
  --data-binary @inbox/1-good.json "$url/3/device/$device"
show "curl … $url/3/device/not-a-token"
curl -s --http2 --cacert "$PUSHSEAL_KEYS/tls-cert.pem" -w ' (HTTP %{http_code})\n' \
  -H "authorization: bearer $provider" -H 'apns-topic: com.example.app' \
  --data-binary @inbox/1-good.json "$url/3/device/not-a-token"
kill -TERM "$listener"
wait "$listener"
show "cat records.jsonl"
cat "$work/records.jsonl"
grep -q '"status":"decrypted"' "$work/records.jsonl" || { echo "demo: the listener did not decrypt" >&2; exit 1; }

step "12. pushseal send: seal once, sign the provider token, fan out over one HTTP/2 connection; pushseal token for curl"
command -v openssl >/dev/null 2>&1 || install_missing demo openssl
# A signing key of the kind Apple hands out (.p8: a P-256 key in PKCS#8), made here.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/AuthKey.p8" 2>/dev/null
gone=$(printf 'ef%.0s' $(seq 32))
unknown=$(printf 'cd%.0s' $(seq 32))
show "pushseal receive --listen 0 --provider-key ABC123DEFG=AuthKey.p8 --team DEF123GHIJ --device $device --unregistered $gone --json &"
"$pushseal" receive --listen 0 --provider-key "ABC123DEFG=$work/AuthKey.p8" --team DEF123GHIJ \
  --device "$device" --device "$gone" --unregistered "$gone" --json > "$work/sent.jsonl" 2> "$work/listen.err" &
listener=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/listen.err" && break; sleep 0.05; done
# By name: the one static binary looks localhost up in /etc/hosts and tries each address.
url=$(grep -o 'https://[^ ]*' "$work/listen.err" | sed 's|https://127.0.0.1:|https://localhost:|')
show "pushseal send --endpoint $url --cacert Keys/tls-cert.pem --topic com.example.app --auth-key AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --device … -t 'Deploy finished' -b 'api-7 is live'"
set +e
"$pushseal" send --endpoint "$url" --cacert "$PUSHSEAL_KEYS/tls-cert.pem" --topic com.example.app \
  --auth-key "$work/AuthKey.p8" --key-id ABC123DEFG --team-id DEF123GHIJ \
  --device "$device" --device "$gone" --device "$unknown" -t 'Deploy finished' -b 'api-7 is live'
status=$?
set -e
echo "exit status $status (69: some devices refused for good)"
show "ls Keys   # the provider token is kept for the next 50 minutes, mode 0600"
ls "$PUSHSEAL_KEYS"
show 'curl … -H "authorization: bearer $(pushseal token --auth-key AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ)" …   # the same token, for any tool'
token=$("$pushseal" token --auth-key "$work/AuthKey.p8" --key-id ABC123DEFG --team-id DEF123GHIJ)
curl -s --http2 --cacert "$PUSHSEAL_KEYS/tls-cert.pem" -o /dev/null -w 'HTTP/%{http_version} %{http_code}\n' \
  -H "authorization: bearer $token" -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \
  --data-binary @inbox/1-good.json "$url/3/device/$device"
kill -TERM "$listener"
wait "$listener"
show "grep decrypted sent.jsonl"
grep '"status":"decrypted"' "$work/sent.jsonl" || { echo "demo: send did not reach the extension" >&2; exit 1; }
[ "$status" -eq 69 ] || { echo "demo: send exited $status, not 69" >&2; exit 1; }

step "13. Recipient keys (ps2): the device makes a key pair, the sender holds only its public share"
show "pushseal keys init --recipient --keys Device"
device_kid=$("$pushseal" keys init --recipient --keys "$work/Device")
echo "$device_kid"
show "pushseal keys export --public --keys Device | pushseal keys import - --keys Sender"
"$pushseal" keys export --public --keys "$work/Device" | tee "$work/public-share.txt"
"$pushseal" keys import - --keys "$work/Sender" < "$work/public-share.txt" >/dev/null
show "pushseal encrypt --keys Sender --to $device_kid -t 'For this device only' -b 'no secret on the sender'"
"$pushseal" encrypt --keys "$work/Sender" --to "$device_kid" -t 'For this device only' -b 'no secret on the sender' > "$work/ps2.json"
cut -c1-140 "$work/ps2.json"
show "pushseal receive --keys Sender ps2.json     # the sender cannot read it"
"$pushseal" receive --keys "$work/Sender" "$work/ps2.json"
show "pushseal receive --keys Device ps2.json     # the device can"
"$pushseal" receive --keys "$work/Device" "$work/ps2.json" | tee "$work/ps2-record.txt"
grep -q 'For this device only' "$work/ps2-record.txt" || { echo "demo: the device did not open ps2" >&2; exit 1; }

step "13b. Sender keys (ps3): the device allows one sender; anyone else with its public share is refused, and a message shows once"
show "pushseal keys add --sender --keys Sender && pushseal keys export --sender --keys Sender | pushseal keys import - --keys Device"
"$pushseal" keys add --sender --keys "$work/Sender"
"$pushseal" keys export --sender --keys "$work/Sender" | "$pushseal" keys import - --keys "$work/Device"
show "pushseal encrypt --keys Sender --to $device_kid -t 'db-3 down' -b 'failover started' > ps3.json"
"$pushseal" encrypt --keys "$work/Sender" --to "$device_kid" -t 'db-3 down' -b 'failover started' > "$work/ps3.json"
cut -c1-140 "$work/ps3.json"
show "pushseal receive --keys Device ps3.json ps3.json ps2.json   # opened, then a repeat, then the unauthenticated ps2"
"$pushseal" receive --keys "$work/Device" "$work/ps3.json" "$work/ps3.json" "$work/ps2.json" | tee "$work/ps3-record.txt"
grep -q 'decrypted' "$work/ps3-record.txt" && grep -q 'duplicate' "$work/ps3-record.txt" && grep -q 'sender-untrusted' "$work/ps3-record.txt" \
  || { echo "demo: the device did not open ps3 once and refuse ps2" >&2; exit 1; }

step "14. Pairing by QR code: the device's public share, drawn for a phone's camera"
show "pushseal keys export --public --qr --keys Device"
"$pushseal" keys export --public --qr --keys "$work/Device"
show "pushseal keys export --qr-png share.png --keys Keys    # a psk1 share: an image only where you name it"
"$pushseal" keys export --qr-png "$work/share.png"
[ "$(stat -c %a "$work/share.png")" = 600 ] || { echo "demo: the share's image is not mode 0600" >&2; exit 1; }

step "15. Tell me when it is done: a command's outcome as a sealed alert"
show "pushseal run --print --tail 2 -- sh -c 'echo compiling; echo 3 tests failed; exit 1' > outcome.json"
set +e
"$pushseal" run --print --tail 2 -- sh -c 'echo compiling; echo 3 tests failed; exit 1' > "$work/outcome.json" 2>/dev/null
status=$?
set -e
echo "exit status $status (the command's own)"
[ "$status" -eq 1 ] || { echo "demo: run exited $status, not 1" >&2; exit 1; }
show "pushseal receive outcome.json"
"$pushseal" receive "$work/outcome.json" | tee "$work/outcome-record.txt"
grep -q '3 tests failed' "$work/outcome-record.txt" || { echo "demo: the outcome did not carry the last lines" >&2; exit 1; }

printf '\ndemo: done\n'
