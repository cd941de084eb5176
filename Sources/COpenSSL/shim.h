#ifndef PUSHSEAL_COPENSSL_SHIM_H
#define PUSHSEAL_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/x509v3.h>
#include <sys/prctl.h>

// Swift cannot import function-like macros or the EVP_CTRL_* constants as typed values,
// so the few that SealCrypto needs are wrapped here.

static inline int pushseal_gcm_set_iv_length(EVP_CIPHER_CTX *ctx, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, length, NULL);
}

static inline int pushseal_gcm_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, length, tag);
}

static inline int pushseal_gcm_set_tag(EVP_CIPHER_CTX *ctx, const unsigned char *tag, int length) {
    // OpenSSL takes a non-const pointer here but only reads the expected tag.
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, length, (void *)tag);
}

// The self-signed certificate of `receive --listen` (TLSMaterial.swift).
static inline long pushseal_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

static inline int pushseal_x509_set_version3(X509 *certificate) {
    return X509_set_version(certificate, X509_VERSION_3);
}

static inline void pushseal_cleanse(void *pointer, size_t length) {
    OPENSSL_cleanse(pointer, length);
}

// prctl is variadic, which Swift cannot call. SealCrypto uses it to keep key material out
// of core dumps and away from ptrace by other users while the process holds keys.
static inline int pushseal_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static inline int pushseal_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

// HPKE's DHKEM(P-256) and HKDF, on OpenSSL 3.0's EVP interfaces (3.0 has no OSSL_HPKE_*).
// Building OSSL_PARAM arrays and the variadic key generation read poorly in Swift, so
// each step is one small function here; every secret buffer is cleansed before it is freed.

// A P-256 public key from its 65-byte uncompressed encoding, or NULL unless the point is
// on the curve and not the point at infinity (OpenSSL decodes and checks it, and the quick
// public check repeats both tests). P-256's cofactor is 1, so every such point has the
// group's prime order: the full check's extra scalar multiplication would prove nothing.
static inline EVP_PKEY *pushseal_p256_public(const unsigned char *point, size_t length) {
    if (length != 65 || point[0] != 0x04) return NULL;
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    if (build == NULL) return NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *context = NULL;
    if (OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1
        || OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point, length) != 1
        || (params = OSSL_PARAM_BLD_to_param(build)) == NULL
        || (context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) == NULL
        || EVP_PKEY_fromdata_init(context) != 1
        || EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    context = NULL;
    if (key != NULL) {
        context = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
        if (context == NULL || EVP_PKEY_public_check_quick(context) != 1) {
            EVP_PKEY_free(key);
            key = NULL;
        }
        EVP_PKEY_CTX_free(context);
    }
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    return key;
}

// A P-256 key pair from its 32-byte private scalar, which must be in [1, n-1]; the public
// point is computed from it. NULL otherwise.
static inline EVP_PKEY *pushseal_p256_private(const unsigned char *scalar) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *secret = BN_secure_new();
    EC_POINT *point = NULL;
    OSSL_PARAM_BLD *build = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *context = NULL;
    EVP_PKEY *key = NULL;
    unsigned char encoded[65];
    if (group == NULL || secret == NULL || BN_bin2bn(scalar, 32, secret) == NULL
        || BN_is_zero(secret) || BN_cmp(secret, EC_GROUP_get0_order(group)) >= 0
        || (point = EC_POINT_new(group)) == NULL
        || EC_POINT_mul(group, point, secret, NULL, NULL, NULL) != 1
        || EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, encoded, sizeof encoded, NULL) != 65
        || (build = OSSL_PARAM_BLD_new()) == NULL
        || OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1
        || OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded) != 1
        || OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, secret) != 1
        || (params = OSSL_PARAM_BLD_to_param(build)) == NULL
        || (context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) == NULL
        || EVP_PKEY_fromdata_init(context) != 1
        || EVP_PKEY_fromdata(context, &key, EVP_PKEY_KEYPAIR, params) != 1) {
        key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    // OSSL_PARAM_clear_free is 3.2's; here the scalar's copy is wiped by hand.
    OSSL_PARAM *copy = params != NULL ? OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_PRIV_KEY) : NULL;
    if (copy != NULL) OPENSSL_cleanse(copy->data, copy->data_size);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    EC_POINT_free(point);
    BN_clear_free(secret);
    EC_GROUP_free(group);
    return key;
}

// A fresh P-256 key pair from OpenSSL's random generator.
static inline EVP_PKEY *pushseal_p256_generate(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

// The 65-byte uncompressed public point of a P-256 key.
static inline int pushseal_p256_public_bytes(const EVP_PKEY *key, unsigned char *out) {
    size_t length = 0;
    return EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out, 65, &length) == 1 && length == 65;
}

// The 32-byte private scalar of a P-256 key pair, big-endian, left-padded.
static inline int pushseal_p256_private_bytes(const EVP_PKEY *key, unsigned char *out) {
    BIGNUM *secret = NULL;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &secret) != 1) return 0;
    int ok = BN_bn2binpad(secret, out, 32) == 32;
    BN_clear_free(secret);
    return ok;
}

// ECDH: the 32-byte x coordinate of private * peer. The peer was checked when it was made
// (pushseal_p256_public), so it is not checked again here.
static inline int pushseal_ecdh(EVP_PKEY *private_key, EVP_PKEY *peer, unsigned char *out) {
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_pkey(NULL, private_key, NULL);
    size_t length = 32;
    int ok = context != NULL && EVP_PKEY_derive_init(context) == 1
        && EVP_PKEY_derive_set_peer_ex(context, peer, 0) == 1
        && EVP_PKEY_derive(context, out, &length) == 1 && length == 32;
    EVP_PKEY_CTX_free(context);
    return ok;
}

// HKDF-SHA256 in one of its two halves (RFC 5869): extract (salt, ikm) -> 32-byte PRK, or
// expand (prk, info) -> length bytes.
// `kdf` is OpenSSL's HKDF, fetched once by the caller (EVP_KDF_fetch(NULL, "HKDF", NULL)).
static inline int pushseal_hkdf_sha256(EVP_KDF *kdf, int extract, const unsigned char *salt_or_prk, size_t first_length,
                                       const unsigned char *ikm_or_info, size_t second_length,
                                       unsigned char *out, size_t out_length) {
    EVP_KDF_CTX *context = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    if (context == NULL) return 0;
    int mode = extract ? EVP_KDF_HKDF_MODE_EXTRACT_ONLY : EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    // An empty salt is HKDF's default (HashLen zero bytes); OpenSSL wants it left out.
    static const unsigned char zeros[32] = {0};
    OSSL_PARAM params[5];
    int n = 0;
    params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    if (extract) {
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
            (void *)(first_length > 0 ? salt_or_prk : zeros), first_length > 0 ? first_length : sizeof zeros);
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm_or_info, second_length);
    } else {
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)salt_or_prk, first_length);
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)ikm_or_info, second_length);
    }
    params[n] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(context, out, out_length, params) == 1;
    EVP_KDF_CTX_free(context);
    return ok;
}

#endif
