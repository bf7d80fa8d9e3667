/* Owns the owner's side of cascade links: POST /api/cluster/cascade (an
 * edge asks for a room's media: a subscriber leg of the room towards the
 * edge, keyed with the keys it sent) and POST /api/cluster/cascade/close
 * (the edge's last subscriber left). Both need the cluster's forward token
 * (X-Moat-Forwarded), which only nodes knowing the cluster password have. */
#include "cluster/cascade_private.h"

#include "call/call_registry.h"
#include "session/session_cascade.h"
#include "session/whip_session.h"
#include "http/whip_api.h"

#include <openssl/crypto.h>

bool moat_cascade_token_valid(moat_cluster *cluster, const moat_http_request *request)
{
    const char *token = moat_http_request_header(request, "X-Moat-Forwarded");
    size_t length = strlen(cluster->forward_token);
    return token && strlen(token) == length &&
           CRYPTO_memcmp(token, cluster->forward_token, length) == 0;
}

bool moat_cascade_local_address(moat_cluster *cluster, struct in6_addr *out)
{
    struct sockaddr_in6 address;
    if (!moat_cascade_address(cluster->advertise_media, 0, &address))
        return false;
    *out = address.sin6_addr;
    return true;
}

bool moat_cascade_peer_address(moat_cluster *cluster, const char *media, json_int_t port,
                               struct sockaddr_in6 *out)
{
    if (!media || port <= 0 || port > UINT16_MAX ||
        !moat_cascade_address(media, (uint16_t)port, out))
        return false;
    const moat_call_registry *calls = cluster->gateway->calls;
    return !calls || !moat_call_registry_is_own_source(calls, (const struct sockaddr *)out,
                                                       (socklen_t)sizeof *out);
}

void moat_cascade_keying(moat_srtp_keying *keys, const uint8_t *local, const uint8_t *remote)
{
    memset(keys, 0, sizeof *keys);
    keys->profile = MOAT_SRTP_PROFILE_AEAD_AES_128_GCM;
    keys->key_length = MOAT_CASCADE_KEY_LENGTH;
    keys->salt_length = MOAT_CASCADE_SALT_LENGTH;
    memcpy(keys->local_key, local, MOAT_CASCADE_KEY_LENGTH);
    memcpy(keys->local_salt, local + MOAT_CASCADE_KEY_LENGTH, MOAT_CASCADE_SALT_LENGTH);
    memcpy(keys->remote_key, remote, MOAT_CASCADE_KEY_LENGTH);
    memcpy(keys->remote_salt, remote + MOAT_CASCADE_KEY_LENGTH, MOAT_CASCADE_SALT_LENGTH);
}

static void reply_json(moat_http_response *response, unsigned status, json_t *value)
{
    char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
    json_decref(value);
    char *body = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(response, status, "application/json", body, strlen(body));
}

/* The owner's leg: a subscriber session of the room, started towards the
 * edge. False with the response filled on refusal. */
static bool open_leg(moat_cascade *cascade, const moat_cascade_request *link,
                     moat_http_response *response)
{
    moat_cluster *cluster = cascade->cluster;
    moat_gateway *gateway = cluster->gateway;
    char key[320];
    owned_room *room = moat_cluster_room_key(link->plugin, link->room, key, sizeof key)
                           ? g_hash_table_lookup(cluster->rooms, key)
                           : NULL;
    if (!room || !moat_lease_valid(&room->lease, moat_cluster_now_ms())) {
        moat_http_response_error(response, 409, "not_owner", "this node does not own room %s",
                                 link->room);
        return false;
    }
    if (g_hash_table_size(cascade->owner_legs) >= MOAT_CASCADE_MAX_LEGS) {
        moat_http_response_header(response, "Retry-After", "5");
        moat_http_response_error(response, 503, "full", "this node feeds %d cascade legs",
                                 MOAT_CASCADE_MAX_LEGS);
        return false;
    }
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, link->plugin);
    moat_path path = {0};
    if (!plugin || !moat_cascade_peer_address(cluster, link->media, link->port, &path.remote) ||
        !moat_cascade_local_address(cluster, &path.local)) {
        moat_http_response_error(response, 400, "bad_link",
                                 "no such plugin, or an address that is not a peer node's");
        return false;
    }
    char *offer = moat_cascade_offer(false);
    char error[256] = "";
    moat_whip_created created;
    /* A subscriber that takes every simulcast layer of its source, each on
     * its own SSRC (the edge's subscribers choose among them there). */
    moat_whip_local relay = {.cascade = true, .relay_layers = MOAT_CASCADE_LINK_LAYERS};
    moat_whip_setup_result result =
        moat_whip_session_create_local(gateway, plugin, "whep", link->room, offer, strlen(offer),
                                       &relay, &created, error, sizeof error);
    g_free(offer);
    if (result != MOAT_WHIP_SETUP_OK) {
        moat_whip_reply_refused(response, error);
        return false;
    }
    uint32_t ssrcs[2];
    moat_cascade_answer_ssrcs(created.answer, ssrcs);
    g_free(created.answer);
    uint32_t layers[MOAT_CASCADE_LINK_LAYERS], layer_rtx[MOAT_CASCADE_LINK_LAYERS];
    size_t n_layers =
        moat_session_layer_ssrcs(created.session, layers, layer_rtx, MOAT_CASCADE_LINK_LAYERS);
    json_t *layer_ssrcs = json_array();
    for (size_t l = 0; l < n_layers; l++)
        json_array_append_new(layer_ssrcs, json_integer((json_int_t)layers[l]));
    /* RTX: the plain video's, then each layer's (all or none). */
    json_t *rtx_ssrcs = json_array();
    uint32_t video_rtx = moat_session_video_rtx_ssrc(created.session);
    bool rtx = video_rtx != 0;
    for (size_t l = 0; l < n_layers; l++)
        rtx = rtx && layer_rtx[l] != 0;
    for (size_t l = 0; rtx && l <= n_layers; l++)
        json_array_append_new(rtx_ssrcs,
                              json_integer((json_int_t)(l ? layer_rtx[l - 1] : video_rtx)));
    moat_srtp_keying keys;
    moat_cascade_keying(&keys, link->to_edge, link->to_owner);
    moat_session_start_cascade(created.session, created.record->worker, &path, &keys,
                               MOAT_CASCADE_CONSENT_MS, &link->ssrc, 1, NULL, NULL, 0);
    OPENSSL_cleanse(&keys, sizeof keys);
    g_ptr_array_add(room->sessions, g_strdup(created.record->id));
    g_hash_table_replace(cascade->owner_legs, g_strdup(created.record->id), g_strdup(link->edge));
    cascade->legs_opened_owner++;
    moat_log_info(
        "cluster", "cascade: room %s/%s feeds edge %s (%s:%u) from session %" G_GUINT64_FORMAT,
        link->plugin, link->room, link->edge, link->media, link->port, created.record->serial);
    reply_json(response, 201,
               json_pack("{s:s, s:s, s:i, s:[I,I], s:o, s:o}", "id", created.record->id, "media",
                         cluster->advertise_media, "port",
                         (int)moat_worker_port(created.record->worker), "ssrcs",
                         (json_int_t)ssrcs[0], (json_int_t)ssrcs[1], "layer_ssrcs", layer_ssrcs,
                         "rtx_ssrcs", rtx_ssrcs));
    return true;
}

static void serve_open(void *user, const moat_http_request *request, moat_http_response *response)
{
    moat_cascade *cascade = user;
    if (!moat_cascade_token_valid(cascade->cluster, request)) {
        cascade->refused++;
        moat_http_response_error(response, 403, "forbidden",
                                 "cascade links are opened by cluster nodes only");
        return;
    }
    moat_cascade_request link;
    char why[96];
    if (!moat_cascade_request_parse(request->body, request->body_length, &link, why, sizeof why)) {
        cascade->refused++;
        moat_http_response_error(response, 400, "bad_link", "%s", why);
        return;
    }
    /* No [limits] max_sessions here: an owner at its limit is exactly when
     * edges take its subscribers; MOAT_CASCADE_MAX_LEGS bounds the legs. */
    if (!open_leg(cascade, &link, response))
        cascade->refused++;
    OPENSSL_cleanse(&link, sizeof link);
}

static void serve_close(void *user, const moat_http_request *request, moat_http_response *response)
{
    moat_cascade *cascade = user;
    if (!moat_cascade_token_valid(cascade->cluster, request)) {
        cascade->refused++;
        moat_http_response_error(response, 403, "forbidden",
                                 "cascade links are closed by cluster nodes only");
        return;
    }
    json_t *body = json_loadb(request->body ? request->body : "", request->body_length, 0, NULL);
    const char *id = json_string_value(json_object_get(body, "id"));
    moat_session_record *record =
        id && g_hash_table_contains(cascade->owner_legs, id)
            ? moat_session_registry_find(cascade->cluster->gateway->sessions, id)
            : NULL;
    if (record) {
        g_hash_table_remove(cascade->owner_legs, id);
        moat_whip_session_hang_up(cascade->cluster->gateway, record);
        moat_http_response_set(response, 204, NULL, NULL, 0);
    } else {
        moat_http_response_error(response, 404, "unknown_link", "no such cascade link");
    }
    json_decref(body);
}

void moat_cascade_owner_register(moat_cascade *cascade)
{
    moat_gateway *gateway = cascade->cluster->gateway;
    moat_http_node_route_register(gateway, "POST", "/api/cluster/cascade", serve_open, cascade);
    moat_http_node_route_register(gateway, "POST", "/api/cluster/cascade/close", serve_close,
                                  cascade);
}

/* Forgets legs whose session ended (the edge went quiet or closed it). */
size_t moat_cascade_owner_prune(moat_cascade *cascade)
{
    GHashTableIter iter;
    gpointer id;
    size_t live = 0;
    g_hash_table_iter_init(&iter, cascade->owner_legs);
    while (g_hash_table_iter_next(&iter, &id, NULL)) {
        if (moat_session_registry_find(cascade->cluster->gateway->sessions, id))
            live++;
        else
            g_hash_table_iter_remove(&iter);
    }
    return live;
}
