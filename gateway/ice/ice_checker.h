/* ICE-lite connectivity-check responder (RFC 8445 §7.3 for a lite agent):
 * authenticates a peer's Binding request with the session's short-term
 * credentials and builds the success response. One checker per media worker;
 * it is not shared between threads. */
#ifndef MOAT_ICE_CHECKER_H
#define MOAT_ICE_CHECKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Smallest reply buffer handle_request accepts (IPv6 minimum MTU). */
#define MOAT_ICE_REPLY_CAPACITY 1280

/* Longest peer ufrag accepted when the remote ufrag is not yet known
 * (RFC 8839 §5.4 caps ice-ufrag at 256 characters); it also bounds the
 * USERNAME echoed in the reply, so every reply fits MOAT_ICE_REPLY_CAPACITY. */
#define MOAT_ICE_MAX_UFRAG_LENGTH 256

typedef struct moat_ice_checker moat_ice_checker;

/* NULL on allocation failure. */
moat_ice_checker *moat_ice_checker_new(void);
void moat_ice_checker_free(moat_ice_checker *c);

/* A checker is controlled (a lite agent) unless set controlling: a full
 * controlling agent (moat-flood toward a full peer such as Janus) answers
 * its controlled peer's checks, and answers a peer that also claims to
 * control with 487 (it never yields the role). */
void moat_ice_checker_set_controlling(moat_ice_checker *c, bool controlling);

typedef enum {
    MOAT_ICE_CHECK_OK,
    MOAT_ICE_CHECK_MALFORMED, /* not parseable STUN, bad attribute sizes, missing PRIORITY, ... */
    MOAT_ICE_CHECK_UNAUTHORIZED, /* bad MESSAGE-INTEGRITY, wrong/missing USERNAME or ufrag mismatch
                                  */
    MOAT_ICE_CHECK_BAD_FINGERPRINT, /* FINGERPRINT missing or wrong */
    MOAT_ICE_CHECK_NOT_REQUEST,     /* STUN, but not a Binding request */
    MOAT_ICE_CHECK_ROLE_CONFLICT,   /* authenticated, but the peer claims our role too:
                                       reply holds a 487 error telling it to switch */
    MOAT_ICE_CHECK_INVALID_ARGUMENT /* caller error: NULL, empty ufrag/pwd, unusable from,
                                       reply capacity below MOAT_ICE_REPLY_CAPACITY */
} moat_ice_check_result;

typedef struct {
    bool use_candidate;    /* USE-CANDIDATE present: the controlling peer nominates this pair */
    bool peer_controlling; /* ICE-CONTROLLING present */
    uint32_t priority;     /* PRIORITY */
    uint64_t tie_breaker;  /* from ICE-CONTROLLING or ICE-CONTROLLED */
} moat_ice_check_info;

/* Validates a Binding request for the session whose credentials are given:
 * local_ufrag/local_pwd are ours, remote_ufrag is the peer's (NULL skips that
 * half of the USERNAME check). USERNAME must be "<local_ufrag>:<remote_ufrag>",
 * MESSAGE-INTEGRITY must verify with local_pwd, FINGERPRINT must be present
 * and right.
 *
 * *reply_length is in/out: in, the capacity of reply (at least
 * MOAT_ICE_REPLY_CAPACITY); out, the number of bytes to send back to from, or
 * 0. On OK the reply is the success response (XOR-MAPPED-ADDRESS = from, a
 * v4-mapped IPv6 from is reported as IPv4; MESSAGE-INTEGRITY with local_pwd;
 * FINGERPRINT). On ROLE_CONFLICT it is an authenticated 487 error response.
 * On every other result nothing is written and *reply_length is 0, so a
 * forged request never draws a packet (no reflection, no amplification).
 *
 * info (may be NULL) is filled on OK and ROLE_CONFLICT, zeroed otherwise. */
moat_ice_check_result moat_ice_checker_handle_request(
    moat_ice_checker *c, const uint8_t *request, size_t length, const char *local_ufrag,
    const char *local_pwd, const char *remote_ufrag, const struct sockaddr *from,
    socklen_t from_length, uint8_t *reply, size_t *reply_length, moat_ice_check_info *info);

const char *moat_ice_check_result_name(moat_ice_check_result r);

#endif
