#!/usr/bin/env node
// Seal and open pushseal payloads (ps1, ps2 and ps3) in JavaScript, on the WebCrypto API built
// into Node (18 or later; no packages). Written from docs/FORMAT.md alone: a Node backend
// can send payloads that pushseal's receivers open, without the CLI.
//
//   node pushseal-format.mjs seal --share-file FILE      --title T --body B [--pad 32] [--field enc]
//   node pushseal-format.mjs seal --share ppk1.KID.POINT  --title T --body B      (ps2: to a device)
//   node pushseal-format.mjs seal --share ppk1.KID.POINT --sender-key FILE --title T --body B
//        (ps3: to a device, vouched for by this backend's sender key)
//   node pushseal-format.mjs sender-key FILE
//        makes a sender key in FILE (mode 0600) and prints its pss1 line for the devices
//   node pushseal-format.mjs open --share-file FILE      [--field enc] < payload.json
//        FILE: a psk1 share (pushseal keys export), kept out of the arguments, which 'ps'
//        and shell history show: --share-file <(pushseal keys export) in bash, zsh or fish
//        (--share psk1.KID.SECRET works too, for a share that is not secret to you)
//   node pushseal-format.mjs open --private FILE [--sender pss1.KID.POINT] [--field enc] < payload.json
//        FILE: a prk1 share (pushseal keys export --private), kept out of the arguments;
//        --sender allows that sender, and then only what an allowed sender sealed opens
//   node pushseal-format.mjs vectors docs/vectors/ps1.json [...]
//
// `open` prints the opened alert as JSON; a payload it does not open ends it with exit 1 and
// one line `STATUS: reason` (docs/FORMAT.md section 6: malformed, passthrough, unsupported,
// key-missing, sender-untrusted, auth-failed, expired, duplicate).
import { webcrypto, createECDH } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const subtle = webcrypto.subtle;
const encoder = new TextEncoder();
const FALLBACK = { title: "New notification", body: "Open the app to read it" };

export class Refused extends Error {
  constructor(status, reason) {
    super(`${status}: ${reason}`);
    this.status = status;
  }
}

// --- encodings ---------------------------------------------------------------------------

const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) { out.set(part, offset); offset += part.length; }
  return out;
};
const u16 = (value) => new Uint8Array([value >> 8, value & 0xff]);
const hexBytes = (text) => Uint8Array.from(text.match(/../g).map((pair) => parseInt(pair, 16)));
export const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

/** Strict base64url without padding: the alphabet only, no lone last character, no set
 *  bits left over. */
export function fromB64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
    throw new Refused("malformed", "the sealed box is not canonical base64url without padding");
  }
  const bytes = new Uint8Array(Buffer.from(text, "base64url"));
  if (b64url(bytes) !== text) throw new Refused("malformed", "the sealed box's last character has unused bits set");
  return bytes;
}

/** JSON in the canonical form of docs/FORMAT.md section 4.1: no spaces, UTF-8 as is, '/'
 *  never escaped, the short escapes \b \f \n \r \t and \u00xx for other control
 *  characters: exactly what JSON.stringify writes. */
export const jsonText = (value) => JSON.stringify(value);

export function plaintext(alert, pad) {
  let bytes = encoder.encode(jsonText(alert));
  if (pad > 1 && bytes.length % pad) bytes = concat(bytes, new Uint8Array(pad - (bytes.length % pad)).fill(0x20));
  return bytes;
}

// --- HPKE, RFC 9180: base mode (ps2) and auth mode (ps3), DHKEM(P-256, HKDF-SHA256),
// --- HKDF-SHA256, AES-256-GCM -------------------------------------------------------------

const KEM_SUITE = concat(encoder.encode("KEM"), u16(0x0010));
const HPKE_SUITE = concat(encoder.encode("HPKE"), u16(0x0010), u16(0x0001), u16(0x0002));

async function hmac(key, data) {
  // An empty HKDF salt is HashLen zero bytes (RFC 5869); WebCrypto refuses empty HMAC keys.
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

/** mode 0 (base): dh = DH(skE, pkR), kemContext = enc ‖ pkR; mode 2 (auth, section 4.4):
 *  dh = DH(skE, pkR) ‖ DH(skS, pkR), kemContext = enc ‖ pkR ‖ pkS. */
async function keySchedule(dh, kemContext, info, mode) {
  const eaePrk = await labeledExtract(KEM_SUITE, new Uint8Array(0), "eae_prk", dh);
  const shared = await labeledExpand(KEM_SUITE, eaePrk, "shared_secret", kemContext, 32);
  const pskIdHash = await labeledExtract(HPKE_SUITE, new Uint8Array(0), "psk_id_hash", new Uint8Array(0));
  const infoHash = await labeledExtract(HPKE_SUITE, new Uint8Array(0), "info_hash", info);
  const context = concat(new Uint8Array([mode]), pskIdHash, infoHash);
  const secret = await labeledExtract(HPKE_SUITE, shared, "secret", new Uint8Array(0));
  return {
    key: await labeledExpand(HPKE_SUITE, secret, "key", context, 32),
    nonce: await labeledExpand(HPKE_SUITE, secret, "base_nonce", context, 12),
  };
}

const ecdh = { name: "ECDH", namedCurve: "P-256" };
const importPoint = (point) => subtle.importKey("raw", point, ecdh, false, []);
/** A P-256 private key from its 32-byte scalar (its public point computed with node:crypto). */
export function privateKeyPair(scalar) {
  const curve = createECDH("prime256v1");
  curve.setPrivateKey(Buffer.from(scalar));
  const point = new Uint8Array(curve.getPublicKey());
  const jwk = { kty: "EC", crv: "P-256", d: b64url(scalar), x: b64url(point.slice(1, 33)), y: b64url(point.slice(33)) };
  return subtle.importKey("jwk", jwk, ecdh, false, ["deriveBits"]).then((key) => ({ key, point }));
}
const dh = async (privateKey, publicKey) => new Uint8Array(await subtle.deriveBits({ name: "ECDH", public: publicKey }, privateKey, 256));
async function aesGcm(operation, key, nonce, data, aad) {
  const imported = await subtle.importKey("raw", key, "AES-GCM", false, [operation]);
  return new Uint8Array(await subtle[operation]({ name: "AES-GCM", iv: nonce, additionalData: aad, tagLength: 128 }, imported, data));
}

/** enc ‖ ciphertext ‖ tag; in auth mode when `sender` (a {key, point} pair) is given. */
async function hpkeSeal(recipientPoint, info, message, ephemeralScalar, sender) {
  const ephemeral = ephemeralScalar
    ? await privateKeyPair(ephemeralScalar)
    : await subtle.generateKey(ecdh, true, ["deriveBits"]).then(async (pair) => ({
      key: pair.privateKey, point: new Uint8Array(await subtle.exportKey("raw", pair.publicKey)) }));
  const recipient = await importPoint(recipientPoint);
  let secret = await dh(ephemeral.key, recipient), kemContext = concat(ephemeral.point, recipientPoint);
  if (sender) {
    secret = concat(secret, await dh(sender.key, recipient));
    kemContext = concat(kemContext, sender.point);
  }
  const { key, nonce } = await keySchedule(secret, kemContext, info, sender ? 2 : 0);
  return concat(ephemeral.point, await aesGcm("encrypt", key, nonce, message, new Uint8Array(0)));
}

/** The plaintext; in auth mode when `senderPoint` (the sender's public point) is given. */
async function hpkeOpen(recipient, info, sealed, senderPoint) {
  const enc = sealed.slice(0, 65);
  let ephemeral;
  try { ephemeral = await importPoint(enc); } catch { throw new Refused("auth-failed", "enc is not a point on P-256"); }
  let secret = await dh(recipient.key, ephemeral), kemContext = concat(enc, recipient.point);
  if (senderPoint) {
    secret = concat(secret, await dh(recipient.key, await importPoint(senderPoint)));
    kemContext = concat(kemContext, senderPoint);
  }
  const { key, nonce } = await keySchedule(secret, kemContext, info, senderPoint ? 2 : 0);
  return aesGcm("decrypt", key, nonce, sealed.slice(65), new Uint8Array(0));
}

// --- sealing ------------------------------------------------------------------------------

/** The payload for `alert` (members written in their order) under a key share: psk1 (a
 *  shared secret: ps1) or ppk1 (a device's public key: ps2; with `sender`, {kid, key, point}
 *  of the sender's own key pair, ps3). */
export async function seal(share, alert, { pad = 32, field = "enc", fallback = FALLBACK, nonce, ephemeral, sender } = {}) {
  const [kind, kid, material] = [share.slice(0, 4), share.slice(5, share.lastIndexOf(".")), share.slice(share.lastIndexOf(".") + 1)];
  const body = plaintext(alert, pad);
  let header, sealed;
  if (kind === "psk1") {
    header = `ps1.${kid}`;
    nonce ??= webcrypto.getRandomValues(new Uint8Array(12));
    sealed = concat(nonce, await aesGcm("encrypt", fromB64url(material), nonce, body, encoder.encode(header)));
  } else if (kind === "ppk1" && sender) {
    if (alert.id === undefined || alert.sent === undefined) throw new Error("a ps3 alert carries an id and its sent time");
    header = `ps3.${kid}.${sender.kid}`;
    sealed = await hpkeSeal(fromB64url(material), encoder.encode(header), body, ephemeral, sender);
  } else if (kind === "ppk1") {
    header = `ps2.${kid}`;
    sealed = await hpkeSeal(fromB64url(material), encoder.encode(header), body, ephemeral);
  } else {
    throw new Error("a share is psk1.<kid>.<secret> or ppk1.<kid>.<point>");
  }
  const text = jsonText({ aps: { alert: fallback, "mutable-content": 1 }, [field]: `${header}.${b64url(sealed)}` });
  if (encoder.encode(text).length > 4096) throw new Error("the payload is over APNs' 4096 bytes");
  return text;
}

// --- opening ------------------------------------------------------------------------------
// docs/FORMAT.md section 6, step by step: every refusal carries the status it gives.

/** A JSON number as it was written: integers are judged by their text (section 2.1). */
class JSONNumber {
  constructor(text) { this.text = text; }
  /** The value, when the text is an integer of section 2.1 (as a BigInt); else null. */
  integer() {
    if (!/^-?(0|[1-9][0-9]*)$/.test(this.text)) return null;
    const value = BigInt(this.text);
    return value >= -(2n ** 63n) && value < 2n ** 63n ? value : null;
  }
}

/** Section 2.1: RFC 8259 JSON with no name twice in any object (JSON.parse keeps the last of
 *  two), at most 64 levels deep, no lone surrogate, no byte order mark; numbers kept as their
 *  text. A small parser of its own, as JSON.parse cannot say any of that. */
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
      if (text[at] === close) { at++; return char === "{" ? Object.fromEntries(result) : result; }
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
        if (next === close) return char === "{" ? Object.fromEntries(result) : result;
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

/** The parsed JSON with numbers as JavaScript numbers. */
function plain(value) {
  if (value instanceof JSONNumber) return Number(value.text);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, plain(member)]));
  return value;
}

function strictObject(text) {
  const value = strictJSON(text);
  if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof JSONNumber) throw new Refused("malformed", "not a JSON object");
  return value;
}

const has = (object, name) => Object.prototype.hasOwnProperty.call(object, name);

/** Section 5: every known member of the right type and value, and something to show. */
function checkAlert(alert, field, identity = false) {
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
  if (data != null && (typeof data !== "object" || Array.isArray(data) || data instanceof JSONNumber)) throw new Refused("malformed", "data is not an object");
  if (data != null && (has(data, "aps") || has(data, field))) throw new Refused("malformed", "data names aps or the field");
  if (alert.id != null && !(typeof alert.id === "string" && encoder.encode(alert.id).length >= 1 && encoder.encode(alert.id).length <= 64)) {
    throw new Refused("malformed", "id is not a string of 1 to 64 bytes");
  }
  for (const name of ["sent", "exp"]) {
    if (alert[name] != null && !(alert[name] instanceof JSONNumber && alert[name].integer() !== null)) throw new Refused("malformed", `${name} is not an integer`);
  }
  if (!alert.title && !alert.body) throw new Refused("malformed", "neither a title nor a body to show");
  if (identity && (alert.id == null || alert.sent == null)) throw new Refused("malformed", "a ps3 alert carries an id and its sent time");
  return alert;
}

const TEXT_KEYS = ["title", "subtitle", "body", "title-loc-key", "subtitle-loc-key", "loc-key"];
function hasText(aps) {
  const alert = aps.alert;
  if (typeof alert === "string") return alert !== "";
  return alert !== null && typeof alert === "object" && !Array.isArray(alert) && TEXT_KEYS.some((key) => typeof alert[key] === "string" && alert[key] !== "");
}

/** The alert sealed in a payload, or `Refused` with the status a receiver gives (passthrough
 *  included: shown as it came). secrets: {kid: 32-byte key}; privates: {kid: {key, point}}
 *  from privateKeyPair; senders: {kid: 65-byte point} of the allowed senders (any at all makes
 *  them required, section 6.1); seen: a Set this receiver remembers opened messages in
 *  (section 6.2; this example keeps it in memory). */
export async function openPayload(text, { secrets = {}, privates = {}, senders = {}, seen, field = "enc", now = Math.floor(Date.now() / 1000) } = {}) {
  const payload = strictObject(text);                                                      // step 1
  const aps = payload.aps;
  if (aps === undefined || aps === null || typeof aps !== "object" || Array.isArray(aps) || aps instanceof JSONNumber) {
    throw new Refused("malformed", "no aps dictionary");                                    // step 2
  }
  const size = encoder.encode(text.replace(/[ \t\n\r]+$/, "")).length;
  if (size > 4096) throw new Refused("malformed", `${size} bytes, over APNs' 4096`);        // step 3
  const mutable = aps["mutable-content"];
  if (!(mutable instanceof JSONNumber && mutable.text === "1") || !hasText(aps)) {
    throw new Refused("passthrough", "iOS runs no extension for it");                       // step 4
  }
  if (!has(payload, field)) throw new Refused("passthrough", `no '${field}' field`);       // step 5
  if (typeof payload[field] !== "string") throw new Refused("malformed", `'${field}' is not a string`);
  return plain(await openEnvelope(payload[field], { secrets, privates, senders, seen, field, now }));
}

/** Steps 6 to 13, for an envelope's text. */
export async function openEnvelope(envelope, { secrets = {}, privates = {}, senders = {}, seen, field = "enc", now = Math.floor(Date.now() / 1000) } = {}) {
  const first = envelope.indexOf(".");
  const version = first < 0 ? envelope : envelope.slice(0, first);                          // step 6
  if (version !== "ps1" && version !== "ps2" && version !== "ps3") {
    if (/^ps[1-9][0-9]{0,3}$/.test(version)) throw new Refused("unsupported", `version '${version}' is not one this reader knows`);
    throw new Refused("malformed", "not <version>.<kid>.<sealed>");
  }
  const second = envelope.indexOf(".", first + 1);
  const third = version === "ps3" && second >= 0 ? envelope.indexOf(".", second + 1) : second;
  if (first < 0 || second < 0 || third < 0) throw new Refused("malformed", "not <version>.<kid>.<sealed> (ps3: <kid>.<sender kid>.<sealed>)");
  const kid = envelope.slice(first + 1, second);
  const senderKid = version === "ps3" ? envelope.slice(second + 1, third) : null;
  const kidRule = /^[A-Za-z0-9_-]{1,64}$/;
  if (!kidRule.test(kid) || (senderKid !== null && !kidRule.test(senderKid))) throw new Refused("malformed", "a kid is not 1 to 64 of A-Z a-z 0-9 _ -");
  const sealed = fromB64url(envelope.slice(third + 1));                                     // step 7
  const header = encoder.encode(envelope.slice(0, third));
  if (sealed.length < (version === "ps1" ? 28 : 81)) throw new Refused("malformed", `${sealed.length} sealed bytes, fewer than ${version === "ps1" ? "nonce" : "enc"} and tag`);
  if (!(kid in (version === "ps1" ? secrets : privates))) throw new Refused("key-missing", `no key ${kid}`);  // step 8
  let senderPoint;                                                                          // step 9
  if (senderKid !== null) {
    if (!has(senders, senderKid)) throw new Refused("sender-untrusted", `sender ${senderKid} is not one this receiver allows`);
    senderPoint = senders[senderKid];
  } else if (Object.keys(senders).length > 0) {
    throw new Refused("sender-untrusted", `${version} names no sender, and this receiver allows only its senders`);
  }
  let opened;                                                                               // step 10
  try {
    opened = version === "ps1"
      ? await aesGcm("decrypt", secrets[kid], sealed.slice(0, 12), sealed.slice(12), header)
      : await hpkeOpen(privates[kid], header, sealed, senderPoint);
  } catch (error) {
    if (error instanceof Refused) throw error;
    throw new Refused("auth-failed", "the tag does not verify");
  }
  let decoded;                                                                              // step 11
  try { decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(opened); } catch { throw new Refused("malformed", "not UTF-8"); }
  const alert = checkAlert(strictObject(decoded), field, version === "ps3");
  if (alert.exp != null && alert.exp.integer() <= BigInt(now)) throw new Refused("expired", `exp ${alert.exp.text} has passed`);  // step 12
  if (seen && alert.id != null) {                                                           // step 13
    const name = JSON.stringify([kid, senderKid ?? "", alert.id]);
    if (seen.has(name)) throw new Refused("duplicate", `message ${alert.id} was opened here before`);
    seen.add(name);
  }
  return alert;
}

// --- the vectors --------------------------------------------------------------------------

/** A prk1 share (section 7): the kid and the P-256 key pair it holds. */
export async function privateShare(share) {
  const [kind, kid, scalar] = share.trim().split(".");
  const raw = fromB64url(scalar ?? "");
  const value = BigInt("0x" + Buffer.from(raw).toString("hex"));
  const order = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  if (kind !== "prk1" || raw.length !== 32 || value === 0n || value >= order) throw new Error("not a prk1 share of a P-256 scalar");
  return { kid, key: await privateKeyPair(raw) };
}

/** A pss1 share (section 7): a sender's kid and its 65-byte public point. */
export async function senderShare(share) {
  const [kind, kid, material] = share.trim().split(".");
  const point = fromB64url(material ?? "");
  await importPoint(point);  // refuses a point that is not on P-256
  if (kind !== "pss1" || !/^[A-Za-z0-9_-]{1,64}$/.test(kid)) throw new Error("not a pss1 share");
  return { kid, point };
}

async function checkVectors(path) {
  const vectors = JSON.parse(readFileSync(path, "utf8"));
  const version = vectors.version;
  const secrets = {}, privates = {}, senders = {};
  if (vectors.receiver) {
    // ps3 names what its receiver holds: the device's prk1 line, the allowed senders' pss1.
    for (const line of vectors.receiver) {
      if (line.startsWith("pss1.")) { const { kid, point } = await senderShare(line); senders[kid] = point; }
      else { const { kid, key } = await privateShare(line); privates[kid] = key; }
    }
  } else {
    for (const [kid, key] of Object.entries(vectors.keys)) {
      if (version === "ps1") secrets[kid] = fromB64url(key.secret);
      else privates[kid] = (await privateShare(key.private_share)).key;
    }
  }
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  for (const entry of vectors.positive) {
    const key = vectors.keys[entry.kid];
    const options = { pad: entry.pad, field: entry.field, fallback: entry.fallback };
    const share = version === "ps1" ? `psk1.${entry.kid}.${key.secret}` : `ppk1.${entry.kid}.${key.public}`;
    if (version === "ps1") options.nonce = hexBytes(entry.nonce); else options.ephemeral = fromB64url(entry.ephemeral_private);
    if (entry.sender) options.sender = { kid: entry.sender, ...(await privateKeyPair(fromB64url(vectors.keys[entry.sender].sender_private))) };
    if (new TextDecoder().decode(plaintext(entry.alert, entry.pad)) !== entry.plaintext) throw new Error(`${entry.name}: plaintext differs`);
    const made = await seal(share, entry.alert, options);
    if (made !== entry.payload) throw new Error(`${entry.name}: payload differs\n${made}\n${entry.payload}`);
    if (!same(await openPayload(entry.payload, { secrets, privates, senders, field: entry.field }), entry.alert)) throw new Error(`${entry.name}: opened differs`);
  }
  const judge = async (payload, seen) => {
    try {
      await openPayload(payload, { secrets, privates, senders, seen });
      return "decrypted";
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      return error.status;
    }
  };
  const edge = vectors.edge ?? [];
  for (const entry of [...vectors.negative, ...edge]) {
    const status = await judge(entry.payload);
    if (status !== entry.status) throw new Error(`${entry.name}: ${status}, not ${entry.status}`);
  }
  for (const entry of vectors.repeat ?? []) {
    const seen = new Set();
    for (const [index, payload] of entry.payloads.entries()) {
      const status = await judge(payload, seen);
      if (status !== entry.statuses[index]) throw new Error(`${entry.name}, arrival ${index + 1}: ${status}, not ${entry.statuses[index]}`);
    }
  }
  const repeats = vectors.repeat ? `, ${vectors.repeat.length} repeats shown once` : "";
  return `${path}: ${vectors.positive.length} positive reproduced byte for byte, ${vectors.negative.length} negative refused, ${edge.length} edge cases judged alike${repeats}`;
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === "vectors") {
    for (const path of rest) console.log(await checkVectors(path));
    return 0;
  }
  if (command === "sender-key") {
    const pair = await subtle.generateKey(ecdh, true, ["deriveBits"]);
    const jwk = await subtle.exportKey("jwk", pair.privateKey);
    const point = new Uint8Array(await subtle.exportKey("raw", pair.publicKey));
    const kid = Buffer.from(webcrypto.getRandomValues(new Uint8Array(4))).toString("hex");
    writeFileSync(rest[0], JSON.stringify({ kid, private: jwk.d }) + "\n", { mode: 0o600, flag: "wx" });
    console.log(`pss1.${kid}.${b64url(point)}`);
    return 0;
  }
  const options = {};
  for (let index = 0; index + 1 < rest.length; index += 2) options[rest[index]] = rest[index + 1];
  if (options["--share-file"]) options["--share"] = readFileSync(options["--share-file"], "utf8").trim();
  const field = options["--field"] ?? "enc";
  if (command === "seal") {
    const alert = {};
    for (const name of ["title", "subtitle", "body"]) if (options[`--${name}`] !== undefined) alert[name] = options[`--${name}`];
    alert.id = b64url(webcrypto.getRandomValues(new Uint8Array(12)));
    alert.sent = Math.floor(Date.now() / 1000);
    let sender;
    if (options["--sender-key"]) {
      const stored = JSON.parse(readFileSync(options["--sender-key"], "utf8"));
      sender = { kid: stored.kid, ...(await privateKeyPair(fromB64url(stored.private))) };
    }
    console.log(await seal(options["--share"], alert, { pad: Number(options["--pad"] ?? 32), field, sender }));
    return 0;
  }
  if (command !== "open") {
    console.error("usage: pushseal-format.mjs seal|open|vectors ... (see the file's head)");
    return 64;
  }
  const secrets = {}, privates = {};
  if (options["--share"]) {
    const share = options["--share"];
    secrets[share.slice(5, share.lastIndexOf("."))] = fromB64url(share.slice(share.lastIndexOf(".") + 1));
  }
  if (options["--private"]) {
    const { kid, key } = await privateShare(readFileSync(options["--private"], "utf8"));
    privates[kid] = key;
  }
  const senders = {};
  if (options["--sender"]) {
    const { kid, point } = await senderShare(options["--sender"]);
    senders[kid] = point;
  }
  try {
    console.log(jsonText(await openPayload(readFileSync(0, "utf8"), { secrets, privates, senders, field })));
    return 0;
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    console.error(error.message);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
