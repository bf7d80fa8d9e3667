/* Owns the pure parts of a cascade link (cascade_link.h): the link request's
 * JSON, the synthetic offers and the edge's poll decision. */
#include "cluster/cascade_link.h"

#include <arpa/inet.h>
#include <glib.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *moat_cascade_request_to_json(const moat_cascade_request *request)
{
    gchar *to_edge = g_base64_encode(request->to_edge, sizeof request->to_edge);
    gchar *to_owner = g_base64_encode(request->to_owner, sizeof request->to_owner);
    json_t *object =
        json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s}", "plugin", request->plugin, "room",
                  request->room, "edge", request->edge, "media", request->media, "port",
                  (int)request->port, "to_edge", to_edge, "to_owner", to_owner);
    if (object && request->ssrc)
        json_object_set_new(object, "ssrc", json_integer((json_int_t)request->ssrc));
    g_free(to_edge);
    g_free(to_owner);
    char *text = object ? json_dumps(object, JSON_COMPACT) : NULL;
    json_decref(object);
    char *copy = g_strdup(text ? text : "{}");
    free(text);
    return copy;
}

static bool take_string(json_t *object, const char *name, char *out, size_t size)
{
    const char *value = json_string_value(json_object_get(object, name));
    if (!value || strlen(value) >= size)
        return false;
    snprintf(out, size, "%s", value);
    return true;
}

/* Exactly MOAT_CASCADE_KEYING bytes of base64. */
_Static_assert(MOAT_CASCADE_KEYING == 28, "the refusal below names 28 bytes");
static bool take_keying(json_t *object, const char *name, uint8_t *out)
{
    const char *value = json_string_value(json_object_get(object, name));
    /* Padded base64: 4 characters for every 3 bytes or part of 3. */
    if (!value || strlen(value) != 4 * ((MOAT_CASCADE_KEYING + 2) / 3))
        return false;
    bool padding = false;
    for (const char *c = value; *c; c++) {
        padding = padding || *c == '=';
        if (padding ? *c != '=' : !g_ascii_isalnum(*c) && *c != '+' && *c != '/')
            return false;
    }
    gsize length = 0;
    guchar *decoded = g_base64_decode(value, &length);
    bool ok = decoded && length == MOAT_CASCADE_KEYING;
    if (ok)
        memcpy(out, decoded, MOAT_CASCADE_KEYING);
    if (decoded)
        memset(decoded, 0, length);
    g_free(decoded);
    return ok;
}

bool moat_cascade_address(const char *text, uint16_t port, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    out->sin6_port = htons(port);
    struct in_addr v4;
    if (inet_pton(AF_INET6, text, &out->sin6_addr) == 1)
        return true;
    if (inet_pton(AF_INET, text, &v4) != 1)
        return false;
    out->sin6_addr.s6_addr[10] = 0xff;
    out->sin6_addr.s6_addr[11] = 0xff;
    memcpy(&out->sin6_addr.s6_addr[12], &v4, 4);
    return true;
}

bool moat_cascade_request_parse(const char *body, size_t length, moat_cascade_request *out,
                                char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (length > MOAT_CASCADE_REQUEST_MAX) {
        snprintf(why, why_size, "request over %d bytes", MOAT_CASCADE_REQUEST_MAX);
        return false;
    }
    json_error_t error;
    json_t *object = json_loadb(body ? body : "", length, JSON_REJECT_DUPLICATES, &error);
    const char *problem = NULL;
    struct sockaddr_in6 address;
    json_t *port = json_object_get(object, "port");
    json_int_t port_value = json_is_integer(port) ? json_integer_value(port) : 0;
    json_t *ssrc = json_object_get(object, "ssrc");
    json_int_t ssrc_value = json_is_integer(ssrc) ? json_integer_value(ssrc) : 0;
    if (!json_is_object(object))
        problem = "not a JSON object";
    else if (!take_string(object, "plugin", out->plugin, sizeof out->plugin) ||
             !take_string(object, "room", out->room, sizeof out->room) ||
             !moat_cluster_room_name_valid(out->room) || !moat_cluster_room_name_valid(out->plugin))
        problem = "plugin and room: valid names";
    else if (!take_string(object, "edge", out->edge, sizeof out->edge) ||
             !moat_cluster_node_id_valid(out->edge))
        problem = "edge: a node id";
    else if (!take_string(object, "media", out->media, sizeof out->media) ||
             !moat_cascade_address(out->media, 1, &address))
        problem = "media: an IP address";
    else if (port_value < 1 || port_value > 65535)
        problem = "port: 1 to 65535";
    else if (!take_keying(object, "to_edge", out->to_edge) ||
             !take_keying(object, "to_owner", out->to_owner))
        problem = "to_edge and to_owner: 28 bytes of base64 each";
    else if (ssrc && (ssrc_value < 1 || ssrc_value > (json_int_t)UINT32_MAX))
        problem = "ssrc: 1 to 4294967295";
    json_decref(object);
    if (problem) {
        snprintf(why, why_size, "%s", problem);
        memset(out, 0, sizeof *out);
        return false;
    }
    out->port = (uint16_t)port_value;
    out->ssrc = (uint32_t)ssrc_value;
    return true;
}

char *moat_cascade_offer(bool publisher)
{
    const char *direction = publisher ? "sendonly" : "recvonly";
    GString *sdp = g_string_new("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=cascade\r\nt=0 0\r\n"
                                "a=group:BUNDLE 0 1\r\n"
                                "a=ice-ufrag:cascade\r\na=ice-pwd:cascadecascadecascadecascade\r\n"
                                "a=fingerprint:sha-256 ");
    for (int i = 0; i < 32; i++)
        g_string_append(sdp, i ? ":00" : "00");
    g_string_append(sdp, "\r\na=setup:actpass\r\n");
    g_string_append_printf(sdp,
                           "m=audio 9 UDP/TLS/RTP/SAVPF %d\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\n"
                           "a=%s\r\na=rtcp-mux\r\na=rtpmap:%d opus/48000/2\r\n"
                           "a=fmtp:%d minptime=10;useinbandfec=1\r\n",
                           MOAT_CASCADE_PT_OPUS, direction, MOAT_CASCADE_PT_OPUS,
                           MOAT_CASCADE_PT_OPUS);
    int vp8 = MOAT_CASCADE_PT_VP8, rtx = MOAT_CASCADE_PT_RTX;
    /* RTX (RFC 4588): the owner answers the edge's NACKs on each stream's
     * own RTX SSRC ("rtx_ssrcs" of the answer). */
    g_string_append_printf(sdp,
                           "m=video 9 UDP/TLS/RTP/SAVPF %d %d\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\n"
                           "a=%s\r\na=rtcp-mux\r\na=rtpmap:%d VP8/90000\r\n"
                           "a=rtcp-fb:%d nack\r\na=rtcp-fb:%d nack pli\r\n"
                           "a=rtcp-fb:%d ccm fir\r\na=rtcp-fb:%d goog-remb\r\n"
                           "a=rtpmap:%d rtx/90000\r\na=fmtp:%d apt=%d\r\n",
                           vp8, rtx, direction, vp8, vp8, vp8, vp8, vp8, rtx, rtx, vp8);
    if (publisher) {
        /* Every layer of the owner's source, each on its own SSRC
         * (declared to the leg, not carried in a rid extension). */
        g_string_append(
            sdp,
            "a=extmap:" G_STRINGIFY(
                MOAT_CASCADE_RID_EXTENSION) " urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n");
        for (int l = 0; l < MOAT_CASCADE_LINK_LAYERS; l++)
            g_string_append_printf(sdp, "a=rid:%s send\r\n", moat_cascade_layer_rids[l]);
        g_string_append(sdp, "a=simulcast:send ");
        for (int l = 0; l < MOAT_CASCADE_LINK_LAYERS; l++)
            g_string_append_printf(sdp, "%s%s", l ? ";" : "", moat_cascade_layer_rids[l]);
        g_string_append(sdp, "\r\n");
    }
    return g_string_free(sdp, FALSE);
}

const char *const moat_cascade_layer_rids[MOAT_CASCADE_LINK_LAYERS] = {"s0", "s1", "s2"};

size_t moat_cascade_layer_ssrcs_parse(const json_t *array, uint32_t *out, size_t max)
{
    size_t n = 0;
    if (!json_is_array(array) || json_array_size(array) > max)
        return 0;
    for (size_t i = 0; i < json_array_size(array); i++) {
        json_t *item = json_array_get(array, i);
        json_int_t value = json_is_integer(item) ? json_integer_value(item) : 0;
        if (value < 1 || value > (json_int_t)UINT32_MAX)
            return 0;
        out[n++] = (uint32_t)value;
    }
    return n;
}

void moat_cascade_answer_ssrcs(const char *sdp, uint32_t ssrcs[2])
{
    ssrcs[0] = ssrcs[1] = 0;
    int media = -1;
    for (const char *line = sdp; line && *line;) {
        const char *end = strchr(line, '\n');
        if (strncmp(line, "m=", 2) == 0)
            media++;
        else if (media >= 0 && media < 2 && !ssrcs[media] && strncmp(line, "a=ssrc:", 7) == 0)
            ssrcs[media] = (uint32_t)strtoul(line + 7, NULL, 10);
        line = end ? end + 1 : NULL;
    }
}

moat_cascade_action moat_cascade_link_decide(bool connecting, bool link_alive, size_t subscribers,
                                             size_t waiting)
{
    if (connecting)
        return MOAT_CASCADE_KEEP;
    if (!link_alive)
        return MOAT_CASCADE_OWNER_LOST;
    if (subscribers == 0 && waiting == 0)
        return MOAT_CASCADE_CLOSE_IDLE;
    return MOAT_CASCADE_KEEP;
}
