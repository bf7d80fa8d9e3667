/* a=crypto values from the network: a refusal names its reason, and what
 * parses writes back to a line that parses to the same tag, suite and key. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdp/sdp_crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    moat_sdp_crypto crypto;
    const char *why = NULL;
    int status = moat_sdp_crypto_parse((moat_sdp_span){(const char *)data, size}, &crypto, &why);
    if (status < 0) {
        if (!why || !*why)
            abort();
        return 0;
    }
    if (status == 1)
        return 0;
    if (crypto.key_salt_length != moat_sdp_crypto_key_salt_length(crypto.suite))
        abort();
    GString *line = g_string_new(NULL);
    moat_sdp_crypto_write(line, &crypto);
    if (line->len < 11 || memcmp(line->str, "a=crypto:", 9) != 0)
        abort();
    moat_sdp_crypto again;
    moat_sdp_span value = {line->str + 9, line->len - 11};
    if (moat_sdp_crypto_parse(value, &again, &why) != 0 || again.tag != crypto.tag ||
        again.suite != crypto.suite || again.key_salt_length != crypto.key_salt_length ||
        memcmp(again.key_salt, crypto.key_salt, crypto.key_salt_length) != 0 ||
        !moat_sdp_crypto_usable(&again))
        abort();
    (void)moat_sdp_crypto_choose(&crypto, 1, NULL);
    g_string_free(line, TRUE);
    return 0;
}
