/* The tunnel over a WebRTC data channel through the gateway: a WHIP client
 * (whip_client.h, from moat-flood) whose offer has only a data channel, ICE
 * as the controlling agent (ice/ice_client.h), DTLS (dtls/dtls_transport.h)
 * and SCTP (sctp/sctp_association.h): the gateway's own modules. One channel
 * in the chosen mode carries each IP packet as one binary message. ICE
 * consent checks are the keepalive; a path that stops answering is moved
 * with an ICE restart (a new socket, new credentials PATCHed to the WHIP
 * resource, DTLS and SCTP kept), as a network handover does. */
#include "tunnel_run.h"

#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"
#include "ice/ice_client.h"
#include "ice/ice_credentials.h"
#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"
#include "sdp/sdp.h"
#include "target_policy.h"
#include "whip_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_REMOTES      8
#define DATAGRAM_SIZE    (16384 + 256)
#define CHECK_INTERVAL_S 0.05
#define READS_PER_TURN   64
#define HTTP_TIMEOUT_S   5
#define RESTART_RETRY_S  1.0

typedef enum { LINK_CHECKING, LINK_DTLS, LINK_UP, LINK_ENDED } link_state;

typedef struct {
    tunnel_run *run;
    whip_client *http;
    moat_dtls_context *dtls_context;
    int fd;
    struct sockaddr_in6 local;
    struct sockaddr_in6 remotes[MAX_REMOTES];
    size_t n_remotes;
    int selected; /* index in remotes, -1 before ICE picked one */
    int nominee;  /* the pair being nominated, -1 none */
    char *resource_url;
    char local_ufrag[MOAT_ICE_UFRAG_LENGTH + 1], local_pwd[MOAT_ICE_PWD_LENGTH + 1];
    char remote_ufrag[MOAT_SDP_ICE_CREDENTIAL_MAX + 1], remote_pwd[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    moat_ice_client *ice;
    /* The latest nominating requests (a check goes out every 50 ms, more
     * often than a long path answers): only their answers nominate. */
    uint8_t nomination_ids[8][MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH];
    size_t next_nomination_id;
    bool migrating;          /* after an ICE restart: nominating from the new socket */
    bool recovering;         /* the path was lost: until an ICE restart completes */
    unsigned restarts_tried; /* in a row, since the path last answered */
    double next_restart_s;
    link_state state;
    moat_dtls_role role;
    char fingerprint_alg[16], fingerprint[160];
    uint16_t sctp_port;
    uint32_t max_message_size;
    moat_dtls_transport *dtls;
    moat_sctp_association *sctp;
    uint16_t stream_id;
    bool blocked; /* the SCTP send buffer is full: the TUN device waits */
    double next_check_s, last_answer_s, last_tick_s, setup_deadline_s;
    bool failed;
} sctp_link;

static uint64_t random_u64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = ((uint64_t)g_random_int() << 32) | g_random_int();
    return v;
}

static void link_fail(sctp_link *l, const char *what)
{
    tunnel_run_end(l->run, "%s", what);
    l->failed = true;
    l->state = LINK_ENDED;
}

static void send_to(sctp_link *l, const uint8_t *data, size_t length, const struct sockaddr_in6 *to)
{
    sendto(l->fd, data, length, 0, (const struct sockaddr *)to, sizeof *to);
}

/* ---- the offer and the answer ---- */

static void to_in6(const struct sockaddr *in, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    if (in->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)in;
        out->sin6_port = v4->sin_port;
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4->sin_addr, 4);
    } else if (in->sa_family == AF_INET6) {
        memcpy(out, in, sizeof *out);
    }
}

/* The address the kernel sends from towards the WHIP host (our host
 * candidate), learnt with a throwaway connected socket; the port is ours. */
static void learn_local_address(sctp_link *l)
{
    GUri *uri = g_uri_parse(l->run->options->whip_url, G_URI_FLAGS_NONE, NULL);
    const char *host = uri ? g_uri_get_host(uri) : NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *list = NULL;
    if (host && getaddrinfo(host, "9", &hints, &list) == 0 && list) {
        struct sockaddr_in6 to;
        to_in6(list->ai_addr, &to);
        int probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int off = 0;
        socklen_t length = sizeof l->local;
        if (probe >= 0 && setsockopt(probe, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) == 0 &&
            connect(probe, (struct sockaddr *)&to, sizeof to) == 0)
            getsockname(probe, (struct sockaddr *)&l->local, &length);
        if (probe >= 0)
            close(probe);
    }
    if (list)
        freeaddrinfo(list);
    if (uri)
        g_uri_unref(uri);
    struct sockaddr_in6 bound;
    socklen_t length = sizeof bound;
    if (getsockname(l->fd, (struct sockaddr *)&bound, &length) == 0)
        l->local.sin6_port = bound.sin6_port;
    l->local.sin6_family = AF_INET6;
}

static int bound_socket(void)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int off = 0, buffer = 4 << 20;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
    if (bind(fd, (struct sockaddr *)&any, sizeof any) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static char *build_offer(const sctp_link *l)
{
    char address[INET6_ADDRSTRLEN + 8] = "";
    target_address_text((const struct sockaddr *)&l->local, address, sizeof address);
    GString *o = g_string_new(NULL);
    g_string_append_printf(o,
                           "v=0\r\no=moat-tunnel %" G_GUINT64_FORMAT " 2 IN IP4 127.0.0.1\r\n"
                           "s=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
                           "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"
                           "c=IN IP4 0.0.0.0\r\na=mid:0\r\n"
                           "a=ice-ufrag:%s\r\na=ice-pwd:%s\r\n"
                           "a=fingerprint:sha-256 %s\r\na=setup:actpass\r\n"
                           "a=sctp-port:5000\r\na=max-message-size:262144\r\n",
                           (guint64)(random_u64() >> 2), l->local_ufrag, l->local_pwd,
                           moat_certificate_fingerprint(l->run->certificate));
    if (address[0] && l->local.sin6_port)
        g_string_append_printf(o, "a=candidate:1 1 udp 2130706431 %s %u typ host\r\n", address,
                               ntohs(l->local.sin6_port));
    g_string_append(o, "a=end-of-candidates\r\n");
    return g_string_free(o, FALSE);
}

static bool candidate_address(const moat_sdp_candidate *c, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    out->sin6_port = htons(c->port);
    struct in_addr v4;
    if (inet_pton(AF_INET, c->address, &v4) == 1) {
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4, 4);
        return c->port != 0;
    }
    return inet_pton(AF_INET6, c->address, &out->sin6_addr) == 1 && c->port != 0;
}

static int take_answer(sctp_link *l, const char *answer, char *error, size_t error_size)
{
    moat_sdp *sdp = moat_sdp_parse(answer, strlen(answer), error, error_size);
    if (!sdp)
        return -1;
    const moat_sdp_media *m = sdp->n_media ? &sdp->media[0] : NULL;
    int result = -1;
    if (!m || m->port == 0 || m->kind != MOAT_MEDIA_KIND_APPLICATION) {
        snprintf(error, error_size, "the gateway rejected the data channel");
    } else if (!m->ice_ufrag[0] || !m->ice_pwd[0] || !m->fingerprint[0]) {
        snprintf(error, error_size, "the answer lacks ICE credentials or a fingerprint");
    } else {
        for (size_t i = 0; i < m->n_candidates && l->n_remotes < MAX_REMOTES; i++) {
            const moat_sdp_candidate *c = &m->candidates[i];
            struct sockaddr_in6 a;
            if (strcmp(c->transport, "udp") != 0 || !candidate_address(c, &a))
                continue;
            l->remotes[l->n_remotes++] = a;
        }
        g_strlcpy(l->remote_ufrag, m->ice_ufrag, sizeof l->remote_ufrag);
        g_strlcpy(l->remote_pwd, m->ice_pwd, sizeof l->remote_pwd);
        g_strlcpy(l->fingerprint_alg, m->fingerprint_alg, sizeof l->fingerprint_alg);
        g_strlcpy(l->fingerprint, m->fingerprint, sizeof l->fingerprint);
        l->role = m->setup == MOAT_SDP_SETUP_ACTIVE ? MOAT_DTLS_ROLE_SERVER : MOAT_DTLS_ROLE_CLIENT;
        l->sctp_port = m->has_sctp_port ? m->sctp_port : 5000;
        l->max_message_size = m->has_max_message_size ? m->max_message_size : 65536;
        if (l->n_remotes == 0)
            snprintf(error, error_size, "no usable UDP candidate in the answer");
        else
            result = 0;
    }
    moat_sdp_free(sdp);
    return result;
}

static moat_ice_client *new_ice(const sctp_link *l)
{
    moat_ice_client_credentials credentials = {
        .local_ufrag = l->local_ufrag,
        .local_pwd = l->local_pwd,
        .remote_ufrag = l->remote_ufrag,
        .remote_pwd = l->remote_pwd,
        .tie_breaker = random_u64(),
    };
    return moat_ice_client_new(&credentials);
}

static int open_session(sctp_link *l)
{
    char error[512];
    const tunnel_options *o = l->run->options;
    l->fd = bound_socket();
    if (l->fd < 0 || moat_ice_credentials_generate(l->local_ufrag, l->local_pwd) != 0) {
        link_fail(l, "cannot open the UDP socket");
        return -1;
    }
    learn_local_address(l);
    char *offer = build_offer(l);
    char *answer = NULL;
    int rc = whip_client_post_offer(l->http, o->whip_url, offer, &answer, &l->resource_url, error,
                                    sizeof error);
    g_free(offer);
    if (rc != 0) {
        char text[600];
        snprintf(text, sizeof text, "WHIP: %s", error);
        link_fail(l, text);
        return -1;
    }
    rc = take_answer(l, answer, error, sizeof error);
    g_free(answer);
    if (rc == 0 && !(l->ice = new_ice(l)))
        snprintf(error, sizeof error, "unusable ICE credentials");
    if (rc != 0 || !l->ice) {
        char text[600];
        snprintf(text, sizeof text, "answer: %s", error);
        link_fail(l, text);
        return -1;
    }
    l->state = LINK_CHECKING;
    return 0;
}

/* ---- ICE ---- */

static void send_check(sctp_link *l, const struct sockaddr_in6 *to, bool nominate)
{
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY];
    size_t length = moat_ice_client_build_request(l->ice, moat_ice_client_prflx_priority(65535, 1),
                                                  nominate, true, request, sizeof request);
    if (length == 0)
        return;
    if (nominate) {
        moat_ice_client_last_request(l->ice, l->nomination_ids[l->next_nomination_id]);
        l->next_nomination_id = (l->next_nomination_id + 1) % G_N_ELEMENTS(l->nomination_ids);
    }
    send_to(l, request, length, to);
}

static void start_dtls(sctp_link *l);

static void ice_tick(sctp_link *l, double now)
{
    if (now < l->next_check_s)
        return;
    const tunnel_options *o = l->run->options;
    if (l->state == LINK_CHECKING) {
        if (l->nominee >= 0) {
            send_check(l, &l->remotes[l->nominee], true);
        } else {
            for (size_t i = 0; i < l->n_remotes; i++)
                send_check(l, &l->remotes[i], false);
        }
        l->next_check_s = now + CHECK_INTERVAL_S;
    } else if (l->selected >= 0 && l->migrating) {
        send_check(l, &l->remotes[l->selected], true);
        l->next_check_s = now + CHECK_INTERVAL_S;
    } else if (l->selected >= 0 && l->state != LINK_ENDED) {
        /* Consent freshness (RFC 7675): our keepalive, and the gateway's. */
        send_check(l, &l->remotes[l->selected], false);
        l->run->figures.keepalives_sent++;
        l->next_check_s = now + o->keepalive_s;
    }
}

static int remote_index(const sctp_link *l, const struct sockaddr_in6 *from)
{
    for (size_t i = 0; i < l->n_remotes; i++) {
        if (l->remotes[i].sin6_port == from->sin6_port &&
            memcmp(&l->remotes[i].sin6_addr, &from->sin6_addr, sizeof from->sin6_addr) == 0)
            return (int)i;
    }
    return -1;
}

static bool answers_nomination(const sctp_link *l)
{
    uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH];
    moat_ice_client_last_success(l->ice, id);
    for (size_t i = 0; i < G_N_ELEMENTS(l->nomination_ids); i++) {
        if (memcmp(id, l->nomination_ids[i], sizeof id) == 0)
            return true;
    }
    return false;
}

static void on_stun(sctp_link *l, const uint8_t *data, size_t length,
                    const struct sockaddr_in6 *from, double now)
{
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    moat_ice_response_result result =
        moat_ice_client_handle_response(l->ice, data, length, &mapped, &mapped_length);
    int index = remote_index(l, from);
    if (result != MOAT_ICE_RESPONSE_SUCCESS || index < 0)
        return;
    l->last_answer_s = now;
    if (l->state == LINK_CHECKING && l->nominee < 0) {
        /* The first pair to answer is nominated (the gateway has one
         * address per family in practice). */
        l->nominee = index;
        l->next_check_s = now;
        ice_tick(l, now);
    } else if (l->state == LINK_CHECKING && index == l->nominee && answers_nomination(l)) {
        l->selected = index;
        l->state = LINK_DTLS;
        l->next_check_s = now + l->run->options->keepalive_s;
        start_dtls(l);
    } else if (l->migrating && index == l->selected && answers_nomination(l)) {
        l->migrating = false;
        l->recovering = false;
        l->restarts_tried = 0;
        l->run->figures.reconnects++;
        l->next_check_s = now + l->run->options->keepalive_s;
        fprintf(stderr, "moat-tunnel: path restored (ICE restart)\n");
    } else if (l->selected >= 0 && !l->migrating) {
        l->run->figures.keepalives_answered++;
    }
}

/* Value of an a=<name>: line of an SDP fragment. */
static bool fragment_value(const char *fragment, const char *name, char *out, size_t size)
{
    const char *at = strstr(fragment, name);
    if (!at)
        return false;
    at += strlen(name);
    size_t n = strcspn(at, "\r\n");
    if (n == 0 || n >= size)
        return false;
    memcpy(out, at, n);
    out[n] = '\0';
    return true;
}

/* The path stopped answering: new credentials PATCHed to the resource and
 * checks from a new socket (the network may have changed under us). */
static int restart_ice(sctp_link *l, double now)
{
    char ufrag[sizeof l->local_ufrag], pwd[sizeof l->local_pwd], error[300];
    if (!l->resource_url || moat_ice_credentials_generate(ufrag, pwd) != 0)
        return -1;
    char *fragment = g_strdup_printf("a=ice-ufrag:%s\r\na=ice-pwd:%s\r\n", ufrag, pwd);
    char *answer = NULL;
    int rc =
        whip_client_patch_ice(l->http, l->resource_url, fragment, &answer, error, sizeof error);
    g_free(fragment);
    if (rc != 0) {
        fprintf(stderr, "moat-tunnel: ICE restart: %s\n", error);
        return -1;
    }
    bool ok = fragment_value(answer, "a=ice-ufrag:", l->remote_ufrag, sizeof l->remote_ufrag) &&
              fragment_value(answer, "a=ice-pwd:", l->remote_pwd, sizeof l->remote_pwd);
    g_free(answer);
    g_strlcpy(l->local_ufrag, ufrag, sizeof l->local_ufrag);
    g_strlcpy(l->local_pwd, pwd, sizeof l->local_pwd);
    moat_ice_client *ice = ok ? new_ice(l) : NULL;
    int fd = ice ? bound_socket() : -1;
    if (fd < 0) {
        moat_ice_client_free(ice);
        return -1;
    }
    moat_ice_client_free(l->ice);
    l->ice = ice;
    close(l->fd);
    l->fd = fd;
    l->migrating = true;
    l->last_answer_s = now;
    l->next_check_s = now;
    return 0;
}

/* ---- DTLS and SCTP ---- */

static void sctp_send_packet(void *user, const uint8_t *packet, size_t length)
{
    sctp_link *l = user;
    if (l->dtls)
        moat_dtls_transport_send(l->dtls, packet, length);
}

static void sctp_channel_open(void *user, const moat_data_channel_info *info)
{
    (void)user;
    (void)info; /* the gateway opens none; ours is the one we send on */
}

static void sctp_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    sctp_link *l = user;
    (void)stream_id;
    if (ppid != MOAT_SCTP_PPID_BINARY) {
        l->run->figures.lost[TUNNEL_LOSS_BAD_MESSAGE]++;
        return;
    }
    tunnel_run_deliver(l->run, data, length);
}

static void sctp_channel_closed(void *user, uint16_t stream_id)
{
    sctp_link *l = user;
    if (stream_id == l->stream_id) {
        tunnel_run_end(l->run, "the gateway closed the channel");
        l->state = LINK_ENDED;
    }
}

static void sctp_association_state(void *user, bool up)
{
    sctp_link *l = user;
    if (up) {
        l->state = LINK_UP;
        l->run->connected_s = tunnel_now_s();
        fprintf(stderr, "moat-tunnel: connected (%s, device %s, mtu %u)\n",
                tunnel_mode_name(l->run->options->mode), l->run->tun_name, l->run->options->mtu);
    } else {
        tunnel_run_end(l->run, "the session ended (the gateway closed it: the other peer left)");
        l->state = LINK_ENDED;
    }
}

static void sctp_sender_dry(void *user)
{
    sctp_link *l = user;
    l->blocked = false;
}

static void sctp_writable(void *user)
{
    sctp_link *l = user;
    l->blocked = false;
}

static const moat_sctp_callbacks sctp_callbacks = {
    .send_packet = sctp_send_packet,
    .channel_open = sctp_channel_open,
    .message = sctp_message,
    .channel_closed = sctp_channel_closed,
    .association_state = sctp_association_state,
    .sender_dry = sctp_sender_dry,
    .writable = sctp_writable,
};

static void open_channel(sctp_link *l)
{
    moat_data_channel_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.label, sizeof info.label, "tunnel");
    tunnel_mode mode = l->run->options->mode;
    info.ordered = mode == TUNNEL_MODE_ORDERED;
    info.max_retransmits = mode == TUNNEL_MODE_UNRELIABLE ? 0 : -1;
    info.max_lifetime_ms = -1;
    if (moat_sctp_association_open_channel(l->sctp, &info, &l->stream_id) != 0)
        link_fail(l, "cannot open the data channel");
}

static void dtls_send(void *user, const uint8_t *datagram, size_t length)
{
    sctp_link *l = user;
    if (l->selected >= 0)
        send_to(l, datagram, length, &l->remotes[l->selected]);
}

static void dtls_connected(void *user, const moat_srtp_keying *keys)
{
    sctp_link *l = user;
    (void)keys;
    char error[256];
    l->sctp =
        moat_sctp_association_new(l->role == MOAT_DTLS_ROLE_CLIENT, 5000, l->sctp_port,
                                  l->max_message_size, &sctp_callbacks, l, error, sizeof error);
    if (!l->sctp) {
        link_fail(l, error);
        return;
    }
    open_channel(l);
    moat_sctp_association_connect(l->sctp);
}

static void dtls_application_data(void *user, const uint8_t *data, size_t length)
{
    sctp_link *l = user;
    if (l->sctp)
        moat_sctp_association_receive(l->sctp, data, length);
}

static void dtls_closed(void *user, moat_dtls_state state, const char *reason)
{
    sctp_link *l = user;
    if (state == MOAT_DTLS_CLOSED) {
        tunnel_run_end(l->run, "the session ended (the gateway closed it: the other peer left)");
        l->state = LINK_ENDED;
    } else {
        char text[256];
        snprintf(text, sizeof text, "DTLS failed: %s", reason);
        link_fail(l, text);
    }
}

static const moat_dtls_callbacks dtls_callbacks = {
    .send = dtls_send,
    .connected = dtls_connected,
    .application_data = dtls_application_data,
    .closed = dtls_closed,
};

static void start_dtls(sctp_link *l)
{
    char error[256];
    l->dtls = moat_dtls_transport_new(l->dtls_context, l->role, l->fingerprint_alg, l->fingerprint,
                                      &dtls_callbacks, l, error, sizeof error);
    if (!l->dtls || moat_dtls_transport_start(l->dtls) != MOAT_DTLS_OK)
        link_fail(l, l->dtls ? "cannot start the DTLS handshake" : error);
}

/* ---- the loop ---- */

static void receive_datagrams(sctp_link *l, double now)
{
    static uint8_t buffer[DATAGRAM_SIZE];
    for (int i = 0; i < READS_PER_TURN && l->state != LINK_ENDED; i++) {
        struct sockaddr_in6 from;
        socklen_t from_length = sizeof from;
        ssize_t n =
            recvfrom(l->fd, buffer, sizeof buffer, 0, (struct sockaddr *)&from, &from_length);
        if (n <= 0)
            return;
        int index = remote_index(l, &from);
        if (index < 0)
            continue; /* only the gateway's candidates speak to us */
        uint8_t first = buffer[0];
        if (first <= 3)
            on_stun(l, buffer, (size_t)n, &from, now);
        else if (first >= 20 && first <= 63 && l->dtls && index == l->selected)
            moat_dtls_transport_receive(l->dtls, buffer, (size_t)n);
    }
}

static void forward_tun(sctp_link *l)
{
    static uint8_t packet[TUNNEL_MAX_MTU + 64];
    for (int i = 0; i < READS_PER_TURN && l->state == LINK_UP && !l->blocked; i++) {
        long n = tunnel_run_read_tun(l->run, packet, sizeof packet);
        if (n <= 0)
            return;
        int rc = moat_sctp_association_send(l->sctp, l->stream_id, MOAT_SCTP_PPID_BINARY, packet,
                                            (size_t)n);
        if (rc == 0) {
            l->run->figures.packets_out++;
            l->run->figures.bytes_out += (uint64_t)n;
        } else if (rc == -EAGAIN) {
            l->run->figures.lost[TUNNEL_LOSS_SEND_FULL]++;
            l->blocked = true;
        } else {
            l->run->figures.lost[TUNNEL_LOSS_SEND_FAILED]++;
        }
    }
}

/* Packets that arrive at the TUN device before the link is up are lost. */
static void drain_tun(sctp_link *l)
{
    uint8_t packet[TUNNEL_MAX_MTU + 64];
    while (tunnel_run_read_tun(l->run, packet, sizeof packet) > 0)
        l->run->figures.lost[TUNNEL_LOSS_NOT_CONNECTED]++;
}

/* The path stopped answering: ICE restarts, up to --reconnects tries in a
 * row (a try whose PATCH cannot reach the gateway, the network being down,
 * is tried again after RESTART_RETRY_S). */
static void recover(sctp_link *l, double now)
{
    const tunnel_options *o = l->run->options;
    if (l->restarts_tried >= o->reconnects) {
        link_fail(l, "the path to the gateway is lost (no answer to keepalives)");
        return;
    }
    l->restarts_tried++;
    l->recovering = true;
    l->next_restart_s = now + RESTART_RETRY_S;
    fprintf(stderr, "moat-tunnel: no answer for %.1f s: ICE restart (try %u of %u)\n",
            now - l->last_answer_s, l->restarts_tried, o->reconnects);
    if (restart_ice(l, now) != 0)
        fprintf(stderr, "moat-tunnel: ICE restart failed; trying again in %.0f s\n",
                RESTART_RETRY_S);
}

static void timers(sctp_link *l, double now)
{
    if (l->sctp) {
        uint32_t elapsed_ms = (uint32_t)((now - l->last_tick_s) * 1000);
        if (elapsed_ms >= MOAT_SCTP_TIMER_INTERVAL_MS) {
            moat_sctp_stack_handle_timers(elapsed_ms);
            l->last_tick_s += elapsed_ms / 1000.0;
            moat_sctp_association_tick(l->sctp);
        }
    } else {
        l->last_tick_s = now;
    }
    if (l->dtls && l->state == LINK_DTLS && moat_dtls_transport_timeout_ms(l->dtls) == 0)
        moat_dtls_transport_handle_timeout(l->dtls);
    ice_tick(l, now);
    const tunnel_options *o = l->run->options;
    if (l->state != LINK_UP && now > l->setup_deadline_s && !l->migrating) {
        link_fail(l, l->state == LINK_CHECKING ? "no ICE answer from the gateway"
                                               : "the DTLS/SCTP setup did not complete");
    } else if (l->state == LINK_UP && now >= l->next_restart_s &&
               ((l->recovering && !l->migrating) || now - l->last_answer_s > o->dead_s)) {
        /* Once the path was lost, the network may have changed under us
         * (a new address): keepalives the gateway answers from the old
         * socket do not end the recovery, a completed restart does. */
        recover(l, now);
    }
}

static int poll_timeout_ms(const sctp_link *l, double now)
{
    double next = l->next_check_s;
    if (l->sctp && l->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0 < next)
        next = l->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0;
    if (l->dtls && l->state == LINK_DTLS) {
        int64_t due = moat_dtls_transport_timeout_ms(l->dtls);
        if (due >= 0 && now + due / 1000.0 < next)
            next = now + due / 1000.0;
    }
    int ms = (int)((next - now) * 1000) + 1;
    return ms < 0 ? 0 : ms > 200 ? 200 : ms;
}

static void loop(sctp_link *l)
{
    double now = tunnel_now_s();
    l->setup_deadline_s = now + l->run->options->setup_timeout_s;
    l->last_answer_s = now;
    l->last_tick_s = now;
    while (!tunnel_stop_requested && l->state != LINK_ENDED) {
        struct pollfd pfd[2] = {
            {.fd = l->fd, .events = POLLIN},
            {.fd = l->run->tun_fd, .events = l->blocked ? 0 : POLLIN},
        };
        int ready = poll(pfd, 2, poll_timeout_ms(l, now));
        now = tunnel_now_s();
        if (ready > 0 && (pfd[0].revents & POLLIN))
            receive_datagrams(l, now);
        if (ready > 0 && (pfd[1].revents & POLLIN)) {
            if (l->state == LINK_UP)
                forward_tun(l);
            else
                drain_tun(l);
        }
        timers(l, now);
        tunnel_run_progress(l->run, l->state == LINK_UP ? "up"
                                    : l->migrating      ? "restarting"
                                                        : "connecting");
    }
}

int tunnel_sctp_run(tunnel_run *run)
{
    sctp_link l;
    memset(&l, 0, sizeof l);
    l.run = run;
    l.fd = -1;
    l.selected = -1;
    l.nominee = -1;
    char error[256];
    if (moat_sctp_stack_init() != 0) {
        tunnel_run_end(run, "cannot start the SCTP stack");
        return -1;
    }
    l.dtls_context = moat_dtls_context_new(run->certificate, error, sizeof error);
    l.http = whip_client_new(run->options->token, HTTP_TIMEOUT_S);
    if (!l.dtls_context || !l.http)
        link_fail(&l, l.dtls_context ? "cannot make the HTTP client" : error);
    else if (open_session(&l) == 0)
        loop(&l);
    bool failed = l.failed;
    if (l.resource_url) {
        /* Hang up: the gateway ends our session and the other peer's. */
        if (whip_client_delete(l.http, l.resource_url, error, sizeof error) != 0 &&
            l.state != LINK_ENDED)
            fprintf(stderr, "moat-tunnel: WHIP DELETE: %s\n", error);
    }
    if (l.sctp)
        moat_sctp_association_free(l.sctp);
    moat_dtls_transport_free(l.dtls);
    moat_ice_client_free(l.ice);
    if (l.fd >= 0)
        close(l.fd);
    g_free(l.resource_url);
    if (l.http)
        whip_client_free(l.http);
    moat_dtls_context_free(l.dtls_context);
    return failed ? -1 : 0;
}
