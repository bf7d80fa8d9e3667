/* The ng server without a socket: cookies echoed, a retransmission
 * answered from the cache without running the command again, error replies
 * for hostile datagrams, and the reply cache's bounds. */
#include <glib.h>
#include <netinet/in.h>
#include <string.h>

#include "ng/ng_cookie_cache.h"
#include "ng/ng_server.h"
#include "ng/ng_server_private.h"
#include "ng_test_json.h"

typedef struct {
    int offers;
    int deletes;
    char last_call_id[64];
} counting;

static void on_offer(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    counting *c = context;
    c->offers++;
    g_strlcpy(c->last_call_id, request->call_id, sizeof c->last_call_id);
    moat_bencode_set_string(reply, "result", "ok");
    char sdp[64];
    g_snprintf(sdp, sizeof sdp, "v=0 offer %d", c->offers);
    moat_bencode_set_string(reply, "sdp", sdp);
}

static void on_delete(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    counting *c = context;
    c->deletes++;
    moat_bencode_set_string(reply, "result", "error");
    moat_bencode_set_string(reply, "error-reason", "Unknown call-id");
}

typedef struct {
    size_t size;
    int runs;
} sized;

/* An offer answered with an SDP of `size` bytes (context: a sized). */
static void on_offer_sized(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    sized *c = context;
    c->runs++;
    size_t size = c->size;
    char *sdp = g_malloc(size + 1);
    memset(sdp, 'v', size);
    sdp[size] = '\0';
    moat_bencode_set_string(reply, "result", "ok");
    moat_bencode_set_string(reply, "sdp", sdp);
    g_free(sdp);
}

static void on_query_silent(void *context, const moat_ng_request *request, moat_bencode *reply) {}

/* "<cookie> " + the bencoding of json; the reply as a string. */
static char *exchange_from(moat_ng_server *server, const char *cookie, const char *json,
                           const struct sockaddr *from, socklen_t from_length)
{
    GByteArray *datagram = g_byte_array_new();
    g_byte_array_append(datagram, (const guint8 *)cookie, (guint)strlen(cookie));
    g_byte_array_append(datagram, (const guint8 *)" ", 1);
    GByteArray *body = ng_test_bencode(json);
    g_byte_array_append(datagram, body->data, body->len);
    g_byte_array_free(body, TRUE);
    GByteArray *reply = g_byte_array_new();
    moat_ng_server_process_from(server, datagram->data, datagram->len, from, from_length, reply);
    g_byte_array_free(datagram, TRUE);
    g_byte_array_append(reply, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(reply, FALSE);
}

static char *exchange(moat_ng_server *server, const char *cookie, const char *json)
{
    return exchange_from(server, cookie, json, NULL, 0);
}

static char *raw(moat_ng_server *server, const void *bytes, size_t length)
{
    GByteArray *reply = g_byte_array_new();
    moat_ng_server_process(server, bytes, length, reply);
    g_byte_array_append(reply, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(reply, FALSE);
}

static void expect(char *reply, const char *expected)
{
    g_assert_cmpstr(reply, ==, expected);
    g_free(reply);
}

/* The error reply the server writes. */
static char *error_reply(const char *cookie, const char *reason)
{
    return g_strdup_printf("%s d12:error-reason%zu:%s6:result5:errore", cookie, strlen(reason),
                           reason);
}

static void expect_error(char *reply, const char *cookie, const char *reason)
{
    char *expected = error_reply(cookie, reason);
    expect(reply, expected);
    g_free(expected);
}

static const char offer_json[] =
    "{\"command\": \"offer\", \"call-id\": \"c1\", \"from-tag\": \"f\","
    " \"sdp\": \"v=0\"}";

static void test_ping_and_cookie(void)
{
    moat_ng_server *server = moat_ng_server_new_detached(NULL);
    expect(exchange(server, "5323_1", "{\"command\": \"ping\"}"), "5323_1 d6:result4:ponge");
    /* The cookie comes back byte for byte, whatever it holds. */
    expect(exchange(server, "\x01\xff:d", "{\"command\": \"ping\"}"),
           "\x01\xff:d d6:result4:ponge");
    moat_ng_server_stop(server);
}

static void test_retransmission(void)
{
    counting c = {0};
    moat_ng_handlers handlers = {.context = &c, .offer = on_offer, .delete_call = on_delete};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    char *first = exchange(server, "k1", offer_json);
    g_assert_cmpstr(first, ==, "k1 d6:result2:ok3:sdp11:v=0 offer 1e");
    g_assert_cmpint(c.offers, ==, 1);
    g_assert_cmpstr(c.last_call_id, ==, "c1");
    /* Kamailio's retry: the identical datagram. Same bytes, no second run. */
    for (int i = 0; i < 3; i++)
        expect(exchange(server, "k1", offer_json), first);
    g_assert_cmpint(c.offers, ==, 1);
    /* A new cookie runs the command again. */
    expect(exchange(server, "k2", offer_json), "k2 d6:result2:ok3:sdp11:v=0 offer 2e");
    g_assert_cmpint(c.offers, ==, 2);
    /* Error replies are cached too: the handler runs once. */
    char *deleted = exchange(server, "k3", "{\"command\": \"delete\", \"call-id\": \"x\"}");
    g_assert_cmpstr(deleted, ==, "k3 d12:error-reason15:Unknown call-id6:result5:errore");
    expect(exchange(server, "k3", "{\"command\": \"delete\", \"call-id\": \"x\"}"), deleted);
    g_assert_cmpint(c.deletes, ==, 1);
    g_free(deleted);

    /* The same cookie from another source is another command. */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(5060)};
    struct sockaddr_in b = a;
    b.sin_port = htons(5061);
    g_free(exchange_from(server, "k4", offer_json, (struct sockaddr *)&a, sizeof a));
    g_free(exchange_from(server, "k4", offer_json, (struct sockaddr *)&a, sizeof a));
    g_assert_cmpint(c.offers, ==, 3);
    g_free(exchange_from(server, "k4", offer_json, (struct sockaddr *)&b, sizeof b));
    g_assert_cmpint(c.offers, ==, 4);
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(5060)};
    g_free(exchange_from(server, "k4", offer_json, (struct sockaddr *)&v6, sizeof v6));
    g_assert_cmpint(c.offers, ==, 5);

    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_requests_total{command=\"offer\"} 5\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_retransmissions_total 5\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"handler_error\"} 1\n"));
    g_string_free(metrics, TRUE);
    g_free(first);
    moat_ng_server_stop(server);
}

/* A cookie longer than MOAT_NG_MAX_COOKIE: its reply could not be cached,
 * so a retransmission would run the command twice (before: it did, and the
 * cookie ate the room MOAT_NG_MAX_REPLY_SDP left for the reply's other
 * keys: an offer that passed the SDP check was committed, then its reply
 * replaced by "reply too large"). The command is not run, an error comes
 * back, counted; a cookie of exactly the bound runs once and is cached. */
static void test_long_cookie(void)
{
    counting c = {0};
    moat_ng_handlers handlers = {.context = &c, .offer = on_offer};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    char *longest = g_strnfill(MOAT_NG_MAX_COOKIE, 'c');
    char *first = exchange(server, longest, offer_json);
    g_assert_cmpint(c.offers, ==, 1);
    expect(exchange(server, longest, offer_json), first);
    g_assert_cmpint(c.offers, ==, 1);
    char *too_long = g_strnfill(MOAT_NG_MAX_COOKIE + 1, 'c');
    for (int i = 0; i < 2; i++)
        expect_error(exchange(server, too_long, offer_json), too_long,
                     "cookie too long (257 bytes, at most 256)");
    char *huge = g_strnfill(60000, 'c');
    expect_error(exchange(server, huge, offer_json), huge,
                 "cookie too long (60000 bytes, at most 256)");
    g_assert_cmpint(c.offers, ==, 1);
    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"cookie_too_long\"} 3\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_requests_total{command=\"offer\"} 1\n"));
    g_string_free(metrics, TRUE);
    g_free(huge);
    g_free(too_long);
    g_free(first);
    g_free(longest);
    moat_ng_server_stop(server);
}

/* A source the filter refuses (in the gateway: one of Moat's own sockets)
 * gets no reply, runs nothing, and is counted. */
static bool refuse_port_5062(void *context, const struct sockaddr *from, socklen_t from_length)
{
    return from->sa_family == AF_INET &&
           ntohs(((const struct sockaddr_in *)from)->sin_port) == 5062;
}

static void test_refused_source(void)
{
    counting c = {0};
    moat_ng_handlers handlers = {
        .context = &c, .offer = on_offer, .refuse_source = refuse_port_5062};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    struct sockaddr_in own = {.sin_family = AF_INET, .sin_port = htons(5062)};
    struct sockaddr_in proxy = {.sin_family = AF_INET, .sin_port = htons(5060)};
    expect(exchange_from(server, "k1", offer_json, (struct sockaddr *)&own, sizeof own), "");
    g_assert_cmpint(c.offers, ==, 0);
    g_free(exchange_from(server, "k1", offer_json, (struct sockaddr *)&proxy, sizeof proxy));
    g_assert_cmpint(c.offers, ==, 1);
    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"own_source\"} 1\n"));
    g_string_free(metrics, TRUE);
    moat_ng_server_stop(server);
}

static void test_errors(void)
{
    counting c = {0};
    moat_ng_handlers handlers = {.context = &c, .offer = on_offer, .query = on_query_silent};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    /* No handler, unknown command: rtpengine's wording, Kamailio logs it. */
    expect_error(exchange(server, "a",
                          "{\"command\": \"answer\", \"call-id\": \"c\", \"from-tag\": \"f\","
                          " \"sdp\": \"v=0\"}"),
                 "a", "Unrecognized command");
    /* Required keys are checked before any handler runs. */
    expect_error(exchange(server, "a2", "{\"command\": \"answer\", \"call-id\": \"c\"}"), "a2",
                 "missing from-tag");
    expect_error(exchange(server, "b", "{\"command\": \"start recording\", \"call-id\": \"c\"}"),
                 "b", "Unrecognized command");
    expect_error(
        exchange(server, "c", "{\"command\": \"offer\", \"from-tag\": \"f\", \"sdp\": \"v\"}"), "c",
        "missing call-id");
    expect_error(exchange(server, "d", "{\"call-id\": \"c\"}"), "d", "missing command");
    expect_error(exchange(server, "e", "[\"ping\"]"), "e", "message is not a dictionary");
    expect_error(exchange(server, "f", "{\"command\": \"query\", \"call-id\": \"c\"}"), "f",
                 "internal error: no result");
    expect_error(raw(server, "g d7:comma", 10), "g",
                 "invalid bencode: string runs past the end at offset 3");
    expect_error(raw(server, "h garbage", 9), "h",
                 "invalid bencode: not a bencode value at offset 0");
    expect_error(raw(server, "i ", 2), "i", "invalid bencode: truncated value at offset 0");
    g_assert_cmpint(c.offers, ==, 0);
    /* No cookie: nothing to answer to. */
    expect(raw(server, "nocookie", 8), "");
    expect(raw(server, " d7:command4:pinge", 18), "");
    expect(raw(server, "", 0), "");
    expect(raw(server, NULL, 0), "");
    /* Oversize: answered, not parsed. */
    size_t big = MOAT_NG_MAX_DATAGRAM + 100;
    char *datagram = g_malloc(big);
    memset(datagram, 'x', big);
    memcpy(datagram, "big d", 5);
    expect_error(raw(server, datagram, big), "big", "message too large");
    g_free(datagram);
    /* A trailing newline after the dictionary is tolerated. */
    expect(raw(server, "j d7:command4:pinge\n", 20), "j d6:result4:ponge");

    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    const char *expected[] = {
        "moat_ng_errors_total{reason=\"unknown_command\"} 2\n",
        "moat_ng_errors_total{reason=\"missing_key\"} 2\n",
        "moat_ng_errors_total{reason=\"bad_request\"} 1\n",
        "moat_ng_errors_total{reason=\"not_dictionary\"} 1\n",
        "moat_ng_errors_total{reason=\"not_bencode\"} 3\n",
        "moat_ng_errors_total{reason=\"no_cookie\"} 4\n",
        "moat_ng_errors_total{reason=\"too_large\"} 1\n",
        "moat_ng_errors_total{reason=\"handler_error\"} 1\n",
        "moat_ng_requests_total{command=\"unknown\"} 1\n",
        "moat_ng_requests_total{command=\"ping\"} 1\n",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(expected); i++) {
        if (!strstr(metrics->str, expected[i]))
            g_error("missing %s in\n%s", expected[i], metrics->str);
    }
    g_string_free(metrics, TRUE);
    moat_ng_server_stop(server);

    /* Off (NULL server): every series is there at 0. */
    metrics = g_string_new(NULL);
    moat_ng_server_metrics(NULL, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_requests_total{command=\"offer\"} 0\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"send_failed\"} 0\n"));
    g_string_free(metrics, TRUE);
}

/* A reply that would not fit one UDP datagram (sendto: EMSGSIZE, so the
 * proxy heard nothing) is an error reply instead, counted; one that just
 * fits goes out as it is. */
static void test_reply_too_large(void)
{
    sized c = {0};
    moat_ng_handlers handlers = {.context = &c, .offer = on_offer_sized};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    /* "k1 d6:result2:ok3:sdp65479:" + 65479 bytes + "e" = 65507 */
    c.size = 65479;
    char *reply = exchange(server, "k1", offer_json);
    g_assert_cmpuint(strlen(reply), ==, MOAT_NG_MAX_REPLY);
    g_assert_true(g_str_has_prefix(reply, "k1 d6:result2:ok3:sdp65479:vvv"));
    g_free(reply);
    c.size = 65480;
    expect_error(exchange(server, "k2", offer_json), "k2", "reply too large for a datagram");
    /* The retransmission gets the same error from the cache. */
    expect_error(exchange(server, "k2", offer_json), "k2", "reply too large for a datagram");
    c.size = 200000;
    expect_error(exchange(server, "k3", offer_json), "k3", "reply too large for a datagram");
    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"reply_too_large\"} 2\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_retransmissions_total 1\n"));
    g_string_free(metrics, TRUE);
    moat_ng_server_stop(server);
}

static void test_cache_bounds(void)
{
    const int64_t second = G_USEC_PER_SEC;
    moat_ng_cookie_cache *cache = moat_ng_cookie_cache_new(3, 1 << 20, 30 * second);
    const uint8_t reply[] = "r";
    moat_ng_cookie_cache_insert(cache, "a", 1, reply, 1, 0);
    moat_ng_cookie_cache_insert(cache, "b", 1, reply, 1, 10 * second);
    moat_ng_cookie_cache_insert(cache, "c", 1, reply, 1, 20 * second);
    g_assert_nonnull(moat_ng_cookie_cache_lookup(cache, "a", 1, 20 * second));
    /* Full: the oldest goes. */
    moat_ng_cookie_cache_insert(cache, "d", 1, reply, 1, 21 * second);
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 3);
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "a", 1, 21 * second));
    g_assert_nonnull(moat_ng_cookie_cache_lookup(cache, "b", 1, 21 * second));
    /* Expiry: b was cached at 10 s, so at 40 s it is gone; c (20 s) stays. */
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "b", 1, 40 * second));
    g_assert_nonnull(moat_ng_cookie_cache_lookup(cache, "c", 1, 40 * second));
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 2);
    /* Re-inserting a key replaces it (and renews it). */
    const uint8_t other[] = "xy";
    moat_ng_cookie_cache_insert(cache, "c", 1, other, 2, 45 * second);
    GBytes *found = moat_ng_cookie_cache_lookup(cache, "c", 1, 70 * second);
    g_assert_nonnull(found);
    g_assert_cmpuint(g_bytes_get_size(found), ==, 2);
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 1);
    /* Keys are compared by length too. */
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "cc", 2, 70 * second));
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "c", 1, 80 * second));
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 0);
    moat_ng_cookie_cache_free(cache);
}

/* The bytes the cache holds are bounded too: one call's re-offers with big
 * SDPs, each with its own cookie, filled 4096 entries of 60 KB (240 MB for
 * 30 s). The oldest go first; a reply over a 64th of the budget is not
 * kept, only that its command ran. */
static void test_cache_byte_budget(void)
{
    const int64_t second = G_USEC_PER_SEC;
    const size_t budget = 64 * 1024; /* a reply over 1 KiB is not kept */
    moat_ng_cookie_cache *cache = moat_ng_cookie_cache_new(4096, budget, 30 * second);
    uint8_t reply[1024];
    memset(reply, 'r', sizeof reply);
    for (int i = 0; i < 200; i++) {
        char key[8];
        g_snprintf(key, sizeof key, "k%03d", i);
        moat_ng_cookie_cache_insert(cache, key, 4, reply, sizeof reply, i);
        g_assert_cmpuint(moat_ng_cookie_cache_bytes(cache), <=, budget);
    }
    /* 1024 + 4 + 160 bytes an entry: 55 fit, the newest. */
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 55);
    g_assert_cmpuint(moat_ng_cookie_cache_bytes(cache), ==, 55 * (1024 + 4 + 160));
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "k144", 4, 200));
    GBytes *kept = moat_ng_cookie_cache_lookup(cache, "k145", 4, 200);
    g_assert_nonnull(kept);
    g_assert_cmpuint(g_bytes_get_size(kept), ==, sizeof reply);
    /* Too large to keep: the key stays, with an empty reply. */
    uint8_t big[1025];
    memset(big, 'b', sizeof big);
    moat_ng_cookie_cache_insert(cache, "big", 3, big, sizeof big, 201);
    GBytes *marker = moat_ng_cookie_cache_lookup(cache, "big", 3, 201);
    g_assert_nonnull(marker);
    g_assert_cmpuint(g_bytes_get_size(marker), ==, 0);
    g_assert_cmpuint(moat_ng_cookie_cache_bytes(cache), <=, budget);
    /* Expiry empties it. */
    g_assert_null(moat_ng_cookie_cache_lookup(cache, "big", 3, 300 * second));
    g_assert_cmpuint(moat_ng_cookie_cache_count(cache), ==, 0);
    g_assert_cmpuint(moat_ng_cookie_cache_bytes(cache), ==, 0);
    moat_ng_cookie_cache_free(cache);
}

/* A retransmission whose reply the cache could not keep gets an error and
 * does not run the command again. */
static void test_reply_not_kept(void)
{
    sized c = {.size = 2000};
    moat_ng_handlers handlers = {.context = &c, .offer = on_offer_sized};
    moat_ng_server *server = moat_ng_server_new_detached(&handlers);
    moat_ng_cookie_cache_free(server->cache);
    server->cache = moat_ng_cookie_cache_new(16, 64 * 1024, MOAT_NG_CACHE_LIFETIME_US);
    char *first = exchange(server, "k1", offer_json);
    g_assert_true(g_str_has_prefix(first, "k1 d6:result2:ok3:sdp2000:"));
    g_free(first);
    expect_error(exchange(server, "k1", offer_json), "k1",
                 "retransmission of a command whose reply was too large to keep; not run again");
    g_assert_cmpint(c.runs, ==, 1);
    /* A small reply is kept as ever. */
    c.size = 10;
    char *small = exchange(server, "k2", offer_json);
    expect(exchange(server, "k2", offer_json), small);
    g_free(small);
    g_assert_cmpint(c.runs, ==, 2);
    GString *metrics = g_string_new(NULL);
    moat_ng_server_metrics(server, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_ng_errors_total{reason=\"reply_not_kept\"} 1\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_retransmissions_total 2\n"));
    g_assert_nonnull(strstr(metrics->str, "moat_ng_reply_cache_bytes "));
    g_string_free(metrics, TRUE);
    moat_ng_server_stop(server);
}

static void test_many_cookies(void)
{
    /* More distinct cookies than the cache holds: memory stays bounded and
     * every one is answered. */
    moat_ng_server *server = moat_ng_server_new_detached(NULL);
    for (int i = 0; i < MOAT_NG_CACHE_ENTRIES * 2; i++) {
        char cookie[32];
        g_snprintf(cookie, sizeof cookie, "c%d", i);
        char *reply = exchange(server, cookie, "{\"command\": \"ping\"}");
        g_assert_true(g_str_has_prefix(reply, cookie));
        g_free(reply);
    }
    moat_ng_server_stop(server);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ng-server/ping-and-cookie", test_ping_and_cookie);
    g_test_add_func("/ng-server/retransmission", test_retransmission);
    g_test_add_func("/ng-server/errors", test_errors);
    g_test_add_func("/ng-server/refused-source", test_refused_source);
    g_test_add_func("/ng-server/long-cookie", test_long_cookie);
    g_test_add_func("/ng-server/reply-too-large", test_reply_too_large);
    g_test_add_func("/ng-server/cache-bounds", test_cache_bounds);
    g_test_add_func("/ng-server/cache-byte-budget", test_cache_byte_budget);
    g_test_add_func("/ng-server/reply-not-kept", test_reply_not_kept);
    g_test_add_func("/ng-server/many-cookies", test_many_cookies);
    return g_test_run();
}
