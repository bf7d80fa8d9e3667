/* Bencode from the network: whatever parses must re-encode to something that
 * parses to the same encoding (the encoder sorts keys, so the second round
 * trip is byte-exact), and every refusal names its reason. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng/bencode.h"
#include "ng/ng_request.h"

static GByteArray *encode(const moat_bencode *value)
{
    GByteArray *out = g_byte_array_new();
    moat_bencode_encode(value, out);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char error[160] = "";
    size_t consumed = 0;
    moat_bencode *value = moat_bencode_parse(data, size, &consumed, error, sizeof error);
    if (!value) {
        if (error[0] == '\0')
            abort();
        return 0;
    }
    if (consumed > size)
        abort();
    GByteArray *first = encode(value);
    moat_bencode *again = moat_bencode_parse(first->data, first->len, NULL, error, sizeof error);
    if (!again) {
        fprintf(stderr, "re-encoding does not parse: %s\n", error);
        abort();
    }
    GByteArray *second = encode(again);
    if (first->len != second->len || memcmp(first->data, second->data, first->len) != 0)
        abort();
    /* Normalising as a command never fails open: 0, or -1 with a reason. */
    moat_ng_request request;
    error[0] = '\0';
    if (moat_ng_request_parse(value, &request, error, sizeof error) != 0 && error[0] == '\0')
        abort();
    moat_ng_request_clear(&request);
    g_byte_array_free(first, TRUE);
    g_byte_array_free(second, TRUE);
    moat_bencode_free(again);
    moat_bencode_free(value);
    return 0;
}
