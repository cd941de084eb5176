#!/usr/bin/env python3
"""The receiving web app in a real browser: Debian's chromium, driven by selenium through
chromedriver. Nothing here is pushseal's code; pushseal is run as a process.

  webapp_browser.py PUSHSEAL WORKDIR

No push service is reachable here, so two things stand in for one: the browser's
PushManager.subscribe answers with a subscription whose keys this script holds (its
endpoint is webpush_standin.py, which opens what `send --webpush` posts there with
http_ece), and what the stand-in opened reaches the service worker through the DevTools
protocol (ServiceWorker.deliverPushMessage), as a push service's message would after the
browser's own RFC 8291 decryption.

Prints one JSON report on stdout; screenshots go to WORKDIR. Exits 0 when it ran to the end
(the report says what it saw; the Swift test judges it), 1 with the reason otherwise.
"""
import base64
import json
import os
import subprocess
import sys
import time

from cryptography.hazmat.primitives.asymmetric import ec
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
SUBJECT = "mailto:ops@pushseal.dev"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def run(*arguments, stdin=None, check=True):
    done = subprocess.run(arguments, input=stdin, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(arguments[:3])}… exited {done.returncode}: {done.stderr.strip()}")
    return done


def started(process, marker, stream):
    """The first line of `stream` that holds `marker` (within 20 s)."""
    deadline = time.time() + 20
    while time.time() < deadline:
        line = stream.readline()
        if not line:
            break
        if marker in line:
            return line.strip()
    raise SystemExit(f"no '{marker}' from {process.args[0]}")


def main():
    pushseal, work = sys.argv[1], sys.argv[2]
    keys = os.path.join(work, "Keys")
    report = {"screenshots": []}

    run(pushseal, "keys", "init", "--keys", keys)
    vapid = run(pushseal, "keys", "vapid", "--keys", keys).stdout.strip()

    # The browser's subscription keys (what a push service would give the page).
    browser_key = ec.generate_private_key(ec.SECP256R1())
    browser_auth = os.urandom(16)
    scalar = browser_key.private_numbers().private_value.to_bytes(32, "big")
    point = browser_key.public_key().public_numbers()
    p256dh = b"\x04" + point.x.to_bytes(32, "big") + point.y.to_bytes(32, "big")
    service_folder = os.path.join(work, "service")
    os.makedirs(service_folder)
    script = {"subject": SUBJECT, "subscriptions": {"/push/browser": {"key": b64(scalar), "auth": b64(browser_auth)}}}
    service = subprocess.Popen([sys.executable, os.path.join(HERE, "webpush_standin.py"), service_folder, json.dumps(script)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    service_port = started(service, "listening", service.stdout).split()[1]
    endpoint = f"https://127.0.0.1:{service_port}/push/browser"

    server = subprocess.Popen([pushseal, "webapp", "serve", "--keys", keys, "--listen", "127.0.0.1:0", "--sender", "CI at pushseal"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    origin = started(server, "listening on", server.stderr).split("listening on ")[1].rstrip("/")

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--ignore-certificate-errors", "--window-size=900,1400", f"--user-data-dir={work}/profile"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(30)
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]})
        # The push service's part of subscribing: a subscription with this script's keys,
        # and the applicationServerKey the page asked with, kept for the report.
        stub = """
        (() => {
          const subscription = {
            endpoint: %s, expirationTime: null,
            toJSON() { return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: %s, auth: %s } }; },
            unsubscribe: async () => { localStorage.setItem("unsubscribed", "yes"); subscribed = false; return true; },
          };
          let subscribed = localStorage.getItem("subscribed") === "yes" && localStorage.getItem("unsubscribed") !== "yes";
          PushManager.prototype.subscribe = async function (options) {
            const key = new Uint8Array(options.applicationServerKey);
            localStorage.setItem("applicationServerKey", btoa(String.fromCharCode(...key)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, ""));
            localStorage.setItem("subscribed", "yes"); localStorage.removeItem("unsubscribed");
            subscribed = true;
            return subscription;
          };
          PushManager.prototype.getSubscription = async function () { return subscribed ? subscription : null; };
        })();
        """ % (json.dumps(endpoint), json.dumps(b64(p256dh)), json.dumps(b64(browser_auth)))
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": stub})

        def shot(name):
            path = os.path.join(work, f"{name}.png")
            driver.save_screenshot(path)
            report["screenshots"].append(path)

        def ready():
            WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")

        driver.get(origin + "/")
        ready()
        shot("first-open")
        driver.find_element(By.ID, "turn-on").click()
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "pairing-string").text.startswith("{"))
        pairing = driver.find_element(By.ID, "pairing-string").text
        report["pairing"] = json.loads(pairing)
        report["share"] = driver.find_element(By.ID, "share").text
        report["applicationServerKey"] = driver.execute_script("return localStorage.getItem('applicationServerKey')")
        report["vapid"] = vapid
        report["qr"] = driver.execute_script("const svg = document.querySelector('#qr svg'); return svg ? svg.outerHTML.length : 0")
        shot("pairing")
        # The QR code as a phone's camera would read it: off the screenshot, with zbar.
        from PIL import Image
        from pyzbar.pyzbar import decode
        report["qrDecoded"] = [symbol.data.decode() for symbol in decode(Image.open(report["screenshots"][-1]))]

        subscriptions = os.path.join(work, "subscriptions.jsonl")
        with open(subscriptions, "w") as out:
            out.write(pairing + "\n")

        posted = []

        def service_log():
            path = os.path.join(service_folder, "log.jsonl")
            return [json.loads(line) for line in open(path)] if os.path.exists(path) else []

        def send(*arguments):
            """`send --webpush` to the pairing string; the message the service opened."""
            before = len(service_log())
            done = run(pushseal, "send", "--webpush", subscriptions, "--vapid-subject", SUBJECT, "--keys", keys,
                       "--cacert", os.path.join(service_folder, "cert.pem"), "--json", *arguments, check=False)
            entries = service_log()[before:]
            posted.append({"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "service": entries})
            if done.returncode != 0 or len(entries) != 1 or entries[0].get("problem"):
                raise SystemExit(f"send --webpush: {done.returncode} {done.stderr} {entries}")
            return entries[0]["message"]

        def notifications():
            return driver.execute_async_script(
                "navigator.serviceWorker.ready.then(r => r.getNotifications())"
                ".then(list => arguments[0](list.map(n => ({title: n.title, body: n.body, tag: n.tag}))))")

        def history():
            return driver.execute_async_script(
                "const done = arguments[0]; const open = indexedDB.open('pushseal');"
                "open.onsuccess = () => { const get = open.result.transaction('history').objectStore('history').getAll();"
                " get.onsuccess = () => done(get.result); };")

        def deliver(data, label):
            """One push, as the browser hands it to the service worker; what it showed."""
            count = len(history())
            driver.execute_cdp_cmd("ServiceWorker.enable", {})
            driver.execute_cdp_cmd("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": "0", "data": data})
            deadline = time.time() + 20
            while time.time() < deadline and len(history()) == count:
                time.sleep(0.05)
            entries = history()
            if len(entries) == count:
                raise SystemExit(f"{label}: the service worker recorded nothing")
            entry = entries[-1]
            report["cases"].append({"case": label, "status": entry["status"], "title": entry["title"], "body": entry["body"],
                                    "elapsedMs": entry["elapsedMs"], "shown": notifications()})
            return entry

        report["cases"] = []
        sealed = send("-t", "Deploy finished", "-b", "api-7 is live")
        report["sealedByService"] = sealed
        deliver(sealed, "paired")
        deliver(sealed, "repeat")

        web = lambda *arguments: run(pushseal, "encrypt", "--web", "--keys", keys, *arguments).stdout.strip()
        ps1 = web("-t", "Backup done", "-b", "nightly, 4 GB")
        deliver(ps1, "ps1-without-key")
        driver.find_element(By.ID, "psk").send_keys(run(pushseal, "keys", "export", "--keys", keys).stdout.strip())
        driver.find_element(By.CSS_SELECTOR, "#shared-form button").click()
        WebDriverWait(driver, 10).until(lambda d: "added" in d.find_element(By.ID, "message").text)
        deliver(ps1, "ps1-with-key")

        # Tampered: one character of the sealed bytes changed (a base64url letter for another).
        envelope = json.loads(sealed)["enc"]
        middle = len(envelope) - 30
        tampered = envelope[:middle] + ("A" if envelope[middle] != "A" else "B") + envelope[middle + 1:]
        deliver(json.dumps({"enc": tampered}), "tampered")
        deliver(json.dumps({"enc": "ps9.abc.def"}), "later-version")
        deliver("not json", "not-json")
        deliver(json.dumps({"text": "plain"}), "unsealed")

        short = send("-t", "Short-lived", "-b", "gone soon", "--ttl", "1s")
        time.sleep(2.2)
        deliver(short, "expired")

        # A sender key: send --webpush now seals ps3, which the page opens only once it allows
        # that sender; from then on the ps2 it opened before is refused, and a repeat is shown once.
        run(pushseal, "keys", "add", "--sender", "--keys", keys)
        vouched = send("-t", "Vouched", "-b", "by the sender's key")
        report["vouchedByService"] = vouched
        deliver(vouched, "sender-not-allowed")
        driver.find_element(By.ID, "pss").send_keys(run(pushseal, "keys", "export", "--sender", "--keys", keys).stdout.strip())
        driver.find_element(By.CSS_SELECTOR, "#sender-form button").click()
        WebDriverWait(driver, 10).until(lambda d: "allowed" in d.find_element(By.ID, "message").text)
        deliver(vouched, "sender-allowed")
        deliver(vouched, "sender-repeat")
        deliver(sealed, "unauthenticated-refused")

        driver.get(origin + "/")
        ready()
        driver.execute_script("document.getElementById('history').scrollIntoView()")
        shot("history")

        another = send("-t", "After forgetting", "-b", "should not open")
        driver.find_element(By.ID, "forget").click()
        driver.switch_to.alert.accept()
        WebDriverWait(driver, 10).until(lambda d: "removed" in d.find_element(By.ID, "message").text)
        report["afterForget"] = {"setupShown": driver.find_element(By.ID, "setup").is_displayed(),
                                 "unsubscribed": driver.execute_script("return localStorage.getItem('unsubscribed')")}
        deliver(another, "key-removed")
        driver.get(origin + "/")
        ready()
        report["historyOnPage"] = [item.get_attribute("class") for item in driver.find_elements(By.CSS_SELECTOR, "#history-list li")]

        report["console"] = [entry for entry in driver.get_log("browser")]
        report["sends"] = posted
    finally:
        driver.quit()
        server.terminate()
        report["serverLog"] = server.communicate(timeout=10)[1].splitlines()
        service.stdin.close()
        service.wait(timeout=10)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
