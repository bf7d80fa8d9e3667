/* The TCP baseline: IP packets framed with a 2-byte length
 * (tunnel_frame.h) over TLS 1.2 on TCP, spoken directly between the two
 * peers, with the cipher suite the gateway's DTLS negotiates
 * (ECDHE-ECDSA-AES128-GCM-SHA256) and the peer's certificate checked by its
 * sha-256 fingerprint (both ends present one). Each packet is one SSL_write
 * (one record). --lanes K (default 1, the study's baseline) makes K
 * connections, each its own congestion window, and puts each flow we send
 * on one of them as the SCTP lanes do (tunnel_flows.h): the fair baseline
 * for K SCTP lanes. The --listen side accepts K connections that prove to
 * be the peer, running the handshakes of up to LISTEN_CANDIDATES
 * connections side by side (LISTEN_CANDIDATES_PER_SOURCE from one address;
 * a newer connection displaces the oldest that has sent nothing);
 * what arrives on any goes to the TUN device. A connection whose handshake
 * fails (junk, a certificate that is not --peer-fingerprint, silence beyond
 * LISTEN_HANDSHAKE_S) is refused: who connects first does not decide who
 * the peer is, and strangers that connect and stay silent do not hold up
 * the peer's own connection. TCP keepalive with a user timeout of --dead is
 * the keepalive. */
#include "tunnel_flows.h"
#include "tunnel_frame.h"
#include "tunnel_run.h"

#include "dtls/fingerprint.h"
#include "target_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TLS_CIPHER     "ECDHE-ECDSA-AES128-GCM-SHA256"
#define READS_PER_TURN 64
/* How long the listener gives one connection to prove it is the peer: a
 * TLS handshake is a few round trips; a stranger that connects and stays
 * silent holds the listener no longer than this. */
#define LISTEN_HANDSHAKE_S 5.0
/* Connections that may wait to be accepted. */
#define LISTEN_BACKLOG_EXTRA 8
/* Handshakes the listener runs at once, and from one address; a newer
 * connection displaces the oldest silent one beyond that. */
#define LISTEN_CANDIDATES            16
#define LISTEN_CANDIDATES_PER_SOURCE 8

/* One TCP connection. */
typedef struct {
    int fd;
    SSL *ssl;
    tunnel_frame_reader reader;
    uint8_t pending[TUNNEL_FRAME_HEADER + TUNNEL_MAX_MTU + 64]; /* a write to retry */
    size_t pending_length;
    unsigned lane;
} tls_link;

typedef struct {
    tunnel_run *run;
    SSL_CTX *ctx;
    tls_link links[TUNNEL_MAX_LANES];
    unsigned n_links;
    bool up, ended, failed;
    tunnel_flows flows; /* the connection of each flow we send */
} tls_tunnel;

static int accept_any(int ok, X509_STORE_CTX *store)
{
    (void)ok;
    (void)store;
    return 1; /* the fingerprint is checked after the handshake */
}

static SSL_CTX *make_context(const tunnel_run *run, bool server, char *error, size_t error_size)
{
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION) ||
        !SSL_CTX_set_cipher_list(ctx, TLS_CIPHER) ||
        !SSL_CTX_set1_groups_list(ctx, "X25519:P-256") ||
        SSL_CTX_use_certificate(ctx, moat_certificate_x509(run->certificate)) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, moat_certificate_private_key(run->certificate)) != 1) {
        snprintf(error, error_size, "TLS context: %s", ERR_reason_error_string(ERR_get_error()));
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    return ctx;
}

static void set_keepalive(int fd, const tunnel_options *o)
{
    int on = 1, idle = (int)(o->keepalive_s + 0.5), count = 3;
    unsigned timeout_ms = (unsigned)(o->dead_s * 1000);
    if (idle < 1)
        idle = 1;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, sizeof timeout_ms);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* --tcp-congestion on a socket (inherited by accepted ones). */
static int set_congestion(int fd, const tunnel_options *o, char *error, size_t error_size)
{
    if (!o->tcp_congestion || setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->tcp_congestion,
                                         (socklen_t)strlen(o->tcp_congestion)) == 0)
        return 0;
    snprintf(error, error_size, "--tcp-congestion %s: %s", o->tcp_congestion, strerror(errno));
    return -1;
}

/* A socket for `where`, with --tcp-congestion; -1 with error. */
static int tcp_socket(const tunnel_options *o, const char *where, struct sockaddr_in6 *address,
                      char *error, size_t error_size)
{
    if (target_policy_resolve(where, true, address, error, error_size) != 0)
        return -1;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int off = 0;
    if (fd < 0) {
        snprintf(error, error_size, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    if (set_congestion(fd, o, error, error_size) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Blocks until connected (the listener may not be there yet). */
static int connect_one(const tunnel_options *o, char *error, size_t error_size)
{
    struct sockaddr_in6 address;
    int fd = tcp_socket(o, o->connect, &address, error, error_size);
    double deadline = tunnel_now_s() + o->setup_timeout_s;
    while (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        if ((errno != ECONNREFUSED && errno != EINTR) || tunnel_now_s() > deadline ||
            tunnel_stop_requested) {
            snprintf(error, error_size, "connect %s: %s", o->connect, strerror(errno));
            close(fd);
            return -1;
        }
        usleep(100000); /* the listener is not there yet: try again */
    }
    return fd;
}

/* The TLS handshake on a non-blocking socket, given until `deadline`
 * (tunnel_now_s): 0 done, -1 failed, out of time or stopped (error says
 * which). */
static int handshake_until(SSL *ssl, int fd, bool server, double deadline, char *error,
                           size_t error_size)
{
    for (;;) {
        ERR_clear_error();
        int rc = server ? SSL_accept(ssl) : SSL_connect(ssl);
        if (rc == 1)
            return 0;
        int e = SSL_get_error(ssl, rc);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            unsigned long code = ERR_get_error();
            snprintf(error, error_size, "TLS handshake: %s",
                     code ? ERR_reason_error_string(code)
                          : (e == SSL_ERROR_ZERO_RETURN || rc == 0 ? "connection closed"
                                                                   : strerror(errno)));
            return -1;
        }
        double left = deadline - tunnel_now_s();
        if (left <= 0 || tunnel_stop_requested) {
            snprintf(error, error_size, "TLS handshake: not done in time");
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT};
        poll(&pfd, 1, left < 0.2 ? (int)(left * 1000) + 1 : 200);
    }
}

/* Whether the handshake's certificate is --peer-fingerprint. */
static bool peer_matches(const tunnel_options *o, SSL *ssl, char *error, size_t error_size)
{
    X509 *peer = SSL_get1_peer_certificate(ssl);
    char fingerprint[160] = "";
    bool match = peer &&
                 moat_fingerprint_of_x509(peer, "sha-256", fingerprint, sizeof fingerprint) == 0 &&
                 moat_fingerprint_equal(fingerprint, o->peer_fingerprint);
    X509_free(peer);
    if (!match)
        snprintf(error, error_size, "the peer's certificate is not %s", o->peer_fingerprint);
    return match;
}

static int handshake(tls_tunnel *t, tls_link *l, double deadline, char *error, size_t error_size)
{
    const tunnel_options *o = t->run->options;
    if (!t->ctx)
        t->ctx = make_context(t->run, o->listen != NULL, error, error_size);
    if (!t->ctx)
        return -1;
    l->ssl = SSL_new(t->ctx);
    SSL_set_fd(l->ssl, l->fd);
    fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK);
    if (handshake_until(l->ssl, l->fd, o->listen != NULL, deadline, error, error_size) != 0)
        return -1;
    return peer_matches(o, l->ssl, error, error_size) ? 0 : -1;
}

/* A connection whose handshake the listener runs. */
typedef struct {
    int fd;
    SSL *ssl;
    short events; /* what its handshake waits for */
    double deadline;
    struct sockaddr_in6 from;
} candidate;

typedef struct {
    tls_tunnel *t;
    candidate list[LISTEN_CANDIDATES];
    unsigned n;
} candidates;

/* Ends candidate i (the last takes its place); counted and said. */
static void refuse(candidates *c, unsigned i, const char *why)
{
    SSL_free(c->list[i].ssl);
    close(c->list[i].fd);
    c->list[i] = c->list[--c->n];
    c->t->run->figures.refused++;
    fprintf(stderr, "moat-tunnel: refused a connection: %s\n", why);
}

static unsigned from_source(const candidates *c, const struct sockaddr_in6 *from)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n; i++)
        n += memcmp(&c->list[i].from.sin6_addr, &from->sin6_addr, sizeof from->sin6_addr) == 0;
    return n;
}

/* The candidate a new connection displaces (when the listener is full, or
 * holds LISTEN_CANDIDATES_PER_SOURCE from the new one's address: then one
 * of those): the oldest that has sent nothing yet, else the oldest. A
 * stranger's silent connections never keep out a newer one. */
static unsigned displaced(const candidates *c, const struct sockaddr_in6 *same_source)
{
    unsigned victim = c->n;
    bool victim_silent = false;
    for (unsigned i = 0; i < c->n; i++) {
        const candidate *k = &c->list[i];
        if (same_source &&
            memcmp(&k->from.sin6_addr, &same_source->sin6_addr, sizeof same_source->sin6_addr) != 0)
            continue;
        bool silent = SSL_in_before(k->ssl);
        if (victim == c->n || (silent && !victim_silent) ||
            (silent == victim_silent && k->deadline < c->list[victim].deadline)) {
            victim = i;
            victim_silent = silent;
        }
    }
    return victim;
}

/* Takes every connection the listener holds. */
static void take_connections(candidates *c, int listener)
{
    for (;;) {
        struct sockaddr_in6 from;
        socklen_t length = sizeof from;
        int fd = accept4(listener, (struct sockaddr *)&from, &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (from_source(c, &from) >= LISTEN_CANDIDATES_PER_SOURCE)
            refuse(c, displaced(c, &from), "displaced by a newer connection from its address");
        else if (c->n == LISTEN_CANDIDATES)
            refuse(c, displaced(c, NULL), "displaced by a newer connection");
        set_keepalive(fd, c->t->run->options);
        candidate *k = &c->list[c->n++];
        *k = (candidate){.fd = fd,
                         .ssl = SSL_new(c->t->ctx),
                         .events = POLLIN,
                         .deadline = tunnel_now_s() + LISTEN_HANDSHAKE_S,
                         .from = from};
        SSL_set_fd(k->ssl, fd);
    }
}

/* One step of candidate i's handshake: 1 it proved to be the peer, 0 it
 * waits, -1 refused (and removed). */
static int step(candidates *c, unsigned i)
{
    candidate *k = &c->list[i];
    char why[200];
    ERR_clear_error();
    int rc = SSL_accept(k->ssl);
    if (rc == 1) {
        if (peer_matches(c->t->run->options, k->ssl, why, sizeof why))
            return 1;
        refuse(c, i, why);
        return -1;
    }
    int e = SSL_get_error(k->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        k->events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return 0;
    }
    unsigned long code = ERR_get_error();
    snprintf(why, sizeof why, "TLS handshake: %s",
             code
                 ? ERR_reason_error_string(code)
                 : (e == SSL_ERROR_ZERO_RETURN || rc == 0 ? "connection closed" : strerror(errno)));
    refuse(c, i, why);
    return -1;
}

/* One poll of the listener and the candidates; moves those that proved to
 * be the peer into t->links from *accepted on. */
static void listen_turn(candidates *c, int listener, unsigned *accepted)
{
    tls_tunnel *t = c->t;
    struct pollfd pfd[LISTEN_CANDIDATES + 1];
    unsigned polled = c->n;
    for (unsigned i = 0; i < polled; i++)
        pfd[i] = (struct pollfd){.fd = c->list[i].fd, .events = c->list[i].events};
    pfd[polled] = (struct pollfd){.fd = listener, .events = POLLIN};
    poll(pfd, polled + 1, 200);
    /* From the last: a refusal moves the last candidate into its place. */
    for (unsigned i = polled; i-- > 0 && *accepted < t->n_links;) {
        int rc = pfd[i].revents ? step(c, i) : 0;
        if (rc == 0 && tunnel_now_s() >= c->list[i].deadline) {
            refuse(c, i, "TLS handshake: not done in time");
        } else if (rc == 1) {
            t->links[*accepted].fd = c->list[i].fd;
            t->links[*accepted].ssl = c->list[i].ssl;
            ++*accepted;
            c->list[i] = c->list[--c->n];
        }
    }
    if (pfd[polled].revents & POLLIN)
        take_connections(c, listener);
}

/* The first t->n_links connections that prove to be the peer, into
 * t->links; blocks (with poll, so a signal ends it). */
static int accept_peers(tls_tunnel *t, int listener, char *error, size_t error_size)
{
    if (!t->ctx)
        t->ctx = make_context(t->run, true, error, error_size);
    if (!t->ctx)
        return -1;
    /* Every connection waiting is taken at once: accept4 must not block. */
    fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK);
    candidates c = {.t = t};
    unsigned accepted = 0;
    while (accepted < t->n_links && !tunnel_stop_requested)
        listen_turn(&c, listener, &accepted);
    for (; c.n > 0; c.n--) {
        SSL_free(c.list[c.n - 1].ssl);
        close(c.list[c.n - 1].fd);
    }
    if (accepted == t->n_links)
        return 0;
    snprintf(error, error_size, "no connection");
    return -1;
}

/* Every connection, each with its handshake done, one after another. */
static int open_connections(tls_tunnel *t, char *error, size_t error_size)
{
    const tunnel_options *o = t->run->options;
    int listener = -1, on = 1;
    if (o->listen) {
        struct sockaddr_in6 address;
        listener = tcp_socket(o, o->listen, &address, error, error_size);
        if (listener < 0)
            return -1;
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
            listen(listener, (int)t->n_links + LISTEN_BACKLOG_EXTRA) != 0) {
            snprintf(error, error_size, "listen %s: %s", o->listen, strerror(errno));
            close(listener);
            return -1;
        }
    }
    if (o->listen) {
        int rc = accept_peers(t, listener, error, error_size);
        close(listener);
        return rc;
    }
    int rc = 0;
    double deadline = tunnel_now_s() + o->setup_timeout_s;
    for (unsigned i = 0; i < t->n_links && rc == 0; i++) {
        tls_link *l = &t->links[i];
        l->fd = connect_one(o, error, error_size);
        if (l->fd < 0) {
            rc = -1;
            break;
        }
        set_keepalive(l->fd, o);
        rc = handshake(t, l, deadline, error, error_size);
    }
    return rc;
}

/* Writes `frame` on l: 1 written, 0 kept in l->pending to retry, -1 the
 * connection failed. */
static int write_frame(tls_link *l, const uint8_t *frame, size_t length)
{
    int n = SSL_write(l->ssl, frame, (int)length);
    if (n > 0)
        return 1;
    int e = SSL_get_error(l->ssl, n);
    if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
        return -1;
    if (frame != l->pending)
        memcpy(l->pending, frame, length);
    l->pending_length = length;
    return 0;
}

/* 1 written (or nothing waited), 0 wait (pending kept), -1 failed. */
static int flush_pending(tls_link *l)
{
    if (l->pending_length == 0)
        return 1;
    int rc = write_frame(l, l->pending, l->pending_length);
    if (rc == 1)
        l->pending_length = 0;
    return rc;
}

static void fail(tls_tunnel *t, const char *why)
{
    tunnel_run_end(t->run, "%s", why);
    t->failed = t->ended = true;
}

static bool all_pending(const tls_tunnel *t)
{
    for (unsigned i = 0; i < t->n_links; i++) {
        if (t->links[i].pending_length == 0)
            return false;
    }
    return true;
}

/* Packets from the TUN device onto their flows' connections. A packet for
 * a connection with a write waiting is dropped (lane_full), as on the SCTP
 * lanes; while every connection has one the TUN device is not read. */
static void forward_tun(tls_tunnel *t, double now)
{
    uint8_t frame[TUNNEL_FRAME_HEADER + TUNNEL_MAX_MTU + 64];
    for (int i = 0; i < READS_PER_TURN && !t->ended && !all_pending(t); i++) {
        long n = tunnel_run_read_tun(t->run, frame + TUNNEL_FRAME_HEADER,
                                     sizeof frame - TUNNEL_FRAME_HEADER);
        if (n <= 0 || tunnel_frame_header((size_t)n, frame) != 0)
            return;
        tls_link *l = &t->links[tunnel_flows_lane(&t->flows, frame + TUNNEL_FRAME_HEADER, (size_t)n,
                                                  t->n_links, now)];
        if (l->pending_length) {
            t->run->figures.lost[TUNNEL_LOSS_LANE_FULL]++;
            continue;
        }
        t->run->figures.packets_out++;
        t->run->figures.bytes_out += (uint64_t)n;
        if (t->n_links > 1)
            t->run->figures.lane_packets_out[l->lane]++;
        if (write_frame(l, frame, TUNNEL_FRAME_HEADER + (size_t)n) < 0)
            fail(t, "the TLS connection failed");
    }
}

static void receive(tls_tunnel *t, tls_link *l)
{
    uint8_t buffer[16384];
    for (int i = 0; i < READS_PER_TURN && !t->ended; i++) {
        int n = SSL_read(l->ssl, buffer, sizeof buffer);
        if (n <= 0) {
            int e = SSL_get_error(l->ssl, n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return;
            if (e == SSL_ERROR_ZERO_RETURN) {
                tunnel_run_end(t->run, "the other peer closed the tunnel");
                t->ended = true;
            } else {
                fail(t, "the TLS connection failed");
            }
            return;
        }
        size_t used = 0;
        while (used < (size_t)n) {
            const uint8_t *packet;
            size_t length;
            long took =
                tunnel_frame_feed(&l->reader, buffer + used, (size_t)n - used, &packet, &length);
            if (took < 0) {
                fail(t, "the peer sent a bad frame length");
                return;
            }
            used += (size_t)took;
            if (packet && t->n_links > 1)
                t->run->figures.lane_packets_in[l->lane]++;
            if (packet)
                tunnel_run_deliver(t->run, packet, length);
        }
    }
}

/* One wake-up: what each connection received, waiting writes, the TUN. */
static void turn(tls_tunnel *t)
{
    struct pollfd pfd[TUNNEL_MAX_LANES + 1];
    unsigned n = t->n_links;
    for (unsigned i = 0; i < n; i++)
        pfd[i] = (struct pollfd){.fd = t->links[i].fd,
                                 .events = POLLIN | (t->links[i].pending_length ? POLLOUT : 0)};
    pfd[n] = (struct pollfd){.fd = t->run->tun_fd, .events = all_pending(t) ? 0 : POLLIN};
    int ready = poll(pfd, n + 1, 200);
    for (unsigned i = 0; ready > 0 && i < n && !t->ended; i++) {
        if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
            receive(t, &t->links[i]);
    }
    for (unsigned i = 0; i < n && !t->ended; i++) {
        if (t->links[i].pending_length && flush_pending(&t->links[i]) < 0)
            fail(t, "the TLS connection failed");
    }
    if (!t->ended && ready > 0 && (pfd[n].revents & POLLIN))
        forward_tun(t, tunnel_now_s());
}

int tunnel_tls_run(tunnel_run *run)
{
    tls_tunnel *t = calloc(1, sizeof *t);
    if (!t) {
        tunnel_run_end(run, "out of memory");
        return -1;
    }
    t->run = run;
    t->n_links = run->options->lanes_set ? run->options->lanes : 1;
    if (t->n_links > 1)
        run->figures.lanes = t->n_links;
    tunnel_flows_init(&t->flows, tunnel_now_s());
    for (unsigned i = 0; i < t->n_links; i++) {
        t->links[i].fd = -1;
        t->links[i].lane = i;
        tunnel_frame_reader_init(&t->links[i].reader, run->options->mtu);
    }
    char error[300];
    if (open_connections(t, error, sizeof error) != 0) {
        if (!tunnel_stop_requested)
            fail(t, error);
        t->ended = true;
    } else {
        t->up = true;
        run->connected_s = tunnel_now_s();
        fprintf(stderr, "moat-tunnel: connected (tcp/TLS, %u connection%s, device %s, mtu %u)\n",
                t->n_links, t->n_links == 1 ? "" : "s", run->tun_name, run->options->mtu);
    }
    while (!tunnel_stop_requested && !t->ended) {
        turn(t);
        tunnel_run_progress(run, "up");
    }
    for (unsigned i = 0; i < t->n_links; i++) {
        tls_link *l = &t->links[i];
        if (l->ssl && t->up && !t->failed)
            SSL_shutdown(l->ssl);
        SSL_free(l->ssl);
        if (l->fd >= 0)
            close(l->fd);
    }
    SSL_CTX_free(t->ctx);
    bool failed = t->failed;
    free(t);
    return failed ? -1 : 0;
}
