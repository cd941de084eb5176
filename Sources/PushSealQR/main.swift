import CPNG
import CQRencode

#if canImport(Glibc)
import Glibc
#endif

// pushseal-qr: the QR code of one key share, for `pushseal keys export --qr` and `--qr-png`.
//
//   pushseal-qr text   the share (stdin) as terminal lines of Unicode half blocks, coloured
//                      dark on light whatever the terminal's colours
//   pushseal-qr plain  the same lines without colour codes, for a file or a pipe
//   pushseal-qr png    the share (stdin) as a PNG image, on stdout
//
// The share comes on stdin, never as an argument, since a psk1 share is a secret and
// arguments show in `ps`. Its own program because Debian ships libqrencode only as a
// shared library and pushseal itself is one static binary; pushseal runs it from beside
// itself, and writes what it prints where the user asked.

/// Dark modules black on a light ground whatever the terminal's colours: cameras read
/// dark-on-light codes, and a dark terminal would otherwise invert it.
let darkOnLight = "\u{1B}[30;107m"
let resetColours = "\u{1B}[0m"

func fail(_ message: String) -> Never {
    let line = "pushseal-qr: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

func readShare() -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4_096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
        guard bytes.count <= 2_048 else { fail("a share is at most 2048 bytes") }
    }
    while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
    for index in buffer.indices { buffer[index] = 0 }
    return bytes
}

/// The code's modules, row by row: true is dark.
struct Matrix {
    let width: Int
    var modules: [Bool]

    init(encoding bytes: [UInt8]) {
        // Error correction M (15% of the code may be damaged), 8-bit data: the share byte for byte.
        guard let code = bytes.withUnsafeBufferPointer({ QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M) }) else {
            fail("libqrencode could not encode the share: \(String(cString: strerror(errno)))")
        }
        defer { QRcode_free(code) }
        width = Int(code.pointee.width)
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        modules = data.map { $0 & 1 == 1 }
        _ = memset(code.pointee.data, 0, width * width)
    }

    func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < width && y < width && modules[y * width + x]
    }
}

/// Two rows of modules per line of text: ▀ top dark, ▄ bottom dark, █ both, space neither,
/// inside the standard quiet zone of 4 modules a camera needs to find the code.
func terminalText(_ matrix: Matrix, coloured: Bool, margin: Int = 4) -> String {
    var out = ""
    var y = -margin
    while y < matrix.width + margin {
        if coloured { out += darkOnLight }
        for x in -margin..<(matrix.width + margin) {
            switch (matrix.isDark(x, y), matrix.isDark(x, y + 1)) {
            case (true, true): out += "█"
            case (true, false): out += "▀"
            case (false, true): out += "▄"
            case (false, false): out += " "
            }
        }
        out += (coloured ? resetColours : "") + "\n"
        y += 2
    }
    return out
}

/// An 8-bit grey PNG, `scale` pixels per module and the standard quiet zone of 4 modules.
func pngImage(_ matrix: Matrix, scale: Int = 8, margin: Int = 4) -> [UInt8] {
    let side = (matrix.width + 2 * margin) * scale
    var pixels = [UInt8](repeating: 255, count: side * side)
    for y in 0..<matrix.width {
        for x in 0..<matrix.width where matrix.isDark(x, y) {
            for row in 0..<scale {
                let start = ((y + margin) * scale + row) * side + (x + margin) * scale
                for column in 0..<scale { pixels[start + column] = 0 }
            }
        }
    }
    var image = png_image()
    image.version = png_uint_32(PNG_IMAGE_VERSION)
    image.width = png_uint_32(side)
    image.height = png_uint_32(side)
    image.format = png_uint_32(PNG_FORMAT_GRAY)
    var size: png_alloc_size_t = 0
    guard png_image_write_to_memory(&image, nil, &size, 0, pixels, 0, nil) != 0 else { fail("libpng: \(message(of: image))") }
    var png = [UInt8](repeating: 0, count: Int(size))
    let written = png.withUnsafeMutableBytes { png_image_write_to_memory(&image, $0.baseAddress, &size, 0, pixels, 0, nil) }
    guard written != 0 else { fail("libpng: \(message(of: image))") }
    png_image_free(&image)
    return Array(png.prefix(Int(size)))
}

func message(of image: png_image) -> String {
    withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}

func writeAll(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let count = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { fail("cannot write: \(String(cString: strerror(errno)))") }
        offset += count
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let mode = arguments.first, ["text", "plain", "png"].contains(mode) else {
    fail("usage: pushseal-qr text|plain|png < share")
}
let share = readShare()
guard !share.isEmpty else { fail("no share on stdin") }
let matrix = Matrix(encoding: share)
writeAll(mode == "png" ? pngImage(matrix) : Array(terminalText(matrix, coloured: mode == "text").utf8))
