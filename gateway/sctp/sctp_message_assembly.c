/* Reassembles messages usrsctp hands over in pieces, one partial buffer per
 * stream and ordering, bounding each message and all partials together. */
#include "sctp/sctp_message_assembly.h"

#include <glib.h>

/* All partial messages of one association together may hold this many
 * maximum-size messages: a peer interleaving pieces of never-finished
 * messages on many streams cannot grow our memory further. */
#define TOTAL_LIMIT_MESSAGES 4

typedef struct {
    GByteArray *bytes; /* NULL while dropping */
    bool dropping;     /* over a limit: discard pieces until the last one */
} partial;

struct moat_sctp_message_assembly {
    GHashTable *partials; /* key -> partial */
    size_t max_message_size;
    size_t total; /* bytes held in all partials */
    /* The partial returned COMPLETE by the previous add; freed by the next
     * call so the caller can use its bytes in between. */
    bool has_completed;
    uint32_t completed_key;
};

static void partial_free(gpointer p)
{
    partial *pa = p;
    if (pa->bytes != NULL)
        g_byte_array_unref(pa->bytes);
    g_free(pa);
}

moat_sctp_message_assembly *moat_sctp_message_assembly_new(size_t max_message_size)
{
    moat_sctp_message_assembly *m = g_new0(moat_sctp_message_assembly, 1);
    m->partials = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, partial_free);
    m->max_message_size = max_message_size;
    return m;
}

void moat_sctp_message_assembly_free(moat_sctp_message_assembly *m)
{
    if (m == NULL)
        return;
    g_hash_table_destroy(m->partials);
    g_free(m);
}

static void forget(moat_sctp_message_assembly *m, uint32_t key)
{
    partial *pa = g_hash_table_lookup(m->partials, GUINT_TO_POINTER(key));
    if (pa == NULL)
        return;
    if (pa->bytes != NULL)
        m->total -= pa->bytes->len;
    g_hash_table_remove(m->partials, GUINT_TO_POINTER(key));
}

static void release_completed(moat_sctp_message_assembly *m)
{
    if (m->has_completed) {
        forget(m, m->completed_key);
        m->has_completed = false;
    }
}

moat_sctp_assembly_result moat_sctp_message_assembly_add(moat_sctp_message_assembly *m,
                                                         uint32_t key, const uint8_t *piece,
                                                         size_t piece_length, bool last,
                                                         const uint8_t **data, size_t *length)
{
    release_completed(m);
    partial *pa = g_hash_table_lookup(m->partials, GUINT_TO_POINTER(key));
    if (pa == NULL) {
        if (last) {
            /* The common case: the message came in one read, no copy. */
            if (piece_length > m->max_message_size)
                return MOAT_SCTP_ASSEMBLY_DROPPED;
            *data = piece;
            *length = piece_length;
            return MOAT_SCTP_ASSEMBLY_COMPLETE;
        }
        pa = g_new0(partial, 1);
        pa->bytes = g_byte_array_new();
        g_hash_table_insert(m->partials, GUINT_TO_POINTER(key), pa);
    }
    if (!pa->dropping) {
        size_t held = pa->bytes->len;
        if (piece_length > m->max_message_size - held ||
            m->total + piece_length > m->max_message_size * TOTAL_LIMIT_MESSAGES) {
            m->total -= held;
            g_byte_array_unref(pa->bytes);
            pa->bytes = NULL;
            pa->dropping = true;
        } else {
            g_byte_array_append(pa->bytes, piece, (guint)piece_length);
            m->total += piece_length;
        }
    }
    if (!last)
        return MOAT_SCTP_ASSEMBLY_INCOMPLETE;
    if (pa->dropping) {
        forget(m, key);
        return MOAT_SCTP_ASSEMBLY_DROPPED;
    }
    *data = pa->bytes->data;
    *length = pa->bytes->len;
    m->has_completed = true;
    m->completed_key = key;
    return MOAT_SCTP_ASSEMBLY_COMPLETE;
}

void moat_sctp_message_assembly_discard(moat_sctp_message_assembly *m, uint32_t key)
{
    release_completed(m);
    forget(m, key);
}
