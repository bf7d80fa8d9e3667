/* The lifecycle of one legitimate moat-flood session: socket, offer, WHIP POST
 * and answer, the packets and timers through ICE and DTLS to connected, ICE
 * restart and address migration, and close (WHIP DELETE). */
#include "whip_session.h"
#include "legit_media.h"
#include "ice/stun_classify.h"
#include "session_parts.h"
#include "sfu_peer.h"
#include "target_policy.h"
#include "tool_text.h"
#include "whip_address.h"

#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define RECEIVE_BATCH        32
#define RECEIVE_BUFFER       (1 << 20)
#define MAX_READS_PER_CALL   8
#define FIRST_CHECK_DELAY_US 10000u

void session_fail(flood_session *s, const char *format, ...)
{
    if (s->state == FLOOD_SESSION_FAILED)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(s->error, sizeof s->error, format, args);
    va_end(args);
    /* Printed and put in JSON as it is: plain printable text only. */
    tool_text_printable(s->error);
    s->state = FLOOD_SESSION_FAILED;
}

const char *flood_session_state_name(flood_session_state state)
{
    switch (state) {
    case FLOOD_SESSION_NEW:
        return "new";
    case FLOOD_SESSION_CHECKING:
        return "checking";
    case FLOOD_SESSION_DTLS:
        return "dtls";
    case FLOOD_SESSION_CONNECTED:
        return "connected";
    case FLOOD_SESSION_FAILED:
        return "failed";
    }
    return "unknown";
}

static uint32_t random_ssrc(void)
{
    uint32_t value = 0;
    while (value == 0) {
        if (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value)
            value = (uint32_t)g_random_int();
    }
    return value;
}

/* A dual-stack UDP socket bound to local; -1 with errno on failure. */
static int bound_socket(const struct sockaddr_in6 *local)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int off = 0, buffer = RECEIVE_BUFFER;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    if (bind(fd, (const struct sockaddr *)local, sizeof *local) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static int open_socket(flood_session *s)
{
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
    s->fd = bound_socket(s->env->bind_local != NULL ? s->env->bind_local : &any);
    if (s->fd < 0) {
        session_fail(s, "socket: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int flood_session_restart_ice(flood_session *s, const struct sockaddr_in6 *local, uint64_t now_us)
{
    char ufrag[sizeof s->local_ufrag], pwd[sizeof s->local_pwd];
    char remote_ufrag[sizeof s->remote_ufrag], remote_pwd[sizeof s->remote_pwd];
    if (s->state != FLOOD_SESSION_CONNECTED || s->resource_url == NULL ||
        moat_ice_credentials_generate(ufrag, pwd) != 0)
        return -1;
    char *fragment = g_strdup_printf("a=ice-ufrag:%s\r\na=ice-pwd:%s\r\n", ufrag, pwd);
    char *answer = NULL;
    char error[200];
    int status = whip_client_patch_ice(s->env->http, s->resource_url, fragment, &answer, error,
                                       sizeof error);
    g_free(fragment);
    if (status != 0) {
        snprintf(s->error, sizeof s->error, "ICE restart: %s", error);
        return -1;
    }
    bool ok = whip_fragment_value(answer, "a=ice-ufrag:", remote_ufrag, sizeof remote_ufrag) &&
              whip_fragment_value(answer, "a=ice-pwd:", remote_pwd, sizeof remote_pwd);
    g_free(answer);
    moat_ice_client_credentials credentials = {
        .local_ufrag = ufrag,
        .local_pwd = pwd,
        .remote_ufrag = remote_ufrag,
        .remote_pwd = remote_pwd,
        .tie_breaker = ((uint64_t)random_ssrc() << 32) | random_ssrc(),
    };
    moat_ice_client *ice = ok ? moat_ice_client_new(&credentials) : NULL;
    if (ice == NULL) {
        snprintf(s->error, sizeof s->error, "ICE restart: unusable answer");
        return -1;
    }
    moat_ice_client_free(s->ice);
    s->ice = ice;
    g_strlcpy(s->local_ufrag, ufrag, sizeof s->local_ufrag);
    g_strlcpy(s->local_pwd, pwd, sizeof s->local_pwd);
    g_strlcpy(s->remote_ufrag, remote_ufrag, sizeof s->remote_ufrag);
    g_strlcpy(s->remote_pwd, remote_pwd, sizeof s->remote_pwd);
    return flood_session_migrate(s, local, now_us);
}

int flood_session_migrate(flood_session *s, const struct sockaddr_in6 *local, uint64_t now_us)
{
    if (s->state != FLOOD_SESSION_CONNECTED)
        return -1;
    int fd = bound_socket(local);
    if (fd < 0)
        return -1;
    close(s->fd);
    s->fd = fd;
    socklen_t length = sizeof s->local;
    getsockname(fd, (struct sockaddr *)&s->local, &length);
    s->migrating = true;
    s->received_at_migration = s->echo.received;
    s->next_check_us = now_us;
    session_ice_tick(s, now_us);
    return 0;
}

void flood_session_init(flood_session *s)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->nominated = -1;
    s->state = FLOOD_SESSION_NEW;
}

void flood_session_not_opened(flood_session *s, unsigned index, const flood_session_env *env,
                              const char *reason)
{
    flood_session_init(s);
    s->index = index;
    s->env = env;
    session_fail(s, "%s", reason);
}

/* Fresh state, credentials and the socket: what opening and answering
 * share. The caller's s->sfu is kept. */
static int prepare(flood_session *s, unsigned index, const flood_session_env *env, uint64_t now_us)
{
    sfu_peer *sfu = s->sfu;
    memset(s, 0, sizeof *s);
    s->sfu = sfu;
    s->index = index;
    s->env = env;
    s->fd = -1;
    s->nominated = -1;
    s->state = FLOOD_SESSION_NEW;
    s->started_us = now_us;
    s->ssrc = random_ssrc();
    if (sfu != NULL) {
        sfu->audio_ssrc = random_ssrc();
        sfu->video_ssrc = s->ssrc;
    }
    if (moat_ice_credentials_generate(s->local_ufrag, s->local_pwd) != 0) {
        session_fail(s, "no randomness for ICE credentials");
        return -1;
    }
    if (open_socket(s) != 0)
        return -1;
    whip_learn_local_address(env->url != NULL ? env->url : env->options->whip_url, s->fd,
                             &s->local);
    return 0;
}

/* The offer goes out (WHIP POST or the env's exchange); the answer comes back. */
static int exchange_offer(flood_session *s, char **answer, char *error, size_t error_size)
{
    const flood_session_env *env = s->env;
    char *offer = s->sfu != NULL ? sfu_peer_build_offer(s, error, error_size)
                                 : session_offer_build(s, error, error_size);
    if (offer == NULL) {
        session_fail(s, "offer: %s", error);
        return -1;
    }
    const char *url = env->url != NULL ? env->url : env->options->whip_url;
    int status =
        env->exchange != NULL
            ? env->exchange(env->exchange_user, offer, answer, &s->resource_url, error, error_size)
            : whip_client_post_offer(env->http, url, offer, (int64_t)env->setup_deadline_us, answer,
                                     &s->resource_url, error, error_size);
    g_free(offer);
    if (status != 0) {
        session_fail(s, "%s", error);
        return -1;
    }
    return 0;
}

int flood_session_open(flood_session *s, unsigned index, const flood_session_env *env,
                       uint64_t now_us)
{
    if (prepare(s, index, env, now_us) != 0)
        return -1;
    char error[512];
    char *answer = NULL;
    if (exchange_offer(s, &answer, error, sizeof error) != 0)
        return -1;
    if (s->resource_url != NULL &&
        target_policy_check_url(s->resource_url, env->options->allow_remote, error, sizeof error) !=
            0) {
        /* Not even a DELETE goes to a Location the policy refuses. */
        g_free(s->resource_url);
        s->resource_url = NULL;
        g_free(answer);
        session_fail(s, "WHIP resource: %s", error);
        return -1;
    }
    int status = session_answer_apply(s, answer, error, sizeof error);
    if (status == 0 && s->sfu != NULL)
        status = sfu_peer_take_answer(s, answer, error, sizeof error);
    g_free(answer);
    if (status != 0) {
        session_fail(s, "answer: %s", error);
        return -1;
    }
    moat_ice_client_credentials credentials = {
        .local_ufrag = s->local_ufrag,
        .local_pwd = s->local_pwd,
        .remote_ufrag = s->remote_ufrag,
        .remote_pwd = s->remote_pwd,
        .tie_breaker = ((uint64_t)random_ssrc() << 32) | random_ssrc(),
    };
    s->ice = moat_ice_client_new(&credentials);
    if (s->ice == NULL) {
        session_fail(s, "answer: unusable ICE credentials");
        return -1;
    }
    s->state = FLOOD_SESSION_CHECKING;
    /* An endpoint may answer before its media thread knows the new ufrag; a
     * check that early is dropped (and counted) for nothing. */
    s->next_check_us = now_us + FIRST_CHECK_DELAY_US;
    return 0;
}

int flood_session_answer(flood_session *s, unsigned index, const flood_session_env *env,
                         const char *offer, char **answer, uint64_t now_us)
{
    *answer = NULL;
    if (prepare(s, index, env, now_us) != 0)
        return -1;
    char error[512];
    /* The offer names the SFU's credentials, fingerprint and candidates as
     * an answer would. */
    if (session_answer_apply(s, offer, error, sizeof error) != 0) {
        session_fail(s, "offer: %s", error);
        return -1;
    }
    s->sfu->answering = true;
    *answer = sfu_peer_build_answer(s, offer, error, sizeof error);
    if (*answer == NULL) {
        session_fail(s, "answer: %s", error);
        return -1;
    }
    s->state = FLOOD_SESSION_CHECKING;
    return 0;
}

int flood_session_send(flood_session *s, const uint8_t *data, size_t length,
                       const struct sockaddr_in6 *to)
{
    if (to == NULL)
        to = &s->remote;
    ssize_t sent = sendto(s->fd, data, length, 0, (const struct sockaddr *)to, sizeof *to);
    if (sent != (ssize_t)length) {
        s->send_errors++;
        return -1;
    }
    return 0;
}

static bool same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

/* Datagrams from anywhere but the answer's candidates are not ours. */
static bool from_remote(const flood_session *s, const struct sockaddr_in6 *from)
{
    for (size_t i = 0; i < s->n_remotes; i++)
        if (same_address(&s->remotes[i], from))
            return true;
    return false;
}

static void dispatch(flood_session *s, uint8_t *data, size_t length,
                     const struct sockaddr_in6 *from, uint64_t now_us)
{
    if (length == 0 || !from_remote(s, from))
        return;
    uint8_t first = data[0];
    bool request = first <= 3 && moat_stun_classify(data, length) == MOAT_STUN_BINDING_REQUEST;
    if (request && s->sfu != NULL) {
        sfu_peer_on_stun_request(s, data, length, from, now_us);
    } else if (first <= 3) {
        session_ice_on_stun(s, data, length, from, now_us);
    } else if (first >= 20 && first <= 63) {
        if (s->dtls != NULL && same_address(from, &s->remote))
            session_dtls_on_datagram(s, data, length);
    } else if (first >= 128 && first <= 191) {
        if (s->state != FLOOD_SESSION_CONNECTED || !same_address(from, &s->remote))
            return;
        if (s->sfu != NULL)
            sfu_peer_on_srtp(s, data, length);
        else
            legit_media_on_srtp(s, data, length, now_us);
    }
}

void flood_session_receive(flood_session *s, uint64_t now_us)
{
    if (s->fd < 0)
        return;
    static uint8_t buffers[RECEIVE_BATCH][FLOOD_PACKET_CAPACITY];
    struct mmsghdr headers[RECEIVE_BATCH];
    struct iovec vectors[RECEIVE_BATCH];
    struct sockaddr_in6 addresses[RECEIVE_BATCH];
    for (int round = 0; round < MAX_READS_PER_CALL; round++) {
        for (int i = 0; i < RECEIVE_BATCH; i++) {
            vectors[i] = (struct iovec){.iov_base = buffers[i], .iov_len = sizeof buffers[i]};
            headers[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &addresses[i],
                                                      .msg_namelen = sizeof addresses[i],
                                                      .msg_iov = &vectors[i],
                                                      .msg_iovlen = 1}};
        }
        int n = recvmmsg(s->fd, headers, RECEIVE_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        for (int i = 0; i < n; i++) {
            if (addresses[i].sin6_family != AF_INET6 || (headers[i].msg_hdr.msg_flags & MSG_TRUNC))
                continue;
            dispatch(s, buffers[i], headers[i].msg_len, &addresses[i], now_us);
        }
        if (n < RECEIVE_BATCH)
            return;
    }
}

void flood_session_tick(flood_session *s, uint64_t now_us)
{
    if (s->state == FLOOD_SESSION_FAILED || s->state == FLOOD_SESSION_NEW)
        return;
    uint64_t setup_us = (uint64_t)(s->env->options->setup_timeout_s * 1e6);
    if (s->state != FLOOD_SESSION_CONNECTED && now_us - s->started_us > setup_us) {
        session_fail(s, "not connected after %.1f s (%s)", s->env->options->setup_timeout_s,
                     s->state == FLOOD_SESSION_CHECKING ? "no ICE response" : "DTLS handshake");
        return;
    }
    session_ice_tick(s, now_us);
    session_dtls_tick(s, now_us);
}

uint64_t flood_session_next_timer_us(const flood_session *s, uint64_t now_us)
{
    uint64_t next = UINT64_MAX;
    if (s->state == FLOOD_SESSION_CHECKING || s->state == FLOOD_SESSION_CONNECTED)
        next = session_ice_next_timer_us(s);
    uint64_t dtls = session_dtls_next_timer_us(s, now_us);
    return dtls < next ? dtls : next;
}

int flood_session_close(flood_session *s, bool hang_up, char *error, size_t error_size)
{
    int result = 0;
    if (hang_up && s->resource_url != NULL)
        result = whip_client_delete(s->env->http, s->resource_url, error, error_size);
    moat_ice_client_free(s->ice);
    s->ice = NULL;
    moat_dtls_transport_free(s->dtls);
    s->dtls = NULL;
    moat_srtp_session_free(s->srtp);
    s->srtp = NULL;
    srtpplus_sender_free(s->srtpplus);
    s->srtpplus = NULL;
    capture_ring_free(s->capture);
    s->capture = NULL;
    sfu_peer_release(s->sfu);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    g_free(s->resource_url);
    s->resource_url = NULL;
    return result;
}
