/* The ICE servers Moat hands its clients: the configured TURN URIs with
 * time-limited credentials from coturn's REST API shared secret
 * (use-auth-secret): username = "<expiry unix time>:<user>", password =
 * base64(HMAC-SHA1(secret, username)), with a random user per session
 * ([turn] ttl_s, 1 h by default). Handed out only in a session's WHIP/WHEP
 * 201 Link headers and to API token holders (/api/ice-servers). Pure functions of the configuration
 * and the clock; control thread only. */
#ifndef MOAT_ICE_SERVERS_H
#define MOAT_ICE_SERVERS_H

#include "base/config.h"

#include <jansson.h>
#include <stdint.h>

typedef struct {
    char username[96];
    char password[64]; /* base64 of a 20-byte HMAC: 28 characters */
} moat_turn_credentials;

/* Credentials valid until now_unix + ttl_s. Returns 0, or -1 when the secret
 * is empty. */
int moat_turn_credentials_make(const char *secret, const char *user, int64_t now_unix,
                               int64_t ttl_s, moat_turn_credentials *out);

/* A fresh random user part (32 hex digits) for one session's credentials:
 * every session gets its own username and password, so one client's
 * credentials say nothing about another's. */
void moat_turn_new_user(char out[33]);

/* {"iceServers": [{"urls": [...], "username": ..., "credential": ...}]}, the
 * RTCConfiguration shape; an empty list when no TURN URI is configured. */
json_t *moat_ice_servers_json(const moat_config *config, const char *user, int64_t now_unix);

/* The value of the Link header of a WHIP answer (RFC 9725 section 4.6):
 * `<uri>; rel="ice-server"; username="..."; credential="...";
 * credential-type="password"` per TURN URI, comma-separated (RFC 8288), or
 * NULL when no TURN URI is configured. g_free it. */
char *moat_ice_servers_link_header(const moat_config *config, const char *user, int64_t now_unix);

#endif
