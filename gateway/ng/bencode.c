/* Bencode values: the tree, its strict parser (depth, item and length
 * bounds checked before every read) and its encoder (dictionary keys
 * sorted). Byte strings are stored with a NUL after their last byte so that
 * text values can be used as C strings; their length stays authoritative. */
#include "ng/bencode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this is refused (each level is a C stack frame). */
#define BENCODE_MAX_DEPTH 32
/* Items in one parse: bounds memory whatever the input (a 64 KiB datagram
 * of "le" pairs holds fewer than this). */
#define BENCODE_MAX_ITEMS 65536

typedef struct {
    char *key; /* NUL-terminated copy */
    size_t key_length;
    moat_bencode *value;
} bencode_entry;

struct moat_bencode {
    moat_bencode_type type;
    int64_t integer;
    char *bytes; /* strings: length bytes and a NUL */
    size_t length;
    bencode_entry *entries; /* lists (key NULL) and dictionaries */
    size_t count;
    size_t capacity;
};

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t position;
    size_t items;
    char *error;
    size_t error_size;
} bencode_reader;

static moat_bencode *value_new(moat_bencode_type type)
{
    moat_bencode *value = g_new0(moat_bencode, 1);
    value->type = type;
    return value;
}

void moat_bencode_free(moat_bencode *value)
{
    if (!value)
        return;
    for (size_t i = 0; i < value->count; i++) {
        g_free(value->entries[i].key);
        moat_bencode_free(value->entries[i].value);
    }
    g_free(value->entries);
    g_free(value->bytes);
    g_free(value);
}

static void entry_append(moat_bencode *container, char *key, size_t key_length, moat_bencode *item)
{
    if (container->count == container->capacity) {
        container->capacity = container->capacity ? container->capacity * 2 : 4;
        container->entries = g_renew(bencode_entry, container->entries, container->capacity);
    }
    container->entries[container->count++] = (bencode_entry){key, key_length, item};
}

/* ---- parsing ---- */

static int fail(bencode_reader *reader, const char *what)
{
    snprintf(reader->error, reader->error_size, "%s at offset %zu", what, reader->position);
    return -1;
}

static bool at_end(const bencode_reader *reader)
{
    return reader->position >= reader->length;
}

static uint8_t peek(const bencode_reader *reader)
{
    return reader->data[reader->position];
}

/* Decimal digits up to `terminator`; optional minus sign when allowed.
 * Overflow of int64_t is an error. Leading zeros are accepted (lenient,
 * as rtpengine is); "-0" and an empty number are not. */
static int read_number(bencode_reader *reader, char terminator, bool allow_negative, int64_t *out)
{
    bool negative = false;
    if (!at_end(reader) && peek(reader) == '-' && allow_negative) {
        negative = true;
        reader->position++;
    }
    uint64_t magnitude = 0;
    size_t digits = 0;
    const uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    while (!at_end(reader) && peek(reader) >= '0' && peek(reader) <= '9') {
        uint64_t digit = (uint64_t)(peek(reader) - '0');
        if (magnitude > (limit - digit) / 10u)
            return fail(reader, "integer overflow");
        magnitude = magnitude * 10u + digit;
        digits++;
        reader->position++;
    }
    if (at_end(reader))
        return fail(reader, "truncated number");
    if (digits == 0 || peek(reader) != (uint8_t)terminator)
        return fail(reader, "malformed number");
    if (negative && magnitude == 0)
        return fail(reader, "negative zero");
    reader->position++; /* terminator */
    if (negative)
        *out = magnitude == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)magnitude;
    else
        *out = (int64_t)magnitude;
    return 0;
}

/* "<length>:<bytes>": the length is checked against what is left before
 * anything is copied. */
static int read_bytes(bencode_reader *reader, char **out, size_t *out_length)
{
    int64_t length = 0;
    if (read_number(reader, ':', false, &length) != 0)
        return -1;
    if ((uint64_t)length > reader->length - reader->position)
        return fail(reader, "string runs past the end");
    char *bytes = g_malloc((size_t)length + 1);
    memcpy(bytes, reader->data + reader->position, (size_t)length);
    bytes[length] = '\0';
    reader->position += (size_t)length;
    *out = bytes;
    *out_length = (size_t)length;
    return 0;
}

static moat_bencode *read_value(bencode_reader *reader, unsigned depth);

static moat_bencode *read_container(bencode_reader *reader, unsigned depth, bool dictionary)
{
    if (depth >= BENCODE_MAX_DEPTH) {
        fail(reader, "nesting too deep");
        return NULL;
    }
    reader->position++; /* 'l' or 'd' */
    moat_bencode *container = value_new(dictionary ? MOAT_BENCODE_DICTIONARY : MOAT_BENCODE_LIST);
    for (;;) {
        if (at_end(reader)) {
            fail(reader, dictionary ? "truncated dictionary" : "truncated list");
            break;
        }
        if (peek(reader) == 'e') {
            reader->position++;
            return container;
        }
        char *key = NULL;
        size_t key_length = 0;
        if (dictionary && (peek(reader) < '0' || peek(reader) > '9')) {
            fail(reader, "dictionary key is not a string");
            break;
        }
        if (dictionary && read_bytes(reader, &key, &key_length) != 0)
            break;
        moat_bencode *item = read_value(reader, depth + 1);
        if (!item) {
            g_free(key);
            break;
        }
        /* Keys are kept in the order received (Kamailio does not sort);
         * a repeated key is kept too, and moat_bencode_get finds the first. */
        entry_append(container, key, key_length, item);
    }
    moat_bencode_free(container);
    return NULL;
}

static moat_bencode *read_value(bencode_reader *reader, unsigned depth)
{
    if (at_end(reader)) {
        fail(reader, "truncated value");
        return NULL;
    }
    if (++reader->items > BENCODE_MAX_ITEMS) {
        fail(reader, "too many items");
        return NULL;
    }
    uint8_t first = peek(reader);
    if (first == 'd' || first == 'l')
        return read_container(reader, depth, first == 'd');
    if (first == 'i') {
        reader->position++;
        int64_t number = 0;
        if (read_number(reader, 'e', true, &number) != 0)
            return NULL;
        return moat_bencode_new_integer(number);
    }
    if (first >= '0' && first <= '9') {
        moat_bencode *value = value_new(MOAT_BENCODE_STRING);
        if (read_bytes(reader, &value->bytes, &value->length) == 0)
            return value;
        g_free(value);
        return NULL;
    }
    fail(reader, "not a bencode value");
    return NULL;
}

moat_bencode *moat_bencode_parse(const uint8_t *data, size_t length, size_t *consumed, char *error,
                                 size_t error_size)
{
    char ignored[8];
    bencode_reader reader = {
        .data = data,
        .length = data ? length : 0,
        .error = error ? error : ignored,
        .error_size = error ? error_size : sizeof ignored,
    };
    moat_bencode *value = read_value(&reader, 0);
    if (!value)
        return NULL;
    if (!consumed && reader.position != reader.length) {
        fail(&reader, "trailing bytes");
        moat_bencode_free(value);
        return NULL;
    }
    if (consumed)
        *consumed = reader.position;
    return value;
}

/* ---- access ---- */

moat_bencode_type moat_bencode_type_of(const moat_bencode *value)
{
    return value->type;
}

const char *moat_bencode_string(const moat_bencode *value, size_t *length)
{
    if (!value || value->type != MOAT_BENCODE_STRING)
        return NULL;
    if (length)
        *length = value->length;
    return value->bytes ? value->bytes : "";
}

bool moat_bencode_integer(const moat_bencode *value, int64_t *out)
{
    if (!value || value->type != MOAT_BENCODE_INTEGER)
        return false;
    *out = value->integer;
    return true;
}

size_t moat_bencode_count(const moat_bencode *value)
{
    if (!value || (value->type != MOAT_BENCODE_LIST && value->type != MOAT_BENCODE_DICTIONARY))
        return 0;
    return value->count;
}

const moat_bencode *moat_bencode_item(const moat_bencode *value, size_t index, const char **key,
                                      size_t *key_length)
{
    if (index >= moat_bencode_count(value))
        return NULL;
    const bencode_entry *entry = &value->entries[index];
    if (key)
        *key = entry->key;
    if (key_length)
        *key_length = entry->key_length;
    return entry->value;
}

static bencode_entry *find_key(const moat_bencode *dictionary, const char *key)
{
    if (!dictionary || dictionary->type != MOAT_BENCODE_DICTIONARY)
        return NULL;
    size_t length = strlen(key);
    for (size_t i = 0; i < dictionary->count; i++) {
        bencode_entry *entry = &dictionary->entries[i];
        if (entry->key_length == length && memcmp(entry->key, key, length) == 0)
            return entry;
    }
    return NULL;
}

const moat_bencode *moat_bencode_get(const moat_bencode *dictionary, const char *key)
{
    bencode_entry *entry = find_key(dictionary, key);
    return entry ? entry->value : NULL;
}

/* ---- building ---- */

moat_bencode *moat_bencode_new_dictionary(void)
{
    return value_new(MOAT_BENCODE_DICTIONARY);
}

moat_bencode *moat_bencode_new_list(void)
{
    return value_new(MOAT_BENCODE_LIST);
}

moat_bencode *moat_bencode_new_string(const char *data, size_t length)
{
    moat_bencode *value = value_new(MOAT_BENCODE_STRING);
    value->bytes = g_malloc(length + 1);
    if (length)
        memcpy(value->bytes, data, length);
    value->bytes[length] = '\0';
    value->length = length;
    return value;
}

moat_bencode *moat_bencode_new_cstring(const char *text)
{
    return moat_bencode_new_string(text, strlen(text));
}

moat_bencode *moat_bencode_new_integer(int64_t number)
{
    moat_bencode *value = value_new(MOAT_BENCODE_INTEGER);
    value->integer = number;
    return value;
}

void moat_bencode_set(moat_bencode *dictionary, const char *key, moat_bencode *item)
{
    g_return_if_fail(dictionary && dictionary->type == MOAT_BENCODE_DICTIONARY && item);
    bencode_entry *entry = find_key(dictionary, key);
    if (entry) {
        moat_bencode_free(entry->value);
        entry->value = item;
        return;
    }
    entry_append(dictionary, g_strdup(key), strlen(key), item);
}

void moat_bencode_append(moat_bencode *list, moat_bencode *item)
{
    g_return_if_fail(list && list->type == MOAT_BENCODE_LIST && item);
    entry_append(list, NULL, 0, item);
}

void moat_bencode_set_string(moat_bencode *dictionary, const char *key, const char *text)
{
    moat_bencode_set(dictionary, key, moat_bencode_new_cstring(text));
}

void moat_bencode_set_integer(moat_bencode *dictionary, const char *key, int64_t number)
{
    moat_bencode_set(dictionary, key, moat_bencode_new_integer(number));
}

/* ---- encoding ---- */

static void encode_bytes(const char *bytes, size_t length, GByteArray *out)
{
    char prefix[24];
    int n = snprintf(prefix, sizeof prefix, "%zu:", length);
    g_byte_array_append(out, (const guint8 *)prefix, (guint)n);
    if (length)
        g_byte_array_append(out, (const guint8 *)bytes, (guint)length);
}

/* Raw byte order, the shorter key first on a common prefix (BEP 3). */
static int compare_entries(const void *a, const void *b)
{
    const bencode_entry *x = *(const bencode_entry *const *)a;
    const bencode_entry *y = *(const bencode_entry *const *)b;
    size_t common = x->key_length < y->key_length ? x->key_length : y->key_length;
    int order = memcmp(x->key, y->key, common);
    if (order != 0)
        return order;
    return (x->key_length > y->key_length) - (x->key_length < y->key_length);
}

static void encode_dictionary(const moat_bencode *value, GByteArray *out)
{
    const bencode_entry **sorted = g_new(const bencode_entry *, value->count ? value->count : 1);
    for (size_t i = 0; i < value->count; i++)
        sorted[i] = &value->entries[i];
    qsort(sorted, value->count, sizeof *sorted, compare_entries);
    g_byte_array_append(out, (const guint8 *)"d", 1);
    for (size_t i = 0; i < value->count; i++) {
        encode_bytes(sorted[i]->key, sorted[i]->key_length, out);
        moat_bencode_encode(sorted[i]->value, out);
    }
    g_byte_array_append(out, (const guint8 *)"e", 1);
    g_free(sorted);
}

void moat_bencode_encode(const moat_bencode *value, GByteArray *out)
{
    char number[32];
    switch (value->type) {
    case MOAT_BENCODE_STRING:
        encode_bytes(value->bytes, value->length, out);
        return;
    case MOAT_BENCODE_INTEGER: {
        int n = snprintf(number, sizeof number, "i%" G_GINT64_FORMAT "e", value->integer);
        g_byte_array_append(out, (const guint8 *)number, (guint)n);
        return;
    }
    case MOAT_BENCODE_LIST:
        g_byte_array_append(out, (const guint8 *)"l", 1);
        for (size_t i = 0; i < value->count; i++)
            moat_bencode_encode(value->entries[i].value, out);
        g_byte_array_append(out, (const guint8 *)"e", 1);
        return;
    case MOAT_BENCODE_DICTIONARY:
        encode_dictionary(value, out);
        return;
    }
}
