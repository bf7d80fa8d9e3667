/* libFuzzer target for the "srtp" member of POST .../ingest
 * (http/ingest_srtp.c): any JSON value (the input parsed as JSON; what does
 * not parse is tried as a JSON string, the key's own alphabet), through
 * moat_ingest_srtp_parse. Checked: a success names a known suite and gives
 * a key text that decodes to exactly that suite's key||salt, the keying's
 * lengths match the suite; a failure leaves a message and no key text. */
#include "http/ingest_srtp.h"
#include "sdp/sdes_keys.h"

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(json_t *value)
{
    moat_srtp_keying keys;
    char *key_text = NULL;
    const char *suite = NULL;
    char error[160] = "";
    if (moat_ingest_srtp_parse(value, &keys, &key_text, &suite, error, sizeof error) != 0) {
        if (key_text || error[0] == '\0')
            abort();
        return;
    }
    moat_srtp_profile profile = moat_sdp_crypto_suite_from_name(suite, strlen(suite));
    gsize length = 0;
    guchar *decoded = g_base64_decode(key_text, &length);
    if (!profile || length != moat_sdp_crypto_key_salt_length(profile) || keys.profile != profile ||
        keys.key_length + keys.salt_length != length ||
        memcmp(decoded, keys.remote_key, keys.key_length) != 0)
        abort();
    g_free(decoded);
    moat_sdes_keying_clear(&keys);
    moat_ingest_srtp_free_key(key_text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *value = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!value) {
        /* As a key: {"suite": <first suite>, "key": <the bytes>}. */
        char *text = g_strndup((const char *)data, size);
        value = json_pack("{s:s, s:s}", "suite", "AES_CM_128_HMAC_SHA1_80", "key", text);
        g_free(text);
    }
    if (value)
        check(value);
    json_decref(value);
    return 0;
}
