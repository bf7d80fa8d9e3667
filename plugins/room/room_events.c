/* The room's events (GET /api/rooms/<room>/events, topic rooms/<room>):
 * joined, left and publisher_changed as peers come and go, and
 * active_speaker when the loudest publisher changes. */
#include "room.h"

#include <stdio.h>
#include <string.h>

void room_event(const room *r, const char *type, const char *role, const char *id,
                const char *publisher)
{
    if (!room_gateway || !room_gateway->publish_event)
        return;
    char topic[ROOM_NAME_SIZE + 8];
    snprintf(topic, sizeof topic, "rooms/%s", r->name);
    char *json = publisher ? g_strdup_printf("{\"type\":\"%s\",\"room\":\"%s\",\"role\":\"%s\","
                                             "\"id\":\"%s\",\"publisher\":\"%s\"}",
                                             type, r->name, role, id, publisher)
                           : g_strdup_printf("{\"type\":\"%s\",\"room\":\"%s\",\"role\":\"%s\","
                                             "\"id\":\"%s\"}",
                                             type, r->name, role, id);
    room_gateway->publish_event(topic, json);
    g_free(json);
}

const char *room_active_speaker(room *r, uint64_t now_us)
{
    const char *best = NULL;
    unsigned best_level = ROOM_SPEAKER_DBOV << 8;
    for (size_t i = 0; i < r->n_publishers; i++) {
        room_peer *p = r->publishers[i];
        uint64_t at = atomic_load(&p->level_us);
        unsigned level = atomic_load(&p->level);
        if (at != 0 && now_us - at < ROOM_SPEAKER_AGE_US && level < best_level) {
            best = p->id;
            best_level = level;
        }
    }
    return best;
}

/* The announced speaker keeps the floor while it is active and nobody is
 * louder by ROOM_SPEAKER_MARGIN (no flapping between equal voices). */
static const char *next_speaker(room *r, uint64_t now_us)
{
    const char *loudest = room_active_speaker(r, now_us);
    if (!loudest || !r->speaker[0] || strcmp(loudest, r->speaker) == 0)
        return loudest;
    unsigned loudest_level = ROOM_SPEAKER_DBOV << 8, current_level = loudest_level;
    bool current_active = false;
    for (size_t i = 0; i < r->n_publishers; i++) {
        room_peer *p = r->publishers[i];
        uint64_t at = atomic_load(&p->level_us);
        unsigned level = atomic_load(&p->level);
        bool active =
            at != 0 && now_us - at < ROOM_SPEAKER_AGE_US && level < (ROOM_SPEAKER_DBOV << 8);
        if (strcmp(p->id, loudest) == 0)
            loudest_level = level;
        if (strcmp(p->id, r->speaker) == 0 && active) {
            current_active = true;
            current_level = level;
        }
    }
    if (current_active && loudest_level + ROOM_SPEAKER_MARGIN > current_level)
        return r->speaker;
    return loudest;
}

void room_note_speaker(room *r, uint64_t now_us)
{
    const char *speaker = next_speaker(r, now_us);
    if (strcmp(speaker ? speaker : "", r->speaker) == 0)
        return;
    g_strlcpy(r->speaker, speaker ? speaker : "", sizeof r->speaker);
    if (!room_gateway || !room_gateway->publish_event)
        return;
    char topic[ROOM_NAME_SIZE + 8];
    snprintf(topic, sizeof topic, "rooms/%s", r->name);
    char *json = r->speaker[0] ? g_strdup_printf("{\"type\":\"active_speaker\",\"room\":\"%s\","
                                                 "\"role\":\"publisher\",\"id\":\"%s\"}",
                                                 r->name, r->speaker)
                               : g_strdup_printf("{\"type\":\"active_speaker\",\"room\":\"%s\","
                                                 "\"role\":\"publisher\",\"id\":null}",
                                                 r->name);
    room_gateway->publish_event(topic, json);
    g_free(json);
}
