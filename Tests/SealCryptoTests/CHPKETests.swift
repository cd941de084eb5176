import CHPKE
import COpenSSL
import Testing

/// The C under HPKE on its own: HKDF-SHA256 against RFC 5869's vectors, and the P-256
/// point, scalar and ECDH functions at their edges (points off the curve, scalars out of
/// range, the generator's known coordinates). `HPKETests` checks the whole against RFC 9180.
@Suite("CHPKE: HKDF and P-256 in C")
struct CHPKETests {
    // Read-only once made, as SealCrypto shares it.
    nonisolated(unsafe) static let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1)!

    /// The hex reader the NIST vectors use.
    static func bytes(_ hex: String) -> [UInt8] { hexBytes(hex) }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    /// One HKDF half through the C function; nil when it refuses.
    static func hkdf(extract: Bool, _ first: [UInt8], _ second: [UInt8], length: Int) -> [UInt8]? {
        let template = pushseal_hmac_sha256_template()
        defer { EVP_MAC_CTX_free(template) }
        var out = [UInt8](repeating: 0, count: length)
        let ok = pushseal_hkdf_sha256(template, extract ? 1 : 0, first, first.count, second, second.count, &out, length)
        return ok == 1 ? out : nil
    }

    @Test func hkdfMatchesRFC5869() {
        // Test case 1.
        let prk = Self.hkdf(extract: true, Self.bytes("000102030405060708090a0b0c"), [UInt8](repeating: 0x0b, count: 22), length: 32)
        #expect(prk.map(Self.hex) == "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
        let okm = Self.hkdf(extract: false, prk ?? [], Self.bytes("f0f1f2f3f4f5f6f7f8f9"), length: 32)
        #expect(okm.map(Self.hex) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf")
        // Test case 3: no salt (HashLen zeros) and no info.
        let prk3 = Self.hkdf(extract: true, [], [UInt8](repeating: 0x0b, count: 22), length: 32)
        #expect(prk3.map(Self.hex) == "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04")
        #expect(Self.hkdf(extract: false, prk3 ?? [], [], length: 16).map(Self.hex) == "8da4e775a563c18f715f802a063c5a31")
    }

    @Test func hkdfRefusesWhatOneBlockCannotGive() {
        #expect(Self.hkdf(extract: false, [UInt8](repeating: 1, count: 32), [], length: 33) == nil)
        #expect(Self.hkdf(extract: true, [], [1], length: 16) == nil, "extract always gives 32 bytes")
        var out = [UInt8](repeating: 0, count: 32)
        #expect(pushseal_hkdf_sha256(nil, 1, nil, 0, nil, 0, &out, 32) == 0)
    }

    static let generator =
        "04" + "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
        + "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"
    static let order = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"

    static func scalar(_ hex: String) -> OpaquePointer? { pushseal_p256_scalar(group, bytes(hex)) }

    static func publicPoint(_ scalar: OpaquePointer) -> [UInt8] {
        let point = pushseal_p256_public_point(group, scalar)!
        defer { EC_POINT_free(point) }
        var out = [UInt8](repeating: 0, count: 65)
        #expect(pushseal_p256_point_bytes(group, point, &out) == 1)
        return out
    }

    @Test func scalarsOutsideOneToNMinusOneAreRefused() {
        #expect(Self.scalar(String(repeating: "0", count: 64)) == nil)
        #expect(Self.scalar(Self.order) == nil)
        #expect(Self.scalar(String(repeating: "f", count: 64)) == nil)
        let last = Self.scalar("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550")
        #expect(last != nil)
        BN_clear_free(last)
    }

    @Test func oneTimesTheGeneratorIsTheGenerator() throws {
        let one = try #require(Self.scalar(String(repeating: "0", count: 63) + "1"))
        defer { BN_clear_free(one) }
        #expect(Self.hex(Self.publicPoint(one)) == Self.generator)
        var out = [UInt8](repeating: 0, count: 32)
        #expect(pushseal_p256_scalar_bytes(one, &out) == 1)
        #expect(out == [UInt8](repeating: 0, count: 31) + [1])
    }

    @Test func pointsOffTheCurveOrMisencodedAreRefused() {
        var good = Self.bytes(Self.generator)
        let point = pushseal_p256_point(Self.group, good, good.count)
        #expect(point != nil)
        EC_POINT_free(point)
        good[64] ^= 1
        #expect(pushseal_p256_point(Self.group, good, good.count) == nil, "off the curve")
        #expect(pushseal_p256_point(Self.group, Self.bytes(Self.generator), 64) == nil, "short")
        #expect(pushseal_p256_point(Self.group, [0x02] + Self.bytes(Self.generator).dropFirst(), 65) == nil, "not uncompressed")
        #expect(pushseal_p256_point(Self.group, [UInt8](repeating: 0, count: 65), 65) == nil, "infinity has no such encoding")
    }

    @Test func bothSidesOfECDHAgreeAndOneTimesAPointIsItsX() throws {
        let a = try #require(pushseal_p256_generate_scalar(Self.group))
        let b = try #require(pushseal_p256_generate_scalar(Self.group))
        defer {
            BN_clear_free(a)
            BN_clear_free(b)
        }
        let pointA = try #require(pushseal_p256_point(Self.group, Self.publicPoint(a), 65))
        let pointB = try #require(pushseal_p256_point(Self.group, Self.publicPoint(b), 65))
        defer {
            EC_POINT_free(pointA)
            EC_POINT_free(pointB)
        }
        var ab = [UInt8](repeating: 0, count: 32)
        var ba = [UInt8](repeating: 0, count: 32)
        #expect(pushseal_p256_ecdh(Self.group, a, pointB, &ab) == 1)
        #expect(pushseal_p256_ecdh(Self.group, b, pointA, &ba) == 1)
        #expect(ab == ba && ab != [UInt8](repeating: 0, count: 32))
        let one = try #require(Self.scalar(String(repeating: "0", count: 63) + "1"))
        defer { BN_clear_free(one) }
        var x = [UInt8](repeating: 0, count: 32)
        #expect(pushseal_p256_ecdh(Self.group, one, pointA, &x) == 1)
        #expect(x == Array(Self.publicPoint(a)[1...32]))
    }
}
