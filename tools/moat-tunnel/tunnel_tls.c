/* The TCP baseline: IP packets framed with a 2-byte length
 * (tunnel_frame.h) over TLS 1.2 on TCP, spoken directly between the two
 * peers, with the cipher suite the gateway's DTLS negotiates
 * (ECDHE-ECDSA-AES128-GCM-SHA256) and the peer's certificate checked by its
 * sha-256 fingerprint (both ends present one). Each packet is one SSL_write
 * (one record). The --listen side accepts one connection; TCP keepalive
 * with a user timeout of --dead is the keepalive. */
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
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TLS_CIPHER     "ECDHE-ECDSA-AES128-GCM-SHA256"
#define READS_PER_TURN 64

typedef struct {
    tunnel_run *run;
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    bool up, ended, failed;
    tunnel_frame_reader reader;
    uint8_t pending[TUNNEL_FRAME_HEADER + TUNNEL_MAX_MTU + 64]; /* a write to retry */
    size_t pending_length;
} tls_link;

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

/* Blocks (with poll, so a signal ends it) until the TCP connection exists. */
static int connect_tcp(tls_link *l, char *error, size_t error_size)
{
    const tunnel_options *o = l->run->options;
    struct sockaddr_in6 address;
    const char *where = o->listen ? o->listen : o->connect;
    if (target_policy_resolve(where, true, &address, error, error_size) != 0)
        return -1;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int off = 0, on = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    if (set_congestion(fd, o, error, error_size) != 0) {
        close(fd);
        return -1;
    }
    if (o->listen) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 1) != 0) {
            snprintf(error, error_size, "listen %s: %s", where, strerror(errno));
            close(fd);
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        while (!tunnel_stop_requested && poll(&pfd, 1, 200) <= 0) {
        }
        l->fd = tunnel_stop_requested ? -1 : accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        close(fd);
    } else {
        double deadline = tunnel_now_s() + o->setup_timeout_s;
        while (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
            if ((errno != ECONNREFUSED && errno != EINTR) || tunnel_now_s() > deadline ||
                tunnel_stop_requested) {
                snprintf(error, error_size, "connect %s: %s", where, strerror(errno));
                close(fd);
                return -1;
            }
            usleep(100000); /* the listener is not there yet: try again */
        }
        l->fd = fd;
    }
    if (l->fd < 0) {
        snprintf(error, error_size, "no connection");
        return -1;
    }
    set_keepalive(l->fd, o);
    return 0;
}

static int handshake(tls_link *l, char *error, size_t error_size)
{
    const tunnel_options *o = l->run->options;
    l->ctx = make_context(l->run, o->listen != NULL, error, error_size);
    if (!l->ctx)
        return -1;
    l->ssl = SSL_new(l->ctx);
    SSL_set_fd(l->ssl, l->fd);
    int rc = o->listen ? SSL_accept(l->ssl) : SSL_connect(l->ssl);
    if (rc != 1) {
        snprintf(error, error_size, "TLS handshake: %s", ERR_reason_error_string(ERR_get_error()));
        return -1;
    }
    X509 *peer = SSL_get1_peer_certificate(l->ssl);
    char fingerprint[160] = "";
    bool match = peer &&
                 moat_fingerprint_of_x509(peer, "sha-256", fingerprint, sizeof fingerprint) == 0 &&
                 moat_fingerprint_equal(fingerprint, o->peer_fingerprint);
    X509_free(peer);
    if (!match) {
        snprintf(error, error_size, "the peer's certificate is not %s", o->peer_fingerprint);
        return -1;
    }
    fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* 1 written, 0 wait (pending kept), -1 the connection failed. */
static int flush_pending(tls_link *l)
{
    if (l->pending_length == 0)
        return 1;
    int n = SSL_write(l->ssl, l->pending, (int)l->pending_length);
    if (n > 0) {
        l->pending_length = 0;
        return 1;
    }
    int e = SSL_get_error(l->ssl, n);
    return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? 0 : -1;
}

static void forward_tun(tls_link *l)
{
    for (int i = 0; i < READS_PER_TURN && l->pending_length == 0; i++) {
        long n = tunnel_run_read_tun(l->run, l->pending + TUNNEL_FRAME_HEADER,
                                     sizeof l->pending - TUNNEL_FRAME_HEADER);
        if (n <= 0 || tunnel_frame_header((size_t)n, l->pending) != 0)
            return;
        l->pending_length = TUNNEL_FRAME_HEADER + (size_t)n;
        l->run->figures.packets_out++;
        l->run->figures.bytes_out += (uint64_t)n;
        if (flush_pending(l) < 0) {
            tunnel_run_end(l->run, "the TLS connection failed");
            l->failed = l->ended = true;
        }
    }
}

static void receive(tls_link *l)
{
    uint8_t buffer[16384];
    for (int i = 0; i < READS_PER_TURN && !l->ended; i++) {
        int n = SSL_read(l->ssl, buffer, sizeof buffer);
        if (n <= 0) {
            int e = SSL_get_error(l->ssl, n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return;
            if (e == SSL_ERROR_ZERO_RETURN) {
                tunnel_run_end(l->run, "the other peer closed the tunnel");
            } else {
                tunnel_run_end(l->run, "the TLS connection failed");
                l->failed = true;
            }
            l->ended = true;
            return;
        }
        size_t used = 0;
        while (used < (size_t)n) {
            const uint8_t *packet;
            size_t length;
            long took =
                tunnel_frame_feed(&l->reader, buffer + used, (size_t)n - used, &packet, &length);
            if (took < 0) {
                tunnel_run_end(l->run, "the peer sent a bad frame length");
                l->failed = l->ended = true;
                return;
            }
            used += (size_t)took;
            if (packet)
                tunnel_run_deliver(l->run, packet, length);
        }
    }
}

int tunnel_tls_run(tunnel_run *run)
{
    tls_link l;
    memset(&l, 0, sizeof l);
    l.run = run;
    l.fd = -1;
    tunnel_frame_reader_init(&l.reader, run->options->mtu);
    char error[300];
    if (connect_tcp(&l, error, sizeof error) != 0 || handshake(&l, error, sizeof error) != 0) {
        if (!tunnel_stop_requested) {
            tunnel_run_end(run, "%s", error);
            l.failed = true;
        }
        l.ended = true;
    } else {
        l.up = true;
        run->connected_s = tunnel_now_s();
        fprintf(stderr, "moat-tunnel: connected (tcp/TLS, device %s, mtu %u)\n", run->tun_name,
                run->options->mtu);
    }
    while (!tunnel_stop_requested && !l.ended) {
        struct pollfd pfd[2] = {
            {.fd = l.fd, .events = POLLIN | (l.pending_length ? POLLOUT : 0)},
            {.fd = run->tun_fd, .events = l.pending_length ? 0 : POLLIN},
        };
        int ready = poll(pfd, 2, 200);
        if (ready > 0 && (pfd[0].revents & (POLLIN | POLLERR | POLLHUP)))
            receive(&l);
        if (!l.ended && l.pending_length && flush_pending(&l) < 0) {
            tunnel_run_end(run, "the TLS connection failed");
            l.failed = l.ended = true;
        }
        if (!l.ended && ready > 0 && (pfd[1].revents & POLLIN))
            forward_tun(&l);
        tunnel_run_progress(run, "up");
    }
    if (l.ssl && l.up && !l.failed)
        SSL_shutdown(l.ssl);
    SSL_free(l.ssl);
    SSL_CTX_free(l.ctx);
    if (l.fd >= 0)
        close(l.fd);
    return l.failed ? -1 : 0;
}
