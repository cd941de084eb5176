// The receiving web app's service worker: on each push, open the sealed alert (docs/FORMAT.md's
// receiver steps, format.js) and show it; when it cannot, show a placeholder that names why.
// Every push shows a notification (Safari ends the subscription of a worker that does not),
// within a deadline of its own, well inside the time a browser gives a push event.
"use strict";
importScripts("config.js", "format.js", "store.js");

const config = self.PUSHSEAL_CONFIG;
/** Browsers stop a push event after about 30 s; the placeholder is shown well before. */
const DEADLINE_MS = 20000;

self.addEventListener("install", (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

async function keyFor(kid) {
  return (await PushSealStore.key(kid)) ?? null;
}

/** What to show for a push, and the status that decided it: docs/FORMAT.md's steps, with the
 *  senders this page allows and the messages it opened before. */
async function opening(text) {
  try {
    const { kid, alert } = await PushSealFormat.openWebPayload(text, {
      keys: keyFor, knowsSenders: await PushSealStore.knowsSenders(), remember: PushSealStore.remember, field: config.field,
    });
    return { status: "decrypted", kid, alert };
  } catch (error) {
    if (!(error instanceof PushSealFormat.Refused)) return { status: "locked", reason: String(error) };
    return { status: error.status, reason: error.message, id: error.id };
  }
}

function deadline() {
  return new Promise((resolve) => setTimeout(() => resolve({ status: "deadline", reason: `not opened within ${DEADLINE_MS / 1000} s` }), DEADLINE_MS));
}

/** The notification for an outcome: the alert itself, the push as it came, or a placeholder. */
function notification(outcome, text) {
  const options = { icon: "icon.svg", badge: "icon.svg", data: { status: outcome.status } };
  if (outcome.status === "decrypted") {
    const alert = outcome.alert;
    const body = [alert.subtitle, alert.body].filter((part) => part).join("\n");
    if (alert.id) options.tag = `pushseal-${alert.id}`;            // a repeat replaces, not stacks
    if (alert["interruption-level"] === "passive") options.silent = true;
    if (alert["interruption-level"] === "time-sensitive" || alert["interruption-level"] === "critical") options.requireInteraction = true;
    return { title: alert.title || config.sender, options: { ...options, body } };
  }
  if (outcome.status === "passthrough") {
    return { title: config.sender, options: { ...options, body: (text ?? "").slice(0, 240) } };
  }
  if (outcome.status === "locked") {
    return { title: config.sender, options: { ...options, body: config.placeholder.locked } };
  }
  if (outcome.status === "duplicate") {
    // A browser shows something for every push; a repeat is one quiet notification of its own,
    // never in place of the message it repeats.
    options.tag = `pushseal-repeat-${outcome.id}`;
    options.silent = true;
  }
  const body = config.placeholder.bodies[outcome.status] ?? config.placeholder.bodies["auth-failed"];
  return { title: config.placeholder.title, options: { ...options, body } };
}

async function receive(event) {
  const started = performance.now();
  const text = event.data ? event.data.text() : null;
  const outcome = text === null
    ? { status: "passthrough", reason: "a push with no data" }
    : await Promise.race([opening(text), deadline()]);
  const shown = notification(outcome, text);
  await self.registration.showNotification(shown.title, shown.options);
  const elapsed = performance.now() - started;
  try {
    await PushSealStore.record({
      at: Date.now(), status: outcome.status, title: shown.title, body: shown.options.body,
      kid: outcome.kid ?? null, id: outcome.alert?.id ?? null, reason: outcome.reason ?? null, elapsedMs: elapsed,
    });
  } finally {
    for (const client of await self.clients.matchAll({ type: "window" })) client.postMessage({ arrived: outcome.status });
  }
}

self.addEventListener("push", (event) => event.waitUntil(receive(event)));

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    if (windows.length) return windows[0].focus();
    return self.clients.openWindow("./");
  })());
});

// A push service may end a subscription (it expired, or the browser renewed its keys): the
// page shows a new pairing string next time it is opened.
self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(PushSealStore.record({ at: Date.now(), status: "unsubscribed", title: config.sender, body: "The push service ended this subscription: open the page to pair again.", kid: null, id: null, reason: null, elapsedMs: 0 }));
});
