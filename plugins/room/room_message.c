/* A room peer's control messages (POST /api/sessions/<id>/message, run on
 * the peer's worker): {"request": "info"} describes the peer;
 * {"request": "configure", "audio": bool, "video": bool} stops or resumes
 * forwarding a kind: a publisher's media to all its subscribers, or what one
 * subscriber receives; a publisher's "max_bitrate" (bits/s, 0 none) caps the
 * REMB it is sent (room_feedback.c). */
#include "room.h"
#include "room_simulcast.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static char *dump(json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT);
    json_decref(value);
    char *out = g_strdup(text);
    free(text);
    return out;
}

static char *refusal(const char *error, const char *detail)
{
    return dump(json_pack("{s:s, s:s, s:i}", "error", error, "detail", detail, "status", 400));
}

static char *describe(room_peer *peer)
{
    char source[ROOM_PEER_ID_SIZE] = "";
    json_t *layer = NULL;
    if (!peer->publisher) {
        pthread_mutex_lock(&peer->room->lock);
        if (peer->source)
            g_strlcpy(source, peer->source->id, sizeof source);
        layer = room_simulcast_describe_subscriber(peer);
        pthread_mutex_unlock(&peer->room->lock);
    }
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:I}", "plugin", "room", "room", peer->room->name,
                  "id", peer->id, "role", peer->publisher ? "publisher" : "subscriber", "audio",
                  !atomic_load(&peer->muted[0]), "video", !atomic_load(&peer->muted[1]), "packets",
                  (json_int_t)atomic_load(&peer->packets));
    if (!peer->publisher)
        json_object_set_new(o, "publisher", source[0] ? json_string(source) : json_null());
    if (layer) /* its simulcast layer (room_simulcast.h) */
        json_object_set_new(o, "layer", layer);
    int stream = atomic_load(&peer->data_stream);
    json_object_set_new(o, "data_channel", stream ? json_integer(stream - 1) : json_null());
    if (peer->publisher) {
        json_object_set_new(o, "data_messages",
                            json_integer((json_int_t)atomic_load(&peer->data_messages)));
        json_object_set_new(o, "data_dropped",
                            json_integer((json_int_t)atomic_load(&peer->data_dropped)));
        json_object_set_new(o, "max_bitrate",
                            json_integer((json_int_t)atomic_load(&peer->max_bitrate)));
        json_object_set_new(o, "remb_sent",
                            json_integer((json_int_t)atomic_load(&peer->remb_sent)));
        json_object_set_new(o, "remb_bitrate",
                            json_integer((json_int_t)atomic_load(&peer->remb_bps)));
    }
    return dump(o);
}

/* Optional booleans "audio" and "video"; false when one is not a boolean. */
static bool configure(room_peer *peer, json_t *request)
{
    const char *kinds[2] = {"audio", "video"};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(request, kinds[k]);
        if (v && !json_is_boolean(v))
            return false;
    }
    json_t *cap = json_object_get(request, "max_bitrate");
    if (cap && (!peer->publisher || !json_is_integer(cap) || json_integer_value(cap) < 0 ||
                json_integer_value(cap) > ROOM_MAX_BITRATE))
        return false;
    if (cap)
        atomic_store(&peer->max_bitrate, (uint64_t)json_integer_value(cap));
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(request, kinds[k]);
        if (v)
            atomic_store(&peer->muted[k], !json_is_true(v));
    }
    /* Resumed video needs a keyframe to be decodable: a subscriber's is one
     * of its keyframe requests (for its layer, within its limit). */
    if (json_is_true(json_object_get(request, "video")) && peer->publisher) {
        atomic_store(&peer->keyframe_wanted, true);
    } else if (json_is_true(json_object_get(request, "video")) &&
               room_feedback_keyframe_allowed(peer, peer->gateway->now_us())) {
        room_simulcast_viewer_keyframe(peer);
    }
    return true;
}

char *room_handle_message(void *state, const char *json)
{
    room_peer *peer = state;
    json_t *request = json_loads(json ? json : "", JSON_REJECT_DUPLICATES, NULL);
    json_t *kind = json_object_get(request, "request");
    const char *name = json_string_value(kind);
    char *reply = NULL;
    if (!json_is_object(request))
        reply = refusal("bad_json", "a JSON object is expected");
    else if (kind && !name)
        reply = refusal("unknown_request", "request: a string, info or configure");
    else if (!name || strcmp(name, "info") == 0)
        reply = describe(peer);
    else if (strcmp(name, "configure") != 0)
        reply = refusal("unknown_request", "request: info or configure");
    else if (!configure(peer, request))
        reply = refusal("bad_option", "audio and video are booleans; max_bitrate (publishers) "
                                      "an integer from 0 to 1000000000");
    else
        reply = describe(peer);
    json_decref(request);
    return reply;
}
