import CSystem
import PushSeal

#if canImport(Glibc)
import Glibc
#endif

/// The programs shipped beside `pushseal` for jobs that need a shared library the static
/// binary cannot carry: `pushseal-qr` (QR codes; Debian ships libqrencode shared only).
package enum CompanionProgram {
    /// A companion that is not where it was looked for: the service is unavailable (69).
    package struct Missing: Error, CustomStringConvertible {
        package let description: String
    }

    /// The program's path, checked: `$VARIABLE` when set, else beside the running pushseal
    /// binary. The error says where it looked and how to point elsewhere.
    package static func locate(_ name: String, override variable: String) throws(Missing) -> String {
        let program = path(name, override: variable)
        guard access(program, X_OK) == 0 else {
            if getenv(variable) != nil {
                throw Missing(description: "\(name) is not at \(program), where \(variable) points; set \(variable) to the program's path, or unset it to use the one beside pushseal")
            }
            throw Missing(description: "\(name) is not beside pushseal (looked for \(program)); install it there (Scripts/install.sh does), or set \(variable) to its path")
        }
        return program
    }

    /// The program's path: `$VARIABLE` when set, else beside the running pushseal binary.
    package static func path(_ name: String, override variable: String) -> String {
        if let path = getenv(variable) { return String(cString: path) }
        var buffer = [CChar](repeating: 0, count: 4_096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let executable = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : name
        let folder = executable.contains("/") ? String(executable[..<executable.lastIndex(of: "/")!]) : "."
        return folder + "/" + name
    }

    /// A QR code of a share, as text or PNG, is a few KiB.
    static let outputBound = InputBound(4 * 1024 * 1024, "a companion program's output", because: "a QR code's drawing is a few KiB")

    /// Runs `program` with `arguments`, `input` on its stdin (never in its arguments, which
    /// `ps` shows), and returns what it printed. Its stderr is pushseal's, so its own
    /// message reaches the user.
    package static func output(of program: String, _ arguments: [String], input: [UInt8]) throws(FileIOFailure) -> [UInt8] {
        guard access(program, X_OK) == 0 else {
            throw FileIOFailure(code: ENOENT, message: "\(program) is missing (it is built and installed beside pushseal)")
        }
        let child = try ChildProcess(program, [program] + arguments, stdin: .pipe, stdout: .pipe)
        // The input is small (a share): it fits the pipe, so writing it all first cannot stall.
        let wrote = Result { () throws(FileIOFailure) in try FileIO.writeAll(child.descriptor(.input), input) }
        child.close(.input)
        let read = Result { () throws(FileIOFailure) in try FileIO.readAll(child.descriptor(.output), bound: Self.outputBound) }
        child.close(.output)
        let status = child.wait() ?? 0
        guard status == 0 else {
            throw FileIOFailure(message: "\(program) failed (\(CommandOutcome.Ending(waitStatus: status).description))")
        }
        try wrote.get()
        return try read.get()
    }
}
