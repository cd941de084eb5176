// What the page and its service worker keep in IndexedDB: the keys (a ps2 key pair whose
// private half WebCrypto will not export, and psk1 secrets imported the same way) and the
// history of what arrived. One global, PushSealStore, shared by both (importScripts).
"use strict";
(function (scope) {
  /** History past this many entries loses its oldest: a phone's storage is not a log. */
  const HISTORY_LIMIT = 500;

  let opened = null;
  function database() {
    opened ??= new Promise((resolve, reject) => {
      const request = indexedDB.open("pushseal", 1);
      request.onupgradeneeded = () => {
        request.result.createObjectStore("keys", { keyPath: "kid" });
        request.result.createObjectStore("history", { keyPath: "number", autoIncrement: true });
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
    key: (kid) => transaction(["keys"], "readonly", (keys) => settled(keys.get(kid))),
    keys: () => transaction(["keys"], "readonly", (keys) => settled(keys.getAll())),
    putKey: (entry) => transaction(["keys"], "readwrite", (keys) => settled(keys.put(entry))),
    removeKeys: () => transaction(["keys"], "readwrite", (keys) => settled(keys.clear())),
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
