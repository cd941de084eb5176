// A transcription for Linux, for tests only: the unified-logging `Logger` an extension writes
// with, with its Swift signature and availability as Apple's documentation gives them (the
// page is named above each). Messages go to standard error, privacy markers and all read;
// Apple's redacts what is not `.public` in the system log.
import Foundation

/// https://developer.apple.com/documentation/os/oslogprivacy
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, visionOS 1.0, watchOS 7.0, *)
public struct OSLogPrivacy: Sendable {
    let isPublic: Bool
    public static let `public` = OSLogPrivacy(isPublic: true)
    public static let `private` = OSLogPrivacy(isPublic: false)
    public static let sensitive = OSLogPrivacy(isPublic: false)
    public static let auto = OSLogPrivacy(isPublic: false)
}

/// https://developer.apple.com/documentation/os/oslogtype
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
public struct OSLogType: Equatable, Sendable {
    public let rawValue: UInt8
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let `default` = OSLogType(0x00)
    public static let info = OSLogType(0x01)
    public static let debug = OSLogType(0x02)
    public static let error = OSLogType(0x10)
    public static let fault = OSLogType(0x11)
}

/// https://developer.apple.com/documentation/os/oslogmessage
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, visionOS 1.0, watchOS 7.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    let text: String

    public init(stringLiteral value: String) { text = value }

    public init(stringInterpolation: OSLogInterpolation) { text = stringInterpolation.text }
}

/// https://developer.apple.com/documentation/os/osloginterpolation
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, visionOS 1.0, watchOS 7.0, *)
public struct OSLogInterpolation: StringInterpolationProtocol {
    var text = ""

    public init(literalCapacity: Int, interpolationCount: Int) {}

    public mutating func appendLiteral(_ literal: String) { text += literal }

    /// https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-1i1xh
    public mutating func appendInterpolation(_ argumentString: @autoclosure @escaping () -> String, privacy: OSLogPrivacy = .auto) {
        text += argumentString()
    }

    /// https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:format:align:privacy:)-4s4wm
    public mutating func appendInterpolation(_ number: @autoclosure @escaping () -> Int, privacy: OSLogPrivacy = .auto) {
        text += String(number())
    }

    /// https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-8y1g8
    public mutating func appendInterpolation<T: CustomStringConvertible>(_ value: @autoclosure @escaping () -> T, privacy: OSLogPrivacy = .auto) {
        text += value().description
    }
}

/// https://developer.apple.com/documentation/os/logger
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, visionOS 1.0, watchOS 7.0, *)
public struct Logger: @unchecked Sendable {
    let label: String

    /// https://developer.apple.com/documentation/os/logger/init(subsystem:category:)
    public init(subsystem: String, category: String) { label = "\(subsystem) \(category)" }

    /// https://developer.apple.com/documentation/os/logger/init()
    public init() { label = "default" }

    /// https://developer.apple.com/documentation/os/logger/log(_:)
    public func log(_ message: OSLogMessage) { log(level: .default, message) }

    /// https://developer.apple.com/documentation/os/logger/log(level:_:)
    public func log(level: OSLogType, _ message: OSLogMessage) {
        FileHandle.standardError.write(Data("[\(label)] \(message.text)\n".utf8))
    }

    /// https://developer.apple.com/documentation/os/logger/debug(_:)
    public func debug(_ message: OSLogMessage) { log(level: .debug, message) }
    /// https://developer.apple.com/documentation/os/logger/info(_:)
    public func info(_ message: OSLogMessage) { log(level: .info, message) }
    /// https://developer.apple.com/documentation/os/logger/notice(_:)
    public func notice(_ message: OSLogMessage) { log(level: .default, message) }
    /// https://developer.apple.com/documentation/os/logger/error(_:)
    public func error(_ message: OSLogMessage) { log(level: .error, message) }
    /// https://developer.apple.com/documentation/os/logger/fault(_:)
    public func fault(_ message: OSLogMessage) { log(level: .fault, message) }
}
