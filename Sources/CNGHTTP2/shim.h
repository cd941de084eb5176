#ifndef PUSHSEAL_CNGHTTP2_SHIM_H
#define PUSHSEAL_CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>
#include <netdb.h>

// Swift cannot import function-like macros, so the few the listener needs are wrapped here.

static inline int pushseal_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

// Partial writes and a moving buffer let a connection hand SSL_write whatever the HTTP/2
// session has ready, and retry from a grown buffer after SSL_ERROR_WANT_WRITE.
static inline long pushseal_ssl_ctx_set_write_modes(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

// The options every context of pushseal's TLS profile has.
static inline long pushseal_ssl_profile_options(void) {
    return (long)(SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
}

static inline long pushseal_ssl_ctx_set_options(SSL_CTX *ctx) {
    // No renegotiation (HTTP/2 forbids it) and no compression (CRIME).
    return (long)SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}

// SNI: the host name the client asks for, so a server with many names picks the right one.
static inline long pushseal_ssl_set_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

#endif
