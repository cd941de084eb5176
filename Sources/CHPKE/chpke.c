// Every warning is an error here: this is key-handling C, and nothing else compiles it.
#pragma clang diagnostic error "-Wall"
#pragma clang diagnostic error "-Wextra"
#pragma clang diagnostic error "-Wconversion"
#pragma clang diagnostic error "-Wshadow"

#include "chpke.h"

#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/rand.h>

// A P-256 point from its 65-byte uncompressed encoding, or NULL unless it is on the curve
// (EC_POINT_oct2point checks that) and not the point at infinity (which has no such
// encoding). P-256's cofactor is 1, so every such point has the group's prime order.
EC_POINT *pushseal_p256_point(const EC_GROUP *group, const unsigned char *bytes, size_t length) {
    if (length != 65 || bytes[0] != 0x04) return NULL;
    EC_POINT *point = EC_POINT_new(group);
    if (point == NULL) return NULL;
    if (EC_POINT_oct2point(group, point, bytes, length, NULL) != 1 || EC_POINT_is_at_infinity(group, point)) {
        EC_POINT_free(point);
        return NULL;
    }
    return point;
}

// The 65-byte uncompressed encoding of a point.
int pushseal_p256_point_bytes(const EC_GROUP *group, const EC_POINT *point, unsigned char *out) {
    return EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, out, 65, NULL) == 65;
}

BIGNUM *pushseal_p256_new_scalar(void) {
    BIGNUM *scalar = BN_secure_new();
    if (scalar != NULL) BN_set_flags(scalar, BN_FLG_CONSTTIME);
    return scalar;
}

// A private scalar from 32 big-endian bytes, or NULL unless it is in [1, n-1].
BIGNUM *pushseal_p256_scalar(const EC_GROUP *group, const unsigned char *bytes) {
    BIGNUM *scalar = pushseal_p256_new_scalar();
    if (scalar == NULL) return NULL;
    if (BN_bin2bn(bytes, 32, scalar) == NULL || BN_is_zero(scalar) || BN_cmp(scalar, EC_GROUP_get0_order(group)) >= 0) {
        BN_clear_free(scalar);
        return NULL;
    }
    return scalar;
}

// A fresh private scalar, uniform in [1, n-1], from OpenSSL's private random generator:
// OpenSSL's own EC key generation, step for step.
BIGNUM *pushseal_p256_generate_scalar(const EC_GROUP *group) {
    BIGNUM *scalar = pushseal_p256_new_scalar();
    if (scalar == NULL) return NULL;
    do {
        if (BN_priv_rand_range_ex(scalar, EC_GROUP_get0_order(group), 0, NULL) != 1) {
            BN_clear_free(scalar);
            return NULL;
        }
    } while (BN_is_zero(scalar));
    return scalar;
}

// The public point of a private scalar: scalar * G.
EC_POINT *pushseal_p256_public_point(const EC_GROUP *group, const BIGNUM *scalar) {
    EC_POINT *point = EC_POINT_new(group);
    if (point == NULL) return NULL;
    if (EC_POINT_mul(group, point, scalar, NULL, NULL, NULL) != 1) {
        EC_POINT_free(point);
        return NULL;
    }
    return point;
}

// The 32-byte private scalar, big-endian, left-padded.
int pushseal_p256_scalar_bytes(const BIGNUM *scalar, unsigned char *out) {
    return BN_bn2binpad(scalar, out, 32) == 32;
}

// ECDH: the 32-byte x coordinate of scalar * peer. The peer was checked when it was
// decoded (pushseal_p256_point); a result at infinity (impossible for a scalar in range
// and a point of prime order) is refused all the same.
int pushseal_p256_ecdh(const EC_GROUP *group, const BIGNUM *scalar, const EC_POINT *peer, unsigned char *out) {
    BN_CTX *context = BN_CTX_secure_new();
    EC_POINT *shared = EC_POINT_new(group);
    BIGNUM *x = NULL;
    int ok = 0;
    if (context != NULL && shared != NULL) {
        BN_CTX_start(context);
        x = BN_CTX_get(context);
        ok = x != NULL && EC_POINT_mul(group, shared, NULL, peer, scalar, context) == 1
            && !EC_POINT_is_at_infinity(group, shared)
            && EC_POINT_get_affine_coordinates(group, shared, x, NULL, context) == 1
            && BN_bn2binpad(x, out, 32) == 32;
        BN_CTX_end(context);
    }
    EC_POINT_clear_free(shared);
    BN_CTX_free(context);  // a secure BN_CTX clears what it held
    return ok;
}

// HMAC-SHA256 contexts for HKDF: `template` has its digest set once; each HKDF step dups it
// (rather than fetching HMAC and parsing its parameters at each step) and frees the copy, which
// OpenSSL cleanses.
EVP_MAC_CTX *pushseal_hmac_sha256_template(void) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);  // the context keeps its own reference
    if (context == NULL) return NULL;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_CTX_set_params(context, params) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}

// HKDF-SHA256 (RFC 5869) in one of its two halves, each one HMAC:
// extract: PRK = HMAC(salt, ikm), 32 bytes (an empty salt is HashLen zero bytes);
// expand, for out_length <= 32: OKM = first out_length bytes of HMAC(prk, info || 0x01).
int pushseal_hkdf_sha256(const EVP_MAC_CTX *template, int extract,
                                       const unsigned char *salt_or_prk, size_t first_length,
                                       const unsigned char *ikm_or_info, size_t second_length,
                                       unsigned char *out, size_t out_length) {
    static const unsigned char zeros[32] = {0};
    static const unsigned char counter = 0x01;
    if (template == NULL || out_length > 32 || (extract && out_length != 32)) return 0;
    EVP_MAC_CTX *context = EVP_MAC_CTX_dup(template);
    if (context == NULL) return 0;
    const unsigned char *key = salt_or_prk;
    size_t key_length = first_length;
    if (extract && first_length == 0) {
        key = zeros;
        key_length = sizeof zeros;
    }
    unsigned char mac[32];
    size_t mac_length = 0;
    int ok = EVP_MAC_init(context, key, key_length, NULL) == 1
        && (second_length == 0 || EVP_MAC_update(context, ikm_or_info, second_length) == 1)
        && (extract || EVP_MAC_update(context, &counter, 1) == 1)
        && EVP_MAC_final(context, mac, &mac_length, sizeof mac) == 1 && mac_length == 32;
    if (ok) memcpy(out, mac, out_length);
    OPENSSL_cleanse(mac, sizeof mac);
    EVP_MAC_CTX_free(context);
    return ok;
}

