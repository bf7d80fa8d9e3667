/* The rooms of the room plugin: the name -> room table, placement of new
 * sessions, and the JSON API under /api/rooms (control thread). */
#include "room.h"
#include "room_recovery.h"
#include "room_simulcast.h"

#include "base/json_body.h"

#include <jansson.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *rooms;  /* name -> room (one reference) */
static guint expiry_timer; /* control thread */

room_settings room_config = {ROOM_DEFAULT_ROOMS, ROOM_DEFAULT_TTL_S * 1000000ull,
                             ROOM_DEFAULT_FLOOR, true, true};

void room_settings_load(const moat_gateway_calls *gateway)
{
    if (!gateway->config_int)
        return;
    int max_rooms = gateway->config_int("room", "max_rooms", ROOM_DEFAULT_ROOMS);
    int ttl = gateway->config_int("room", "empty_ttl_s", ROOM_DEFAULT_TTL_S);
    int floor = gateway->config_int("room", "remb_floor_bps", ROOM_DEFAULT_FLOOR);
    room_config.max_rooms = CLAMP(max_rooms, 1, ROOM_MAX_ROOMS);
    room_config.empty_ttl_us = (uint64_t)MAX(ttl, 1) * 1000000ull;
    room_config.remb_floor_bps = (uint64_t)MAX(floor, 0);
    room_config.nack_publishers = gateway->config_int("room", "nack_publishers", 1) != 0;
    room_config.send_side_bwe = gateway->config_int("room", "send_side_bwe", 1) != 0;
}

static gboolean expire_tick(gpointer data)
{
    room_registry_expire((uint64_t)g_get_monotonic_time());
    return G_SOURCE_CONTINUE;
}

static void room_free(room *r)
{
    pthread_mutex_destroy(&r->lock);
    g_free(r->subscribers);
    g_free(r);
}

void room_registry_init(void)
{
    pthread_mutex_lock(&registry_lock);
    if (!rooms)
        rooms = g_hash_table_new(g_str_hash, g_str_equal);
    pthread_mutex_unlock(&registry_lock);
    if (!expiry_timer)
        expiry_timer = g_timeout_add_seconds(1, expire_tick, NULL);
}

void room_registry_destroy(void)
{
    if (expiry_timer)
        g_source_remove(expiry_timer);
    expiry_timer = 0;
    pthread_mutex_lock(&registry_lock);
    if (rooms) {
        GHashTableIter it;
        gpointer value;
        g_hash_table_iter_init(&it, rooms);
        while (g_hash_table_iter_next(&it, NULL, &value)) {
            room *r = value;
            if (--r->refs == 0)
                room_free(r);
        }
        g_hash_table_destroy(rooms);
        rooms = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
}

bool room_name_valid(const char *name, size_t length)
{
    if (length == 0 || length >= ROOM_NAME_SIZE)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (!g_ascii_isalnum(c) && c != '-' && c != '_')
            return false;
    }
    return true;
}

/* Rooms made so far (room.source_space); registry_lock. */
static uint32_t rooms_made;

/* registry_lock held. */
static room *create_room(const char *name)
{
    room *r = g_new0(room, 1);
    r->source_space = ++rooms_made ? rooms_made : ++rooms_made;
    g_strlcpy(r->name, name, sizeof r->name);
    pthread_mutex_init(&r->lock, NULL);
    r->subscribers = g_new0(room_peer *, ROOM_MAX_SUBSCRIBERS);
    r->max_publishers = ROOM_MAX_PUBLISHERS;
    r->max_subscribers = ROOM_DEFAULT_SUBS;
    r->publisher_worker = r->subscriber_worker = -1;
    atomic_init(&r->closed, false);
    r->refs = 1; /* the table's */
    g_hash_table_insert(rooms, r->name, r);
    return r;
}

room *room_acquire(const char *name, bool create)
{
    pthread_mutex_lock(&registry_lock);
    room *r = rooms ? g_hash_table_lookup(rooms, name) : NULL;
    if (!r && create && rooms && g_hash_table_size(rooms) < (guint)room_config.max_rooms) {
        r = create_room(name);
        r->implicit = true;
    }
    if (r)
        r->refs++;
    pthread_mutex_unlock(&registry_lock);
    return r;
}

const char *room_join_listed(room *r, room_peer *peer, const char *source_id)
{
    pthread_mutex_lock(&registry_lock);
    /* Emptied and forgotten since we acquired it: list it again. */
    if (rooms && !atomic_load(&r->closed) && !g_hash_table_lookup(rooms, r->name)) {
        g_hash_table_insert(rooms, r->name, r);
        r->refs++;
    }
    const char *error = room_join(r, peer, source_id);
    pthread_mutex_unlock(&registry_lock);
    return error;
}

void room_forget_if_empty(room *r)
{
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&r->lock);
    bool empty = r->n_publishers == 0 && r->n_subscribers == 0;
    pthread_mutex_unlock(&r->lock);
    bool drop = r->implicit && empty && rooms && g_hash_table_lookup(rooms, r->name) == r;
    if (drop) {
        g_hash_table_remove(rooms, r->name);
        r->refs--; /* the table's; the caller still holds one */
    }
    pthread_mutex_unlock(&registry_lock);
}

size_t room_registry_expire(uint64_t now_us)
{
    size_t n = 0;
    GPtrArray *gone = g_ptr_array_new();
    pthread_mutex_lock(&registry_lock);
    GHashTableIter it;
    gpointer value;
    if (rooms)
        g_hash_table_iter_init(&it, rooms);
    while (rooms && g_hash_table_iter_next(&it, NULL, &value)) {
        room *r = value;
        pthread_mutex_lock(&r->lock);
        bool empty = r->n_publishers == 0 && r->n_subscribers == 0;
        if (!empty)
            r->empty_since_us = 0;
        else if (r->empty_since_us == 0)
            r->empty_since_us = now_us;
        bool expired =
            !r->implicit && empty && now_us - r->empty_since_us >= room_config.empty_ttl_us;
        pthread_mutex_unlock(&r->lock);
        if (!expired)
            continue;
        /* Not marked closed: a peer that acquired it meanwhile lists it
         * again as it joins (room_join_listed). */
        g_hash_table_iter_remove(&it);
        if (--r->refs == 0)
            g_ptr_array_add(gone, r);
        n++;
    }
    pthread_mutex_unlock(&registry_lock);
    for (guint i = 0; i < gone->len; i++)
        room_free(g_ptr_array_index(gone, i));
    g_ptr_array_free(gone, TRUE);
    return n;
}

void room_release(room *r)
{
    pthread_mutex_lock(&registry_lock);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&registry_lock);
    if (last)
        room_free(r);
}

/* A room stays on one worker while it is small: its publisher's, unless the
 * room forces placement (POST /api/rooms). */
#define ROOM_SPREAD_AFTER 16

int room_place(const char *endpoint, const char *resource, unsigned n_workers)
{
    const char *slash = strchr(resource, '/');
    size_t length = slash ? (size_t)(slash - resource) : strlen(resource);
    if (!room_name_valid(resource, length))
        return -1;
    char name[ROOM_NAME_SIZE];
    memcpy(name, resource, length);
    name[length] = '\0';
    int worker = -1;
    pthread_mutex_lock(&registry_lock);
    room *r = rooms ? g_hash_table_lookup(rooms, name) : NULL;
    if (r) {
        bool publisher = strcmp(endpoint, "whip") == 0;
        pthread_mutex_lock(&r->lock);
        worker = publisher ? r->publisher_worker : r->subscriber_worker;
        if (worker < 0 && r->n_publishers > 0 && r->n_subscribers < ROOM_SPREAD_AFTER)
            worker = r->publishers[0]->worker;
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&registry_lock);
    return worker >= 0 && (unsigned)worker < n_workers ? worker : -1;
}

/* ---- JSON API ---- */

static char *reply(int *status, int code, json_t *body)
{
    *status = code;
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *out = g_strdup(text);
    free(text);
    return out;
}

static char *error_reply(int *status, int code, const char *error, const char *detail)
{
    return reply(status, code,
                 json_pack("{s:s, s:s, s:i}", "error", error, "detail", detail, "status", code));
}

/* A 405 naming the methods the path takes in "allow" (the gateway's Allow
 * header, plugin.h). */
static char *not_allowed(int *status, const char *allow, const char *detail)
{
    return reply(status, 405,
                 json_pack("{s:s, s:s, s:i, s:s}", "error", "method_not_allowed", "detail", detail,
                           "status", 405, "allow", allow));
}

char *room_api_not_allowed(int *status, const char *allow, const char *detail)
{
    return not_allowed(status, allow, detail);
}

char *room_api_reply(int *status, int code, void *json)
{
    return reply(status, code, json);
}

char *room_api_error(int *status, int code, const char *error, const char *detail)
{
    return error_reply(status, code, error, detail);
}

/* Room lock held. */
static json_t *describe(room *r, bool full)
{
    json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i}", "name", r->name, "max_publishers",
                          r->max_publishers, "max_subscribers", r->max_subscribers,
                          "publisher_count", (int)r->n_publishers, "subscriber_count",
                          (int)r->n_subscribers, "cascade_legs", (int)r->n_cascade_legs);
    if (!full)
        return o;
    json_t *pubs = json_array(), *subs = json_array();
    for (size_t i = 0; i < r->n_publishers; i++) {
        room_peer *p = r->publishers[i];
        json_t *pub = json_pack("{s:s, s:i, s:I, s:I, s:I}", "id", p->id, "worker", p->worker,
                                "packets", (json_int_t)atomic_load(&p->packets), "remb_sent",
                                (json_int_t)atomic_load(&p->remb_sent), "remb_bitrate",
                                (json_int_t)atomic_load(&p->remb_bps));
        room_recovery_describe(p, pub);
        json_object_set_new(pub, "ssrc_refused",
                            json_integer((json_int_t)atomic_load(&p->ssrc_refused)));
        json_object_set_new(pub, "ssrc_changes_refused",
                            json_integer((json_int_t)atomic_load(&p->ssrc_changes_refused)));
        json_object_set_new(pub, "ssrc_extra",
                            json_integer((json_int_t)atomic_load(&p->ssrc_extra)));
        if (atomic_load(&p->level_us))
            json_object_set_new(pub, "audio_level_dbov",
                                json_real(-(double)atomic_load(&p->level) / 256.0));
        json_t *layers = room_simulcast_describe_publisher(p);
        if (layers)
            json_object_set_new(pub, "layers", layers);
        json_array_append_new(pubs, pub);
    }
    for (size_t i = 0; i < r->n_subscribers; i++) {
        room_peer *s = r->subscribers[i];
        json_t *sub = json_pack("{s:s, s:s?, s:i, s:I, s:I}", "id", s->id, "publisher",
                                s->source ? s->source->id : NULL, "worker", s->worker, "packets",
                                (json_int_t)atomic_load(&s->packets), "estimate_bitrate",
                                (json_int_t)atomic_load(&s->estimate_bps));
        json_object_set_new(sub, "keyframe_requests",
                            json_integer((json_int_t)atomic_load(&s->keyframe_requests)));
        json_object_set_new(sub, "keyframe_requests_dropped",
                            json_integer((json_int_t)atomic_load(&s->keyframe_requests_dropped)));
        json_t *layer = room_simulcast_describe_subscriber(s);
        if (layer)
            json_object_set_new(sub, "layer", layer);
        json_t *bwe = room_bwe_describe(s);
        if (bwe)
            json_object_set_new(sub, "bwe", bwe);
        json_array_append_new(subs, sub);
    }
    json_object_set_new(o, "publishers", pubs);
    const char *speaker = room_active_speaker(r, (uint64_t)g_get_monotonic_time());
    json_object_set_new(o, "active_speaker", speaker ? json_string(speaker) : json_null());
    json_object_set_new(o, "subscribers", subs);
    json_object_set_new(o, "publisher_worker", json_integer(r->publisher_worker));
    json_object_set_new(o, "subscriber_worker", json_integer(r->subscriber_worker));
    json_object_set_new(o, "codecs", room_codecs_describe(r));
    json_object_set_new(o, "max_bitrate", json_integer(r->max_bitrate));
    return o;
}

static char *list_rooms(int *status)
{
    json_t *list = json_array();
    pthread_mutex_lock(&registry_lock);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, rooms);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        room *r = value;
        pthread_mutex_lock(&r->lock);
        json_array_append_new(list, describe(r, false));
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&registry_lock);
    return reply(status, 200, json_pack("{s:o}", "rooms", list));
}

/* An optional integer option within [min, max]; false when present and bad. */
static bool int_option(json_t *body, const char *key, int min, int max, int *out)
{
    json_t *v = json_object_get(body, key);
    if (!v)
        return true;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return false;
    *out = (int)json_integer_value(v);
    return true;
}

static char *create(const char *body, size_t length, int *status)
{
    json_error_t jerror;
    json_t *json = json_loadb(body, length, JSON_REJECT_DUPLICATES, &jerror);
    if (!json || !json_is_object(json)) {
        char detail[256];
        moat_json_body_detail(json, length ? &jerror : NULL, detail, sizeof detail);
        json_decref(json);
        return error_reply(status, 400, "bad_json", detail);
    }
    const char *name = json_string_value(json_object_get(json, "name"));
    int max_pubs = ROOM_MAX_PUBLISHERS, max_subs = ROOM_DEFAULT_SUBS, pub_worker = -1,
        sub_worker = -1, max_bitrate = 0;
    if (!name || !room_name_valid(name, strlen(name))) {
        json_decref(json);
        return error_reply(status, 400, "bad_name",
                           "name: 1 to 63 characters of A-Z, a-z, 0-9, - and _");
    }
    room parsed = {0};
    if (!room_codecs_parse(json_object_get(json, "codecs"), &parsed)) {
        json_decref(json);
        return error_reply(status, 400, "bad_codecs",
                           "codecs: an array of 1 to 8 of opus, PCMU, PCMA, VP8, VP9, H264");
    }
    if (!int_option(json, "max_publishers", 1, ROOM_MAX_PUBLISHERS, &max_pubs) ||
        !int_option(json, "max_subscribers", 0, ROOM_MAX_SUBSCRIBERS, &max_subs) ||
        !int_option(json, "publisher_worker", -1, 1023, &pub_worker) ||
        !int_option(json, "subscriber_worker", -1, 1023, &sub_worker) ||
        !int_option(json, "max_bitrate", 0, ROOM_MAX_BITRATE, &max_bitrate)) {
        json_decref(json);
        return error_reply(status, 400, "bad_option", "an option is out of range");
    }
    pthread_mutex_lock(&registry_lock);
    if (g_hash_table_lookup(rooms, name)) {
        pthread_mutex_unlock(&registry_lock);
        json_decref(json);
        return error_reply(status, 409, "exists", "a room with this name exists");
    }
    if (g_hash_table_size(rooms) >= (guint)room_config.max_rooms) {
        pthread_mutex_unlock(&registry_lock);
        json_decref(json);
        return error_reply(status, 503, "too_many_rooms", "the gateway holds its maximum of rooms");
    }
    room *r = create_room(name);
    r->max_publishers = max_pubs;
    r->max_subscribers = max_subs;
    r->publisher_worker = pub_worker;
    r->subscriber_worker = sub_worker;
    memcpy(r->codecs, parsed.codecs, sizeof parsed.codecs);
    r->n_codecs = parsed.n_codecs;
    r->max_bitrate = max_bitrate;
    r->empty_since_us = (uint64_t)g_get_monotonic_time();
    json_t *described = describe(r, true);
    pthread_mutex_unlock(&registry_lock);
    json_decref(json);
    return reply(status, 201, described);
}

/* GET /api/rooms/<room>/capacity: the subscriber cap and its use, cascade
 * legs left out; cheap (no peer list), for a cluster's owner that tells
 * the other nodes when the room is full. */
static char *capacity(const char *name, size_t length, int *status)
{
    char *room_name = g_strndup(name, length);
    room *r = room_name_valid(room_name, length) ? room_acquire(room_name, false) : NULL;
    g_free(room_name);
    if (!r)
        return error_reply(status, 404, "unknown_room", "no such room");
    pthread_mutex_lock(&r->lock);
    size_t subscribers = r->n_subscribers - r->n_cascade_legs;
    json_t *o = json_pack("{s:i, s:i, s:i, s:b}", "max_subscribers", r->max_subscribers,
                          "subscribers", (int)subscribers, "cascade_legs", (int)r->n_cascade_legs,
                          "full", subscribers >= (size_t)r->max_subscribers);
    pthread_mutex_unlock(&r->lock);
    room_release(r);
    return reply(status, 200, o);
}

/* Removes the room from the table; its peers leave on their own workers. */
static char *delete_room(const char *name, int *status)
{
    pthread_mutex_lock(&registry_lock);
    room *r = g_hash_table_lookup(rooms, name);
    if (!r) {
        pthread_mutex_unlock(&registry_lock);
        return error_reply(status, 404, "unknown_room", "no such room");
    }
    g_hash_table_remove(rooms, name);
    atomic_store(&r->closed, true);
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n_subscribers; i++)
        atomic_store(&r->subscribers[i]->leave, true);
    pthread_mutex_unlock(&r->lock);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&registry_lock);
    if (last)
        room_free(r);
    *status = 204;
    return NULL;
}

char *room_handle_api(const char *method, const char *path, const char *body, size_t length,
                      int *status)
{
    const char *rest = path + strlen("/api/rooms");
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (!rooms)
        return error_reply(status, 503, "not_ready", "the room plugin is not initialised");
    room_registry_expire((uint64_t)g_get_monotonic_time());
    if (rest[0] == '\0' || strcmp(rest, "/") == 0) {
        if (get)
            return list_rooms(status);
        if (strcmp(method, "POST") == 0)
            return create(body, length, status);
        return not_allowed(status, "GET, HEAD, POST", "GET or POST /api/rooms");
    }
    const char *name = rest + 1;
    if (g_str_has_suffix(name, "/events") &&
        room_name_valid(name, strlen(name) - strlen("/events")))
        return error_reply(status, 426, "websocket_required",
                           "GET /api/rooms/<room>/events is a WebSocket (Upgrade: websocket)");
    if (strstr(name, "/subscribers/"))
        return room_simulcast_api(method, name, body, length, status);
    if (g_str_has_suffix(name, "/capacity") && get)
        return capacity(name, strlen(name) - strlen("/capacity"), status);
    if (g_str_has_suffix(name, "/capacity") &&
        room_name_valid(name, strlen(name) - strlen("/capacity")))
        return not_allowed(status, "GET, HEAD", "GET a room's capacity");
    if (!room_name_valid(name, strlen(name)))
        return error_reply(status, 404, "unknown_room", "no such room");
    if (strcmp(method, "DELETE") == 0)
        return delete_room(name, status);
    if (!get)
        return not_allowed(status, "GET, HEAD, DELETE", "GET or DELETE a room");
    room *r = room_acquire(name, false);
    if (!r)
        return error_reply(status, 404, "unknown_room", "no such room");
    pthread_mutex_lock(&r->lock);
    json_t *described = describe(r, true);
    pthread_mutex_unlock(&r->lock);
    room_release(r);
    return reply(status, 200, described);
}

/* The room's current publisher: the first in its list, the one subscribers
 * without a choice follow. */
int room_publisher_session(const char *name, char *id, size_t size, char *label, size_t label_size)
{
    if (!rooms || !name || !room_name_valid(name, strlen(name)))
        return -1;
    room *r = room_acquire(name, false);
    if (!r)
        return -1;
    int found = -1;
    pthread_mutex_lock(&r->lock);
    if (r->n_publishers > 0 && r->publishers[0]->session_id[0]) {
        g_strlcpy(id, r->publishers[0]->session_id, size);
        g_strlcpy(label, r->publishers[0]->id, label_size);
        found = 0;
    }
    pthread_mutex_unlock(&r->lock);
    room_release(r);
    return found;
}
