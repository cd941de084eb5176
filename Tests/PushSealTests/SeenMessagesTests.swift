import Foundation
import SeenMessages
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The store of opened messages on its own: it answers once per message, forgets what
/// expires first when a bucket is full, never grows, is shared between instances (and
/// threads) so two arrivals at once show once, and refuses a file that is not one.
@Suite("the store of seen messages")
struct SeenMessagesTests {
    let folder = NSTemporaryDirectory() + "pushseal-seen-" + UUID().uuidString

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func identity(_ index: Int) -> [UInt8] { SeenMessages.identity(kid: "k1", sender: "s1", id: "message-\(index)") }

    @Test func aMessageIsNewOnceAndAgainOnlyAfterItExpires() throws {
        let store = try SeenMessages(path: folder + "/seen", bucketCount: 4)
        #expect(try store.remember(identity(1), until: 2_000, now: 1_000))
        #expect(try !store.remember(identity(1), until: 2_000, now: 1_500))
        #expect(try store.contains(identity(1), now: 1_999))
        // Past its time it is forgotten, and a new arrival is new again.
        #expect(try !store.contains(identity(1), now: 2_000))
        #expect(try store.remember(identity(1), until: 3_000, now: 2_000))
        // The device is part of the name: one listener stands for many devices.
        #expect(SeenMessages.identity(kid: "k1", sender: nil, id: "x", device: "aa") != SeenMessages.identity(kid: "k1", sender: nil, id: "x", device: "bb"))
        #expect(SeenMessages.identity(kid: "k1", sender: nil, id: "x") != SeenMessages.identity(kid: "k1x", sender: nil, id: ""))
    }

    /// Past the bound (a bucket's 256 slots) the soonest to expire gives way, and the file
    /// keeps its size.
    @Test func aFullStoreForgetsWhatExpiresFirstAndNeverGrows() throws {
        let path = folder + "/seen"
        let store = try SeenMessages(path: path, bucketCount: 1)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(size == 4_096 * 2 && store.capacity == 256)
        for index in 0..<256 { #expect(try store.remember(identity(index), until: Int64(10_000 + index), now: 0)) }
        #expect(try store.count(now: 0) == 256)
        // One more: the one expiring first (index 0) is forgotten, the rest are kept.
        #expect(try store.remember(identity(1_000), until: 50_000, now: 0))
        #expect(try !store.contains(identity(0), now: 0))
        #expect(try store.contains(identity(1), now: 0) && store.contains(identity(255), now: 0) && store.contains(identity(1_000), now: 0))
        #expect(try store.count(now: 0) == 256)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int == size)
    }

    /// Two instances on one file (two extension processes, two receivers), each with threads
    /// of its own: a thousand arrivals of one message at once are new exactly once.
    @Test func arrivalsAtOnceAreNewExactlyOnceBetweenInstances() throws {
        let path = folder + "/seen"
        let stores = [try SeenMessages(path: path), try SeenMessages(path: path)]
        let news = ManagedCount()
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            if (try? stores[index % 2].remember(identity(7), until: 10_000, now: 0)) == true { news.add() }
        }
        #expect(news.value == 1)
        // And a message each: every one new once.
        let distinct = ManagedCount()
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            if (try? stores[index % 2].remember(identity(index + 100), until: 10_000, now: 0)) == true { distinct.add() }
        }
        #expect(distinct.value == 1_000)
    }

    @Test func whatIsRememberedOutlivesTheInstance() throws {
        let path = folder + "/seen"
        do {
            let store = try SeenMessages(path: path)
            #expect(try store.remember(identity(3), until: 10_000, now: 0))
        }
        let reopened = try SeenMessages(path: path)
        #expect(try !reopened.remember(identity(3), until: 10_000, now: 1))
        let asking = try #require(try SeenMessages.existing(at: path))
        #expect(try asking.contains(identity(3), now: 1))
        #expect(try SeenMessages.existing(at: folder + "/none") == nil, "asking makes no file")
        #expect(!FileManager.default.fileExists(atPath: folder + "/none"))
    }

    @Test func aFileThatIsNotAStoreIsRefusedAndKept() throws {
        let path = folder + "/seen"
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SeenMessagesError.self) { try SeenMessages(path: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a store")
        // A store cut short (a copy that stopped halfway) is refused too.
        _ = try SeenMessages(path: folder + "/whole", bucketCount: 2)
        #expect(truncate(folder + "/whole", 4_096 * 2) == 0)
        #expect(throws: SeenMessagesError.self) { try SeenMessages(path: folder + "/whole") }
    }
}

/// A count several threads add to.
final class ManagedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
