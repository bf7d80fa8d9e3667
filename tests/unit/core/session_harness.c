/* See session_harness.h. */
#include "session_harness.h"

#include "session/session_cascade.h"
#include "session/session_internal.h"
#include "engine/worker_receive.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char last_end[64];

static void on_ended(const char *id, const char *reason)
{
    g_strlcpy(last_end, reason, sizeof last_end);
}

const char *session_harness_last_end(void)
{
    return last_end;
}

static void *count_attach(moat_plugin_session *session, const moat_session_info *info,
                          const char **error)
{
    return g_new0(uint64_t, 1);
}

static void count_detach(void *state)
{
    g_free(state);
}

static void count_rtp(void *state, uint8_t *packet, size_t length, size_t capacity)
{
    (*(uint64_t *)state)++;
}

static const moat_plugin count_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "count",
    .attach = count_attach,
    .detach = count_detach,
    .on_rtp = count_rtp,
};

void session_harness_init(session_harness *h)
{
    char error[256];
    moat_worker *worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    if (!worker)
        g_error("worker: %s", error);
    session_harness_init_on(h, worker);
    h->owns_worker = true;
    moat_worker_set_prefilter(h->worker, &h->settings);
}

void session_harness_init_on(session_harness *h, moat_worker *worker)
{
    memset(h, 0, sizeof *h);
    h->worker = worker;
    strcpy(h->id, "harness");
    strcpy(h->local_ufrag, "gwufrag1");
    h->plugin = &count_plugin;
    h->plain_fd = -1;
    h->settings = (moat_prefilter_settings){
        .mode = MOAT_DETECTOR_MODE_AUTO,
        .hold_ms = 2000,
        .rate_factor = 4.0,
        .min_excess_pps = 200,
        .auth_failures_per_s = 50,
        .budget_percent = 10,
        .budget_min_pps = 20,
        .legacy_budget_factor = 2.0,
        .window_behind = 1024,
        .window_ahead = 4096,
        .worker_failures_per_s = 500,
        .worker_min_excess_pps = 5000,
    };

    h->peer_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof local;
    int buffer = 8 * 1024 * 1024;
    setsockopt(h->peer_fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    if (bind(h->peer_fd, (struct sockaddr *)&local, sizeof local) != 0 ||
        getsockname(h->peer_fd, (struct sockaddr *)&local, &length) != 0)
        g_error("peer socket: %s", strerror(errno));
    h->path.remote.sin6_family = AF_INET6;
    h->path.remote.sin6_port = local.sin_port;
    h->path.remote.sin6_addr.s6_addr[10] = 0xff;
    h->path.remote.sin6_addr.s6_addr[11] = 0xff;
    memcpy(&h->path.remote.sin6_addr.s6_addr[12], &local.sin_addr, 4);
    h->path.local = h->path.remote.sin6_addr;

    moat_sdp_negotiation *n = &h->negotiation;
    n->n_media = 1;
    moat_sdp_negotiated_media *media = &n->media[0];
    media->kind = MOAT_MEDIA_KIND_VIDEO;
    strcpy(media->mid, "0");
    media->accepted = true;
    media->peer_sends = true;
    media->peer_receives = true;
    media->payload_types[0] = 96;
    media->n_payload_types = 1;
    strcpy(media->codec_names[0], "VP8");
    media->clock_rates[0] = 90000;
    media->rtcp_fb[0] = MOAT_RTCP_FB_NACK | MOAT_RTCP_FB_PLI;
    media->remote_ssrc = HARNESS_REMOTE_SSRC;
    media->local_ssrc = HARNESS_LOCAL_SSRC;
    strcpy(n->remote_ufrag, "peerufrag");
    strcpy(n->remote_pwd, "peerpasswordpeerpassword");
    strcpy(n->remote_fingerprint_alg, "sha-256");
    strcpy(n->remote_fingerprint, "00");
    n->local_setup = MOAT_SDP_SETUP_PASSIVE;
}

/* The session, created and not started. */
static void make_session(session_harness *h, void *dtls_context, bool cascade)
{
    char error[256];
    moat_session_params params = {
        .id = h->id,
        .worker = h->worker,
        .dtls_context = dtls_context,
        .negotiation = &h->negotiation,
        .local_ufrag = h->local_ufrag,
        .local_pwd = HARNESS_GATEWAY_PWD,
        .plugin = h->plugin,
        .consent_timeout_s = 3600,
        .prefilter = &h->settings,
        .on_ended = on_ended,
        .endpoint = h->endpoint,
        .resource = h->resource,
        .cascade = cascade,
    };
    last_end[0] = '\0';
    h->session = moat_session_new(&params, error, sizeof error);
    if (!h->session)
        g_error("session: %s", error);
}

static void create(session_harness *h, void *dtls_context, int plain_fd,
                   const struct sockaddr_in6 *source, const moat_srtp_keying *plain_keys)
{
    make_session(h, dtls_context, false);
    if (plain_fd >= 0)
        moat_session_set_plain(h->session, plain_fd, source, 0);
    if (plain_keys)
        moat_session_set_plain_keys(h->session, plain_keys);
    moat_session_start(h->session);
}

void session_harness_create(session_harness *h, void *dtls_context)
{
    create(h, dtls_context, -1, NULL, NULL);
}

static int plain_socket(session_harness *h)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in6 local = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    if (fd < 0 || bind(fd, (struct sockaddr *)&local, sizeof local) != 0)
        g_error("plain socket: %s", strerror(errno));
    h->plain_fd = fd;
    return fd;
}

void session_harness_create_plain(session_harness *h, const struct sockaddr_in6 *source)
{
    create(h, NULL, plain_socket(h), source, NULL);
}

static void make_keys(session_harness *h);

void session_harness_create_plain_srtp(session_harness *h, const struct sockaddr_in6 *source)
{
    make_keys(h);
    create(h, NULL, plain_socket(h), source, &h->keys);
}

/* Random keys for the session and the peer's two SRTP sessions. */
static void make_keys(session_harness *h)
{
    moat_srtp_keying *k = &h->keys;
    k->profile = MOAT_SRTP_PROFILE_AES128_CM_SHA1_80;
    k->key_length = 16;
    k->salt_length = 14;
    RAND_bytes(k->local_key, 16);
    RAND_bytes(k->local_salt, 14);
    RAND_bytes(k->remote_key, 16);
    RAND_bytes(k->remote_salt, 14);
    moat_srtp_keying peer = *k;
    memcpy(peer.local_key, k->remote_key, 16);
    memcpy(peer.local_salt, k->remote_salt, 14);
    memcpy(peer.remote_key, k->local_key, 16);
    memcpy(peer.remote_salt, k->local_salt, 14);
    char error[256];
    h->peer_srtp = moat_srtp_session_new(&peer, error, sizeof error);
    h->peer_rx = moat_srtp_session_new(&peer, error, sizeof error);
    if (!h->peer_srtp || !h->peer_rx)
        g_error("peer srtp: %s", error);
}

void session_harness_key(session_harness *h)
{
    make_keys(h);
    moat_session_bypass_handshake(h->session, &h->path, &h->keys);
}

void session_harness_create_cascade(session_harness *h, const uint32_t *ssrcs, size_t n)
{
    make_session(h, NULL, true);
    make_keys(h);
    moat_session_start_cascade(h->session, h->worker, &h->path, &h->keys, 3000, ssrcs, n, NULL,
                               NULL, 0);
    moat_worker_run_pending(h->worker); /* the start is a task on the worker */
}

void session_harness_flush(session_harness *h)
{
    moat_worker_flush(h->worker);
}

size_t session_harness_drain_peer(session_harness *h, size_t *datagrams)
{
    uint8_t buffer[4096];
    size_t bytes = 0, count = 0;
    for (;;) {
        ssize_t n = recv(h->peer_fd, buffer, sizeof buffer, 0);
        if (n < 0)
            break;
        bytes += (size_t)n;
        count++;
    }
    if (datagrams)
        *datagrams = count;
    return bytes;
}

int session_harness_gateway_send_rtp(session_harness *h, uint16_t sequence, size_t payload)
{
    uint8_t packet[1500];
    if (payload + 12 > sizeof packet)
        payload = sizeof packet - 12;
    memset(packet, 0xab, sizeof packet);
    packet[0] = 0x80;
    packet[1] = 96;
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    uint32_t timestamp = (uint32_t)sequence * 3000u;
    packet[4] = (uint8_t)(timestamp >> 24);
    packet[5] = (uint8_t)(timestamp >> 16);
    packet[6] = (uint8_t)(timestamp >> 8);
    packet[7] = (uint8_t)timestamp;
    packet[8] = (uint8_t)(HARNESS_LOCAL_SSRC >> 24);
    packet[9] = (uint8_t)(HARNESS_LOCAL_SSRC >> 16);
    packet[10] = (uint8_t)(HARNESS_LOCAL_SSRC >> 8);
    packet[11] = (uint8_t)HARNESS_LOCAL_SSRC;
    return moat_session_gateway_calls.send_rtp(moat_session_plugin_handle(h->session), packet,
                                               12 + payload);
}

size_t session_harness_peer_protect_rtcp(session_harness *h, const uint8_t *plain, size_t length,
                                         uint8_t *out, size_t capacity)
{
    g_assert(length + 64 <= capacity);
    memcpy(out, plain, length);
    size_t protected_length = length;
    if (moat_srtp_protect_rtcp(h->peer_srtp, out, &protected_length, capacity) != MOAT_SRTP_OK)
        return 0;
    return protected_length;
}

void session_harness_clear(session_harness *h)
{
    if (h->session && moat_worker_find_session(h->worker, h->id))
        moat_session_end(h->session, "test over");
    moat_worker_flush(h->worker);
    if (h->owns_worker)
        moat_worker_free(h->worker);
    moat_srtp_session_free(h->peer_srtp);
    moat_srtp_session_free(h->peer_rx);
    close(h->peer_fd);
    memset(h, 0, sizeof *h);
}

uint64_t session_harness_dropped(session_harness *h, moat_drop_reason reason)
{
    return moat_counter_read(&moat_worker_counters(h->worker)->dropped[reason]);
}

moat_ice_client *session_harness_ice_peer(const char *gateway_ufrag, const char *gateway_pwd)
{
    moat_ice_client_credentials credentials = {
        .local_ufrag = "peerufrag",
        .local_pwd = "peerpasswordpeerpassword",
        .remote_ufrag = gateway_ufrag,
        .remote_pwd = gateway_pwd,
        .tie_breaker = 42,
    };
    moat_ice_client *client = moat_ice_client_new(&credentials);
    g_assert_nonnull(client);
    return client;
}

void session_harness_send_check(session_harness *h, moat_ice_client *client, const moat_path *from,
                                bool nominate)
{
    uint8_t request[MOAT_DATAGRAM_CAPACITY];
    size_t length = moat_ice_client_build_request(client, 0x6e0001ff, nominate, false, request,
                                                  MOAT_ICE_CLIENT_REQUEST_CAPACITY);
    g_assert_cmpuint(length, >, 0);
    moat_worker_dispatch(h->worker, from, request, length);
}

void session_harness_dispatch_srtp(session_harness *h, uint16_t sequence, size_t payload,
                                   uint64_t now, bool forged)
{
    uint8_t packet[1500] = {0x80, 96};
    g_assert_cmpuint(payload, <=, 1400);
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    for (int i = 0; i < 4; i++)
        packet[8 + i] = (uint8_t)(HARNESS_REMOTE_SSRC >> (24 - 8 * i));
    size_t length = 12 + payload;
    g_assert_cmpint(moat_srtp_protect_rtp(h->peer_srtp, packet, &length, sizeof packet), ==, 0);
    if (forged)
        packet[length - 1] ^= 0xff;
    moat_worker_set_now_us(h->worker, now);
    moat_worker_dispatch(h->worker, &h->path, packet, length);
}

void session_harness_exchange_dtls(session_harness *h, moat_dtls_transport *client, GQueue *outbox)
{
    GBytes *datagram;
    while ((datagram = g_queue_pop_head(outbox))) {
        gsize length;
        const uint8_t *data = g_bytes_get_data(datagram, &length);
        uint8_t copy[2048];
        g_assert_cmpuint(length, <=, sizeof copy);
        memcpy(copy, data, length);
        moat_session_handle_dtls(h->session, &h->path, copy, length);
        g_bytes_unref(datagram);
    }
    session_harness_flush(h);
    uint8_t buffer[2048];
    ssize_t n;
    while ((n = recv(h->peer_fd, buffer, sizeof buffer, 0)) > 0)
        moat_dtls_transport_receive(client, buffer, (size_t)n);
}

void session_harness_create_selected(session_harness *h)
{
    moat_worker_set_now_us(h->worker, 1000000);
    session_harness_create(h, NULL);
    session_harness_key(h);
    moat_ice_client *peer = session_harness_ice_peer(h->local_ufrag, HARNESS_GATEWAY_PWD);
    session_harness_send_check(h, peer, &h->path, true);
    g_assert_true(h->session->has_selected);
    moat_ice_client_free(peer);
}
