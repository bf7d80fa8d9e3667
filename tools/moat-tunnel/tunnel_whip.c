/* moat-tunnel's WHIP session with the gateway: the UDP socket, the offer
 * (a data channel only) and the answer, ICE as the controlling agent
 * (ice/ice_client.h: checks, nomination, consent freshness as the
 * keepalive) and the ICE restart that moves a path that stopped answering
 * (a new socket, new credentials PATCHed to the WHIP resource), as a network
 * handover does. DTLS and SCTP are tunnel_sctp.c's. */
#include "tunnel_sctp_link.h"

#include "target_policy.h"
#include "whip_address.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK_INTERVAL_S 0.05

static uint64_t random_u64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = ((uint64_t)g_random_int() << 32) | g_random_int();
    return v;
}

void tunnel_link_send_to(sctp_link *l, const uint8_t *data, size_t length,
                         const struct sockaddr_in6 *to)
{
    if (l->batch && l->batching) {
        if (l->batch->fd != l->fd)
            tunnel_udp_batch_set_fd(l->batch, l->fd);
        tunnel_udp_batch_add(l->batch, data, length, to);
        return;
    }
    sendto(l->fd, data, length, 0, (const struct sockaddr *)to, sizeof *to);
}

/* ---- the offer and the answer ---- */

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
            if (strcmp(c->transport, "udp") != 0 || !whip_candidate_address(c, &a))
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

int tunnel_whip_open(sctp_link *l)
{
    char error[512];
    l->fd = bound_socket();
    if (l->fd < 0 || moat_ice_credentials_generate(l->local_ufrag, l->local_pwd) != 0) {
        tunnel_link_fail(l, "cannot open the UDP socket");
        return -1;
    }
    whip_learn_local_address(l->url, l->fd, &l->local);
    char *offer = build_offer(l);
    char *answer = NULL;
    /* The POST and its Retry-After waits end by the lane's setup deadline. */
    int64_t deadline_us = (int64_t)(l->setup_deadline_s * 1e6);
    int rc = whip_client_post_offer(l->http, l->url, offer, deadline_us, &answer, &l->resource_url,
                                    error, sizeof error);
    g_free(offer);
    if (rc != 0) {
        char text[600];
        if (l->tunnel && l->tunnel->n_lanes > 1)
            snprintf(text, sizeof text, "WHIP (lane %u): %s", l->lane, error);
        else
            snprintf(text, sizeof text, "WHIP: %s", error);
        tunnel_link_fail(l, text);
        return -1;
    }
    rc = take_answer(l, answer, error, sizeof error);
    g_free(answer);
    if (rc == 0 && !(l->ice = new_ice(l)))
        snprintf(error, sizeof error, "unusable ICE credentials");
    if (rc != 0 || !l->ice) {
        char text[600];
        snprintf(text, sizeof text, "answer: %s", error);
        tunnel_link_fail(l, text);
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
    tunnel_link_send_to(l, request, length, to);
}

void tunnel_ice_tick(sctp_link *l, double now)
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

int tunnel_ice_remote_index(const sctp_link *l, const struct sockaddr_in6 *from)
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

void tunnel_ice_on_stun(sctp_link *l, const uint8_t *data, size_t length,
                        const struct sockaddr_in6 *from, double now)
{
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    moat_ice_response_result result =
        moat_ice_client_handle_response(l->ice, data, length, &mapped, &mapped_length);
    int index = tunnel_ice_remote_index(l, from);
    if (result != MOAT_ICE_RESPONSE_SUCCESS || index < 0)
        return;
    l->last_answer_s = now;
    if (l->state == LINK_CHECKING && l->nominee < 0) {
        /* The first pair to answer is nominated (the gateway has one
         * address per family in practice). */
        l->nominee = index;
        l->next_check_s = now;
        tunnel_ice_tick(l, now);
    } else if (l->state == LINK_CHECKING && index == l->nominee && answers_nomination(l)) {
        l->selected = index;
        l->state = LINK_DTLS;
        l->next_check_s = now + l->run->options->keepalive_s;
        tunnel_link_start_dtls(l);
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

/* The path stopped answering: new credentials PATCHed to the resource and
 * checks from a new socket (the network may have changed under us). */
int tunnel_ice_restart(sctp_link *l, double now)
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
    bool ok =
        whip_fragment_value(answer, "a=ice-ufrag:", l->remote_ufrag, sizeof l->remote_ufrag) &&
        whip_fragment_value(answer, "a=ice-pwd:", l->remote_pwd, sizeof l->remote_pwd);
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
    if (l->batch)
        tunnel_udp_batch_flush(l->batch); /* what waits leaves from the old socket */
    close(l->fd);
    l->fd = fd;
    l->migrating = true;
    l->last_answer_s = now;
    l->next_check_s = now;
    return 0;
}
