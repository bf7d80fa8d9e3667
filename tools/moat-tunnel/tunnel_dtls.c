/* The UDP baseline: one IP packet per DTLS 1.2 record over UDP, spoken
 * directly between the two peers with the gateway's DTLS transport
 * (dtls/dtls_transport.h: OpenSSL, the same cipher suites and certificate
 * check by fingerprint as the data channel). The --listen side is a
 * stateless DTLS listener (dtls/dtls_listen.h): a ClientHello gets a
 * HelloVerifyRequest with a cookie bound to its source, and only the sender
 * who returns the cookie is tried as the peer (the socket is then connected
 * to it: nothing else reaches the handshake), so a forged source gets one
 * small datagram, never a certificate flight, and holds nothing. When the
 * tried sender's handshake fails or is not done within LISTEN_HANDSHAKE_S,
 * it is refused and the listener listens again, so a stranger who writes
 * first delays the peer but does not become it. Other datagrams before that
 * are ignored. The --connect side is the DTLS client. A
 * record of one byte is a keepalive (0: ping, 1: pong), never an IP
 * packet. */
#include "tunnel_hello.h"
#include "tunnel_run.h"

#include "dtls/dtls_context.h"
#include "dtls/dtls_listen.h"
#include "dtls/dtls_transport.h"
#include "target_policy.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DATAGRAM_SIZE  (16384 + 256)
#define READS_PER_TURN 64
/* How long the listener gives a sender to finish the handshake. */
#define LISTEN_HANDSHAKE_S 5.0

typedef struct {
    tunnel_run *run;
    int fd;
    bool connected_socket;
    moat_dtls_transport *dtls;
    moat_dtls_context *context;
    bool up, ended, failed;
    /* Listener: the sender being tried failed (reason) or ran out of time:
     * refuse it and listen again (out of the transport's callback). */
    bool refuse;
    char refuse_reason[160];
    struct sockaddr_in6 sender;    /* listener: the sender being tried, or the peer */
    struct sockaddr_in6 answer_to; /* listening: the source of the datagram in hand */
    double last_heard_s, next_keepalive_s, adopted_s;
} dtls_link;

static void link_send(void *user, const uint8_t *datagram, size_t length)
{
    dtls_link *l = user;
    if (l->connected_socket)
        send(l->fd, datagram, length, 0);
    else if (l->run->options->listen) /* a HelloVerifyRequest, or the first flight */
        sendto(l->fd, datagram, length, 0, (const struct sockaddr *)&l->answer_to,
               sizeof l->answer_to);
}

static void link_connected(void *user, const moat_srtp_keying *keys)
{
    dtls_link *l = user;
    (void)keys;
    l->up = true;
    l->run->connected_s = tunnel_now_s();
    fprintf(stderr, "moat-tunnel: connected (udp/DTLS, device %s, mtu %u)\n", l->run->tun_name,
            l->run->options->mtu);
}

static void link_data(void *user, const uint8_t *data, size_t length)
{
    dtls_link *l = user;
    if (length == 1) {
        if (data[0] == 0) {
            uint8_t pong = 1;
            moat_dtls_transport_send(l->dtls, &pong, 1);
        } else {
            l->run->figures.keepalives_answered++;
        }
        return;
    }
    tunnel_run_deliver(l->run, data, length);
}

static void link_closed(void *user, moat_dtls_state state, const char *reason)
{
    dtls_link *l = user;
    if (l->run->options->listen && !l->up) {
        l->refuse = true;
        snprintf(l->refuse_reason, sizeof l->refuse_reason, "DTLS failed: %s", reason);
        return;
    }
    if (state == MOAT_DTLS_CLOSED) {
        tunnel_run_end(l->run, "the other peer closed the tunnel");
    } else {
        tunnel_run_end(l->run, "DTLS failed: %s", reason);
        l->failed = true;
    }
    l->ended = true;
}

static const moat_dtls_callbacks callbacks = {
    .send = link_send,
    .connected = link_connected,
    .application_data = link_data,
    .closed = link_closed,
};

static int open_socket(dtls_link *l, const tunnel_options *o, char *error, size_t error_size)
{
    struct sockaddr_in6 address;
    const char *where = o->listen ? o->listen : o->connect;
    /* The baselines speak to one peer the user named: any address. */
    if (target_policy_resolve(where, true, &address, error, error_size) != 0)
        return -1;
    l->fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int off = 0, buffer = 4 << 20;
    if (l->fd < 0) {
        snprintf(error, error_size, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    setsockopt(l->fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    int rc = o->listen ? bind(l->fd, (struct sockaddr *)&address, sizeof address)
                       : connect(l->fd, (struct sockaddr *)&address, sizeof address);
    if (rc != 0) {
        snprintf(error, error_size, "%s %s: %s", o->listen ? "bind" : "connect", where,
                 strerror(errno));
        return -1;
    }
    l->connected_socket = o->connect != NULL;
    return 0;
}

/* Listener: a ClientHello is answered with a cookie, and the sender that
 * returns it is tried as the peer (the transport has sent its first flight
 * by then). */
static bool listen_for_peer(dtls_link *l, const struct sockaddr_in6 *from, const uint8_t *datagram,
                            size_t length, double now)
{
    if (!tunnel_is_client_hello(datagram, length)) {
        l->run->figures.refused++;
        return false;
    }
    moat_dtls_transport_stats before, after;
    moat_dtls_transport_stats_get(l->dtls, &before);
    l->answer_to = *from;
    moat_dtls_transport_listen_source(l->dtls, from, sizeof *from);
    moat_dtls_transport_receive(l->dtls, datagram, length);
    moat_dtls_transport_stats_get(l->dtls, &after);
    uint64_t answered = after.hello_verify_requests - before.hello_verify_requests;
    l->run->figures.hello_verify_requests += answered;
    if (moat_dtls_transport_listening(l->dtls)) {
        if (answered == 0)
            l->run->figures.refused++; /* a ClientHello that did not parse */
        return false;
    }
    if (connect(l->fd, (const struct sockaddr *)from, sizeof *from) != 0) {
        l->refuse = true;
        snprintf(l->refuse_reason, sizeof l->refuse_reason, "connect: %s", strerror(errno));
        return false;
    }
    l->connected_socket = true;
    l->adopted_s = now;
    l->sender = *from;
    return true;
}

/* Datagrams queued before the socket was connected may come from others. */
static bool from_sender(const dtls_link *l, const struct sockaddr_in6 *from)
{
    return !l->run->options->listen ||
           (from->sin6_port == l->sender.sin6_port &&
            memcmp(&from->sin6_addr, &l->sender.sin6_addr, sizeof from->sin6_addr) == 0);
}

static int start_transport(dtls_link *l, char *error, size_t error_size);

/* Listener: the sender tried failed; forget it and listen again (with a
 * new transport: a failed one stays failed). */
static void refuse_sender(dtls_link *l)
{
    struct sockaddr unspecified = {.sa_family = AF_UNSPEC};
    connect(l->fd, &unspecified, sizeof unspecified); /* dissolves the association */
    if (l->connected_socket) {
        l->run->figures.refused++;
        fprintf(stderr, "moat-tunnel: refused a sender: %s\n", l->refuse_reason);
    } /* else no sender yet: the transport's own handshake deadline passed */
    l->connected_socket = false;
    l->refuse = false;
    moat_dtls_transport_free(l->dtls);
    char error[256];
    if (start_transport(l, error, sizeof error) != 0) {
        tunnel_run_end(l->run, "DTLS: %s", error);
        l->failed = l->ended = true;
    }
}

static void receive(dtls_link *l, double now)
{
    static uint8_t buffer[DATAGRAM_SIZE];
    for (int i = 0; i < READS_PER_TURN && !l->ended; i++) {
        struct sockaddr_in6 from;
        socklen_t from_length = sizeof from;
        ssize_t n =
            recvfrom(l->fd, buffer, sizeof buffer, 0, (struct sockaddr *)&from, &from_length);
        if (n <= 0 || l->refuse)
            return;
        if (!l->connected_socket) {
            if (listen_for_peer(l, &from, buffer, (size_t)n, now))
                l->last_heard_s = now;
            continue;
        }
        if (!from_sender(l, &from))
            continue;
        l->last_heard_s = now;
        moat_dtls_transport_receive(l->dtls, buffer, (size_t)n);
    }
}

static void forward_tun(dtls_link *l)
{
    static uint8_t packet[TUNNEL_MAX_MTU + 64];
    for (int i = 0; i < READS_PER_TURN; i++) {
        long n = tunnel_run_read_tun(l->run, packet, sizeof packet);
        if (n <= 0)
            return;
        if (!l->up) {
            l->run->figures.lost[TUNNEL_LOSS_NOT_CONNECTED]++;
        } else if (n < 2 || moat_dtls_transport_send(l->dtls, packet, (size_t)n) != MOAT_DTLS_OK) {
            l->run->figures.lost[TUNNEL_LOSS_SEND_FAILED]++;
        } else {
            l->run->figures.packets_out++;
            l->run->figures.bytes_out += (uint64_t)n;
        }
    }
}

static void timers(dtls_link *l, double now)
{
    const tunnel_options *o = l->run->options;
    if (!l->up) {
        if (moat_dtls_transport_timeout_ms(l->dtls) == 0)
            moat_dtls_transport_handle_timeout(l->dtls);
        if (o->listen && l->connected_socket && !l->refuse &&
            now - l->adopted_s > LISTEN_HANDSHAKE_S) {
            l->refuse = true;
            snprintf(l->refuse_reason, sizeof l->refuse_reason,
                     "the DTLS handshake was not done in %.0f s", LISTEN_HANDSHAKE_S);
        }
        if (l->refuse) {
            refuse_sender(l);
            return;
        }
        if (!o->listen && now - l->run->started_s > o->setup_timeout_s && !l->ended) {
            tunnel_run_end(l->run, "the DTLS handshake did not complete");
            l->failed = l->ended = true;
        }
        return;
    }
    if (now >= l->next_keepalive_s) {
        uint8_t ping = 0;
        moat_dtls_transport_send(l->dtls, &ping, 1);
        l->run->figures.keepalives_sent++;
        l->next_keepalive_s = now + o->keepalive_s;
    }
    if (now - l->last_heard_s > o->dead_s && !l->ended) {
        tunnel_run_end(l->run, "the other peer stopped answering");
        l->failed = l->ended = true;
    }
}

static int start_transport(dtls_link *l, char *error, size_t error_size)
{
    const tunnel_options *o = l->run->options;
    l->dtls = moat_dtls_transport_new(
        l->context, o->listen ? MOAT_DTLS_ROLE_SERVER : MOAT_DTLS_ROLE_CLIENT, "sha-256",
        o->peer_fingerprint, &callbacks, l, error, error_size);
    if (!l->dtls)
        return -1;
    int rc = o->listen ? moat_dtls_transport_listen(l->dtls) : moat_dtls_transport_start(l->dtls);
    if (rc != MOAT_DTLS_OK) {
        snprintf(error, error_size, "cannot start");
        return -1;
    }
    return 0;
}

int tunnel_dtls_run(tunnel_run *run)
{
    const tunnel_options *o = run->options;
    dtls_link l = {.run = run, .fd = -1};
    char error[256];
    l.context = moat_dtls_context_new(run->certificate, error, sizeof error);
    if (!l.context || open_socket(&l, o, error, sizeof error) != 0) {
        tunnel_run_end(run, "%s", error);
        moat_dtls_context_free(l.context);
        if (l.fd >= 0)
            close(l.fd);
        return -1;
    }
    if (start_transport(&l, error, sizeof error) != 0) {
        tunnel_run_end(run, "DTLS: %s", error);
        l.failed = l.ended = true;
    }
    double now = tunnel_now_s();
    l.last_heard_s = now;
    while (!tunnel_stop_requested && !l.ended) {
        struct pollfd pfd[2] = {{.fd = l.fd, .events = POLLIN},
                                {.fd = run->tun_fd, .events = POLLIN}};
        int ready = poll(pfd, 2, 20);
        now = tunnel_now_s();
        if (ready > 0 && (pfd[0].revents & POLLIN))
            receive(&l, now);
        if (ready > 0 && (pfd[1].revents & POLLIN))
            forward_tun(&l);
        timers(&l, now);
        tunnel_run_progress(run, l.up ? "up" : "connecting");
    }
    if (l.dtls && l.up && !l.ended)
        moat_dtls_transport_shutdown(l.dtls); /* close_notify: the other end stops cleanly */
    moat_dtls_transport_free(l.dtls);
    moat_dtls_context_free(l.context);
    close(l.fd);
    return l.failed ? -1 : 0;
}
