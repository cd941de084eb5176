/// Requests waiting for a stream: a FIFO that requests the server did not process rejoin at
/// the front, so they keep their place.
struct RequestQueue {
    private var items: [ClientRequest] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func append(_ request: ClientRequest) {
        items.append(request)
    }

    mutating func prepend(_ request: ClientRequest) {
        if head > 0 {
            head -= 1
            items[head] = request
        } else {
            items.insert(request, at: 0)
        }
    }

    mutating func popFirst() -> ClientRequest? {
        guard head < items.count else { return nil }
        defer {
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 4_096, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
        }
        return items[head]
    }

    mutating func removeAll() -> [ClientRequest] {
        defer {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return Array(items[head...])
    }
}

/// A request and how many times it was sent back unprocessed.
struct ClientRequest {
    let request: HTTP2Client.Request
    var resent = 0
}
