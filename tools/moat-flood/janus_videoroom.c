/* Videoroom requests over janus_client.h: create, joinandconfigure,
 * join as subscriber, start, destroy. */
#include "janus_videoroom.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#define PLUGIN        "janus.plugin.videoroom"
#define JSEP_WAIT_S   15.0
#define ROOM_ID_SPAN  1000000000u
#define JOIN_ATTEMPTS 20
#define JOIN_RETRY_US 100000

int janus_videoroom_open(janus_videoroom *v, const char *base_url,
                         const volatile sig_atomic_t *signals, char *error, size_t error_size)
{
    memset(v, 0, sizeof *v);
    v->client = janus_client_new(base_url, signals, error, error_size);
    if (v->client == NULL)
        return -1;
    if (janus_client_attach(v->client, PLUGIN, &v->publisher_handle, error, error_size) != 0)
        return -1;
    v->room = 1 + g_random_int_range(0, ROOM_ID_SPAN);
    json_t *create = json_pack("{s:s,s:I,s:i,s:s,s:s,s:i,s:b}", "request", "create", "room",
                               (json_int_t)v->room, "publishers", 1, "audiocodec", "opus",
                               "videocodec", "vp8", "bitrate", 0, "notify_joining", 0);
    return janus_client_message(v->client, v->publisher_handle, create, NULL, NULL, NULL, error,
                                error_size);
}

/* The SDP of an event's JSEP of the given type (g_malloc'd), or NULL. */
static char *event_sdp(json_t *event, const char *type)
{
    json_t *jsep = json_object_get(event, "jsep");
    const char *kind = json_string_value(json_object_get(jsep, "type"));
    const char *sdp = json_string_value(json_object_get(jsep, "sdp"));
    if (kind == NULL || sdp == NULL || strcmp(kind, type) != 0)
        return NULL;
    return g_strdup(sdp);
}

int janus_videoroom_publish(void *user, const char *offer, char **answer, char **resource_url,
                            char *error, size_t error_size)
{
    janus_videoroom *v = user;
    *resource_url = NULL;
    json_t *join = json_pack("{s:s,s:I,s:s,s:s}", "request", "joinandconfigure", "room",
                             (json_int_t)v->room, "ptype", "publisher", "display", "moat-flood");
    if (janus_client_message(v->client, v->publisher_handle, join, "offer", offer, NULL, error,
                             error_size) != 0)
        return -1;
    json_t *event = NULL;
    if (janus_client_wait_jsep(v->client, v->publisher_handle, JSEP_WAIT_S, &event, error,
                               error_size) != 0)
        return -1;
    json_t *data = json_object_get(json_object_get(event, "plugindata"), "data");
    v->feed = (uint64_t)json_integer_value(json_object_get(data, "id"));
    *answer = event_sdp(event, "answer");
    json_decref(event);
    if (*answer == NULL || v->feed == 0) {
        snprintf(error, error_size, "Janus: the publisher's event has no answer or no id");
        g_free(*answer);
        *answer = NULL;
        return -1;
    }
    return 0;
}

int janus_videoroom_subscribe(janus_videoroom *v, uint64_t *handle, char **offer, char *error,
                              size_t error_size)
{
    *offer = NULL;
    if (janus_client_attach(v->client, PLUGIN, handle, error, error_size) != 0)
        return -1;
    json_t *event = NULL;
    /* Janus takes a publisher as a feed only once its own side of DTLS has
     * completed, which may be just after ours: "No such feed" is retried. */
    for (int attempt = 0;; attempt++) {
        json_t *join =
            json_pack("{s:s,s:I,s:s,s:[{s:I}]}", "request", "join", "room", (json_int_t)v->room,
                      "ptype", "subscriber", "streams", "feed", (json_int_t)v->feed);
        if (janus_client_message(v->client, *handle, join, NULL, NULL, NULL, error, error_size) !=
            0)
            return -1;
        if (janus_client_wait_jsep(v->client, *handle, JSEP_WAIT_S, &event, error, error_size) == 0)
            break;
        if (attempt >= JOIN_ATTEMPTS || strstr(error, "No such feed") == NULL)
            return -1;
        g_usleep(JOIN_RETRY_US);
    }
    *offer = event_sdp(event, "offer");
    json_decref(event);
    if (*offer == NULL) {
        snprintf(error, error_size, "Janus: the subscriber's event has no offer");
        return -1;
    }
    return 0;
}

int janus_videoroom_start(janus_videoroom *v, uint64_t handle, const char *answer, char *error,
                          size_t error_size)
{
    json_t *start = json_pack("{s:s}", "request", "start");
    return janus_client_message(v->client, handle, start, "answer", answer, NULL, error,
                                error_size);
}

void janus_videoroom_close(janus_videoroom *v)
{
    if (v->client == NULL)
        return;
    char error[200];
    if (v->publisher_handle != 0 && v->room != 0) {
        json_t *destroy = json_pack("{s:s,s:I}", "request", "destroy", "room", (json_int_t)v->room);
        janus_client_message(v->client, v->publisher_handle, destroy, NULL, NULL, NULL, error,
                             sizeof error);
    }
    janus_client_free(v->client);
    v->client = NULL;
}
