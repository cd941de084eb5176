#ifndef PUSHSEAL_CHPKE_H
#define PUSHSEAL_CHPKE_H

// HPKE's DHKEM(P-256) and HKDF-SHA256 for SealCrypto's HPKE (OpenSSL 3.0 has no OSSL_HPKE_*).
//
// The key agreement works on the curve's own objects (EC_GROUP, EC_POINT, BIGNUM), which
// is what OpenSSL's EC provider itself calls underneath EVP_PKEY_derive and EVP_PKEY_keygen
// (ossl_ecdh_simple_compute_key, ec_generate_key): the same constant-time scalar
// multiplication, without building an EVP_PKEY from OSSL_PARAMs per message. Private scalars
// live in secure-heap BIGNUMs marked constant-time and are freed with BN_clear_free; every
// intermediate is cleared. Compiled as C with every warning an error (chpke.c), and
// tested on its own (SealCryptoTests/CHPKETests).

#include <stddef.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

// A P-256 point from its 65-byte uncompressed encoding, or NULL unless it is on the curve
// (EC_POINT_oct2point checks that) and not the point at infinity (which has no such
// encoding). P-256's cofactor is 1, so every such point has the group's prime order.
EC_POINT *pushseal_p256_point(const EC_GROUP *group, const unsigned char *bytes, size_t length);

// The 65-byte uncompressed encoding of a point.
int pushseal_p256_point_bytes(const EC_GROUP *group, const EC_POINT *point, unsigned char *out);

BIGNUM *pushseal_p256_new_scalar(void);

// A private scalar from 32 big-endian bytes, or NULL unless it is in [1, n-1].
BIGNUM *pushseal_p256_scalar(const EC_GROUP *group, const unsigned char *bytes);

// A fresh private scalar, uniform in [1, n-1], from OpenSSL's private random generator:
// OpenSSL's own EC key generation, step for step.
BIGNUM *pushseal_p256_generate_scalar(const EC_GROUP *group);

// The public point of a private scalar: scalar * G.
EC_POINT *pushseal_p256_public_point(const EC_GROUP *group, const BIGNUM *scalar);

// The 32-byte private scalar, big-endian, left-padded.
int pushseal_p256_scalar_bytes(const BIGNUM *scalar, unsigned char *out);

// ECDH: the 32-byte x coordinate of scalar * peer. The peer was checked when it was
// decoded (pushseal_p256_point); a result at infinity (impossible for a scalar in range
// and a point of prime order) is refused all the same.
int pushseal_p256_ecdh(const EC_GROUP *group, const BIGNUM *scalar, const EC_POINT *peer, unsigned char *out);

// HMAC-SHA256 contexts for HKDF: `template` has its digest set once; each HKDF step dups it
// (rather than fetching HMAC and parsing its parameters at each step) and frees the copy, which
// OpenSSL cleanses.
EVP_MAC_CTX *pushseal_hmac_sha256_template(void);

// HKDF-SHA256 (RFC 5869) in one of its two halves, each one HMAC:
// extract: PRK = HMAC(salt, ikm), 32 bytes (an empty salt is HashLen zero bytes);
// expand, for out_length <= 32: OKM = first out_length bytes of HMAC(prk, info || 0x01).
int pushseal_hkdf_sha256(const EVP_MAC_CTX *template, int extract, const unsigned char *salt_or_prk, size_t first_length, const unsigned char *ikm_or_info, size_t second_length, unsigned char *out, size_t out_length);

#endif
