#ifndef PUSHSEAL_COPENSSL_SHIM_H
#define PUSHSEAL_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/x509v3.h>
#include <sys/prctl.h>
#include <string.h>

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

#endif
