/* What the API reads of the calls: one call's view (its sides, m-lines,
 * ports and counters), the list of call-ids, the count, a stream by index.
 * Control thread. */
#include "call/call_registry.h"
#include "call/call_registry_private.h"

#include <string.h>

int moat_call_query(moat_call_registry *registry, const char *call_id, moat_call_view *out)
{
    moat_call *call = call_id ? g_hash_table_lookup(registry->calls, call_id) : NULL;
    if (!call)
        return -1;
    memset(out, 0, sizeof *out);
    out->call_id = call->id;
    out->created_s = call->created_s;
    out->deleting = call->delete_timer != 0;
    for (int side = 0; side < 2; side++) {
        moat_call_side_view *view = &out->sides[side];
        view->tag = call->tags[side];
        view->n_media = call->has_sdp[side] ? call->sdp[side].n_media : 0;
        for (size_t i = 0; i < view->n_media && i < call->n_streams; i++) {
            const moat_call_sdp_media *media = &call->sdp[side].media[i];
            moat_call_media_view *m = &view->media[i];
            g_strlcpy(m->kind, media->kind, sizeof m->kind);
            g_strlcpy(m->protocol, media->proto, sizeof m->protocol);
            m->webrtc = call->webrtc[side] != NULL;
            m->local_port = moat_call_stream_port(call->streams[i], side);
            m->sdp_address = media->rtp;
            m->rtcp_mux = media->rtcp_mux;
            moat_call_stream_read(call->streams[i], side, &m->counters);
        }
    }
    return 0;
}

size_t moat_call_list(moat_call_registry *registry, const char **ids, size_t capacity)
{
    GHashTableIter iter;
    void *key;
    size_t n = 0;
    g_hash_table_iter_init(&iter, registry->calls);
    while (n < capacity && g_hash_table_iter_next(&iter, &key, NULL))
        ids[n++] = key;
    return n;
}

size_t moat_call_count(moat_call_registry *registry)
{
    return g_hash_table_size(registry->calls);
}

moat_call_stream *moat_call_registry_stream(moat_call_registry *registry, const char *call_id,
                                            size_t index)
{
    moat_call *call = g_hash_table_lookup(registry->calls, call_id);
    return call && index < call->n_streams ? call->streams[index] : NULL;
}
