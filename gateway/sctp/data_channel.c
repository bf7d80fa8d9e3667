/* WebRTC data channels (RFC 8831) as bookkeeping: validates a channel's
 * description and keeps an association's table from SCTP stream id to channel,
 * including picking a free even or odd id. No usrsctp, no I/O. */
#include "sctp/data_channel.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

struct moat_data_channel_table {
    GHashTable *by_stream; /* GUINT_TO_POINTER(stream id) -> moat_data_channel (owned) */
    uint32_t next_pick;    /* where the next pick_id scan starts */
};

int moat_data_channel_info_check(const moat_data_channel_info *info)
{
    if (info == NULL)
        return -EINVAL;
    if (memchr(info->label, '\0', sizeof info->label) == NULL ||
        memchr(info->protocol, '\0', sizeof info->protocol) == NULL)
        return -EINVAL;
    if (info->max_retransmits < -1 || info->max_lifetime_ms < -1)
        return -EINVAL;
    /* WebRTC forbids setting both (RTCPeerConnection.createDataChannel
     * throws), and SCTP can carry only one PR policy per message. */
    if (info->max_retransmits >= 0 && info->max_lifetime_ms >= 0)
        return -EINVAL;
    if (info->negotiated && info->stream_id > MOAT_DATA_CHANNEL_MAX_STREAM_ID)
        return -EINVAL;
    return 0;
}

moat_data_channel_table *moat_data_channel_table_new(void)
{
    moat_data_channel_table *t = g_new0(moat_data_channel_table, 1);
    t->by_stream = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return t;
}

void moat_data_channel_table_free(moat_data_channel_table *t)
{
    if (t == NULL)
        return;
    g_hash_table_destroy(t->by_stream);
    g_free(t);
}

moat_data_channel *moat_data_channel_table_find(const moat_data_channel_table *t,
                                                uint16_t stream_id)
{
    return g_hash_table_lookup(t->by_stream, GUINT_TO_POINTER(stream_id));
}

moat_data_channel *moat_data_channel_table_add(moat_data_channel_table *t,
                                               const moat_data_channel_info *info)
{
    gpointer key = GUINT_TO_POINTER(info->stream_id);
    if (g_hash_table_contains(t->by_stream, key))
        return NULL;
    moat_data_channel *ch = g_new0(moat_data_channel, 1);
    ch->info = *info;
    ch->state = MOAT_DATA_CHANNEL_OPEN;
    g_hash_table_insert(t->by_stream, key, ch);
    return ch;
}

void moat_data_channel_table_remove(moat_data_channel_table *t, uint16_t stream_id)
{
    g_hash_table_remove(t->by_stream, GUINT_TO_POINTER(stream_id));
}

size_t moat_data_channel_table_count(const moat_data_channel_table *t)
{
    return g_hash_table_size(t->by_stream);
}

int moat_data_channel_table_pick_id(moat_data_channel_table *t, bool even, uint32_t limit,
                                    uint16_t *stream_id)
{
    if (limit > MOAT_DATA_CHANNEL_MAX_STREAM_ID + 1u)
        limit = MOAT_DATA_CHANNEL_MAX_STREAM_ID + 1u;
    uint32_t parity = even ? 0 : 1;
    if (limit <= parity)
        return -ENOSPC;
    /* Ids of our parity below limit: parity, parity + 2, ... */
    uint32_t slots = (limit - parity + 1) / 2;
    uint32_t start = t->next_pick / 2;
    for (uint32_t i = 0; i < slots; i++) {
        uint32_t id = ((start + i) % slots) * 2 + parity;
        if (!g_hash_table_contains(t->by_stream, GUINT_TO_POINTER(id))) {
            *stream_id = (uint16_t)id;
            t->next_pick = id + 2;
            return 0;
        }
    }
    return -ENOSPC;
}

void moat_data_channel_table_foreach(moat_data_channel_table *t,
                                     void (*fn)(moat_data_channel *ch, void *user), void *user)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, t->by_stream);
    while (g_hash_table_iter_next(&it, NULL, &value))
        fn(value, user);
}
