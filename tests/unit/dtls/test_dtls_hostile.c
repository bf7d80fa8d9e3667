/* Hostile datagrams at a DTLS transport: what the record pre-parser drops
 * (and counts by reason) before OpenSSL, what OpenSSL silently discards, and
 * a malformed handshake message that fails both sides. */
#include <string.h>

#include <glib.h>

#include "dtls/dtls_record.h"
#include "dtls/dtls_transport.h"
#include "dtls_test_pair.h"

static GBytes *record(guint8 type, guint16 version, guint16 epoch, gsize length, GRand *rand)
{
    guint8 *d = g_malloc(13 + length);
    d[0] = type;
    d[1] = version >> 8;
    d[2] = version & 0xff;
    d[3] = epoch >> 8;
    d[4] = epoch & 0xff;
    for (int i = 5; i < 11; i++)
        d[i] = (guint8)g_rand_int(rand);
    d[11] = (guint8)(length >> 8);
    d[12] = (guint8)length;
    for (gsize i = 0; i < length; i++)
        d[13 + i] = (guint8)g_rand_int(rand);
    return g_bytes_new_take(d, 13 + length);
}

static int feed(moat_dtls_transport *t, GBytes *b)
{
    gsize n = 0;
    const guint8 *d = g_bytes_get_data(b, &n);
    int rc = moat_dtls_transport_receive(t, d, n);
    g_bytes_unref(b);
    return rc;
}

static void feed_malformed(moat_dtls_transport *t, GRand *rand)
{
    const guint8 rtp_like[] = {0x80, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xde, 0xad};
    const guint8 short_header[] = {22, 0xfe, 0xfd, 0, 0};
    guint8 random_bytes[300];
    for (gsize i = 0; i < sizeof random_bytes; i++)
        random_bytes[i] = (guint8)g_rand_int(rand);
    random_bytes[0] = 0x40; /* not a content type */
    g_assert_cmpint(moat_dtls_transport_receive(t, rtp_like, sizeof rtp_like), ==,
                    MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpint(moat_dtls_transport_receive(t, short_header, sizeof short_header), ==,
                    MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpint(moat_dtls_transport_receive(t, random_bytes, sizeof random_bytes), ==,
                    MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpint(moat_dtls_transport_receive(t, random_bytes, 0), ==, MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpint(feed(t, record(22, 0x0303, 0, 40, rand)), ==, MOAT_DTLS_ERR_MALFORMED);
    /* Header claims more than the datagram holds. */
    GBytes *r = record(23, 0xfefd, 1, 40, rand);
    GBytes *cut = g_bytes_new_from_bytes(r, 0, 30);
    g_bytes_unref(r);
    g_assert_cmpint(feed(t, cut), ==, MOAT_DTLS_ERR_MALFORMED);
}

static void assert_rejections(moat_dtls_transport *t, guint64 rounds)
{
    moat_dtls_transport_stats s;
    moat_dtls_transport_stats_get(t, &s);
    g_assert_cmpuint(s.datagrams_rejected, ==, 6 * rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_BAD_CONTENT_TYPE], ==, 2 * rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_SHORT_HEADER], ==, rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_EMPTY], ==, rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_BAD_VERSION], ==, rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_BAD_LENGTH], ==, rounds);
    g_assert_cmpuint(s.rejected[MOAT_DTLS_RECORD_OK], ==, 0);
}

static void test_garbage(void)
{
    GRand *rand = g_rand_new_with_seed(7);
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    /* Before start: dropped by the pre-parser, not by a state check. */
    feed_malformed(p->server.transport, rand);
    assert_rejections(p->server.transport, 1);
    /* Before a cipher is chosen, nothing encrypted can be genuine. */
    g_assert_cmpint(feed(p->client.transport, record(22, 0xfefd, 1, 100, rand)), ==,
                    MOAT_DTLS_ERR_MALFORMED);
    moat_dtls_transport_stats cs;
    moat_dtls_transport_stats_get(p->client.transport, &cs);
    g_assert_cmpuint(cs.rejected[MOAT_DTLS_RECORD_SHORT_PROTECTED], ==, 1);
    dtls_test_pair_start(p);
    feed_malformed(p->server.transport, rand);
    feed_malformed(p->client.transport, rand);
    assert_rejections(p->server.transport, 2);
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    dtls_test_pair_assert_connected(p);

    feed_malformed(p->server.transport, rand);
    assert_rejections(p->server.transport, 3);
    /* Well-formed records OpenSSL cannot authenticate are discarded
     * silently (RFC 6347 §4.1.2.7) and the association survives. Those too
     * short for AES-GCM's nonce and tag never reach OpenSSL, which would
     * treat them as fatal. */
    moat_dtls_transport_stats before, after;
    moat_dtls_transport_stats_get(p->server.transport, &before);
    guint too_short = 0;
    for (gsize length = 0; length < 700; length += 7) {
        int expected = length < 24 ? MOAT_DTLS_ERR_MALFORMED : MOAT_DTLS_OK;
        too_short += length < 24;
        g_assert_cmpint(feed(p->server.transport, record(23, 0xfefd, 1, length, rand)), ==,
                        expected);
        g_assert_cmpint(feed(p->server.transport, record(21, 0xfefd, 1, length, rand)), ==,
                        expected);
        g_assert_cmpint(feed(p->server.transport, record(22, 0xfefd, 1, length, rand)), ==,
                        expected);
        g_assert_cmpint(feed(p->server.transport, record(22, 0xfefd, 7, length, rand)), ==,
                        expected);
        /* Epoch 0 is over: OpenSSL ignores it. */
        g_assert_cmpint(feed(p->server.transport, record(22, 0xfefd, 0, length, rand)), ==,
                        MOAT_DTLS_OK);
        g_assert_cmpint(feed(p->server.transport, record(21, 0xfefd, 0, length, rand)), ==,
                        MOAT_DTLS_OK);
    }
    moat_dtls_transport_stats_get(p->server.transport, &after);
    g_assert_cmpuint(after.rejected[MOAT_DTLS_RECORD_SHORT_PROTECTED] -
                         before.rejected[MOAT_DTLS_RECORD_SHORT_PROTECTED],
                     ==, 4 * too_short);
    dtls_test_pair_pump(p);
    g_assert_cmpuint(p->server.received->len, ==, 0);
    dtls_test_pair_assert_connected(p);
    dtls_test_pair_round_trip(p, &p->client, &p->server, 100);
    dtls_test_pair_round_trip(p, &p->server, &p->client, 100);

    /* Records are counted per datagram: three in one. */
    moat_dtls_transport_stats_get(p->server.transport, &before);
    GByteArray *three = g_byte_array_new();
    for (int i = 0; i < 3; i++) {
        GBytes *r = record(23, 0xfefd, 1, 40, rand);
        g_byte_array_append(three, g_bytes_get_data(r, NULL), (guint)g_bytes_get_size(r));
        g_bytes_unref(r);
    }
    g_assert_cmpint(moat_dtls_transport_receive(p->server.transport, three->data, three->len), ==,
                    MOAT_DTLS_OK);
    g_byte_array_unref(three);
    moat_dtls_transport_stats_get(p->server.transport, &after);
    g_assert_cmpuint(after.records_received - before.records_received, ==, 3);
    g_assert_cmpuint(after.datagrams_received - before.datagrams_received, ==, 1);
    dtls_test_pair_free(p);
    g_rand_free(rand);
}

static void test_malformed_handshake_message(void)
{
    /* A ClientHello fragment claiming to run past its own message: OpenSSL
     * rejects it with a fatal alert, which fails the real client too. */
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    dtls_test_pair_start(p);
    const guint8 bad[] = {
        22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0,  0,  0,  12 + 20, 1,  0,  0,  10, /* ClientHello,
                                                                                  length 10 */
        0,  0,                                                                 /* message_seq */
        0,  0,    0,                                                           /* fragment_offset */
        0,  0,    20, /* fragment_length > length */
        1,  2,    3,    4, 5, 6, 7, 8, 9, 10, 11, 12, 13,      14, 15, 16, 17, 18, 19, 20};
    int rc = moat_dtls_transport_receive(p->server.transport, bad, sizeof bad);
    g_assert_cmpint(rc, ==, MOAT_DTLS_ERR_FAILED);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_FAILED);
    g_assert_true(g_str_has_prefix(p->server.closed_reason, "handshake failed: "));
    /* The alert is on its way to the client. */
    GBytes *alert = g_queue_peek_tail(&p->server.outbox);
    g_assert_nonnull(alert);
    g_assert_cmpuint(((const guint8 *)g_bytes_get_data(alert, NULL))[0], ==, 21);
    g_test_message("server: %s", p->server.closed_reason);
    dtls_test_pair_pump(p);
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_FAILED);
    g_assert_true(g_str_has_prefix(p->client.closed_reason, "handshake failed: "));
    g_assert_nonnull(strstr(p->client.closed_reason, "alert"));
    g_test_message("client: %s", p->client.closed_reason);
    /* Nothing more is accepted once failed. */
    g_assert_cmpint(moat_dtls_transport_receive(p->server.transport, bad, sizeof bad), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    dtls_test_pair_free(p);
}

/* `count` records of one type and epoch in one datagram, 40 bytes of noise
 * each (room for AES-GCM's nonce and tag): what anyone can send from, or
 * spoof as, a peer's address. */
static GBytes *forged(guint8 type, guint16 epoch, guint count, GRand *rand)
{
    GByteArray *datagram = g_byte_array_new();
    for (guint i = 0; i < count; i++) {
        GBytes *r = record(type, 0xfefd, epoch, 40, rand);
        g_byte_array_append(datagram, g_bytes_get_data(r, NULL), (guint)g_bytes_get_size(r));
        g_bytes_unref(r);
    }
    return g_byte_array_free_to_bytes(datagram);
}

static guint64 early_refused(moat_dtls_transport *t)
{
    moat_dtls_transport_stats s;
    moat_dtls_transport_stats_get(t, &s);
    return s.rejected[MOAT_DTLS_RECORD_EARLY_PROTECTED];
}

/* Forged encrypted records at a server that has chosen its cipher but not
 * read the client's ChangeCipherSpec: OpenSSL keeps each one (it cannot
 * read epoch 1 yet) in a read buffer of its own, so past 16 they are
 * refused. They must not cost the client its handshake: the datagram with
 * its ChangeCipherSpec and Finished is still read, the held records are
 * read and discarded once the epoch turns, and the handshake completes. */
static void test_forged_records_before_the_change_cipher_spec(void)
{
    GRand *rand = g_rand_new_with_seed(11);
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    dtls_test_pair_start(p);
    /* The ClientHello: the server picks its cipher and sends its flight. */
    g_assert_true(dtls_test_pair_deliver(p, &p->client, &p->server));
    g_assert_false(g_queue_is_empty(&p->server.outbox));
    g_assert_cmpint(feed(p->server.transport, forged(22, 1, MOAT_DTLS_MAX_EARLY_PROTECTED, rand)),
                    ==, MOAT_DTLS_OK);
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(feed(p->server.transport, forged(22, 1, 1, rand)), ==,
                        MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpuint(early_refused(p->server.transport), ==, 3);
    g_assert_true(dtls_test_pair_settle(p, 5000));
    dtls_test_pair_assert_connected(p);
    g_assert_cmpuint(early_refused(p->server.transport), ==, 3);
    dtls_test_pair_round_trip(p, &p->client, &p->server, 100);
    dtls_test_pair_free(p);
    g_rand_free(rand);
}

/* Where a datagram's records up to and including its ChangeCipherSpec
 * end; 0 when it has none. */
static gsize after_change_cipher_spec(GBytes *datagram)
{
    gsize length = 0;
    const guint8 *d = g_bytes_get_data(datagram, &length);
    size_t offset = 0;
    moat_dtls_record r;
    while (offset < length && moat_dtls_record_next(d, length, &offset, &r) == MOAT_DTLS_RECORD_OK)
        if (r.content_type == 20)
            return offset;
    return 0;
}

/* The same between the client's ChangeCipherSpec and its Finished, in two
 * datagrams: the cap now holds what OpenSSL may still keep (application
 * data until the Finished, records of a later epoch), and the Finished,
 * which it reads at once, passes whatever the cap holds. */
static void test_forged_records_before_the_finished(void)
{
    GRand *rand = g_rand_new_with_seed(12);
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    dtls_test_pair_start(p);
    g_assert_true(dtls_test_pair_deliver(p, &p->client, &p->server));
    while (dtls_test_pair_deliver(p, &p->server, &p->client))
        ;
    /* The client's flight: deliver all before the datagram with its
     * ChangeCipherSpec, then that datagram cut after it. */
    GBytes *flight = NULL;
    gsize cut = 0;
    while ((flight = g_queue_pop_head(&p->client.outbox)) != NULL &&
           (cut = after_change_cipher_spec(flight)) == 0) {
        gsize n = 0;
        const guint8 *d = g_bytes_get_data(flight, &n);
        g_assert_cmpint(moat_dtls_transport_receive(p->server.transport, d, n), ==, MOAT_DTLS_OK);
        g_bytes_unref(flight);
    }
    g_assert_nonnull(flight);
    g_assert_cmpuint(cut, <, g_bytes_get_size(flight));
    g_assert_cmpint(feed(p->server.transport, g_bytes_new_from_bytes(flight, 0, cut)), ==,
                    MOAT_DTLS_OK);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CONNECTING);

    g_assert_cmpint(feed(p->server.transport, forged(23, 1, MOAT_DTLS_MAX_EARLY_PROTECTED, rand)),
                    ==, MOAT_DTLS_OK);
    g_assert_cmpint(feed(p->server.transport, forged(22, 2, 1, rand)), ==, MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpint(feed(p->server.transport, forged(23, 1, 1, rand)), ==, MOAT_DTLS_ERR_MALFORMED);
    g_assert_cmpuint(early_refused(p->server.transport), ==, 2);
    /* A forged handshake record of epoch 1 is read (and discarded) at once. */
    g_assert_cmpint(feed(p->server.transport, forged(22, 1, 1, rand)), ==, MOAT_DTLS_OK);

    GBytes *finished = g_bytes_new_from_bytes(flight, cut, g_bytes_get_size(flight) - cut);
    g_bytes_unref(flight);
    g_assert_cmpint(feed(p->server.transport, finished), ==, MOAT_DTLS_OK);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CONNECTED);
    g_assert_true(dtls_test_pair_settle(p, 5000));
    dtls_test_pair_assert_connected(p);
    g_assert_cmpuint(early_refused(p->server.transport), ==, 2);
    dtls_test_pair_round_trip(p, &p->client, &p->server, 100);
    dtls_test_pair_free(p);
    g_rand_free(rand);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dtls/hostile/garbage", test_garbage);
    g_test_add_func("/dtls/hostile/malformed-handshake", test_malformed_handshake_message);
    g_test_add_func("/dtls/hostile/forged-records-before-change-cipher-spec",
                    test_forged_records_before_the_change_cipher_spec);
    g_test_add_func("/dtls/hostile/forged-records-before-finished",
                    test_forged_records_before_the_finished);
    return g_test_run();
}
