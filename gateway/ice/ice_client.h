/* The controlling side of ICE connectivity checks (RFC 8445 §7.2.4 and
 * §7.2.5) on libnice's STUN usage API: builds Binding requests with the
 * peer's short-term credentials and checks the responses that come back.
 * Moat's tools use it to act as a full controlling agent against an ICE-lite
 * server. A client belongs to one thread. */
#ifndef MOAT_ICE_CLIENT_H
#define MOAT_ICE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct moat_ice_client moat_ice_client;

/* Requests whose response is still awaited; building one more forgets the
 * oldest, so unanswered checks never fill libnice's transaction table. */
#define MOAT_ICE_CLIENT_OUTSTANDING 32

/* Room every request needs (USERNAME of two 256-character ufrags included). */
#define MOAT_ICE_CLIENT_REQUEST_CAPACITY 1280

typedef struct {
    const char *local_ufrag, *local_pwd;   /* ours, as our SDP announced them */
    const char *remote_ufrag, *remote_pwd; /* the peer's, from its SDP */
    uint64_t tie_breaker;                  /* ICE-CONTROLLING value */
} moat_ice_client_credentials;

/* Copies the credentials. NULL when one is missing, empty or longer than
 * 256 characters, or on allocation failure. */
moat_ice_client *moat_ice_client_new(const moat_ice_client_credentials *credentials);
void moat_ice_client_free(moat_ice_client *c);

/* A Binding request: USERNAME "<remote ufrag>:<local ufrag>", PRIORITY,
 * ICE-CONTROLLING, USE-CANDIDATE when nominate, MESSAGE-INTEGRITY with the
 * peer's password and FINGERPRINT. With track_response the transaction is
 * remembered so moat_ice_client_handle_response() can match its answer;
 * without, it is forgotten at once (requests nobody will answer). Returns
 * the length written to out, or 0 when capacity is below
 * MOAT_ICE_CLIENT_REQUEST_CAPACITY or an argument is NULL. */
size_t moat_ice_client_build_request(moat_ice_client *c, uint32_t priority, bool nominate,
                                     bool track_response, uint8_t *out, size_t capacity);

typedef enum {
    MOAT_ICE_RESPONSE_SUCCESS,       /* authenticated success; *mapped filled */
    MOAT_ICE_RESPONSE_ROLE_CONFLICT, /* authenticated 487: the peer wants to control too */
    MOAT_ICE_RESPONSE_ERROR,         /* another error response */
    MOAT_ICE_RESPONSE_UNMATCHED,     /* not an answer to a request we are waiting for */
    MOAT_ICE_RESPONSE_UNAUTHORIZED,  /* MESSAGE-INTEGRITY missing or wrong */
    MOAT_ICE_RESPONSE_MALFORMED      /* not a well-formed STUN Binding response */
} moat_ice_response_result;

/* Checks a datagram that the RFC 7983 demultiplexer sent to STUN. A matched
 * response ends its transaction whatever the outcome. mapped and
 * mapped_length may be NULL; otherwise *mapped_length is in/out. */
moat_ice_response_result moat_ice_client_handle_response(moat_ice_client *c, const uint8_t *data,
                                                         size_t length,
                                                         struct sockaddr_storage *mapped,
                                                         socklen_t *mapped_length);

/* The transaction id of the last request built, and of the last request
 * whose authenticated success came back: a controlling agent knows its
 * nomination took effect when the nominating request itself is answered
 * (RFC 8445 §8.1.1), not a late answer to an earlier check. */
#define MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH 16 /* magic cookie and transaction id */
void moat_ice_client_last_request(const moat_ice_client *c,
                                  uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH]);
void moat_ice_client_last_success(const moat_ice_client *c,
                                  uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH]);

const char *moat_ice_response_result_name(moat_ice_response_result result);

/* RFC 8445 §5.1.2.1 priority of a peer-reflexive candidate, which is what a
 * controlling agent puts in PRIORITY (type preference 110). */
uint32_t moat_ice_client_prflx_priority(uint32_t local_preference, uint32_t component);

#endif
