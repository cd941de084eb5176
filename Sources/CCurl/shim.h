#ifndef PUSHSEAL_CCURL_SHIM_H
#define PUSHSEAL_CCURL_SHIM_H

#include <curl/curl.h>
#include <unistd.h>

// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift
// cannot call: one typed wrapper per kind of argument.

static inline CURLcode pushseal_easy_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode pushseal_easy_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode pushseal_easy_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

typedef size_t (*pushseal_data_callback)(char *data, size_t size, size_t count, void *user);

static inline CURLcode pushseal_easy_callback(CURL *easy, CURLoption option, pushseal_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

typedef int (*pushseal_debug_callback)(CURL *easy, curl_infotype type, char *data, size_t size, void *user);

static inline CURLcode pushseal_easy_debug(CURL *easy, pushseal_debug_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, callback);
}

static inline CURLMcode pushseal_multi_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline long pushseal_response_code(CURL *easy) {
    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

static inline void *pushseal_private(CURL *easy) {
    char *value = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &value);
    return value;
}

// CURLMsg's result lives in a union Swift imports awkwardly.
static inline CURLcode pushseal_message_result(CURLMsg *message) {
    return message->data.result;
}

#endif
