/* The Janus videoroom as a fan-out target (Janus 1.x API): a room created
 * for the run, the publisher joined with our offer (joinandconfigure), and
 * subscribers joined to its feed: Janus offers, we answer with "start".
 * One thread uses it. */
#ifndef JANUS_VIDEOROOM_H
#define JANUS_VIDEOROOM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "janus_client.h"

typedef struct {
    janus_client *client;
    uint64_t publisher_handle;
    uint64_t room;
    uint64_t feed; /* the publisher's id in the room, once joined */
} janus_videoroom;

/* Creates the Janus session, attaches the publisher's handle and creates a
 * room with a random id. -1 with a message. */
int janus_videoroom_open(janus_videoroom *v, const char *base_url,
                         const volatile sig_atomic_t *signals, char *error, size_t error_size);
/* A flood_offer_exchange (user: the janus_videoroom): joins the publisher
 * with offer and returns Janus's answer. No resource URL. */
int janus_videoroom_publish(void *user, const char *offer, char **answer, char **resource_url,
                            char *error, size_t error_size);
/* Attaches a subscriber handle, joins it to the feed and returns Janus's
 * offer (g_malloc'd). */
int janus_videoroom_subscribe(janus_videoroom *v, uint64_t *handle, char **offer, char *error,
                              size_t error_size);
/* Sends our answer with "start". */
int janus_videoroom_start(janus_videoroom *v, uint64_t handle, const char *answer, char *error,
                          size_t error_size);
/* Destroys the room and the session. */
void janus_videoroom_close(janus_videoroom *v);

#endif
