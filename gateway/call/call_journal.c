/* Owns a call's journal: the ng commands that made it and the random
 * choices (ports, SDES keys) made while running them, their encoding as a
 * bencode record and its bounded decoding (call_journal.h). */
#include "call/call_journal.h"

#include <stdio.h>
#include <string.h>

struct moat_call_journal {
    GPtrArray *steps;  /* GBytes: encoded ng dictionaries */
    GPtrArray *parsed; /* moat_bencode: steps read back (decode only) */
    uint16_t ports[MOAT_CALL_JOURNAL_MAX_PORTS];
    size_t n_ports, port_cursor;
    GPtrArray *keys; /* GBytes (wiped on free) */
    size_t key_cursor;
    bool unrestorable;
    moat_call_journal_srtp srtp[MOAT_CALL_JOURNAL_MAX_STREAMS][2];   /* live */
    moat_call_journal_srtp resume[MOAT_CALL_JOURNAL_MAX_STREAMS][2]; /* read back */
};

static void bytes_wipe_free(gpointer data)
{
    GBytes *bytes = data;
    gsize size = 0;
    const void *key = g_bytes_get_data(bytes, &size);
    explicit_bzero((void *)key, size); /* we made it; nobody else holds it */
    g_bytes_unref(bytes);
}

static void parsed_free(gpointer data)
{
    moat_bencode_free(data);
}

moat_call_journal *moat_call_journal_new(void)
{
    moat_call_journal *journal = g_new0(moat_call_journal, 1);
    /* Steps carry the parties' a=crypto lines: wiped too. */
    journal->steps = g_ptr_array_new_with_free_func(bytes_wipe_free);
    journal->keys = g_ptr_array_new_with_free_func(bytes_wipe_free);
    return journal;
}

void moat_call_journal_free(moat_call_journal *journal)
{
    if (!journal)
        return;
    g_ptr_array_free(journal->steps, TRUE);
    if (journal->parsed)
        g_ptr_array_free(journal->parsed, TRUE);
    g_ptr_array_free(journal->keys, TRUE);
    explicit_bzero(journal, sizeof *journal);
    g_free(journal);
}

void moat_call_journal_add_step(moat_call_journal *journal, const moat_bencode *dictionary)
{
    if (!dictionary || journal->steps->len >= MOAT_CALL_JOURNAL_MAX_STEPS) {
        journal->unrestorable = true;
        return;
    }
    GByteArray *encoded = g_byte_array_new();
    moat_bencode_encode(dictionary, encoded);
    g_ptr_array_add(journal->steps, g_byte_array_free_to_bytes(encoded));
}

void moat_call_journal_set_unrestorable(moat_call_journal *journal)
{
    journal->unrestorable = true;
}

bool moat_call_journal_restorable(const moat_call_journal *journal)
{
    return !journal->unrestorable;
}

bool moat_call_journal_take_ports(moat_call_journal *journal, uint16_t out[2])
{
    if (journal->port_cursor + 2 > journal->n_ports)
        return false;
    out[0] = journal->ports[journal->port_cursor++];
    out[1] = journal->ports[journal->port_cursor++];
    return true;
}

void moat_call_journal_add_ports(moat_call_journal *journal, const uint16_t ports[2])
{
    if (journal->n_ports + 2 > MOAT_CALL_JOURNAL_MAX_PORTS) {
        journal->unrestorable = true;
        return;
    }
    journal->ports[journal->n_ports++] = ports[0];
    journal->ports[journal->n_ports++] = ports[1];
    journal->port_cursor = journal->n_ports;
}

bool moat_call_journal_take_key(moat_call_journal *journal, uint8_t *out, size_t length)
{
    if (journal->key_cursor >= journal->keys->len)
        return false;
    GBytes *key = g_ptr_array_index(journal->keys, journal->key_cursor);
    gsize size = 0;
    const uint8_t *data = g_bytes_get_data(key, &size);
    if (size != length) {
        journal->unrestorable = true;
        return false;
    }
    memcpy(out, data, length);
    journal->key_cursor++;
    return true;
}

void moat_call_journal_add_key(moat_call_journal *journal, const uint8_t *key, size_t length)
{
    if (journal->keys->len >= MOAT_CALL_JOURNAL_MAX_KEYS || length > MOAT_CALL_JOURNAL_MAX_KEY ||
        length == 0) {
        journal->unrestorable = true;
        return;
    }
    g_ptr_array_add(journal->keys, g_bytes_new(key, length));
    journal->key_cursor = journal->keys->len;
}

static bool moved(moat_srtp_position held, moat_srtp_position now)
{
    if (held.valid != now.valid || held.ssrc != now.ssrc || held.roc != now.roc)
        return true;
    uint16_t step = (uint16_t)(now.seq - held.seq);
    return step >= MOAT_CALL_JOURNAL_SEQ_STEP && step <= 65536 - MOAT_CALL_JOURNAL_SEQ_STEP;
}

bool moat_call_journal_note_srtp(moat_call_journal *journal, size_t index, int side,
                                 const moat_call_journal_srtp *at)
{
    if (index >= MOAT_CALL_JOURNAL_MAX_STREAMS)
        return false;
    moat_call_journal_srtp *held = &journal->srtp[index][side & 1];
    if (!moved(held->sent, at->sent) && !moved(held->received, at->received))
        return false;
    *held = *at;
    return true;
}

void moat_call_journal_forget_srtp(moat_call_journal *journal)
{
    memset(journal->srtp, 0, sizeof journal->srtp);
}

bool moat_call_journal_resume_srtp(const moat_call_journal *journal, size_t index, int side,
                                   moat_call_journal_srtp *out)
{
    if (index >= MOAT_CALL_JOURNAL_MAX_STREAMS)
        return false;
    *out = journal->resume[index][side & 1];
    return out->sent.valid || out->received.valid;
}

void moat_call_journal_end_resume(moat_call_journal *journal)
{
    memset(journal->resume, 0, sizeof journal->resume);
}

static moat_bencode *srtp_list(const moat_call_journal *journal)
{
    moat_bencode *list = moat_bencode_new_list();
    for (size_t i = 0; i < MOAT_CALL_JOURNAL_MAX_STREAMS; i++) {
        for (int side = 0; side < 2; side++) {
            const moat_call_journal_srtp *at = &journal->srtp[i][side];
            if (!at->sent.valid && !at->received.valid)
                continue;
            int64_t values[] = {(int64_t)i,
                                side,
                                at->sent.ssrc,
                                at->sent.roc,
                                at->sent.seq,
                                at->received.ssrc,
                                at->received.roc,
                                at->received.seq,
                                at->sent.valid | at->received.valid << 1};
            moat_bencode *entry = moat_bencode_new_list();
            for (size_t v = 0; v < G_N_ELEMENTS(values); v++)
                moat_bencode_append(entry, moat_bencode_new_integer(values[v]));
            moat_bencode_append(list, entry);
        }
    }
    return list;
}

static moat_bencode *bytes_list(GPtrArray *items)
{
    moat_bencode *list = moat_bencode_new_list();
    for (guint i = 0; i < items->len; i++) {
        gsize size = 0;
        const char *data = g_bytes_get_data(g_ptr_array_index(items, i), &size);
        moat_bencode_append(list, moat_bencode_new_string(data, size));
    }
    return list;
}

bool moat_call_journal_encode(const moat_call_journal *journal, const char *call_id,
                              int64_t created_s, GByteArray *out)
{
    if (journal->unrestorable)
        return false;
    moat_bencode *record = moat_bencode_new_dictionary();
    moat_bencode_set_integer(record, "v", MOAT_CALL_JOURNAL_VERSION);
    moat_bencode_set_string(record, "call-id", call_id);
    moat_bencode_set_integer(record, "created", created_s);
    moat_bencode_set(record, "steps", bytes_list(journal->steps));
    moat_bencode *ports = moat_bencode_new_list();
    for (size_t i = 0; i < journal->n_ports; i++)
        moat_bencode_append(ports, moat_bencode_new_integer(journal->ports[i]));
    moat_bencode_set(record, "ports", ports);
    moat_bencode_set(record, "keys", bytes_list(journal->keys));
    moat_bencode_set(record, "srtp", srtp_list(journal));
    guint before = out->len;
    moat_bencode_encode(record, out);
    moat_bencode_free(record); /* its copies of the keys: freed unwiped (glib strings) */
    if (out->len - before > MOAT_CALL_JOURNAL_MAX_BYTES) {
        explicit_bzero(out->data + before, out->len - before);
        g_byte_array_set_size(out, before);
        return false;
    }
    return true;
}

/* ---- reading a record back ------------------------------------------------------- */

static const moat_bencode *list_of(const moat_bencode *record, const char *key, size_t max,
                                   char *error, size_t error_size)
{
    const moat_bencode *list = moat_bencode_get(record, key);
    if (!list || moat_bencode_type_of(list) != MOAT_BENCODE_LIST) {
        snprintf(error, error_size, "\"%s\" is missing or not a list", key);
        return NULL;
    }
    if (moat_bencode_count(list) > max) {
        snprintf(error, error_size, "\"%s\" has more than %zu items", key, max);
        return NULL;
    }
    return list;
}

static bool read_header(const moat_bencode *record, moat_call_journal_header *header, char *error,
                        size_t error_size)
{
    int64_t version = 0;
    if (!moat_bencode_integer(moat_bencode_get(record, "v"), &version) ||
        version != MOAT_CALL_JOURNAL_VERSION) {
        snprintf(error, error_size, "not a version %d call record", MOAT_CALL_JOURNAL_VERSION);
        return false;
    }
    size_t length = 0;
    const char *id = moat_bencode_string(moat_bencode_get(record, "call-id"), &length);
    if (!id || length == 0 || length >= sizeof header->call_id || memchr(id, 0, length)) {
        snprintf(error, error_size, "bad \"call-id\"");
        return false;
    }
    memcpy(header->call_id, id, length);
    header->call_id[length] = '\0';
    if (!moat_bencode_integer(moat_bencode_get(record, "created"), &header->created_s)) {
        snprintf(error, error_size, "bad \"created\"");
        return false;
    }
    return true;
}

static bool read_steps(moat_call_journal *journal, const moat_bencode *record, char *error,
                       size_t error_size)
{
    const moat_bencode *steps =
        list_of(record, "steps", MOAT_CALL_JOURNAL_MAX_STEPS, error, error_size);
    if (!steps)
        return false;
    if (moat_bencode_count(steps) == 0) {
        snprintf(error, error_size, "no steps");
        return false;
    }
    journal->parsed = g_ptr_array_new_with_free_func(parsed_free);
    for (size_t i = 0; i < moat_bencode_count(steps); i++) {
        size_t length = 0;
        const char *data = moat_bencode_string(moat_bencode_item(steps, i, NULL, NULL), &length);
        char why[128] = "";
        moat_bencode *step =
            data ? moat_bencode_parse((const uint8_t *)data, length, NULL, why, sizeof why) : NULL;
        if (!step || moat_bencode_type_of(step) != MOAT_BENCODE_DICTIONARY) {
            moat_bencode_free(step);
            snprintf(error, error_size, "step %zu is not an ng dictionary%s%s", i,
                     why[0] ? ": " : "", why);
            return false;
        }
        g_ptr_array_add(journal->parsed, step);
    }
    return true;
}

static bool read_choices(moat_call_journal *journal, const moat_bencode *record, char *error,
                         size_t error_size)
{
    const moat_bencode *ports =
        list_of(record, "ports", MOAT_CALL_JOURNAL_MAX_PORTS, error, error_size);
    const moat_bencode *keys =
        ports ? list_of(record, "keys", MOAT_CALL_JOURNAL_MAX_KEYS, error, error_size) : NULL;
    if (!keys)
        return false;
    if (moat_bencode_count(ports) % 2) {
        snprintf(error, error_size, "an odd number of ports");
        return false;
    }
    for (size_t i = 0; i < moat_bencode_count(ports); i++) {
        int64_t port = 0;
        if (!moat_bencode_integer(moat_bencode_item(ports, i, NULL, NULL), &port) || port < 1 ||
            port > 65535) {
            snprintf(error, error_size, "port %zu is not a port number", i);
            return false;
        }
        journal->ports[journal->n_ports++] = (uint16_t)port;
    }
    for (size_t i = 0; i < moat_bencode_count(keys); i++) {
        size_t length = 0;
        const char *key = moat_bencode_string(moat_bencode_item(keys, i, NULL, NULL), &length);
        if (!key || length == 0 || length > MOAT_CALL_JOURNAL_MAX_KEY) {
            snprintf(error, error_size, "key %zu is not 1..%d octets", i,
                     MOAT_CALL_JOURNAL_MAX_KEY);
            return false;
        }
        g_ptr_array_add(journal->keys, g_bytes_new(key, length));
    }
    return true;
}

/* "srtp" (optional): [stream, side, sent ssrc, roc, seq, received ssrc,
 * roc, seq, valid bits] each. */
static bool read_srtp(moat_call_journal *journal, const moat_bencode *record, char *error,
                      size_t error_size)
{
    if (!moat_bencode_get(record, "srtp"))
        return true;
    const moat_bencode *list =
        list_of(record, "srtp", 2 * MOAT_CALL_JOURNAL_MAX_STREAMS, error, error_size);
    if (!list)
        return false;
    static const int64_t max[9] = {MOAT_CALL_JOURNAL_MAX_STREAMS - 1,
                                   1,
                                   UINT32_MAX,
                                   0xffff,
                                   0xffff,
                                   UINT32_MAX,
                                   0xffff,
                                   0xffff,
                                   3};
    for (size_t e = 0; e < moat_bencode_count(list); e++) {
        const moat_bencode *entry = moat_bencode_item(list, e, NULL, NULL);
        int64_t v[9];
        bool ok =
            moat_bencode_type_of(entry) == MOAT_BENCODE_LIST && moat_bencode_count(entry) == 9;
        for (size_t k = 0; ok && k < 9; k++)
            ok = moat_bencode_integer(moat_bencode_item(entry, k, NULL, NULL), &v[k]) &&
                 v[k] >= 0 && v[k] <= max[k];
        if (!ok) {
            snprintf(error, error_size, "srtp entry %zu is not 9 integers in range", e);
            return false;
        }
        moat_call_journal_srtp at = {
            {(uint32_t)v[2], (uint32_t)v[3], (uint16_t)v[4], (v[8] & 1) != 0},
            {(uint32_t)v[5], (uint32_t)v[6], (uint16_t)v[7], (v[8] & 2) != 0}};
        journal->srtp[v[0]][v[1]] = journal->resume[v[0]][v[1]] = at;
    }
    return true;
}

moat_call_journal *moat_call_journal_decode(const uint8_t *data, size_t length,
                                            moat_call_journal_header *header, char *error,
                                            size_t error_size)
{
    if (length > MOAT_CALL_JOURNAL_MAX_BYTES) {
        snprintf(error, error_size, "record over %d octets", MOAT_CALL_JOURNAL_MAX_BYTES);
        return NULL;
    }
    char why[128] = "";
    moat_bencode *record = moat_bencode_parse(data, length, NULL, why, sizeof why);
    if (!record || moat_bencode_type_of(record) != MOAT_BENCODE_DICTIONARY) {
        moat_bencode_free(record);
        snprintf(error, error_size, "not a bencode dictionary%s%s", why[0] ? ": " : "", why);
        return NULL;
    }
    moat_call_journal *journal = moat_call_journal_new();
    bool ok = read_header(record, header, error, error_size) &&
              read_steps(journal, record, error, error_size) &&
              read_choices(journal, record, error, error_size) &&
              read_srtp(journal, record, error, error_size);
    moat_bencode_free(record);
    if (!ok) {
        moat_call_journal_free(journal);
        return NULL;
    }
    return journal;
}

GPtrArray *moat_call_journal_take_steps(moat_call_journal *journal)
{
    GPtrArray *steps = journal->parsed;
    journal->parsed = NULL;
    return steps;
}

bool moat_call_journal_replayed_all(const moat_call_journal *journal)
{
    return !journal->unrestorable && journal->key_cursor == journal->keys->len;
}

size_t moat_call_journal_key_mark(const moat_call_journal *journal)
{
    return journal->keys->len;
}

void moat_call_journal_rollback_keys(moat_call_journal *journal, size_t mark)
{
    if (mark >= journal->keys->len)
        return;
    g_ptr_array_set_size(journal->keys, (gint)mark); /* wiped by the free function */
    if (journal->key_cursor > mark)
        journal->key_cursor = mark;
}
