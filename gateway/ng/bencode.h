/* Bencode values (the encoding of rtpengine's ng control protocol): a small
 * tree of dictionaries, lists, byte strings and integers, a strict parser
 * with a depth and size bound, and an encoder. Not thread-safe per value;
 * values are owned by their parent, the root by whoever parsed or built it. */
#ifndef MOAT_BENCODE_H
#define MOAT_BENCODE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_BENCODE_STRING,
    MOAT_BENCODE_INTEGER,
    MOAT_BENCODE_LIST,
    MOAT_BENCODE_DICTIONARY,
} moat_bencode_type;

typedef struct moat_bencode moat_bencode;

/* Parses exactly one value from data[0..length); the bytes after it are
 * counted in *consumed (NULL: trailing bytes are an error). NULL with a
 * message in error on malformed, truncated or too deeply nested input. */
moat_bencode *moat_bencode_parse(const uint8_t *data, size_t length, size_t *consumed, char *error,
                                 size_t error_size);
void moat_bencode_free(moat_bencode *value);

moat_bencode_type moat_bencode_type_of(const moat_bencode *value);
/* Byte string (may hold NUL bytes): pointer and length; NULL if not a string. */
const char *moat_bencode_string(const moat_bencode *value, size_t *length);
/* Integer; false if not an integer. */
bool moat_bencode_integer(const moat_bencode *value, int64_t *out);
/* Lists and dictionaries: number of items; item i (dictionary: its value,
 * with its key in *key / *key_length when non-NULL). */
size_t moat_bencode_count(const moat_bencode *value);
const moat_bencode *moat_bencode_item(const moat_bencode *value, size_t index, const char **key,
                                      size_t *key_length);
/* Dictionary lookup by exact key; NULL when absent or not a dictionary. */
const moat_bencode *moat_bencode_get(const moat_bencode *dictionary, const char *key);

/* Building. The container takes ownership of `item`. Dictionary keys are
 * copied; setting an existing key replaces its value. */
moat_bencode *moat_bencode_new_dictionary(void);
moat_bencode *moat_bencode_new_list(void);
moat_bencode *moat_bencode_new_string(const char *data, size_t length);
moat_bencode *moat_bencode_new_cstring(const char *text);
moat_bencode *moat_bencode_new_integer(int64_t number);
void moat_bencode_set(moat_bencode *dictionary, const char *key, moat_bencode *item);
void moat_bencode_append(moat_bencode *list, moat_bencode *item);
/* Conveniences for replies. */
void moat_bencode_set_string(moat_bencode *dictionary, const char *key, const char *text);
void moat_bencode_set_integer(moat_bencode *dictionary, const char *key, int64_t number);

/* Appends the encoding of `value` to `out` (dictionary keys sorted, as the
 * format requires). */
void moat_bencode_encode(const moat_bencode *value, GByteArray *out);

#endif
