/* One DTLS 1.2 association (RFC 6347) without a socket: drives the OpenSSL
 * handshake and its retransmit timer, checks the peer's certificate against
 * the SDP fingerprint, exports DTLS-SRTP keys and carries SCTP as app data;
 * once retired (media only) it drops OpenSSL and keeps dtls_retired.c's
 * state for the closing alerts. */
#include "dtls_transport_private.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#include "dtls_retired.h"
#include "dtls_srtp_export.h"
#include "openssl_error.h"

const char *moat_dtls_state_name(moat_dtls_state state)
{
    switch (state) {
    case MOAT_DTLS_NEW:
        return "new";
    case MOAT_DTLS_CONNECTING:
        return "connecting";
    case MOAT_DTLS_CONNECTED:
        return "connected";
    case MOAT_DTLS_CLOSED:
        return "closed";
    case MOAT_DTLS_FAILED:
        return "failed";
    }
    return "unknown";
}

/* OpenSSL calls this with 0 when a new flight starts its timer and with the
 * previous timeout just before it retransmits, which makes it the one place
 * that sees every retransmission, including those OpenSSL does by itself
 * while reading. */
static unsigned int retransmit_timer(SSL *ssl, unsigned int previous_us)
{
    moat_dtls_transport *t = SSL_get_app_data(ssl);
    if (previous_us == 0) {
        if (t != NULL) {
            t->flight_retransmits = 0;
            t->timer_stopped = false;
        }
        return MOAT_DTLS_INITIAL_RETRANSMIT_MS * 1000u;
    }
    if (t != NULL) {
        t->flight_retransmits++;
        t->stats.retransmits++;
    }
    unsigned int next = previous_us * 2;
    return next > MOAT_DTLS_MAX_RETRANSMIT_MS * 1000u ? MOAT_DTLS_MAX_RETRANSMIT_MS * 1000u : next;
}

/* Ends the transport once; the closed callback runs last so that the state
 * it observes is final. */
static void finish(moat_dtls_transport *t, moat_dtls_state state, const char *reason)
{
    if (t->state == MOAT_DTLS_CLOSED || t->state == MOAT_DTLS_FAILED)
        return;
    t->state = state;
    snprintf(t->reason, sizeof t->reason, "%s", reason);
    if (t->callbacks.closed)
        t->callbacks.closed(t->user, state, t->reason);
}

/* OpenSSL 3.0's DTLS write path does not take back a write buffer that
 * SSL_free_buffers released (it would write through NULL): every call that
 * may read or write a record takes both back first. */
static bool restore_buffers(moat_dtls_transport *t)
{
    if (!t->buffers_freed)
        return true;
    if (SSL_alloc_buffers(t->ssl) != 1)
        return false;
    t->buffers_freed = false;
    return true;
}

/* For failures after a complete handshake that OpenSSL did not see (the
 * fingerprint, the SRTP profile): tell the peer instead of leaving it to
 * time out. */
static void send_close_notify(moat_dtls_transport *t)
{
    if (t->retired != NULL) {
        if (!t->close_notify_sent && t->retired->close_notify_length > 0) {
            t->close_notify_sent = true;
            t->callbacks.send(t->user, t->retired->close_notify, t->retired->close_notify_length);
            t->link.datagrams_sent++;
            t->link.bytes_sent += t->retired->close_notify_length;
        }
        return;
    }
    if (!SSL_is_init_finished(t->ssl) || !restore_buffers(t))
        return;
    ERR_clear_error();
    SSL_shutdown(t->ssl);
    ERR_clear_error();
}

static void fail_from_openssl(moat_dtls_transport *t, const char *what, int ssl_error)
{
    char reason[160];
    const char *fallback = ssl_error == SSL_ERROR_SYSCALL ? "datagram path error" : "failed";
    moat_openssl_error_take(reason, sizeof reason, fallback);
    char message[REASON_MAX_LENGTH];
    snprintf(message, sizeof message, "%s: %s", what, reason);
    finish(t, MOAT_DTLS_FAILED, message);
}

static void send_to_wire(void *user, const uint8_t *datagram, size_t length)
{
    moat_dtls_transport *t = user;
    if (!t->capturing) {
        t->callbacks.send(t->user, datagram, length);
        return;
    }
    /* Retiring: OpenSSL's close_notify is kept for later, not sent. */
    if (t->retired->close_notify_length == 0 && length <= sizeof t->retired->close_notify) {
        memcpy(t->retired->close_notify, datagram, length);
        t->retired->close_notify_length = (uint8_t)length;
    }
}

moat_dtls_transport *moat_dtls_transport_new(moat_dtls_context *ctx, moat_dtls_role role,
                                             const char *remote_fingerprint_alg,
                                             const char *remote_fingerprint,
                                             const moat_dtls_callbacks *callbacks, void *user,
                                             char *error, size_t error_size)
{
    if (ctx == NULL || callbacks == NULL || callbacks->send == NULL) {
        snprintf(error, error_size, "a DTLS transport needs a context and a send callback");
        return NULL;
    }
    if (role != MOAT_DTLS_ROLE_CLIENT && role != MOAT_DTLS_ROLE_SERVER) {
        snprintf(error, error_size, "unknown DTLS role %d", (int)role);
        return NULL;
    }
    if (!moat_fingerprint_algorithm_supported(remote_fingerprint_alg)) {
        snprintf(error, error_size, "unsupported fingerprint algorithm \"%.32s\"",
                 remote_fingerprint_alg ? remote_fingerprint_alg : "");
        return NULL;
    }
    if (remote_fingerprint == NULL || remote_fingerprint[0] == '\0' ||
        strlen(remote_fingerprint) >= MOAT_FINGERPRINT_MAX_LENGTH) {
        snprintf(error, error_size, "missing or overlong remote fingerprint");
        return NULL;
    }

    moat_dtls_transport *t = g_new0(moat_dtls_transport, 1);
    t->role = role;
    t->state = MOAT_DTLS_NEW;
    t->callbacks = *callbacks;
    t->user = user;
    snprintf(t->remote_alg, sizeof t->remote_alg, "%s", remote_fingerprint_alg);
    snprintf(t->remote_fingerprint, sizeof t->remote_fingerprint, "%s", remote_fingerprint);
    t->link.send = send_to_wire;
    t->link.user = t;

    ERR_clear_error();
    t->ssl = SSL_new(moat_dtls_context_ssl_ctx(ctx));
    BIO *bio =
        t->ssl ? moat_dtls_datagram_bio_new(moat_dtls_context_bio_method(ctx), &t->link) : NULL;
    if (bio == NULL) {
        char reason[160];
        moat_openssl_error_take(reason, sizeof reason, "out of memory");
        snprintf(error, error_size, "cannot create a DTLS session: %s", reason);
        moat_dtls_transport_free(t);
        return NULL;
    }
    /* One BIO both ways; the SSL now owns it. */
    SSL_set_bio(t->ssl, bio, bio);
    SSL_set_app_data(t->ssl, t);
    DTLS_set_timer_cb(t->ssl, retransmit_timer);
    if (DTLS_set_link_mtu(t->ssl, MOAT_DTLS_MTU) != 1) {
        snprintf(error, error_size, "cannot set the DTLS MTU to %d", MOAT_DTLS_MTU);
        moat_dtls_transport_free(t);
        return NULL;
    }
    return t;
}

static void read_application_data(moat_dtls_transport *t)
{
    uint8_t buffer[MOAT_DTLS_MAX_APPLICATION_DATA];
    while (t->state == MOAT_DTLS_CONNECTED) {
        /* The callback may have left errors of its own behind. */
        moat_openssl_error_reset();
        int n = SSL_read(t->ssl, buffer, sizeof buffer);
        if (n > 0) {
            if (t->callbacks.application_data)
                t->callbacks.application_data(t->user, buffer, (size_t)n);
            /* The datagram is consumed and OpenSSL holds no record of it
             * (nor buffered application data): another SSL_read would only
             * find the BIO empty. */
            if (t->link.incoming == NULL && !SSL_has_pending(t->ssl))
                break;
            continue;
        }
        int e = SSL_get_error(t->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            break; /* the BIO ran dry: no error was queued */
        if (e == SSL_ERROR_ZERO_RETURN) {
            /* Answer close_notify with ours (RFC 5246 §7.2.1). */
            send_close_notify(t);
            finish(t, MOAT_DTLS_CLOSED, "close_notify received");
            break;
        }
        fail_from_openssl(t, "connection failed", e);
    }
}

static void complete_handshake(moat_dtls_transport *t)
{
    X509 *peer = SSL_get0_peer_certificate(t->ssl);
    char fingerprint[MOAT_FINGERPRINT_MAX_LENGTH];
    if (peer == NULL || moat_fingerprint_of_x509(peer, t->remote_alg, fingerprint,
                                                 sizeof fingerprint) != MOAT_FINGERPRINT_OK) {
        send_close_notify(t);
        finish(t, MOAT_DTLS_FAILED, "peer certificate missing or unreadable");
        return;
    }
    if (!moat_fingerprint_equal(fingerprint, t->remote_fingerprint)) {
        send_close_notify(t);
        finish(t, MOAT_DTLS_FAILED, "fingerprint mismatch");
        return;
    }

    moat_srtp_keying keys;
    char reason[REASON_MAX_LENGTH];
    if (moat_dtls_srtp_export(t->ssl, t->role == MOAT_DTLS_ROLE_CLIENT, &keys, reason,
                              sizeof reason) != 0) {
        send_close_notify(t);
        finish(t, MOAT_DTLS_FAILED, reason);
        return;
    }
    t->profile = keys.profile;
    t->state = MOAT_DTLS_CONNECTED;
    if (t->callbacks.connected)
        t->callbacks.connected(t->user, &keys);
    OPENSSL_cleanse(&keys, sizeof keys);
}

void moat_dtls_transport_advance(moat_dtls_transport *t)
{
    if (t->state == MOAT_DTLS_CONNECTING) {
        ERR_clear_error();
        int r = SSL_do_handshake(t->ssl);
        if (r != 1) {
            int e = SSL_get_error(t->ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                ERR_clear_error();
            else
                fail_from_openssl(t, "handshake failed", e);
            return;
        }
        complete_handshake(t);
    }
    /* The datagram that completed the handshake may carry data too, and a
     * server must answer a retransmitted client Finished. */
    read_application_data(t);
}

int moat_dtls_transport_start(moat_dtls_transport *t)
{
    if (t == NULL)
        return MOAT_DTLS_ERR_INVALID;
    if (t->state != MOAT_DTLS_NEW)
        return MOAT_DTLS_ERR_STATE;
    t->handshake_deadline_us =
        g_get_monotonic_time() + (gint64)MOAT_DTLS_HANDSHAKE_TIMEOUT_MS * 1000;
    t->state = MOAT_DTLS_CONNECTING;
    if (t->role == MOAT_DTLS_ROLE_SERVER) {
        SSL_set_accept_state(t->ssl);
        return MOAT_DTLS_OK;
    }
    SSL_set_connect_state(t->ssl);
    moat_dtls_transport_advance(t);
    return t->state == MOAT_DTLS_FAILED ? MOAT_DTLS_ERR_FAILED : MOAT_DTLS_OK;
}

/* Hands one datagram (or a run of its records) to OpenSSL. */
static int read_records(moat_dtls_transport *t, const uint8_t *records, size_t length)
{
    t->link.incoming = records;
    t->link.incoming_length = length;
    moat_dtls_transport_advance(t);
    /* Never leave a pointer to the caller's buffer behind. */
    t->link.incoming = NULL;
    t->link.incoming_length = 0;
    return t->state == MOAT_DTLS_FAILED ? MOAT_DTLS_ERR_FAILED : MOAT_DTLS_OK;
}

/* While connecting, the records ahead of a datagram's first encrypted one
 * are read first, on their own: when they end with the peer's
 * ChangeCipherSpec (as a flight sends it, before its Finished), OpenSSL
 * reads the encrypted records after it at once and holds none of them. */
static int receive_connecting(moat_dtls_transport *t, const uint8_t *datagram, size_t length)
{
    size_t head = moat_dtls_record_first_protected(datagram, length);
    if (head > 0 && head < length) {
        int r = read_records(t, datagram, head);
        if (t->state == MOAT_DTLS_CONNECTED)
            return read_records(t, datagram + head, length - head);
        if (t->state != MOAT_DTLS_CONNECTING)
            return r;
        datagram += head;
        length -= head;
    }
    if (!moat_dtls_transport_early_allowed(t, datagram, length)) {
        t->stats.datagrams_rejected++;
        t->stats.rejected[MOAT_DTLS_RECORD_EARLY_PROTECTED]++;
        return MOAT_DTLS_ERR_MALFORMED;
    }
    return read_records(t, datagram, length);
}

/* A retired transport only listens for the peer's closing alert. */
static int receive_retired(moat_dtls_transport *t, const uint8_t *datagram, size_t length)
{
    uint8_t description = 0;
    switch (moat_dtls_retired_receive(t->retired, datagram, length, t->stats.retired_dropped,
                                      &description)) {
    case MOAT_DTLS_RETIRED_CLOSE_NOTIFY:
        /* Answer close_notify with ours (RFC 5246 §7.2.1). */
        send_close_notify(t);
        finish(t, MOAT_DTLS_CLOSED, "close_notify received");
        return MOAT_DTLS_OK;
    case MOAT_DTLS_RETIRED_FATAL_ALERT: {
        char reason[64];
        snprintf(reason, sizeof reason, "connection failed: fatal alert %u received",
                 (unsigned)description);
        finish(t, MOAT_DTLS_FAILED, reason);
        return MOAT_DTLS_ERR_FAILED;
    }
    case MOAT_DTLS_RETIRED_DROPPED:
    default:
        return MOAT_DTLS_ERR_DROPPED;
    }
}

int moat_dtls_transport_receive(moat_dtls_transport *t, const uint8_t *datagram, size_t length)
{
    if (t == NULL)
        return MOAT_DTLS_ERR_INVALID;
    t->stats.datagrams_received++;
    size_t records = 0;
    moat_dtls_record_result r = moat_dtls_record_scan(
        datagram, length, moat_dtls_transport_shortest_protected(t), &records);
    if (r != MOAT_DTLS_RECORD_OK) {
        t->stats.datagrams_rejected++;
        t->stats.rejected[r]++;
        return MOAT_DTLS_ERR_MALFORMED;
    }
    t->stats.records_received += records;
    if (t->state != MOAT_DTLS_CONNECTING && t->state != MOAT_DTLS_CONNECTED)
        return MOAT_DTLS_ERR_STATE;
    if (t->ssl == NULL)
        return receive_retired(t, datagram, length);
    /* Before a valid cookie no cipher is chosen: the scan above dropped
     * every encrypted record. */
    if (t->listener != NULL)
        return moat_dtls_listener_receive(t, datagram, length);

    if (!restore_buffers(t)) {
        finish(t, MOAT_DTLS_FAILED, "out of memory");
        return MOAT_DTLS_ERR_FAILED;
    }
    if (t->state == MOAT_DTLS_CONNECTING)
        return receive_connecting(t, datagram, length);
    return read_records(t, datagram, length);
}

int64_t moat_dtls_transport_timeout_ms(moat_dtls_transport *t)
{
    if (t == NULL || t->ssl == NULL || t->listener != NULL ||
        (t->state != MOAT_DTLS_CONNECTING && t->state != MOAT_DTLS_CONNECTED))
        return -1;
    if (t->state == MOAT_DTLS_CONNECTED && t->timer_stopped)
        return -1;
    int64_t ms = -1;
    struct timeval left;
    if (DTLSv1_get_timeout(t->ssl, &left) == 1)
        ms = (int64_t)left.tv_sec * 1000 + (left.tv_usec + 999) / 1000;
    else
        t->timer_stopped = true;
    if (t->state == MOAT_DTLS_CONNECTING) {
        gint64 until = t->handshake_deadline_us - g_get_monotonic_time();
        int64_t deadline_ms = until > 0 ? (until + 999) / 1000 : 0;
        if (ms < 0 || deadline_ms < ms)
            ms = deadline_ms;
    }
    return ms;
}

void moat_dtls_transport_handle_timeout(moat_dtls_transport *t)
{
    if (t == NULL || t->ssl == NULL || t->listener != NULL ||
        (t->state != MOAT_DTLS_CONNECTING && t->state != MOAT_DTLS_CONNECTED))
        return;
    if (t->state == MOAT_DTLS_CONNECTING && g_get_monotonic_time() >= t->handshake_deadline_us) {
        finish(t, MOAT_DTLS_FAILED, "handshake timed out");
        return;
    }
    struct timeval left;
    if (DTLSv1_get_timeout(t->ssl, &left) != 1 || left.tv_sec > 0 || left.tv_usec > 0)
        return;
    if (t->flight_retransmits >= MOAT_DTLS_MAX_RETRANSMITS) {
        finish(t, MOAT_DTLS_FAILED, "too many retransmits");
        return;
    }
    if (!restore_buffers(t)) {
        finish(t, MOAT_DTLS_FAILED, "out of memory");
        return;
    }
    ERR_clear_error();
    if (DTLSv1_handle_timeout(t->ssl) < 0)
        fail_from_openssl(t, "retransmission failed", SSL_ERROR_SSL);
    else
        ERR_clear_error();
}

int moat_dtls_transport_send(moat_dtls_transport *t, const uint8_t *data, size_t length)
{
    if (t == NULL || data == NULL || length == 0)
        return MOAT_DTLS_ERR_INVALID;
    if (length > MOAT_DTLS_MAX_APPLICATION_DATA)
        return MOAT_DTLS_ERR_TOO_LONG;
    if (t->state != MOAT_DTLS_CONNECTED || t->ssl == NULL)
        return MOAT_DTLS_ERR_STATE;
    if (!restore_buffers(t)) {
        finish(t, MOAT_DTLS_FAILED, "out of memory");
        return MOAT_DTLS_ERR_FAILED;
    }
    moat_openssl_error_reset();
    int n = SSL_write(t->ssl, data, (int)length);
    if (n == (int)length)
        return MOAT_DTLS_OK; /* a write that succeeds queues no error */
    fail_from_openssl(t, "send failed", SSL_get_error(t->ssl, n));
    return MOAT_DTLS_ERR_FAILED;
}

void moat_dtls_transport_shutdown(moat_dtls_transport *t)
{
    if (t == NULL || t->state == MOAT_DTLS_CLOSED || t->state == MOAT_DTLS_FAILED)
        return;
    send_close_notify(t);
    t->state = MOAT_DTLS_CLOSED;
    snprintf(t->reason, sizeof t->reason, "shut down locally");
}

bool moat_dtls_transport_trim(moat_dtls_transport *t)
{
    if (t == NULL || t->state != MOAT_DTLS_CONNECTED || t->ssl == NULL)
        return false;
    uint64_t seen = t->stats.datagrams_received + t->link.datagrams_sent;
    bool idle = seen == t->trim_seen;
    t->trim_seen = seen;
    /* Refuses (0) while a record is partly read or written. */
    if (!idle || t->buffers_freed || SSL_free_buffers(t->ssl) != 1)
        return false;
    t->buffers_freed = true;
    return true;
}

/* Has OpenSSL write our close_notify into t->retired instead of the wire;
 * the stats do not count it until it is sent. */
static bool capture_close_notify(moat_dtls_transport *t)
{
    if (!restore_buffers(t))
        return false;
    uint64_t datagrams = t->link.datagrams_sent, bytes = t->link.bytes_sent;
    t->capturing = true;
    ERR_clear_error();
    SSL_shutdown(t->ssl);
    ERR_clear_error();
    t->capturing = false;
    t->link.datagrams_sent = datagrams;
    t->link.bytes_sent = bytes;
    return t->retired->close_notify_length > 0;
}

/* Our own key must read our own close_notify, or the derivation is wrong
 * and the peer's close_notify would go unnoticed. */
static bool own_close_notify_authenticates(const moat_dtls_retired *own,
                                           const moat_dtls_retired *retired)
{
    uint64_t dropped[MOAT_DTLS_RETIRED_DROP_COUNT] = {0};
    uint8_t description = 0xff;
    return moat_dtls_retired_receive(own, retired->close_notify, retired->close_notify_length,
                                     dropped, &description) == MOAT_DTLS_RETIRED_CLOSE_NOTIFY;
}

int moat_dtls_transport_retire(moat_dtls_transport *t, char *error, size_t error_size)
{
    struct timeval left;
    if (t == NULL || t->state != MOAT_DTLS_CONNECTED || t->ssl == NULL || t->retired != NULL ||
        SSL_has_pending(t->ssl) || DTLSv1_get_timeout(t->ssl, &left) == 1) {
        snprintf(error, error_size, "only a connected, idle transport retires");
        return MOAT_DTLS_ERR_STATE;
    }
    moat_dtls_retired own;
    moat_dtls_retired *retired = g_new0(moat_dtls_retired, 1);
    if (moat_dtls_retired_derive(t->ssl, t->role == MOAT_DTLS_ROLE_CLIENT, retired, &own, error,
                                 error_size) != 0) {
        g_free(retired);
        return MOAT_DTLS_ERR_STATE;
    }
    t->retired = retired;
    bool ok = capture_close_notify(t) && own_close_notify_authenticates(&own, retired);
    OPENSSL_cleanse(&own, sizeof own);
    if (!ok) {
        /* OpenSSL has written its close_notify (if any, kept in
         * t->retired for shutdown): the SSL stays for reading. */
        snprintf(error, error_size, "our close_notify did not authenticate with derived keys");
        return MOAT_DTLS_ERR_FAILED;
    }
    SSL_free(t->ssl);
    t->ssl = NULL;
    t->buffers_freed = false;
    return MOAT_DTLS_OK;
}

bool moat_dtls_transport_retired(const moat_dtls_transport *t)
{
    return t->ssl == NULL && t->retired != NULL;
}

moat_dtls_state moat_dtls_transport_state(const moat_dtls_transport *t)
{
    return t->state;
}

moat_srtp_profile moat_dtls_transport_srtp_profile(const moat_dtls_transport *t)
{
    return t->profile;
}

const char *moat_dtls_transport_reason(const moat_dtls_transport *t)
{
    return t->reason;
}

void moat_dtls_transport_stats_get(const moat_dtls_transport *t, moat_dtls_transport_stats *out)
{
    *out = t->stats;
    out->retired = moat_dtls_transport_retired(t);
    out->datagrams_sent = t->link.datagrams_sent;
    out->bytes_sent = t->link.bytes_sent;
}

void moat_dtls_transport_free(moat_dtls_transport *t)
{
    if (t == NULL)
        return;
    /* Frees the BIO too; SSL_free sends nothing. */
    SSL_free(t->ssl);
    moat_dtls_listener_free(t->listener);
    if (t->retired != NULL)
        OPENSSL_cleanse(t->retired, sizeof *t->retired);
    g_free(t->retired);
    g_free(t);
}
