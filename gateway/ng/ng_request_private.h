/* Shared by ng_request.c (dictionary walk, flag strings) and
 * ng_request_keys.c (one setter per key). Not for other modules. */
#ifndef MOAT_NG_REQUEST_PRIVATE_H
#define MOAT_NG_REQUEST_PRIVATE_H

#include "ng/ng_request.h"

/* A value as a bencode item from the dictionary, or (item NULL) as the
 * text after '=' in a "key=value" flag string (not NUL-terminated). */
typedef struct {
    const moat_bencode *item;
    const char *text;
    size_t length;
} ng_value;

/* Setters return 0, 1 when the value has the wrong shape (the caller writes
 * "invalid value for <key>"), or -1 with their own message in error. */
typedef int (*ng_setter_fn)(moat_ng_request *request, const ng_value *value, char *error,
                            size_t error_size);
typedef struct {
    const char *name; /* canonical: lower case, hyphens */
    ng_setter_fn set;
} ng_key_setter;

const ng_key_setter *ng_key_setter_find(const char *key, size_t length);

/* Names equal with case, ' ', '-' and '_' folded. */
bool ng_name_equal(const char *name, size_t length, const char *canonical);
/* `name` starts with `prefix` (folded); *rest is the prefix's length. */
bool ng_name_prefix(const char *name, size_t length, const char *prefix, size_t *rest);

/* A NUL-terminated copy the request owns. */
const char *ng_request_own(moat_ng_request *request, const char *text, size_t length);
/* The value as a NUL-terminated string (copied when it came from a flag
 * string); -1 if it is not a string. */
int ng_value_text(moat_ng_request *request, const ng_value *value, const char **text,
                  size_t *length);

/* Calls fn for the value's string, or for each string of a list (other
 * items ignored). 1 if the value is neither; otherwise fn's first non-zero
 * status or 0. */
typedef int (*ng_text_fn)(moat_ng_request *request, const char *text, size_t length, char *error,
                          size_t error_size);
int ng_value_each(moat_ng_request *request, const ng_value *value, ng_text_fn fn, char *error,
                  size_t error_size);

/* One string of the "flags" list: "key=value" goes to that key's setter,
 * anything else to ng_flag_word. */
int ng_flag_apply(moat_ng_request *request, const char *flag, size_t length, char *error,
                  size_t error_size);
int ng_flag_word(moat_ng_request *request, const char *flag, size_t length, char *error,
                 size_t error_size);

#endif
