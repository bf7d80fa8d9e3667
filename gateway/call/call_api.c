/* Owns the JSON view of the calls for GET /api/calls. */
#include "call/call_api.h"

#include <glib.h>
#include <jansson.h>
#include <stdlib.h>

#define API_MAX_CALLS 1000

static json_t *flow_json(const moat_call_flow_counters *flow)
{
    return json_pack("{s:I,s:I,s:I}", "packets", (json_int_t)flow->packets, "bytes",
                     (json_int_t)flow->bytes, "errors", (json_int_t)flow->errors);
}

static json_t *side_json(const moat_call_side_view *side)
{
    json_t *media = json_array();
    for (size_t i = 0; i < side->n_media; i++) {
        const moat_call_media_view *m = &side->media[i];
        json_array_append_new(
            media,
            json_pack("{s:s,s:i,s:o,s:o,s:b,s:I}", "type", m->kind, "local_port", m->local_port,
                      "rtp", flow_json(&m->counters.rtp), "rtcp", flow_json(&m->counters.rtcp),
                      "latched", m->counters.latched, "dropped", (json_int_t)m->counters.dropped));
    }
    return json_pack("{s:s,s:o}", "tag", side->tag, "media", media);
}

static json_t *call_json(const moat_call_view *view)
{
    json_t *tags = json_array();
    for (int s = 0; s < 2; s++) {
        if (view->sides[s].tag)
            json_array_append_new(tags, side_json(&view->sides[s]));
    }
    return json_pack("{s:s,s:I,s:b,s:o}", "call_id", view->call_id, "created",
                     (json_int_t)view->created_s, "deleting", view->deleting, "tags", tags);
}

char *moat_call_api_json(moat_call_registry *registry)
{
    json_t *calls = json_array();
    const char **ids = g_new(const char *, API_MAX_CALLS);
    size_t n = registry ? moat_call_list(registry, ids, API_MAX_CALLS) : 0;
    for (size_t i = 0; i < n; i++) {
        moat_call_view view;
        if (moat_call_query(registry, ids[i], &view) == 0)
            json_array_append_new(calls, call_json(&view));
    }
    g_free(ids);
    json_t *root = json_pack("{s:o}", "calls", calls);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    char *copy = g_strdup(text);
    free(text);
    return copy;
}
