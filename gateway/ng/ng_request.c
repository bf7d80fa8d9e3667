/* ng commands normalised: the top-level keys of the command dictionary and
 * the strings of its "flags" list mapped onto moat_ng_request. Names are
 * compared with ng_name_equal (case, spaces, hyphens and underscores
 * ignored); the per-key setters live in ng_request_keys.c. */
#include "ng/ng_request.h"
#include "ng/ng_request_private.h"

#include <stdio.h>
#include <string.h>

static const char *const command_names[] = {
    [MOAT_NG_UNKNOWN] = "unknown", [MOAT_NG_PING] = "ping",     [MOAT_NG_OFFER] = "offer",
    [MOAT_NG_ANSWER] = "answer",   [MOAT_NG_DELETE] = "delete", [MOAT_NG_QUERY] = "query",
    [MOAT_NG_LIST] = "list",
};

const char *moat_ng_command_name(moat_ng_command command)
{
    if ((size_t)command >= G_N_ELEMENTS(command_names))
        return "unknown";
    return command_names[command];
}

static char fold(char c)
{
    if (c == ' ' || c == '_')
        return '-';
    return g_ascii_tolower(c);
}

bool ng_name_equal(const char *name, size_t length, const char *canonical)
{
    size_t i = 0;
    for (; i < length && canonical[i]; i++) {
        if (fold(name[i]) != fold(canonical[i]))
            return false;
    }
    return i == length && canonical[i] == '\0';
}

bool ng_name_prefix(const char *name, size_t length, const char *prefix, size_t *rest)
{
    size_t n = strlen(prefix);
    if (length < n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (fold(name[i]) != fold(prefix[i]))
            return false;
    }
    *rest = n;
    return true;
}

const char *ng_request_own(moat_ng_request *request, const char *text, size_t length)
{
    if (!request->owned)
        request->owned = g_ptr_array_new_with_free_func(g_free);
    char *copy = g_strndup(text, length);
    g_ptr_array_add(request->owned, copy);
    return copy;
}

int ng_value_text(moat_ng_request *request, const ng_value *value, const char **text,
                  size_t *length)
{
    if (!value->item) {
        *text = ng_request_own(request, value->text, value->length);
        *length = value->length;
        return 0;
    }
    *text = moat_bencode_string(value->item, length);
    return *text ? 0 : -1;
}

int ng_value_each(moat_ng_request *request, const ng_value *value, ng_text_fn fn, char *error,
                  size_t error_size)
{
    if (!value->item)
        return fn(request, value->text, value->length, error, error_size);
    size_t length = 0;
    const char *text = moat_bencode_string(value->item, &length);
    if (text)
        return fn(request, text, length, error, error_size);
    if (moat_bencode_type_of(value->item) != MOAT_BENCODE_LIST)
        return 1; /* the caller names the key */
    for (size_t i = 0; i < moat_bencode_count(value->item); i++) {
        text = moat_bencode_string(moat_bencode_item(value->item, i, NULL, NULL), &length);
        if (!text)
            continue; /* lists of strings only; anything else is ignored */
        int status = fn(request, text, length, error, error_size);
        if (status != 0)
            return status;
    }
    return 0;
}

/* A key from the dictionary or from a "key=value" flag string. */
static int apply_key(moat_ng_request *request, const char *key, size_t key_length,
                     const ng_value *value, char *error, size_t error_size)
{
    const ng_key_setter *setter = ng_key_setter_find(key, key_length);
    if (!setter)
        return 0; /* unknown keys are ignored */
    int status = setter->set(request, value, error, error_size);
    if (status > 0)
        snprintf(error, error_size, "invalid value for %s", setter->name);
    return status == 0 ? 0 : -1;
}

int ng_flag_apply(moat_ng_request *request, const char *flag, size_t length, char *error,
                  size_t error_size)
{
    const char *equals = memchr(flag, '=', length);
    if (equals) {
        ng_value value = {.text = equals + 1, .length = length - (size_t)(equals + 1 - flag)};
        return apply_key(request, flag, (size_t)(equals - flag), &value, error, error_size);
    }
    return ng_flag_word(request, flag, length, error, error_size);
}

static moat_ng_command command_from_name(const char *name, size_t length)
{
    for (size_t c = MOAT_NG_PING; c < G_N_ELEMENTS(command_names); c++) {
        if (ng_name_equal(name, length, command_names[c]))
            return (moat_ng_command)c;
    }
    return MOAT_NG_UNKNOWN;
}

static int parse_command(const moat_bencode *dictionary, moat_ng_request *request, char *error,
                         size_t error_size)
{
    const moat_bencode *item = moat_bencode_get(dictionary, "command");
    if (!item) {
        snprintf(error, error_size, "missing command");
        return -1;
    }
    size_t length = 0;
    const char *name = moat_bencode_string(item, &length);
    if (!name || strlen(name) != length || length == 0) {
        snprintf(error, error_size, "invalid command");
        return -1;
    }
    request->command_name = name;
    request->command = command_from_name(name, length);
    return 0;
}

int moat_ng_request_parse(const moat_bencode *dictionary, moat_ng_request *request, char *error,
                          size_t error_size)
{
    memset(request, 0, sizeof *request);
    request->delete_delay_s = -1;
    request->dictionary = dictionary;
    if (!dictionary || moat_bencode_type_of(dictionary) != MOAT_BENCODE_DICTIONARY) {
        snprintf(error, error_size, "command is not a dictionary");
        return -1;
    }
    if (parse_command(dictionary, request, error, error_size) != 0)
        return -1;
    for (size_t i = 0; i < moat_bencode_count(dictionary); i++) {
        const char *key = NULL;
        size_t key_length = 0;
        ng_value value = {.item = moat_bencode_item(dictionary, i, &key, &key_length)};
        if (apply_key(request, key, key_length, &value, error, error_size) != 0)
            return -1;
    }
    return 0;
}

void moat_ng_request_clear(moat_ng_request *request)
{
    if (request->owned)
        g_ptr_array_free(request->owned, TRUE);
    request->owned = NULL;
}

int moat_ng_request_check(const moat_ng_request *request, char *error, size_t error_size)
{
    bool needs_call = request->command == MOAT_NG_OFFER || request->command == MOAT_NG_ANSWER ||
                      request->command == MOAT_NG_DELETE || request->command == MOAT_NG_QUERY;
    bool needs_sdp = request->command == MOAT_NG_OFFER || request->command == MOAT_NG_ANSWER;
    if (needs_call && (!request->call_id || !*request->call_id)) {
        snprintf(error, error_size, "missing call-id");
        return -1;
    }
    if (needs_sdp && (!request->from_tag || !*request->from_tag)) {
        snprintf(error, error_size, "missing from-tag");
        return -1;
    }
    if (needs_sdp && (!request->sdp || request->sdp_length == 0)) {
        snprintf(error, error_size, "missing sdp");
        return -1;
    }
    return 0;
}
