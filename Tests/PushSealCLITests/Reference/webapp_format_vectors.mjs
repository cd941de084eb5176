// The web app's opener (Sources/PushSealWebApp/files/format.js, a browser script) against the
// published vectors, in Node's WebCrypto: for every envelope a vector holds, its status must
// be the one examples/js (which passes the vectors' receiver steps) gives for that envelope,
// and an opened alert must be the same alert. Prints "N envelopes judged alike"; exits 1 with
// the first difference.
//   node webapp_format_vectors.mjs FORMAT_JS EXAMPLE_MJS VECTORS...
import { readFileSync } from "node:fs";
import { runInThisContext } from "node:vm";
import { webcrypto } from "node:crypto";

const [formatPath, examplePath, ...vectorPaths] = process.argv.slice(2);
globalThis.self = globalThis;
globalThis.crypto ??= webcrypto;
runInThisContext(readFileSync(formatPath, "utf8"), { filename: formatPath });
const web = globalThis.PushSealFormat;
const example = await import(examplePath);

/** The example's alert with its numbers as JavaScript numbers, as the web app gives them. */
const plain = (value) =>
  value?.constructor?.name === "JSONNumber" ? Number(value.text)
    : Array.isArray(value) ? value.map(plain)
    : value !== null && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([name, member]) => [name, plain(member)]))
    : value;

async function status(open) {
  try {
    return { status: "decrypted", alert: await open() };
  } catch (error) {
    if (error.status === undefined) throw error;
    return { status: error.status };
  }
}

let judged = 0;
for (const path of vectorPaths) {
  const vectors = JSON.parse(readFileSync(path, "utf8"));
  const secrets = {}, privates = {}, senders = {}, webKeys = {};
  if (vectors.receiver) {
    // ps3 names what its receiver holds: the device's prk1 line and the allowed sender's pss1.
    for (const line of vectors.receiver) {
      if (line.startsWith("pss1.")) {
        const { kid, point } = await example.senderShare(line);
        senders[kid] = point;
        webKeys[kid] = { kind: "sender", point: (await web.senderShare(line)).point };
      } else {
        const { kid, key } = await example.privateShare(line);
        privates[kid] = key;
        webKeys[kid] = { kind: "ps2", privateKey: key.key, point: key.point };
      }
    }
  } else {
    for (const [kid, key] of Object.entries(vectors.keys)) {
      if (vectors.version === "ps1") {
        secrets[kid] = example.fromB64url(key.secret);
        webKeys[kid] = { kind: "ps1", secret: await webcrypto.subtle.importKey("raw", secrets[kid], "AES-GCM", false, ["decrypt"]) };
      } else {
        const pair = (await example.privateShare(key.private_share)).key;
        privates[kid] = pair;
        webKeys[kid] = { kind: "ps2", privateKey: pair.key, point: pair.point };
      }
    }
  }
  const knowsSenders = Object.keys(senders).length > 0;
  const keys = async (kid) => webKeys[kid] ?? null;
  for (const entry of [...vectors.positive, ...vectors.negative, ...(vectors.edge ?? [])]) {
    let payload;
    try { payload = JSON.parse(entry.payload); } catch { continue; }
    for (const field of [entry.field ?? "enc"]) {
      if (typeof payload?.[field] !== "string") continue;
      const envelope = payload[field];
      const expected = await status(async () => plain(await example.openEnvelope(envelope, { secrets, privates, senders, field })));
      const got = await status(async () => (await web.openEnvelope(envelope, { keys, knowsSenders, field })).alert);
      if (got.status !== expected.status || JSON.stringify(got.alert) !== JSON.stringify(expected.alert)) {
        console.error(`${path} ${entry.name}: the web app gives ${got.status}, the example ${expected.status}`);
        process.exit(1);
      }
      judged++;
    }
  }
  // Repeats: each arrival to a page that remembers (in memory here, IndexedDB in the page).
  for (const entry of vectors.repeat ?? []) {
    const seen = new Map();
    const remember = async (name, until) => (seen.has(name) ? false : (seen.set(name, until), true));
    for (const [index, text] of entry.payloads.entries()) {
      const envelope = JSON.parse(text).enc;
      const got = await status(async () => (await web.openEnvelope(envelope, { keys, knowsSenders, remember })).alert);
      if (got.status !== entry.statuses[index]) {
        console.error(`${path} ${entry.name}, arrival ${index + 1}: the web app gives ${got.status}, the file ${entry.statuses[index]}`);
        process.exit(1);
      }
      judged++;
    }
  }
}
console.log(`${judged} envelopes judged alike`);
