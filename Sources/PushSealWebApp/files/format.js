// Opening pushseal envelopes in a browser, on WebCrypto: docs/FORMAT.md's receiver steps for
// the web form ({"enc":"<envelope>"}, no aps), which a service worker receives as the data of
// a push. Loaded by the page and by the service worker (importScripts), so it defines one
// global, PushSealFormat, and no module syntax (service workers on older Safari take none).
"use strict";
(function (scope) {
  const subtle = crypto.subtle;
  const encoder = new TextEncoder();

  /** A payload the receiver does not open, with the status docs/FORMAT.md gives it. */
  class Refused extends Error {
    /** id: the sealed message's id, for a duplicate (the page tags its notification). */
    constructor(status, reason, id = null) {
      super(`${status}: ${reason}`);
      this.status = status;
      this.id = id;
    }
  }

  // --- encodings -------------------------------------------------------------------------

  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) { out.set(part, offset); offset += part.length; }
    return out;
  };
  const u16 = (value) => new Uint8Array([value >> 8, value & 0xff]);

  function b64url(bytes) {
    let binary = "";
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  /** Strict base64url without padding (section 3): the alphabet only, no lone last
   *  character, no set bits left over; anything else is malformed. */
  function fromB64url(text) {
    if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
      throw new Refused("malformed", "the sealed box is not canonical base64url without padding");
    }
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    if (b64url(bytes) !== text) throw new Refused("malformed", "the last character has unused bits set");
    return bytes;
  }

  // --- section 2.1: strict JSON ----------------------------------------------------------

  /** A JSON number as written: integers are judged by their text. */
  class JSONNumber {
    constructor(text) { this.text = text; }
    integer() {
      if (!/^-?(0|[1-9][0-9]*)$/.test(this.text)) return null;
      const value = BigInt(this.text);
      return value >= -(2n ** 63n) && value < 2n ** 63n ? value : null;
    }
  }

  /** RFC 8259 with no name twice, at most 64 levels, no lone surrogate, no byte order mark.
   *  JSON.parse keeps the last of two names and accepts lone surrogates, so a parser of its
   *  own. */
  function strictJSON(text) {
    let at = 0;
    const fail = (why) => { throw new Refused("malformed", `not JSON: ${why} at ${at}`); };
    const space = () => { while (" \t\n\r".includes(text[at] ?? "x")) at++; };
    const string = () => {
      at++;
      let out = "";
      for (;;) {
        const char = text[at++];
        if (char === undefined) fail("unterminated string");
        if (char === '"') return out;
        if (char < " ") fail("a control character in a string");
        if (char !== "\\") { out += char; continue; }
        const escape = text[at++];
        const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[escape];
        if (simple !== undefined) { out += simple; continue; }
        if (escape !== "u") fail("an invalid escape");
        const unit = () => {
          const hex = text.slice(at, at + 4);
          if (!/^[0-9A-Fa-f]{4}$/.test(hex)) fail("an invalid \\u escape");
          at += 4;
          return parseInt(hex, 16);
        };
        const high = unit();
        if (high >= 0xdc00 && high <= 0xdfff) fail("a lone surrogate escape");
        if (high >= 0xd800 && high <= 0xdbff) {
          if (text.slice(at, at + 2) !== "\\u") fail("a lone surrogate escape");
          at += 2;
          const low = unit();
          if (low < 0xdc00 || low > 0xdfff) fail("a lone surrogate escape");
          out += String.fromCharCode(high, low);
        } else {
          out += String.fromCharCode(high);
        }
      }
    };
    const value = (depth) => {
      space();
      const char = text[at];
      if (char === "{" || char === "[") {
        if (depth + 1 > 64) fail("nested deeper than 64 levels");
        at++; space();
        const close = char === "{" ? "}" : "]";
        const result = char === "{" ? new Map() : [];
        const done = () => (char === "{" ? Object.fromEntries(result) : result);
        if (text[at] === close) { at++; return done(); }
        for (;;) {
          if (char === "{") {
            space();
            if (text[at] !== '"') fail("a member name expected");
            const name = string();
            if (result.has(name)) throw new Refused("malformed", `member "${name}" is named twice`);
            space();
            if (text[at++] !== ":") fail("':' expected");
            result.set(name, value(depth + 1));
          } else {
            result.push(value(depth + 1));
          }
          space();
          const next = text[at++];
          if (next === close) return done();
          if (next !== ",") fail(`',' or '${close}' expected`);
        }
      }
      if (char === '"') return string();
      for (const [word, literal] of [["true", true], ["false", false], ["null", null]]) {
        if (text.startsWith(word, at)) { at += word.length; return literal; }
      }
      const number = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(at, at + 400));
      if (!number) fail("unexpected character");
      at += number[0].length;
      return new JSONNumber(number[0]);
    };
    const result = value(0);
    space();
    if (at !== text.length) fail("text after the value");
    return result;
  }

  const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof JSONNumber);
  const has = (object, name) => Object.prototype.hasOwnProperty.call(object, name);

  function strictObject(text) {
    const value = strictJSON(text);
    if (!isObject(value)) throw new Refused("malformed", "not a JSON object");
    return value;
  }

  /** Numbers as JavaScript numbers, for showing. */
  function plain(value) {
    if (value instanceof JSONNumber) return Number(value.text);
    if (Array.isArray(value)) return value.map(plain);
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, plain(member)]));
    return value;
  }

  // --- section 5: the sealed alert -------------------------------------------------------

  function checkAlert(alert, field) {
    for (const name of ["title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id", "interruption-level"]) {
      if (alert[name] != null && typeof alert[name] !== "string") throw new Refused("malformed", `${name} is not a string`);
    }
    if (alert["interruption-level"] != null && !["passive", "active", "time-sensitive", "critical"].includes(alert["interruption-level"])) {
      throw new Refused("malformed", "interruption-level is not passive, active, time-sensitive or critical");
    }
    const badge = alert.badge;
    if (badge != null && !(badge instanceof JSONNumber && badge.integer() !== null && badge.integer() >= 0n)) throw new Refused("malformed", "badge is not an integer, 0 or more");
    const score = alert["relevance-score"];
    if (score != null && !(score instanceof JSONNumber && Number(score.text) >= 0 && Number(score.text) <= 1)) throw new Refused("malformed", "relevance-score is not a number from 0 to 1");
    const data = alert.data;
    if (data != null && !isObject(data)) throw new Refused("malformed", "data is not an object");
    if (data != null && (has(data, "aps") || has(data, field))) throw new Refused("malformed", "data names aps or the field");
    if (alert.id != null && !(typeof alert.id === "string" && encoder.encode(alert.id).length >= 1 && encoder.encode(alert.id).length <= 64)) {
      throw new Refused("malformed", "id is not a string of 1 to 64 bytes");
    }
    for (const name of ["sent", "exp"]) {
      if (alert[name] != null && !(alert[name] instanceof JSONNumber && alert[name].integer() !== null)) throw new Refused("malformed", `${name} is not an integer`);
    }
    if (!alert.title && !alert.body) throw new Refused("malformed", "neither a title nor a body to show");
    return alert;
  }

  // --- section 4: ps1 (AES-256-GCM), ps2 (HPKE, RFC 9180 base mode) and ps3 (auth mode) ---

  const KEM_SUITE = concat(encoder.encode("KEM"), u16(0x0010));
  const HPKE_SUITE = concat(encoder.encode("HPKE"), u16(0x0010), u16(0x0001), u16(0x0002));

  async function hmac(key, data) {
    // An empty HKDF salt is HashLen zero bytes (RFC 5869); WebCrypto refuses an empty key.
    const imported = await subtle.importKey("raw", key.length ? key : new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await subtle.sign("HMAC", imported, data));
  }
  const labeledExtract = (suite, salt, label, ikm) => hmac(salt, concat(encoder.encode("HPKE-v1"), suite, encoder.encode(label), ikm));
  async function labeledExpand(suite, prk, label, info, length) {
    const labeled = concat(u16(length), encoder.encode("HPKE-v1"), suite, encoder.encode(label), info);
    let out = new Uint8Array(0), block = new Uint8Array(0);
    for (let counter = 1; out.length < length; counter++) {
      block = await hmac(prk, concat(block, labeled, new Uint8Array([counter])));
      out = concat(out, block);
    }
    return out.slice(0, length);
  }

  const importPoint = (point) => subtle.importKey("raw", point, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const derive = async (privateKey, publicKey) => new Uint8Array(await subtle.deriveBits({ name: "ECDH", public: publicKey }, privateKey, 256));

  /** Opens enc ‖ ciphertext ‖ tag; in auth mode (ps3) with the sender's public point, when
   *  given: dh = DH(skR, pkE) ‖ DH(skR, pkS), kem_context = enc ‖ pkR ‖ pkS. */
  async function hpkeOpen(recipient, info, sealed, senderPoint) {
    const enc = sealed.slice(0, 65);
    let ephemeral;
    try {
      ephemeral = await importPoint(enc);
    } catch {
      throw new Refused("auth-failed", "enc is not a point on P-256");
    }
    let dh = await derive(recipient.privateKey, ephemeral);
    let kemContext = concat(enc, recipient.point);
    if (senderPoint) {
      dh = concat(dh, await derive(recipient.privateKey, await importPoint(senderPoint)));
      kemContext = concat(kemContext, senderPoint);
    }
    const eaePrk = await labeledExtract(KEM_SUITE, new Uint8Array(0), "eae_prk", dh);
    const shared = await labeledExpand(KEM_SUITE, eaePrk, "shared_secret", kemContext, 32);
    const pskIdHash = await labeledExtract(HPKE_SUITE, new Uint8Array(0), "psk_id_hash", new Uint8Array(0));
    const infoHash = await labeledExtract(HPKE_SUITE, new Uint8Array(0), "info_hash", info);
    const context = concat(new Uint8Array([senderPoint ? 2 : 0]), pskIdHash, infoHash);
    const secret = await labeledExtract(HPKE_SUITE, shared, "secret", new Uint8Array(0));
    const key = await subtle.importKey("raw", await labeledExpand(HPKE_SUITE, secret, "key", context, 32), "AES-GCM", false, ["decrypt"]);
    const nonce = await labeledExpand(HPKE_SUITE, secret, "base_nonce", context, 12);
    return new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: nonce, additionalData: new Uint8Array(0), tagLength: 128 }, key, sealed.slice(65)));
  }

  /** Steps 6 to 13 for an envelope's text. keys(kid) answers the key this receiver holds for
   *  a kid: {kind: "ps1", secret: CryptoKey}, {kind: "ps2", privateKey, point} (a key pair,
   *  which opens ps2 and ps3) or {kind: "sender", point} (an allowed sender's), or null.
   *  knowsSenders: whether any sender was ever allowed here (section 6.1: then only what an
   *  allowed sender sealed opens). remember(name, until): true when the message is new here,
   *  and remembered from now on (section 6.2); absent, nothing is remembered. */
  async function openEnvelope(envelope, { keys, knowsSenders = false, remember, field = "enc", now = Math.floor(Date.now() / 1000) }) {
    const first = envelope.indexOf(".");
    const version = first < 0 ? envelope : envelope.slice(0, first);                          // step 6
    if (version !== "ps1" && version !== "ps2" && version !== "ps3") {
      if (/^ps[1-9][0-9]{0,3}$/.test(version)) throw new Refused("unsupported", `version '${version}' is not one this page knows`);
      throw new Refused("malformed", "not <version>.<kid>.<sealed>");
    }
    const second = first < 0 ? -1 : envelope.indexOf(".", first + 1);
    const third = version === "ps3" && second >= 0 ? envelope.indexOf(".", second + 1) : second;
    if (second < 0 || third < 0) throw new Refused("malformed", "not <version>.<kid>.<sealed> (ps3: <kid>.<sender kid>.<sealed>)");
    const kid = envelope.slice(first + 1, second);
    const senderKid = version === "ps3" ? envelope.slice(second + 1, third) : null;
    const kidRule = /^[A-Za-z0-9_-]{1,64}$/;
    if (!kidRule.test(kid) || (senderKid !== null && !kidRule.test(senderKid))) throw new Refused("malformed", "a kid is not 1 to 64 of A-Z a-z 0-9 _ -");
    const sealed = fromB64url(envelope.slice(third + 1));                                     // step 7
    const minimum = version === "ps1" ? 28 : 81;
    if (sealed.length < minimum) throw new Refused("malformed", `${sealed.length} sealed bytes, fewer than ${minimum}`);
    const key = await keys(kid);                                                              // step 8
    if (!key || key.kind !== (version === "ps1" ? "ps1" : "ps2")) throw new Refused("key-missing", `no key ${kid} for ${version} on this page`);
    let senderPoint;                                                                          // step 9
    if (senderKid !== null) {
      const sender = await keys(senderKid);
      if (!sender || sender.kind !== "sender") throw new Refused("sender-untrusted", `sender ${senderKid} is not one this page allows`);
      senderPoint = sender.point;
    } else if (knowsSenders) {
      throw new Refused("sender-untrusted", `${version} names no sender, and this page opens only what a sender it allows has sealed`);
    }
    const header = encoder.encode(envelope.slice(0, third));
    let opened;
    try {                                                                                     // step 10
      opened = version === "ps1"
        ? new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: sealed.slice(0, 12), additionalData: header, tagLength: 128 }, key.secret, sealed.slice(12)))
        : await hpkeOpen(key, header, sealed, senderPoint);
    } catch (error) {
      if (error instanceof Refused) throw error;
      throw new Refused("auth-failed", "the seal does not verify");
    }
    let text;                                                                                 // step 11
    try { text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(opened); } catch { throw new Refused("malformed", "the sealed alert is not UTF-8"); }
    const alert = checkAlert(strictObject(text), field);
    if (version === "ps3" && (alert.id == null || alert.sent == null)) throw new Refused("malformed", "a ps3 alert carries an id and its sent time");
    if (alert.exp != null && alert.exp.integer() <= BigInt(now)) throw new Refused("expired", `exp ${alert.exp.text} has passed`);  // step 12
    if (remember && alert.id != null) {                                                      // step 13
      const until = alert.exp != null ? Number(alert.exp.integer()) : now + 30 * 86400;
      if (!(await remember(JSON.stringify([kid, senderKid ?? "", alert.id]), until))) {
        throw new Refused("duplicate", `message ${alert.id} was opened here before`, alert.id);
      }
    }
    return { kid, alert: plain(alert) };
  }

  /** A push's data in the web form: strict JSON, an object, the field a string; then the
   *  envelope's steps. A push with no field is not sealed: passthrough, shown as it came. */
  async function openWebPayload(text, options) {
    const payload = strictObject(text);
    const field = options.field ?? "enc";
    if (!has(payload, field)) throw new Refused("passthrough", `no '${field}' field`);
    if (typeof payload[field] !== "string") throw new Refused("malformed", `'${field}' is not a string`);
    return openEnvelope(payload[field], options);
  }

  /** A psk1 share (section 7): its kid and 32-byte secret. */
  function sharedShare(line) {
    const match = /^psk1\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(line.trim());
    if (!match) throw new Error("a shared key is one line: psk1.<kid>.<secret>");
    let secret;
    try { secret = fromB64url(match[2]); } catch { secret = null; }
    if (!secret || secret.length !== 32) throw new Error("the share's secret is not 32 bytes of base64url");
    return { kid: match[1], secret };
  }

  /** A pss1 share (section 7): a sender's kid and its 65-byte public point, checked to be on
   *  P-256. */
  async function senderShare(line) {
    const match = /^pss1\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(line.trim());
    if (!match) throw new Error("a sender is one line: pss1.<kid>.<point>");
    let point;
    try { point = fromB64url(match[2]); await importPoint(point); } catch { point = null; }
    if (!point || point.length !== 65) throw new Error("the sender's key is not a P-256 point");
    return { kid: match[1], point };
  }

  scope.PushSealFormat = { Refused, openWebPayload, openEnvelope, sharedShare, senderShare, b64url, fromB64url };
})(self);
