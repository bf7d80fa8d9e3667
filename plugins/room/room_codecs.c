/* Which codecs a room takes (POST /api/rooms {"codecs": [...]}): the list
 * is fixed when the room is created, and shapes the SDP answers of its
 * publishers and subscribers (moat_plugin.accept_codec): an m-line offering
 * none of them is rejected. Control thread. */
#include "room.h"

#include <jansson.h>
#include <string.h>

/* The codecs the gateway relays (sdp_codec_select.c's canonical names). */
static const char *const known[] = {"opus", "PCMU", "PCMA", "VP8", "VP9", "H264"};

static const char *canonical(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(known); i++) {
        if (g_ascii_strcasecmp(known[i], name) == 0)
            return known[i];
    }
    return NULL;
}

bool room_codecs_parse(json_t *value, room *r)
{
    if (!value)
        return true;
    if (!json_is_array(value) || json_array_size(value) == 0 ||
        json_array_size(value) > ROOM_MAX_ROOM_CODECS)
        return false;
    size_t i;
    json_t *item;
    json_array_foreach(value, i, item)
    {
        const char *name = json_is_string(item) ? canonical(json_string_value(item)) : NULL;
        if (!name)
            return false;
        r->codecs[r->n_codecs++] = name;
    }
    return true;
}

json_t *room_codecs_describe(const room *r)
{
    if (r->n_codecs == 0)
        return json_null();
    json_t *list = json_array();
    for (size_t i = 0; i < r->n_codecs; i++)
        json_array_append_new(list, json_string(r->codecs[i]));
    return list;
}

static bool listed(const room *r, const char *name)
{
    if (r->n_codecs == 0)
        return true;
    for (size_t i = 0; i < r->n_codecs; i++) {
        if (g_ascii_strcasecmp(r->codecs[i], name) == 0)
            return true;
    }
    return false;
}

bool room_accept_codec(const char *endpoint, const char *resource, size_t media_index,
                       moat_media_kind kind, const char *name, uint32_t clock_rate)
{
    const char *slash = strchr(resource, '/');
    size_t length = slash ? (size_t)(slash - resource) : strlen(resource);
    if (!name || !room_name_valid(resource, length))
        return true; /* attach refuses the session anyway */
    char room_name[ROOM_NAME_SIZE];
    memcpy(room_name, resource, length);
    room_name[length] = '\0';
    room *r = room_acquire(room_name, false);
    if (!r)
        return true;                 /* created by this publisher: no list */
    bool accepted = listed(r, name); /* fixed at creation: no lock needed */
    room_release(r);
    return accepted;
}
