import Foundation
import PushSealKit

// MemProbe SHARE COUNT < payload: opens the payload COUNT times; prints resident memory.
func status(_ key: String) -> String {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").first { $0.hasPrefix(key) }.map(String.init) ?? ""
}
let (kid, key) = try KeyShare.secret(parsing: CommandLine.arguments[1])
let count = Int(CommandLine.arguments[2]) ?? 1
let payload = Data(readLine()!.utf8)
print("before: \(status("VmRSS:")) \(status("RssAnon:")) \(status("VmHWM:"))")
let opener = NotificationOpener(keys: InMemoryKeyStore([kid: .secret(key)]))
var decrypted = 0
let start = Date()
for _ in 0..<count {
    if opener.open(json: payload).status == .decrypted { decrypted += 1 }
}
let seconds = Date().timeIntervalSince(start)
print("after \(count) openings (\(decrypted) decrypted, \(String(format: "%.3f", seconds * 1000 / Double(count))) ms each): \(status("VmRSS:")) \(status("RssAnon:")) \(status("VmHWM:"))")
