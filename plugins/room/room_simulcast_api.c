/* POST /api/rooms/<room>/subscribers/<id>/layer {"rid": "<rid>"|"auto"}:
 * pins a subscriber's simulcast layer, or hands it back to the automatic
 * choice. The request is an atomic the subscriber's worker takes (control
 * thread here). */
#include "room_simulcast.h"

#include "base/json_body.h"

#include <string.h>

/* "<room>/subscribers/<id>/layer" into its two names; false when the
 * path has another shape. */
static bool split_path(const char *rest, char *name, char *id)
{
    char **parts = g_strsplit(rest, "/", 5);
    bool ok = g_strv_length(parts) == 4 && strcmp(parts[1], "subscribers") == 0 &&
              strcmp(parts[3], "layer") == 0 && room_name_valid(parts[0], strlen(parts[0])) &&
              room_name_valid(parts[2], strlen(parts[2])) && strlen(parts[2]) < ROOM_PEER_ID_SIZE;
    if (ok) {
        g_strlcpy(name, parts[0], ROOM_NAME_SIZE);
        g_strlcpy(id, parts[2], ROOM_PEER_ID_SIZE);
    }
    g_strfreev(parts);
    return ok;
}

static room_peer *find_subscriber(room *r, const char *id)
{
    for (size_t i = 0; i < r->n_subscribers; i++) {
        if (strcmp(r->subscribers[i]->id, id) == 0)
            return r->subscribers[i];
    }
    return NULL;
}

/* Room lock held: stores the request or returns the refusal. */
static char *request_layer(room *r, const char *id, const char *rid, int *status)
{
    room_peer *s = find_subscriber(r, id);
    if (!s)
        return room_api_error(status, 404, "unknown_subscriber", "no such subscriber in the room");
    if (!s->source || !room_simulcast_layered(s->source))
        return room_api_error(status, 409, "not_simulcast",
                              "the subscriber's publisher does not send simulcast layers");
    int request = ROOM_LAYER_REQUEST_AUTO;
    if (strcmp(rid, "auto") != 0) {
        request = ROOM_LAYER_REQUEST_NONE;
        for (size_t l = 0; l < s->source->n_layers; l++) {
            if (strcmp(s->source->layers[l].rid, rid) == 0)
                request = (int)l;
        }
        if (request == ROOM_LAYER_REQUEST_NONE)
            return room_api_error(status, 400, "unknown_rid",
                                  "rid: one of the publisher's layers, or \"auto\"");
    }
    atomic_store(&s->layer_request, request);
    return room_api_reply(status, 200,
                          json_pack("{s:s, s:s, s:s, s:s}", "room", r->name, "subscriber", s->id,
                                    "rid", rid, "mode",
                                    request == ROOM_LAYER_REQUEST_AUTO ? "auto" : "pinned"));
}

char *room_simulcast_api(const char *method, const char *rest, const char *body, size_t length,
                         int *status)
{
    char name[ROOM_NAME_SIZE], id[ROOM_PEER_ID_SIZE];
    if (!split_path(rest, name, id))
        return room_api_error(status, 404, "not_found",
                              "POST /api/rooms/<room>/subscribers/<id>/layer");
    if (strcmp(method, "POST") != 0)
        return room_api_not_allowed(status, "POST", "POST a layer");
    json_error_t jerror;
    json_t *json = body ? json_loadb(body, length, JSON_REJECT_DUPLICATES, &jerror) : NULL;
    if (body && length && !json_is_object(json)) {
        char detail[256];
        moat_json_body_detail(json, &jerror, detail, sizeof detail);
        json_decref(json);
        return room_api_error(status, 400, "bad_json", detail);
    }
    const char *rid = json_is_object(json) ? json_string_value(json_object_get(json, "rid")) : NULL;
    if (!rid || !rid[0] || strlen(rid) >= MOAT_PLUGIN_RID_SIZE) {
        json_decref(json);
        return room_api_error(status, 400, "bad_rid",
                              "the body must be {\"rid\": \"<rid>\"} or {\"rid\": \"auto\"}");
    }
    room *r = room_acquire(name, false);
    if (!r) {
        json_decref(json);
        return room_api_error(status, 404, "unknown_room", "no such room");
    }
    pthread_mutex_lock(&r->lock);
    char *reply = request_layer(r, id, rid, status);
    pthread_mutex_unlock(&r->lock);
    room_release(r);
    json_decref(json);
    return reply;
}
