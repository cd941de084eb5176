import Foundation
import PushSealJSON

/// Between `userInfo` as `UNNotificationContent` holds it (String, NSNumber, NSNull, arrays
/// and dictionaries) and JSON as pushseal reads it, so one set of rules serves both.
enum UserInfo {
    /// The payload as JSON; members in key order, since a dictionary has none. Keys that are
    /// not strings cannot come from APNs and are skipped.
    static func json(_ userInfo: [AnyHashable: Any]) -> JSONObject {
        var members: [(String, JSONValue)] = []
        for (key, value) in userInfo {
            if let key = key as? String { members.append((key, json(value))) }
        }
        members.sort { $0.0 < $1.0 }
        var object = JSONObject(reservingCapacity: members.count)
        for (key, value) in members { object.append(key, value) }
        return object
    }

    static func json(_ value: Any) -> JSONValue {
        switch value {
        case let text as String:
            return .string(text)
        case let number as NSNumber:
            // JSON's true and false arrive as boolean NSNumbers (type "c") on every platform;
            // an NSNumber holding 1 would also cast to Bool, so the type decides.
            let type = String(cString: number.objCType)
            if type == "c" { return .bool(number.boolValue) }
            // A whole number is written as one, whether it came as 1 or 1.0 (iOS keeps no
            // difference between them).
            if type == "d" || type == "f", let whole = Int64(exactly: number.doubleValue) { return .integer(whole) }
            return .number(number.stringValue)
        case let dictionary as [AnyHashable: Any]:
            return .object(json(dictionary))
        case let array as [Any]:
            return .array(array.map(json))
        default:
            return .null
        }
    }

    /// A JSON value as Foundation holds it in `userInfo`: whole numbers that fit as Int,
    /// other numbers as Double, null as NSNull.
    static func foundation(_ value: JSONValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .number(let text):
            if let whole = Int(text) { return whole }
            return Double(text) ?? 0
        case .string(let text): return text
        case .array(let items): return items.map(foundation)
        case .object(let members):
            var dictionary: [String: Any] = [:]
            for (key, value) in members { dictionary[key] = foundation(value) }
            return dictionary
        }
    }
}
