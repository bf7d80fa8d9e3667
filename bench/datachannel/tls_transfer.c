/* The data-channel benchmark's baseline side: TLS 1.2 over TCP with the
 * gateway's DTLS cipher suite, one SSL_write per message, on blocking
 * sockets. */
#include "tls_transfer.h"

#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_BUFFER_SIZE (64 * 1024)

static SSL_CTX *make_context(const tls_side *side, char *error, size_t error_size)
{
    SSL_CTX *ctx = SSL_CTX_new(side->is_sender ? TLS_client_method() : TLS_server_method());
    if (ctx == NULL) {
        snprintf(error, error_size, "SSL_CTX_new failed");
        return NULL;
    }
    bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 &&
              SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION) == 1 &&
              SSL_CTX_set_cipher_list(ctx, TLS_TRANSFER_CIPHER) == 1 &&
              SSL_CTX_set1_groups_list(ctx, "X25519:P-256") == 1;
    if (ok && !side->is_sender)
        ok = SSL_CTX_use_certificate(ctx, moat_certificate_x509(side->certificate)) == 1 &&
             SSL_CTX_use_PrivateKey(ctx, moat_certificate_private_key(side->certificate)) == 1;
    if (!ok) {
        snprintf(error, error_size, "TLS setup failed: %s",
                 ERR_error_string(ERR_get_error(), NULL));
        SSL_CTX_free(ctx);
        return NULL;
    }
    /* Certificates are not verified: only the cost of the channel counts. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    return ctx;
}

/* A connected TCP socket: the sender connects, the receiver accepts. */
static int connect_socket(const tls_side *side)
{
    int fd = side->fd;
    if (side->is_sender) {
        if (connect(fd, (const struct sockaddr *)&side->peer, sizeof side->peer) != 0)
            return -1;
    } else {
        fd = accept(side->fd, NULL, NULL);
        if (fd < 0)
            return -1;
    }
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    /* Bounds every blocking read and write by the side's own deadline. */
    struct timeval limit = {.tv_sec = (time_t)side->params.timeout_s + 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    return fd;
}

static void send_until(SSL *ssl, const tls_side *side, double deadline)
{
    uint8_t *message = calloc(1, side->params.message_size);
    if (message == NULL)
        return;
    while (transfer_now_s() < deadline) {
        if (SSL_write(ssl, message, (int)side->params.message_size) <= 0)
            break;
    }
    free(message);
}

static void receive_until(SSL *ssl, const tls_side *side, double deadline, transfer_result *result)
{
    uint8_t *buffer = malloc(READ_BUFFER_SIZE);
    transfer_window window;
    transfer_window_init(&window, &side->params);
    bool done = false;
    while (buffer != NULL && !done && transfer_now_s() < deadline) {
        int n = SSL_read(ssl, buffer, READ_BUFFER_SIZE);
        if (n <= 0)
            break;
        done = transfer_window_add(&window, transfer_now_s(), (size_t)n);
    }
    free(buffer);
    if (!done) {
        snprintf(result->detail, sizeof result->detail, "TLS receive ended early");
        return;
    }
    transfer_window_result(&window, result);
    snprintf(result->detail, sizeof result->detail, "%s %s", SSL_get_version(ssl),
             SSL_get_cipher_name(ssl));
}

void tls_transfer_side(void *arg, transfer_result *result)
{
    const tls_side *side = arg;
    double deadline = transfer_now_s() + side->params.timeout_s;
    SSL_CTX *ctx = make_context(side, result->detail, sizeof result->detail);
    if (ctx == NULL)
        return;
    int fd = connect_socket(side);
    SSL *ssl = fd >= 0 ? SSL_new(ctx) : NULL;
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
        snprintf(result->detail, sizeof result->detail, "TCP connection failed");
    } else if ((side->is_sender ? SSL_connect(ssl) : SSL_accept(ssl)) != 1) {
        snprintf(result->detail, sizeof result->detail, "TLS handshake failed: %s",
                 ERR_error_string(ERR_get_error(), NULL));
    } else if (side->is_sender) {
        send_until(ssl, side, deadline);
    } else {
        receive_until(ssl, side, deadline, result);
    }
    SSL_free(ssl);
    if (fd >= 0 && fd != side->fd)
        close(fd);
    SSL_CTX_free(ctx);
}
