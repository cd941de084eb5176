import Foundation
import MonotonicTime
import SeenMessages

/// A store of seen messages holding `count` messages the receiver might have opened (each
/// remembered for 30 days from now), for the receiver's bench run against it.
func fillSeenStore(path: String, count: Int) throws {
    let store = try SeenMessages(path: path)
    let now = Int64(Date().timeIntervalSince1970)
    for index in 0..<count {
        _ = try store.remember(SeenMessages.identity(kid: "bench", sender: "s", id: "filled-\(index)"), until: now + SeenMessages.defaultLifetime, now: now)
    }
}

/// The store's cost per opening once it holds `count` messages: `asked` new ones remembered,
/// then `asked` repeats looked up (the duplicate path), each timed in a row. Prints the
/// microseconds per new message, per repeat, and the store's size on disk.
func measureSeenStore(holding count: Int, asking asked: Int) throws {
    let folder = NSTemporaryDirectory() + "pushseal-bench-seen-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/" + SeenMessages.fileName
    try fillSeenStore(path: path, count: count)
    let store = try SeenMessages(path: path)
    let now = Int64(Date().timeIntervalSince1970)
    let clock = MonotonicClock.system
    var start = clock.now
    for index in 0..<asked {
        _ = try store.remember(SeenMessages.identity(kid: "bench", sender: "s", id: "new-\(index)"), until: now + 3_600, now: now)
    }
    let newMicroseconds = Double(clock.now.nanoseconds - start.nanoseconds) / 1_000 / Double(asked)
    start = clock.now
    var repeats = 0
    for index in 0..<asked where try !store.remember(SeenMessages.identity(kid: "bench", sender: "s", id: "filled-\(index)"), until: now + 3_600, now: now) {
        repeats += 1
    }
    let repeatMicroseconds = Double(clock.now.nanoseconds - start.nanoseconds) / 1_000 / Double(asked)
    precondition(repeats == asked, "every filled message is a repeat")
    var info = stat()
    stat(path, &info)
    let onDisk = Double(info.st_blocks) * 512 / 1_048_576
    print(String(format: "%.2f %.2f %.0fMiB", newMicroseconds, repeatMicroseconds, onDisk))
}
