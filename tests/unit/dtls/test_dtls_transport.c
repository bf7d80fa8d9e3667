/* Handshakes between two real OpenSSL-backed transports: keys, profiles,
 * fingerprints, loss, application data, shutdown and hostile datagrams. */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "dtls/dtls_transport.h"
#include "dtls_test_pair.h"

static void assert_keys_mirror(const moat_srtp_keying *client, const moat_srtp_keying *server)
{
    g_assert_cmpint(client->profile, ==, server->profile);
    g_assert_cmpuint(client->key_length, ==, server->key_length);
    g_assert_cmpuint(client->salt_length, ==, server->salt_length);
    g_assert_cmpmem(client->local_key, client->key_length, server->remote_key, server->key_length);
    g_assert_cmpmem(client->remote_key, client->key_length, server->local_key, server->key_length);
    g_assert_cmpmem(client->local_salt, client->salt_length, server->remote_salt,
                    server->salt_length);
    g_assert_cmpmem(client->remote_salt, client->salt_length, server->local_salt,
                    server->salt_length);
    /* The two directions must not share a key. */
    g_assert_true(memcmp(client->local_key, client->remote_key, client->key_length) != 0);
}

static void test_handshake(void)
{
    dtls_test_pair *p = dtls_test_pair_connect(NULL);
    dtls_test_pair_assert_connected(p);
    assert_keys_mirror(&p->client.keys, &p->server.keys);
    /* Both sides offer the default list; the server prefers AES-GCM. */
    g_assert_cmpint(p->client.keys.profile, ==, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    g_assert_cmpuint(p->client.keys.key_length, ==, 16);
    g_assert_cmpuint(p->client.keys.salt_length, ==, 12);
    g_assert_cmpint(moat_dtls_transport_srtp_profile(p->client.transport), ==,
                    MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    g_assert_cmpint(moat_dtls_transport_srtp_profile(p->server.transport), ==,
                    MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    /* Flights are split into datagrams that fit the MTU. */
    g_assert_cmpuint(p->client.largest_handshake_datagram, >, 0);
    g_assert_cmpuint(p->client.largest_handshake_datagram, <=, MOAT_DTLS_MTU);
    g_assert_cmpuint(p->server.largest_handshake_datagram, <=, MOAT_DTLS_MTU);
    g_assert_cmpuint(p->dropped, ==, 0);
    g_assert_cmpstr(moat_dtls_transport_reason(p->client.transport), ==, "");
    /* No timer runs once connected: the handshake is over. */
    g_assert_cmpint(moat_dtls_transport_timeout_ms(p->client.transport), ==, -1);
    g_assert_cmpint(moat_dtls_transport_timeout_ms(p->server.transport), ==, -1);

    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(p->server.transport, &stats);
    g_assert_cmpuint(stats.datagrams_sent, ==, p->server.datagrams_sent);
    g_assert_cmpuint(stats.datagrams_received, >, 0);
    g_assert_cmpuint(stats.records_received, >=, stats.datagrams_received);
    g_assert_cmpuint(stats.datagrams_rejected, ==, 0);
    g_assert_cmpuint(stats.retransmits, ==, 0);
    dtls_test_pair_free(p);
}

static void check_profile(const char *client_offers, const char *server_offers,
                          moat_srtp_profile expected, size_t salt_length)
{
    dtls_test_pair_options o = {.client_profiles = client_offers, .server_profiles = server_offers};
    dtls_test_pair *p = dtls_test_pair_connect(&o);
    dtls_test_pair_assert_connected(p);
    assert_keys_mirror(&p->client.keys, &p->server.keys);
    g_assert_cmpint(p->client.keys.profile, ==, expected);
    g_assert_cmpuint(p->client.keys.key_length, ==, 16);
    g_assert_cmpuint(p->client.keys.salt_length, ==, salt_length);
    g_assert_cmpint(moat_dtls_transport_srtp_profile(p->server.transport), ==, expected);
    dtls_test_pair_free(p);
}

static void test_profiles(void)
{
    check_profile("SRTP_AES128_CM_SHA1_80", NULL, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 14);
    check_profile("SRTP_AES128_CM_SHA1_32", NULL, MOAT_SRTP_PROFILE_AES128_CM_SHA1_32, 14);
    check_profile("SRTP_AEAD_AES_128_GCM", NULL, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, 12);
    /* The server's order wins over the client's. */
    check_profile("SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM", NULL,
                  MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, 12);
    check_profile(NULL, "SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM",
                  MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 14);
}

static void test_no_common_profile(void)
{
    dtls_test_pair_options o = {.client_profiles = "SRTP_AES128_CM_SHA1_80",
                                .server_profiles = "SRTP_AEAD_AES_128_GCM"};
    dtls_test_pair *p = dtls_test_pair_connect(&o);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_FAILED);
    g_assert_cmpuint(p->server.connected_calls, ==, 0);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    g_assert_nonnull(strstr(p->server.closed_reason, "DTLS-SRTP"));
    g_assert_cmpuint(p->client.connected_calls, ==, 0);
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_FAILED);
    dtls_test_pair_free(p);
}

static const char *wrong_fingerprint =
    "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:"
    "EE:FF";

static void test_fingerprint_mismatch_at_server(void)
{
    dtls_test_pair_options o = {.server_expects = wrong_fingerprint};
    dtls_test_pair *p = dtls_test_pair_connect(&o);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_FAILED);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    g_assert_cmpint(p->server.closed_state, ==, MOAT_DTLS_FAILED);
    g_assert_cmpstr(p->server.closed_reason, ==, "fingerprint mismatch");
    g_assert_cmpstr(moat_dtls_transport_reason(p->server.transport), ==, "fingerprint mismatch");
    g_assert_cmpuint(p->server.connected_calls, ==, 0);
    /* The client completed its side, then heard our close_notify. */
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_CLOSED);
    g_assert_cmpstr(p->client.closed_reason, ==, "close_notify received");
    dtls_test_pair_free(p);
}

static void test_fingerprint_mismatch_at_client(void)
{
    dtls_test_pair_options o = {.client_expects = wrong_fingerprint};
    dtls_test_pair *p = dtls_test_pair_connect(&o);
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_FAILED);
    g_assert_cmpstr(p->client.closed_reason, ==, "fingerprint mismatch");
    g_assert_cmpuint(p->client.connected_calls, ==, 0);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CLOSED);
    dtls_test_pair_free(p);
}

static void test_fingerprint_case_insensitive(void)
{
    dtls_test_pair_options o = {.expect_lowercase = TRUE};
    dtls_test_pair *p = dtls_test_pair_connect(&o);
    dtls_test_pair_assert_connected(p);
    dtls_test_pair_free(p);
}

static moat_certificate *large_rsa_certificate(void)
{
    EVP_PKEY *key = EVP_RSA_gen(4096);
    g_assert_nonnull(key);
    X509 *x509 = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(x509), 1);
    X509_gmtime_adj(X509_getm_notBefore(x509), 0);
    X509_gmtime_adj(X509_getm_notAfter(x509), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x509), "CN", MBSTRING_ASC,
                               (const unsigned char *)"moat-rsa", -1, -1, 0);
    X509_set_issuer_name(x509, X509_get_subject_name(x509));
    X509_set_pubkey(x509, key);
    g_assert_cmpint(X509_sign(x509, key, EVP_sha256()), >, 0);

    GError *gerror = NULL;
    gchar *dir = g_dir_make_tmp("moat-rsa-XXXXXX", &gerror);
    g_assert_no_error(gerror);
    gchar *cert_path = g_build_filename(dir, "cert.pem", NULL);
    gchar *key_path = g_build_filename(dir, "key.pem", NULL);
    FILE *f = fopen(cert_path, "w");
    g_assert_nonnull(f);
    PEM_write_X509(f, x509);
    fclose(f);
    f = fopen(key_path, "w");
    g_assert_nonnull(f);
    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    char error[256] = "";
    moat_certificate *c = moat_certificate_load(cert_path, key_path, error, sizeof error);
    g_assert_cmpstr(error, ==, "");
    g_assert_nonnull(c);
    g_unlink(cert_path);
    g_unlink(key_path);
    g_rmdir(dir);
    g_free(cert_path);
    g_free(key_path);
    g_free(dir);
    X509_free(x509);
    EVP_PKEY_free(key);
    return c;
}

static void test_fragmented_flight(void)
{
    dtls_test_pair_options o = {.server_certificate = large_rsa_certificate()};
    dtls_test_pair *p = dtls_test_pair_new(&o);
    dtls_test_pair_start(p);
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    dtls_test_pair_assert_connected(p);
    assert_keys_mirror(&p->client.keys, &p->server.keys);
    g_assert_cmpuint(p->server.largest_handshake_datagram, <=, MOAT_DTLS_MTU);
    /* The certificate could not have fitted in one datagram. */
    g_assert_cmpuint(p->server.datagrams_sent, >=, 3);
    g_test_message("server flight datagrams: %u, largest %zu", p->server.datagrams_sent,
                   p->server.largest_handshake_datagram);
    dtls_test_pair_round_trip(p, &p->client, &p->server, 1200);
    dtls_test_pair_free(p);
}

static void test_handshake_with_loss(void)
{
    /* Several seeds so that different flights, including the last one, are
     * the ones lost. */
    guint total_dropped = 0;
    guint64 total_retransmits = 0;
    for (guint32 seed = 1; seed <= 4; seed++) {
        dtls_test_pair_options o = {.drop_rate = 0.3, .seed = seed};
        dtls_test_pair *p = dtls_test_pair_new(&o);
        dtls_test_pair_start(p);
        g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
        dtls_test_pair_assert_connected(p);
        assert_keys_mirror(&p->client.keys, &p->server.keys);
        moat_dtls_transport_stats c, s;
        moat_dtls_transport_stats_get(p->client.transport, &c);
        moat_dtls_transport_stats_get(p->server.transport, &s);
        total_dropped += p->dropped;
        total_retransmits += c.retransmits + s.retransmits;
        g_test_message("seed %u: %u dropped, %u delivered, %" G_GUINT64_FORMAT " retransmits", seed,
                       p->dropped, p->delivered, c.retransmits + s.retransmits);
        dtls_test_pair_free(p);
    }
    g_assert_cmpuint(total_dropped, >, 0);
    g_assert_cmpuint(total_retransmits, >, 0);
}

static void test_retransmit_limit(void)
{
    /* Nothing reaches the server: the client re-sends its ClientHello
     * MOAT_DTLS_MAX_RETRANSMITS times, then gives up. */
    dtls_test_pair_options o = {.drop_rate = 1.0};
    dtls_test_pair *p = dtls_test_pair_new(&o);
    dtls_test_pair_start(p);
    gint64 started = g_get_monotonic_time();
    while (moat_dtls_transport_state(p->client.transport) == MOAT_DTLS_CONNECTING) {
        dtls_test_pair_pump(p);
        int64_t ms = moat_dtls_transport_timeout_ms(p->client.transport);
        g_assert_cmpint(ms, >=, 0);
        g_assert_cmpint(ms, <=, MOAT_DTLS_MAX_RETRANSMIT_MS);
        g_usleep((gulong)ms * 1000);
        moat_dtls_transport_handle_timeout(p->client.transport);
        g_assert_cmpint(g_get_monotonic_time() - started, <,
                        (gint64)MOAT_DTLS_HANDSHAKE_TIMEOUT_MS * 1000);
    }
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_FAILED);
    g_assert_cmpstr(p->client.closed_reason, ==, "too many retransmits");
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(p->client.transport, &stats);
    g_assert_cmpuint(stats.retransmits, ==, MOAT_DTLS_MAX_RETRANSMITS);
    g_assert_cmpuint(stats.datagrams_sent, ==, MOAT_DTLS_MAX_RETRANSMITS + 1);
    g_assert_cmpint(moat_dtls_transport_timeout_ms(p->client.transport), ==, -1);
    /* The server never heard anything; its handshake deadline is running. */
    int64_t server_ms = moat_dtls_transport_timeout_ms(p->server.transport);
    g_assert_cmpint(server_ms, >, 0);
    g_assert_cmpint(server_ms, <=, MOAT_DTLS_HANDSHAKE_TIMEOUT_MS);
    dtls_test_pair_free(p);
}

static void test_application_data(void)
{
    dtls_test_pair *p = dtls_test_pair_connect(NULL);
    dtls_test_pair_assert_connected(p);
    const gsize sizes[] = {1, 1200, MOAT_DTLS_MAX_APPLICATION_DATA};
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        dtls_test_pair_round_trip(p, &p->client, &p->server, sizes[i]);
        dtls_test_pair_round_trip(p, &p->server, &p->client, sizes[i]);
    }
    static guint8 big[MOAT_DTLS_MAX_APPLICATION_DATA + 1];
    g_assert_cmpint(moat_dtls_transport_send(p->client.transport, big, sizeof big), ==,
                    MOAT_DTLS_ERR_TOO_LONG);
    g_assert_cmpint(moat_dtls_transport_send(p->client.transport, big, 0), ==,
                    MOAT_DTLS_ERR_INVALID);
    /* Several records queued before the peer reads arrive in order. */
    for (guint8 i = 0; i < 5; i++)
        g_assert_cmpint(moat_dtls_transport_send(p->client.transport, &i, 1), ==, MOAT_DTLS_OK);
    guint before = p->server.received->len;
    dtls_test_pair_pump(p);
    g_assert_cmpuint(p->server.received->len, ==, before + 5);
    for (guint i = 0; i < 5; i++) {
        gsize n = 0;
        const guint8 *d = g_bytes_get_data(g_ptr_array_index(p->server.received, before + i), &n);
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpuint(d[0], ==, i);
    }
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CONNECTED);
    dtls_test_pair_free(p);
}

/* trim frees OpenSSL's record buffers only on a connected transport that
 * was quiet since the last call; data both ways and close_notify still work
 * after it (OpenSSL 3.0 wrote through a freed write buffer when nothing took
 * it back). */
static void test_trim_buffers(void)
{
    dtls_test_pair *p = dtls_test_pair_connect(NULL);
    dtls_test_pair_assert_connected(p);
    /* The first call only notes the traffic so far. */
    g_assert_false(moat_dtls_transport_trim(p->client.transport));
    g_assert_true(moat_dtls_transport_trim(p->client.transport));
    g_assert_true(moat_dtls_transport_trim(p->server.transport) ||
                  moat_dtls_transport_trim(p->server.transport));
    /* Already freed: nothing more to give. */
    g_assert_false(moat_dtls_transport_trim(p->client.transport));
    dtls_test_pair_round_trip(p, &p->client, &p->server, 1200);
    dtls_test_pair_round_trip(p, &p->server, &p->client, MOAT_DTLS_MAX_APPLICATION_DATA);
    /* Traffic since: kept this time, freed on the next quiet call. */
    g_assert_false(moat_dtls_transport_trim(p->client.transport));
    g_assert_true(moat_dtls_transport_trim(p->client.transport));
    moat_dtls_transport_shutdown(p->client.transport);
    g_assert_cmpuint(g_queue_get_length(&p->client.outbox), ==, 1);
    dtls_test_pair_pump(p);
    g_assert_cmpstr(p->server.closed_reason, ==, "close_notify received");
    /* Not connected any more. */
    g_assert_false(moat_dtls_transport_trim(p->client.transport));
    dtls_test_pair_free(p);
}

/* Records packed into one datagram (as a peer may coalesce them) are all
 * delivered, from that one receive call: the reader stops only once
 * OpenSSL holds nothing more. */
static void test_records_in_one_datagram(void)
{
    dtls_test_pair *p = dtls_test_pair_connect(NULL);
    dtls_test_pair_assert_connected(p);
    static const gsize sizes[] = {1, 1200, 300};
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        guint8 data[1200];
        memset(data, (int)i + 1, sizes[i]);
        g_assert_cmpint(moat_dtls_transport_send(p->client.transport, data, sizes[i]), ==,
                        MOAT_DTLS_OK);
    }
    g_assert_cmpuint(g_queue_get_length(&p->client.outbox), ==, G_N_ELEMENTS(sizes));
    GByteArray *packed = g_byte_array_new();
    GBytes *record;
    while ((record = g_queue_pop_head(&p->client.outbox)) != NULL) {
        gsize n = 0;
        const guint8 *d = g_bytes_get_data(record, &n);
        g_byte_array_append(packed, d, (guint)n);
        g_bytes_unref(record);
    }
    guint before = p->server.received->len;
    g_assert_cmpint(moat_dtls_transport_receive(p->server.transport, packed->data, packed->len), ==,
                    MOAT_DTLS_OK);
    g_assert_cmpuint(p->server.received->len, ==, before + G_N_ELEMENTS(sizes));
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        gsize n = 0;
        const guint8 *d = g_bytes_get_data(g_ptr_array_index(p->server.received, before + i), &n);
        g_assert_cmpuint(n, ==, sizes[i]);
        g_assert_cmpuint(d[0], ==, i + 1);
    }
    g_byte_array_unref(packed);
    dtls_test_pair_free(p);
}

static void test_send_before_connected(void)
{
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    guint8 byte = 1;
    g_assert_cmpint(moat_dtls_transport_send(p->client.transport, &byte, 1), ==,
                    MOAT_DTLS_ERR_STATE);
    dtls_test_pair_start(p);
    g_assert_cmpint(moat_dtls_transport_send(p->client.transport, &byte, 1), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_start(p->client.transport), ==, MOAT_DTLS_ERR_STATE);
    dtls_test_pair_free(p);
}

static void test_close_notify(void)
{
    dtls_test_pair *p = dtls_test_pair_connect(NULL);
    dtls_test_pair_assert_connected(p);
    moat_dtls_transport_shutdown(p->client.transport);
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_CLOSED);
    g_assert_cmpuint(g_queue_get_length(&p->client.outbox), ==, 1);
    dtls_test_pair_pump(p);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CLOSED);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    g_assert_cmpint(p->server.closed_state, ==, MOAT_DTLS_CLOSED);
    g_assert_cmpstr(p->server.closed_reason, ==, "close_notify received");
    /* A local shutdown is not reported back to its own owner. */
    g_assert_cmpuint(p->client.closed_calls, ==, 0);
    guint8 byte = 1;
    g_assert_cmpint(moat_dtls_transport_send(p->server.transport, &byte, 1), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_timeout_ms(p->server.transport), ==, -1);
    dtls_test_pair_free(p);
}

/* A datagram with a well-formed header around random bytes. */
typedef struct {
    const dtls_test_identity *client, *server;
} shared_identities;

static gpointer handshake_repeatedly(gpointer data)
{
    const shared_identities *ids = data;
    for (int i = 0; i < 5; i++) {
        dtls_test_pair_options o = {.client_identity = ids->client, .server_identity = ids->server};
        dtls_test_pair *p = dtls_test_pair_connect(&o);
        dtls_test_pair_assert_connected(p);
        dtls_test_pair_round_trip(p, &p->client, &p->server, 500);
        dtls_test_pair_free(p);
    }
    return NULL;
}

static void test_shared_context_threads(void)
{
    /* One context per side, used by several workers at once, as the
     * daemon's media workers share theirs. */
    dtls_test_identity client, server;
    dtls_test_identity_init(&client);
    dtls_test_identity_init(&server);
    shared_identities ids = {&client, &server};
    GThread *threads[4];
    for (gsize i = 0; i < G_N_ELEMENTS(threads); i++)
        threads[i] = g_thread_new("dtls-worker", handshake_repeatedly, &ids);
    for (gsize i = 0; i < G_N_ELEMENTS(threads); i++)
        g_thread_join(threads[i]);
    dtls_test_identity_clear(&client);
    dtls_test_identity_clear(&server);
}

static void ignore_send(void *user, const uint8_t *datagram, size_t length) {}

static void test_invalid_arguments(void)
{
    char error[256] = "";
    moat_certificate *cert = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(cert);
    moat_dtls_context *ctx = moat_dtls_context_new(cert, error, sizeof error);
    g_assert_nonnull(ctx);
    const char *fp = moat_certificate_fingerprint(cert);
    moat_dtls_callbacks cb = {.send = ignore_send};
    moat_dtls_callbacks no_send = {0};

    g_assert_null(moat_dtls_transport_new(ctx, MOAT_DTLS_ROLE_SERVER, "md5", fp, &cb, NULL, error,
                                          sizeof error));
    g_assert_cmpstr(error, ==, "unsupported fingerprint algorithm \"md5\"");
    g_assert_null(moat_dtls_transport_new(ctx, MOAT_DTLS_ROLE_SERVER, "sha-256", "", &cb, NULL,
                                          error, sizeof error));
    g_assert_cmpstr(error, ==, "missing or overlong remote fingerprint");
    gchar *overlong = g_strnfill(MOAT_FINGERPRINT_MAX_LENGTH, 'A');
    g_assert_null(moat_dtls_transport_new(ctx, MOAT_DTLS_ROLE_SERVER, "sha-256", overlong, &cb,
                                          NULL, error, sizeof error));
    g_free(overlong);
    g_assert_null(moat_dtls_transport_new(ctx, MOAT_DTLS_ROLE_SERVER, "sha-256", fp, &no_send, NULL,
                                          error, sizeof error));
    g_assert_null(moat_dtls_transport_new(ctx, (moat_dtls_role)9, "sha-256", fp, &cb, NULL, error,
                                          sizeof error));

    moat_dtls_transport *t = moat_dtls_transport_new(ctx, MOAT_DTLS_ROLE_SERVER, "SHA-256", fp, &cb,
                                                     NULL, error, sizeof error);
    g_assert_nonnull(t);
    g_assert_cmpint(moat_dtls_transport_state(t), ==, MOAT_DTLS_NEW);
    g_assert_cmpint(moat_dtls_transport_timeout_ms(t), ==, -1);
    /* A well-formed datagram before start is refused by state. */
    const guint8 hello[] = {22, 0xfe, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    g_assert_cmpint(moat_dtls_transport_receive(t, hello, sizeof hello), ==, MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_start(t), ==, MOAT_DTLS_OK);
    int64_t ms = moat_dtls_transport_timeout_ms(t);
    g_assert_cmpint(ms, >, MOAT_DTLS_HANDSHAKE_TIMEOUT_MS - 1000);
    g_assert_cmpint(ms, <=, MOAT_DTLS_HANDSHAKE_TIMEOUT_MS);
    /* Not due yet: nothing happens. */
    moat_dtls_transport_handle_timeout(t);
    g_assert_cmpint(moat_dtls_transport_state(t), ==, MOAT_DTLS_CONNECTING);
    moat_dtls_transport_shutdown(t);
    g_assert_cmpint(moat_dtls_transport_state(t), ==, MOAT_DTLS_CLOSED);
    moat_dtls_transport_free(t);
    moat_dtls_transport_free(NULL);
    g_assert_cmpstr(moat_dtls_state_name(MOAT_DTLS_FAILED), ==, "failed");
    moat_dtls_context_free(ctx);
    moat_certificate_free(cert);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dtls/transport/handshake", test_handshake);
    g_test_add_func("/dtls/transport/profiles", test_profiles);
    g_test_add_func("/dtls/transport/no-common-profile", test_no_common_profile);
    g_test_add_func("/dtls/transport/fingerprint-mismatch-server",
                    test_fingerprint_mismatch_at_server);
    g_test_add_func("/dtls/transport/fingerprint-mismatch-client",
                    test_fingerprint_mismatch_at_client);
    g_test_add_func("/dtls/transport/fingerprint-case", test_fingerprint_case_insensitive);
    g_test_add_func("/dtls/transport/fragmented-flight", test_fragmented_flight);
    g_test_add_func("/dtls/transport/loss", test_handshake_with_loss);
    g_test_add_func("/dtls/transport/application-data", test_application_data);
    g_test_add_func("/dtls/transport/trim-buffers", test_trim_buffers);
    g_test_add_func("/dtls/transport/records-in-one-datagram", test_records_in_one_datagram);
    g_test_add_func("/dtls/transport/send-before-connected", test_send_before_connected);
    g_test_add_func("/dtls/transport/close-notify", test_close_notify);
    g_test_add_func("/dtls/transport/shared-context-threads", test_shared_context_threads);
    g_test_add_func("/dtls/transport/invalid-arguments", test_invalid_arguments);
    g_test_add_func("/dtls/transport/retransmit-limit", test_retransmit_limit);
    return g_test_run();
}
