/* The lifecycle of one legitimate session: open (socket, offer, WHIP POST,
 * answer), then the packets and timers that take it through ICE and DTLS to
 * connected, and close (WHIP DELETE). Media is legit_media.h. */
#ifndef WHIP_SESSION_H
#define WHIP_SESSION_H

#include "flood_session.h"

/* A session's state before anything else: zeroed, no socket, no fan-out
 * role. Every flood_session not allocated zeroed (one on the stack) starts
 * here; set s->sfu after it, before flood_session_open or _answer, which
 * keep whatever s->sfu holds. */
void flood_session_init(flood_session *s);

/* Opens the socket, POSTs the offer and applies the answer: the session is
 * then CHECKING. On failure returns -1 with the reason in s->error and the
 * state FAILED; close it all the same. */
int flood_session_open(flood_session *s, unsigned index, const flood_session_env *env,
                       uint64_t now_us);

/* A session the run did not open (its setup deadline passed before its
 * turn): FAILED with reason, no socket, nothing to hang up. */
void flood_session_not_opened(flood_session *s, unsigned index, const flood_session_env *env,
                              const char *reason);

/* A fan-out subscriber answering the SFU's offer (s->sfu set): opens the
 * socket, takes the SFU's transport from the offer and returns our answer
 * in *answer (g_malloc'd); the session is then CHECKING, waiting for the
 * SFU's checks. -1 with the reason in s->error (state FAILED). */
int flood_session_answer(flood_session *s, unsigned index, const flood_session_env *env,
                         const char *offer, char **answer, uint64_t now_us);

/* Reads every datagram waiting on the socket and acts on it. */
void flood_session_receive(flood_session *s, uint64_t now_us);

/* ICE checks and consent, DTLS retransmissions, the setup deadline. */
void flood_session_tick(flood_session *s, uint64_t now_us);

/* When flood_session_tick next has something to do (UINT64_MAX: never). */
uint64_t flood_session_next_timer_us(const flood_session *s, uint64_t now_us);

/* Frees what the session holds; with hang_up, DELETEs its WHIP resource
 * first (0, or -1 with a message if that failed). Safe on a session that
 * failed to open. Counters and error stay readable for the reports. */
int flood_session_close(flood_session *s, bool hang_up, char *error, size_t error_size);

/* Sends one datagram to the selected pair (or `to`); 0, or -1 if the kernel
 * refused it. */
int flood_session_send(flood_session *s, const uint8_t *data, size_t length,
                       const struct sockaddr_in6 *to);

/* Address migration of a connected session (a network handover, seen by
 * the gateway as NAT rebinding): closes the socket, opens one bound to
 * local, and sends nominated checks on the selected pair from it until one
 * is answered (s->migrating turns false, s->migrations counts). DTLS and
 * SRTP are kept. The caller polls the new s->fd. 0, or -1 with errno. */
int flood_session_migrate(flood_session *s, const struct sockaddr_in6 *local, uint64_t now_us);

/* The same move through an ICE restart: new local credentials PATCHed to
 * the WHIP resource, the gateway's new ones taken from its answer, then the
 * checks come from the new address with the new credentials. DTLS and SRTP
 * are kept. 0, or -1 with the reason in s->error (the session goes on on
 * its old address if the PATCH failed). */
int flood_session_restart_ice(flood_session *s, const struct sockaddr_in6 *local, uint64_t now_us);

const char *flood_session_state_name(flood_session_state state);

#endif
