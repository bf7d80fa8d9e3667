/* JSON to bencode for the ng tests (see ng_test_json.h). */
#include "ng_test_json.h"

#include <jansson.h>
#include <stdio.h>

static void encode(json_t *value, GByteArray *out)
{
    char number[32];
    if (json_is_string(value)) {
        size_t length = json_string_length(value);
        int n = snprintf(number, sizeof number, "%zu:", length);
        g_byte_array_append(out, (const guint8 *)number, (guint)n);
        g_byte_array_append(out, (const guint8 *)json_string_value(value), (guint)length);
    } else if (json_is_integer(value)) {
        int n = snprintf(number, sizeof number, "i%" JSON_INTEGER_FORMAT "e",
                         json_integer_value(value));
        g_byte_array_append(out, (const guint8 *)number, (guint)n);
    } else if (json_is_array(value)) {
        size_t i;
        json_t *item;
        g_byte_array_append(out, (const guint8 *)"l", 1);
        json_array_foreach(value, i, item)
        {
            encode(item, out);
        }
        g_byte_array_append(out, (const guint8 *)"e", 1);
    } else if (json_is_object(value)) {
        const char *key;
        json_t *item;
        g_byte_array_append(out, (const guint8 *)"d", 1);
        json_object_foreach(value, key, item)
        {
            json_t *name = json_string(key);
            encode(name, out);
            json_decref(name);
            encode(item, out);
        }
        g_byte_array_append(out, (const guint8 *)"e", 1);
    } else {
        g_error("no bencode for this JSON value");
    }
}

GByteArray *ng_test_bencode(const char *text)
{
    json_error_t error;
    json_t *value = json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_ANY, &error);
    if (!value)
        g_error("test JSON: %s (line %d): %s", error.text, error.line, text);
    GByteArray *out = g_byte_array_new();
    encode(value, out);
    json_decref(value);
    return out;
}
