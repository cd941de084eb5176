// The receiving web app's page: makes this browser's key pair, subscribes, shows the pairing
// string (text and QR code), takes shared keys, lists what arrived, and forgets it all.
"use strict";
(function () {
  const config = self.PUSHSEAL_CONFIG;
  const { b64url, fromB64url, sharedShare, senderShare } = PushSealFormat;
  const $ = (id) => document.getElementById(id);
  /** A push service that has not answered a subscription in this long will not. */
  const SUBSCRIBE_TIMEOUT_MS = 15000;

  function say(text, kind = "info") {
    const message = $("message");
    message.textContent = text;
    message.className = `message ${kind}`;
    message.hidden = !text;
  }

  function randomKid() {
    return Array.from(crypto.getRandomValues(new Uint8Array(4)), (byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  /** This page's own ps2 key: a P-256 pair whose private half WebCrypto never exports. */
  async function ownKey() {
    const keys = await PushSealStore.keys();
    const existing = keys.find((entry) => entry.kind === "ps2");
    if (existing) return existing;
    const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, false, ["deriveBits"]);
    const point = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const entry = { kid: randomKid(), kind: "ps2", privateKey: pair.privateKey, point, added: Date.now() };
    await PushSealStore.putKey(entry);
    return entry;
  }

  const shareOf = (entry) => `ppk1.${entry.kid}.${b64url(entry.point)}`;

  async function subscribe(registration) {
    const existing = await registration.pushManager.getSubscription();
    if (existing) return existing;
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the push service did not answer within ${SUBSCRIBE_TIMEOUT_MS / 1000} s`)), SUBSCRIBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([
        registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromB64url(config.vapidKey) }),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function showPairing() {
    const keys = await PushSealStore.keys();
    const own = keys.find((entry) => entry.kind === "ps2");
    $("setup").hidden = Boolean(own);
    $("pairing").hidden = !own;
    $("keys").hidden = !keys.length;
    $("key-list").replaceChildren(...keys.map((entry) => {
      const item = document.createElement("li");
      item.textContent = `${{ ps2: "this browser's key", sender: "allowed sender" }[entry.kind] ?? "shared key"} ${entry.kid}`;
      return item;
    }));
    if (!own) return;
    const share = shareOf(own);
    $("share").textContent = share;
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    $("resubscribe").hidden = Boolean(subscription);
    const line = subscription ? JSON.stringify({ ...subscription.toJSON(), pushseal: share }) : "";
    $("pairing-string").textContent = line || "(not subscribed: no pairing string yet)";
    $("copy").disabled = !line;
    const qr = $("qr");
    qr.replaceChildren();
    if (line && typeof self.qrcode === "function") {
      const code = self.qrcode(0, "L");
      code.addData(line);
      code.make();
      qr.innerHTML = code.createSvgTag({ cellSize: 3, margin: 4, scalable: true });
      qr.firstElementChild?.setAttribute("aria-label", "the pairing string as a QR code");
    } else if (line) {
      qr.textContent = "(QR code: the page was exported without qrcode.js)";
    }
  }

  async function turnOn() {
    say("");
    if (!("Notification" in self) || !("PushManager" in self)) {
      say("This browser has no Web Push here. On an iPhone, add this page to the Home Screen and open it from there.", "error");
      return;
    }
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      say("Notifications are not allowed for this page: allow them in the browser's site settings.", "error");
      return;
    }
    await ownKey();
    try {
      await subscribe(await navigator.serviceWorker.ready);
      say("Subscribed. Give the pairing string to the sender.", "ok");
    } catch (error) {
      say(`Could not subscribe: ${error.message}. The key is made; subscribe again when the push service is reachable.`, "error");
    }
    await showPairing();
  }

  async function addShared(event) {
    event.preventDefault();
    try {
      const { kid, secret } = sharedShare($("psk").value);
      const key = await crypto.subtle.importKey("raw", secret, "AES-GCM", false, ["decrypt"]);
      secret.fill(0);
      await PushSealStore.putKey({ kid, kind: "ps1", secret: key, added: Date.now() });
      $("psk").value = "";
      say(`Shared key ${kid} added.`, "ok");
      await showPairing();
    } catch (error) {
      say(error.message, "error");
    }
  }

  /** A sender's pss1 line: from now on only what an allowed sender sealed opens here. */
  async function addSender(event) {
    event.preventDefault();
    try {
      const { kid, point } = await senderShare($("pss").value);
      const first = !(await PushSealStore.knowsSenders());
      await PushSealStore.putKey({ kid, kind: "sender", point, added: Date.now() });
      $("pss").value = "";
      say(`Sender ${kid} allowed.${first ? " From now on only what an allowed sender sealed opens here." : ""}`, "ok");
      await showPairing();
    } catch (error) {
      say(error.message, "error");
    }
  }

  async function showHistory() {
    const entries = await PushSealStore.history();
    $("history-empty").hidden = entries.length > 0;
    $("history-list").replaceChildren(...entries.map((entry) => {
      const item = document.createElement("li");
      item.className = `entry ${entry.status}`;
      const head = document.createElement("div");
      head.className = "head";
      const status = document.createElement("span");
      status.className = "status";
      status.textContent = entry.status;
      const when = document.createElement("time");
      when.dateTime = new Date(entry.at).toISOString();
      when.textContent = new Date(entry.at).toLocaleString();
      head.append(status, when);
      const title = document.createElement("strong");
      title.textContent = entry.title;
      const body = document.createElement("p");
      body.textContent = entry.body;
      item.append(head, title, body);
      item.dataset.elapsedMs = String(entry.elapsedMs);
      return item;
    }));
  }

  async function forget() {
    if (!confirm("Remove this browser's keys and unsubscribe? Messages sealed to them will no longer open here.")) return;
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    if (subscription) await subscription.unsubscribe();
    await PushSealStore.removeKeys();
    say("Keys removed and unsubscribed.", "ok");
    await showPairing();
  }

  async function start() {
    document.title = `${config.sender}: pushseal`;
    $("sender").textContent = config.sender;
    $("turn-on").addEventListener("click", () => turnOn().catch((error) => say(error.message, "error")));
    $("resubscribe").addEventListener("click", () => turnOn().catch((error) => say(error.message, "error")));
    $("shared-form").addEventListener("submit", (event) => addShared(event));
    $("sender-form").addEventListener("submit", (event) => addSender(event));
    $("copy").addEventListener("click", async () => {
      await navigator.clipboard.writeText($("pairing-string").textContent);
      say("Pairing string copied.", "ok");
    });
    $("clear-history").addEventListener("click", async () => { await PushSealStore.clearHistory(); await showHistory(); });
    $("forget").addEventListener("click", () => forget().catch((error) => say(error.message, "error")));
    if (!("serviceWorker" in navigator)) {
      say("This page needs service workers: open it over HTTPS (or on localhost).", "error");
      return;
    }
    await navigator.serviceWorker.register("sw.js");
    navigator.serviceWorker.addEventListener("message", () => showHistory());
    await showPairing();
    await showHistory();
    document.body.dataset.ready = "true";
  }

  start().catch((error) => say(error.message, "error"));
})();
