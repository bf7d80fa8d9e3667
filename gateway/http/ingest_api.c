/* Owns the ingest endpoints: their admission (the offer rate and session cap
 * WHIP has, plus a quota per source), the JSON request, the synthetic offer
 * that describes the sender's codecs to the ordinary session setup, and the
 * UDP socket from [media] port_min..port_max handed to the session
 * (session_plain.c receives on it and ends it when it idles), with the SRTP
 * keys of ingest_srtp.c when the request asks for SRTP. */
#include "http/ingest_api.h"
#include "base/json_body.h"

#include "http/http_router.h"
#include "http/ingest_srtp.h"
#include "sdp/sdes_keys.h"
#include "session/session.h"
#include "http/whip_api.h"
#include "session/whip_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    const char *name; /* in the request */
    const char *kind; /* m-line */
    const char *rtpmap;
    const char *fmtp; /* NULL: none */
} ingest_codec;

static const ingest_codec codecs[] = {
    {"opus", "audio", "opus/48000/2", "minptime=10;useinbandfec=1"},
    {"vp8", "video", "VP8/90000", NULL},
    {"vp9", "video", "VP9/90000", NULL},
    {"h264", "video", "H264/90000",
     "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"},
};

static const ingest_codec *find_codec(const char *name, const char *kind)
{
    for (size_t i = 0; i < G_N_ELEMENTS(codecs); i++)
        if (name && g_ascii_strcasecmp(name, codecs[i].name) == 0 &&
            strcmp(kind, codecs[i].kind) == 0)
            return &codecs[i];
    return NULL;
}

/* One m-line of the synthetic offer, or an error message. */
static const char *add_media(GString *sdp, json_t *body, const char *kind, int mid, bool *added)
{
    json_t *media = json_object_get(body, kind);
    if (!media)
        return NULL;
    if (!json_is_object(media))
        return "audio and video must be objects: {\"codec\": ..., \"pt\": ...}";
    const ingest_codec *codec =
        find_codec(json_string_value(json_object_get(media, "codec")), kind);
    if (!codec)
        return "unknown codec: audio opus; video vp8, vp9 or h264";
    json_t *pt = json_object_get(media, "pt");
    if (!json_is_integer(pt) || json_integer_value(pt) < 96 || json_integer_value(pt) > 127)
        return "pt: a dynamic payload type, 96 to 127";
    int type = (int)json_integer_value(pt);
    g_string_append_printf(sdp,
                           "m=%s 9 UDP/TLS/RTP/SAVPF %d\r\nc=IN IP4 0.0.0.0\r\na=mid:%d\r\n"
                           "a=sendonly\r\na=rtcp-mux\r\na=rtpmap:%d %s\r\n",
                           kind, type, mid, type, codec->rtpmap);
    if (codec->fmtp)
        g_string_append_printf(sdp, "a=fmtp:%d %s\r\n", type, codec->fmtp);
    if (strcmp(kind, "video") == 0)
        g_string_append_printf(sdp, "a=rtcp-fb:%d nack pli\r\n", type);
    *added = true;
    return NULL;
}

/* The sender's codecs as the offer a WebRTC publisher would send; ICE and
 * DTLS attributes are placeholders the plain session never uses. */
static char *synthetic_offer(json_t *body, const char **error)
{
    GString *sdp = g_string_new("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=ingest\r\nt=0 0\r\n"
                                "a=ice-ufrag:ingest\r\na=ice-pwd:ingestingestingestingest\r\n"
                                "a=fingerprint:sha-256 ");
    for (int i = 0; i < 32; i++)
        g_string_append(sdp, i ? ":00" : "00");
    g_string_append(sdp, "\r\na=setup:actpass\r\n");
    GString *media = g_string_new("");
    bool audio = false, video = false;
    *error = add_media(media, body, "audio", 0, &audio);
    if (!*error)
        *error = add_media(media, body, "video", audio ? 1 : 0, &video);
    if (!*error && !audio && !video)
        *error = "name \"audio\" and/or \"video\"";
    /* One sender, one payload type per m-line: the packets are told apart
     * by it alone. */
    if (!*error && audio && video &&
        json_integer_value(json_object_get(json_object_get(body, "audio"), "pt")) ==
            json_integer_value(json_object_get(json_object_get(body, "video"), "pt")))
        *error = "audio and video need different payload types";
    if (*error) {
        g_string_free(media, TRUE);
        g_string_free(sdp, TRUE);
        return NULL;
    }
    g_string_append(sdp, audio && video ? "a=group:BUNDLE 0 1\r\n" : "a=group:BUNDLE 0\r\n");
    g_string_append(sdp, media->str);
    g_string_free(media, TRUE);
    return g_string_free(sdp, FALSE);
}

static bool parse_address(const char *text, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
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

/* A UDP socket on [media] bind with a port from [media] port_min..port_max
 * (shared with call legs: whichever binds a port first has it), tried from
 * a random point of the range on; -1 with errno on failure. The session
 * that takes it marks the port Moat's own (moat_session_set_plain). */
static int open_socket(const moat_config *config, uint16_t *port)
{
    struct sockaddr_in6 local;
    if (!parse_address(config->media_bind, &local)) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int off = 0, buffer = 1024 * 1024;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    uint32_t span = (uint32_t)(config->media_port_max - config->media_port_min + 1);
    uint32_t start = g_random_int_range(0, (gint32)span);
    for (uint32_t i = 0; i < span; i++) {
        uint16_t candidate = (uint16_t)(config->media_port_min + (int)((start + i) % span));
        local.sin6_port = htons(candidate);
        if (bind(fd, (struct sockaddr *)&local, sizeof local) == 0) {
            *port = candidate;
            return fd;
        }
        if (errno != EADDRINUSE)
            break;
    }
    int saved = errno == EADDRINUSE ? EADDRNOTAVAIL : errno;
    close(fd);
    errno = saved;
    return -1;
}

typedef struct {
    const char *source;
    size_t count;
} source_count;

static void count_source(moat_session_record *record, void *user)
{
    source_count *count = user;
    if (record->ingest && strcmp(record->ingest_source, count->source) == 0)
        count->count++;
}

/* Admission: the per-source offer rate (429), the session cap (503) and the
 * per-source ingest quota (429). `key` receives the source's key. */
static bool admit_ingest(moat_gateway *gateway, const moat_http_request *request,
                         moat_http_response *response, char *key, size_t key_size)
{
    if (!moat_whip_admit(gateway, request, response) ||
        !moat_whip_admit_session_cap(gateway, request, response))
        return false;
    moat_admission_source_key_prefix(request->peer, 56, key, key_size);
    int quota = gateway->config.ingest_per_source;
    source_count count = {key, 0};
    moat_session_registry_foreach(gateway->sessions, count_source, &count);
    if (quota <= 0 || count.count < (size_t)quota)
        return true;
    moat_http_note_refusal(gateway, MOAT_REFUSED_INGEST_PER_SOURCE, request->peer);
    moat_http_response_error(response, 429, "ingest_per_source",
                             "this address (IPv6: this /56) runs its maximum of %d ingests; "
                             "DELETE one first",
                             quota);
    moat_http_response_header(response, "Retry-After", "5");
    return false;
}

static void reply_json(moat_http_response *response, unsigned status, json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT);
    json_decref(value);
    char *body = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(response, status, "application/json", body, strlen(body));
}

static void start_ingest(moat_gateway *gateway, const moat_plugin *plugin, const char *resource,
                         const moat_http_request *request, moat_http_response *response)
{
    char source_key[48];
    if (!admit_ingest(gateway, request, response, source_key, sizeof source_key))
        return;
    if (strlen(resource) >= sizeof(((moat_session_record *)NULL)->ingest_resource)) {
        moat_http_response_error(response, 404, "not_found", "no such resource");
        return;
    }
    json_error_t jerror;
    json_t *body = json_loadb(request->body ? request->body : "", request->body_length,
                              JSON_REJECT_DUPLICATES, &jerror);
    if (!json_is_object(body)) {
        char detail[256];
        moat_json_body_detail(body, request->body_length ? &jerror : NULL, detail, sizeof detail);
        json_decref(body);
        moat_http_response_error(response, 400, "bad_json", "%s", detail);
        return;
    }
    struct sockaddr_in6 source;
    json_t *source_value = json_object_get(body, "source");
    if (source_value && (!json_is_string(source_value) ||
                         !parse_address(json_string_value(source_value), &source))) {
        json_decref(body);
        moat_http_response_error(response, 400, "bad_source", "source: an IP address");
        return;
    }
    moat_srtp_keying keys = {0};
    char *key_text = NULL;
    const char *suite = NULL;
    json_t *srtp = json_object_get(body, "srtp");
    char problem_text[160];
    if (srtp && moat_ingest_srtp_parse(srtp, &keys, &key_text, &suite, problem_text,
                                       sizeof problem_text) != 0) {
        json_decref(body);
        moat_http_response_error(response, 400, "bad_srtp", "%s", problem_text);
        return;
    }
    const char *problem = NULL;
    char *offer = synthetic_offer(body, &problem);
    json_decref(body);
    if (!offer) {
        moat_sdes_keying_clear(&keys);
        moat_ingest_srtp_free_key(key_text);
        moat_http_response_error(response, 400, "bad_codecs", "%s", problem);
        return;
    }
    uint16_t port = 0;
    int fd = open_socket(&gateway->config, &port);
    if (fd < 0) {
        moat_sdes_keying_clear(&keys);
        moat_ingest_srtp_free_key(key_text);
        g_free(offer);
        moat_http_response_error(response, 503, "no_port",
                                 "cannot open a UDP port in [media] port_min..port_max: %s",
                                 g_strerror(errno));
        return;
    }
    char error[256] = "";
    moat_whip_created created;
    moat_whip_setup_result result = moat_whip_session_create(
        gateway, plugin, "whip", resource, offer, strlen(offer), &created, error, sizeof error);
    g_free(offer);
    if (result != MOAT_WHIP_SETUP_OK) {
        moat_sdes_keying_clear(&keys);
        moat_ingest_srtp_free_key(key_text);
        close(fd);
        if (result == MOAT_WHIP_SETUP_BAD_OFFER)
            moat_http_response_error(response, 400, "bad_codecs", "%s", error);
        else
            moat_whip_reply_refused(response, error);
        return;
    }
    g_free(created.answer);
    created.record->ingest = true;
    g_strlcpy(created.record->ingest_resource, resource, sizeof created.record->ingest_resource);
    g_strlcpy(created.record->ingest_source, source_key, sizeof created.record->ingest_source);
    moat_session_set_plain(created.session, fd, source_value ? &source : NULL,
                           (uint32_t)gateway->config.ingest_idle_timeout_s);
    if (key_text)
        moat_session_set_plain_keys(created.session, &keys);
    moat_sdes_keying_clear(&keys);
    char label[24];
    g_snprintf(label, sizeof label, "%" G_GUINT64_FORMAT, created.record->serial);
    char *location =
        g_strdup_printf("%s/%s/ingest/%s", plugin->api_path, resource, created.record->id);
    moat_whip_session_start(created.session, created.record->worker, NULL, NULL, NULL);
    moat_http_response_header(response, "Location", location);
    json_t *reply =
        json_pack("{s:s, s:s, s:s, s:i, s:b}", "id", label, "resource", location, "address",
                  gateway->config.media_bind, "port", (int)port, "rtcp_mux", 1);
    /* The key goes to the API caller only (token, or the loopback API). */
    if (key_text && reply)
        json_object_set_new(reply, "srtp",
                            json_pack("{s:s, s:s}", "suite", suite, "key", key_text));
    reply_json(response, 201, reply);
    moat_ingest_srtp_free_key(key_text);
    g_free(location);
}

bool moat_ingest_api_handle(moat_gateway *gateway, const moat_plugin *plugin,
                            const moat_http_request *request, moat_http_response *response,
                            const char *path)
{
    const char *rest = path + strlen(plugin->api_path);
    if (!plugin->publisher_session || rest[0] != '/')
        return false;
    const char *marker = strstr(rest + 1, "/ingest");
    if (!marker || (marker[7] != '\0' && marker[7] != '/'))
        return false;
    char *resource = g_strndup(rest + 1, (size_t)(marker - rest - 1));
    const char *id = marker[7] == '/' ? marker + 8 : NULL;
    if (!resource[0] || strchr(resource, '/')) {
        moat_http_response_error(response, 404, "not_found", "no such resource");
    } else if (!id && strcmp(request->method, "POST") == 0) {
        start_ingest(gateway, plugin, resource, request, response);
    } else if (id && strcmp(request->method, "DELETE") == 0) {
        /* Only an ingest, and only through its own room's route: this is no
         * way to hang up other sessions. */
        moat_session_record *record = moat_session_registry_find(gateway->sessions, id);
        if (record && record->ingest && strcmp(record->plugin, plugin->name) == 0 &&
            strcmp(record->ingest_resource, resource) == 0) {
            moat_whip_session_hang_up(gateway, record);
            moat_http_response_set(response, 204, NULL, NULL, 0);
        } else {
            moat_http_response_error(response, 404, "unknown_ingest", "no such ingest");
        }
    } else {
        moat_http_response_not_allowed(response, id ? "DELETE" : "POST",
                                       "POST .../ingest starts an ingest, DELETE its resource ends "
                                       "it");
    }
    g_free(resource);
    return true;
}
