// What the page and its service worker keep in IndexedDB: the keys (a ps2 key pair whose
// private half WebCrypto will not export, psk1 secrets imported the same way, and the public
// keys of the senders it allows), the history of what arrived, and the messages it opened
// (so one arriving again is a duplicate). One global, PushSealStore, shared by both
// (importScripts).
"use strict";
(function (scope) {
  /** History past this many entries loses its oldest: a phone's storage is not a log. */
  const HISTORY_LIMIT = 500;
  /** Opened messages remembered past this many lose the one that expires first (docs/FORMAT.md
   *  §6.2): a phone that got more than this within 30 days could see the oldest again. */
  const SEEN_LIMIT = 10000;

  let opened = null;
  function database() {
    opened ??= new Promise((resolve, reject) => {
      const request = indexedDB.open("pushseal", 2);
      request.onupgradeneeded = (event) => {
        if (event.oldVersion < 1) {
          request.result.createObjectStore("keys", { keyPath: "kid" });
          request.result.createObjectStore("history", { keyPath: "number", autoIncrement: true });
        }
        if (event.oldVersion < 2) request.result.createObjectStore("seen", { keyPath: "name" }).createIndex("until", "until");
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => { opened = null; reject(request.error); };
    });
    return opened;
  }

  /** Runs work(store, …) in one transaction and resolves when it has committed. */
  async function transaction(names, mode, work) {
    const db = await database();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(names, mode);
      let result;
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("the transaction was aborted"));
      Promise.resolve(work(...names.map((name) => tx.objectStore(name)))).then((value) => { result = value; }, (error) => { tx.abort(); reject(error); });
    });
  }
  const settled = (request) => new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

  const Store = {
    HISTORY_LIMIT,
    SEEN_LIMIT,
    key: (kid) => transaction(["keys"], "readonly", (keys) => settled(keys.get(kid))),
    /** Whether a sender was ever allowed here: then only what an allowed sender sealed opens. */
    knowsSenders: () => transaction(["keys"], "readonly", (keys) => settled(keys.getAll())).then((all) => all.some((entry) => entry.kind === "sender")),
    /** True when the message `name` is new here (and remembered until `until`, Unix seconds);
     *  false when it was opened before and has not expired. One transaction: two pushes at
     *  once cannot both be new. Expired names go, and past SEEN_LIMIT those expiring first. */
    remember: (name, until, now = Math.floor(Date.now() / 1000)) => transaction(["seen"], "readwrite", async (seen) => {
      const known = await settled(seen.get(name));
      if (known && known.until > now) return false;
      await settled(seen.put({ name, until }));
      const index = seen.index("until");
      for (const old of await settled(index.getAllKeys(IDBKeyRange.upperBound(now)))) seen.delete(old);
      const count = await settled(seen.count());
      if (count > SEEN_LIMIT) {
        for (const old of await settled(index.getAllKeys(null, count - SEEN_LIMIT))) seen.delete(old);
      }
      return true;
    }),
    keys: () => transaction(["keys"], "readonly", (keys) => settled(keys.getAll())),
    putKey: (entry) => transaction(["keys"], "readwrite", (keys) => settled(keys.put(entry))),
    removeKeys: () => transaction(["keys", "seen"], "readwrite", (keys, seen) => Promise.all([settled(keys.clear()), settled(seen.clear())])),
    /** Newest first. */
    history: () => transaction(["history"], "readonly", (history) => settled(history.getAll())).then((all) => all.reverse()),
    clearHistory: () => transaction(["history"], "readwrite", (history) => settled(history.clear())),
    /** Adds an entry, and drops the oldest past HISTORY_LIMIT. */
    record: (entry) => transaction(["history"], "readwrite", async (history) => {
      await settled(history.add(entry));
      const count = await settled(history.count());
      if (count <= HISTORY_LIMIT) return;
      const keys = await settled(history.getAllKeys(null, count - HISTORY_LIMIT));
      for (const key of keys) history.delete(key);
    }),
  };
  scope.PushSealStore = Store;
})(self);
