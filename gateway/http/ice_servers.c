/* TURN credentials for clients (coturn REST API scheme) and their two
 * renderings: the /api/ice-servers JSON and RFC 9725 Link headers. */
#include "http/ice_servers.h"

#include <glib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#define TURN_USER "moat"

int moat_turn_credentials_make(const char *secret, const char *user, int64_t now_unix,
                               int64_t ttl_s, moat_turn_credentials *out)
{
    if (!secret || !*secret)
        return -1;
    snprintf(out->username, sizeof out->username, "%lld:%s", (long long)(now_unix + ttl_s),
             user && *user ? user : TURN_USER);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    if (!HMAC(EVP_sha1(), secret, (int)strlen(secret), (const unsigned char *)out->username,
              strlen(out->username), digest, &digest_length))
        return -1;
    char *encoded = g_base64_encode(digest, digest_length);
    g_strlcpy(out->password, encoded, sizeof out->password);
    g_free(encoded);
    return 0;
}

/* The configured URIs, trimmed, empty entries skipped; NULL when none. */
static char **turn_uris(const moat_config *config)
{
    if (!config->turn_uris || !*config->turn_uris)
        return NULL;
    char **parts = g_strsplit(config->turn_uris, ",", -1);
    size_t kept = 0;
    for (size_t i = 0; parts[i]; i++) {
        g_strstrip(parts[i]);
        if (*parts[i])
            parts[kept++] = parts[i];
        else
            g_free(parts[i]);
    }
    parts[kept] = NULL;
    return parts;
}

void moat_turn_new_user(char out[33])
{
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = (unsigned char)g_random_int();
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

json_t *moat_ice_servers_json(const moat_config *config, const char *user, int64_t now_unix)
{
    json_t *servers = json_array();
    char **uris = turn_uris(config);
    moat_turn_credentials credentials;
    if (uris && uris[0] &&
        moat_turn_credentials_make(config->turn_secret, user, now_unix, config->turn_ttl_s,
                                   &credentials) == 0) {
        json_t *urls = json_array();
        for (size_t i = 0; uris[i]; i++)
            json_array_append_new(urls, json_string(uris[i]));
        json_array_append_new(servers,
                              json_pack("{s:o, s:s, s:s, s:s}", "urls", urls, "username",
                                        credentials.username, "credential", credentials.password,
                                        "credentialType", "password"));
    }
    g_strfreev(uris);
    return json_pack("{s:o, s:i}", "iceServers", servers, "ttl", config->turn_ttl_s);
}

char *moat_ice_servers_link_header(const moat_config *config, const char *user, int64_t now_unix)
{
    char **uris = turn_uris(config);
    moat_turn_credentials credentials;
    GString *value = NULL;
    if (uris && uris[0] &&
        moat_turn_credentials_make(config->turn_secret, user, now_unix, config->turn_ttl_s,
                                   &credentials) == 0) {
        value = g_string_new(NULL);
        for (size_t i = 0; uris[i]; i++)
            g_string_append_printf(value,
                                   "%s<%s>; rel=\"ice-server\"; username=\"%s\"; "
                                   "credential=\"%s\"; credential-type=\"password\"",
                                   i ? ", " : "", uris[i], credentials.username,
                                   credentials.password);
    }
    g_strfreev(uris);
    return value ? g_string_free(value, FALSE) : NULL;
}
