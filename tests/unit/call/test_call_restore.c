/* Calls kept over a restart, through the call layer's C API on a real
 * worker: the journal's record round trip and its refusals (version, shape,
 * every limit), and a registry whose sink captured a plain-to-SDES call's
 * record (offer, answer, re-offer) rebuilding it in a fresh registry on the
 * same ports, putting back the very record it came from, then skipping it
 * (the call exists), and refusing it while its ports are taken. Freeing a registry keeps the
 * records; a delete withdraws one. A restored call none of whose parties
 * sends within restore_idle_s ends (the media timeout's sweep), one whose
 * party sends stays. */
#include <glib.h>
#include <string.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "call/call_journal.h"
#include "call/call_registry.h"
#include "call_test_support.h"
#include "ng/ng_request.h"

#define PORT_MIN 42300
#define PORT_MAX 42339

typedef struct {
    GHashTable *records; /* call-id -> GBytes */
    unsigned puts, removes;
} store;

static void store_put(void *user, const char *call_id, const uint8_t *record, size_t length)
{
    store *s = user;
    g_hash_table_replace(s->records, g_strdup(call_id), g_bytes_new(record, length));
    s->puts++;
}

static void store_remove(void *user, const char *call_id)
{
    store *s = user;
    g_hash_table_remove(s->records, call_id);
    s->removes++;
}

static void store_init(store *s)
{
    s->records =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_bytes_unref);
    s->puts = s->removes = 0;
}

/* An ng command as the ng server hands it over: parsed from a dictionary
 * (the journal records the dictionary). */
typedef struct {
    moat_bencode *dictionary;
    moat_ng_request request;
} command;

static void command_make(command *c, const char *name, const char *call_id, const char *from,
                         const char *to, const char *sdp, const char *transport)
{
    c->dictionary = moat_bencode_new_dictionary();
    moat_bencode_set_string(c->dictionary, "command", name);
    moat_bencode_set_string(c->dictionary, "call-id", call_id);
    moat_bencode_set_string(c->dictionary, "from-tag", from);
    if (to)
        moat_bencode_set_string(c->dictionary, "to-tag", to);
    if (sdp)
        moat_bencode_set_string(c->dictionary, "sdp", sdp);
    if (transport)
        moat_bencode_set_string(c->dictionary, "transport-protocol", transport);
    char error[160];
    g_assert_cmpint(moat_ng_request_parse(c->dictionary, &c->request, error, sizeof error), ==, 0);
}

static void command_clear(command *c)
{
    moat_ng_request_clear(&c->request);
    moat_bencode_free(c->dictionary);
}

/* Runs one command; its rewritten SDP (g_free). */
static char *run(moat_call_registry *registry, const char *name, const char *call_id,
                 const char *from, const char *to, const char *sdp, const char *transport)
{
    command c;
    command_make(&c, name, call_id, from, to, sdp, transport);
    moat_call_reply reply = {0};
    if (strcmp(name, "offer") == 0)
        moat_call_offer(registry, &c.request, &reply);
    else
        moat_call_answer(registry, &c.request, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    char *out = g_strdup(reply.sdp);
    moat_call_reply_clear(&reply);
    command_clear(&c);
    return out;
}

static void test_journal_round_trip(void)
{
    moat_call_journal *j = moat_call_journal_new();
    command c;
    command_make(&c, "offer", "rt-1", "a", NULL, "v=0\r\n", NULL);
    moat_call_journal_add_step(j, c.dictionary);
    command_clear(&c);
    uint16_t ports[2] = {40000, 40002}, got[2];
    g_assert_false(moat_call_journal_take_ports(j, got)); /* nothing recorded yet */
    moat_call_journal_add_ports(j, ports);
    uint8_t key[30], back[30];
    memset(key, 0xab, sizeof key);
    g_assert_false(moat_call_journal_take_key(j, back, sizeof back));
    moat_call_journal_add_key(j, key, sizeof key);
    /* An SDES leg's stream positions: written when new, when the rollover
     * or SSRC changes or the sequence number moved a quarter of its space. */
    moat_call_journal_srtp at = {{0x1234, 0, 100, true}, {0x5678, 2, 65000, true}};
    g_assert_true(moat_call_journal_note_srtp(j, 1, 1, &at));
    at.sent.seq = 100 + MOAT_CALL_JOURNAL_SEQ_STEP - 1;
    g_assert_false(moat_call_journal_note_srtp(j, 1, 1, &at));
    at.sent.seq = 100 + MOAT_CALL_JOURNAL_SEQ_STEP;
    g_assert_true(moat_call_journal_note_srtp(j, 1, 1, &at));
    at.received.roc = 3;
    at.received.seq = 10;
    g_assert_true(moat_call_journal_note_srtp(j, 1, 1, &at));
    g_assert_false(moat_call_journal_note_srtp(j, MOAT_CALL_JOURNAL_MAX_STREAMS, 0, &at));
    moat_call_journal_srtp none;
    g_assert_false(moat_call_journal_resume_srtp(j, 1, 1, &none)); /* live, not read back */
    GByteArray *record = g_byte_array_new();
    g_assert_true(moat_call_journal_encode(j, "rt-1", 1234, record));
    moat_call_journal_free(j);

    moat_call_journal_header header;
    char error[192] = "";
    j = moat_call_journal_decode(record->data, record->len, &header, error, sizeof error);
    g_assert_nonnull(j);
    g_assert_cmpstr(header.call_id, ==, "rt-1");
    g_assert_cmpint(header.created_s, ==, 1234);
    GPtrArray *steps = moat_call_journal_take_steps(j);
    g_assert_cmpuint(steps->len, ==, 1);
    g_assert_null(moat_call_journal_take_steps(j));
    g_ptr_array_unref(steps);
    g_assert_false(moat_call_journal_replayed_all(j));
    g_assert_true(moat_call_journal_take_ports(j, got));
    g_assert_cmpuint(got[0], ==, 40000);
    g_assert_cmpuint(got[1], ==, 40002);
    g_assert_false(moat_call_journal_take_ports(j, got));
    g_assert_true(moat_call_journal_take_key(j, back, sizeof back));
    g_assert_cmpmem(back, sizeof back, key, sizeof key);
    g_assert_true(moat_call_journal_replayed_all(j));
    moat_call_journal_srtp resumed;
    g_assert_true(moat_call_journal_resume_srtp(j, 1, 1, &resumed));
    g_assert_cmpmem(&resumed, sizeof resumed, &at, sizeof at);
    g_assert_false(moat_call_journal_resume_srtp(j, 1, 0, &resumed));
    g_assert_false(moat_call_journal_note_srtp(j, 1, 1, &at)); /* the live copy too */
    moat_call_journal_end_resume(j);
    g_assert_false(moat_call_journal_resume_srtp(j, 1, 1, &resumed));
    moat_call_journal_free(j);
    g_byte_array_free(record, TRUE);
}

static void test_journal_limits(void)
{
    /* Steps past the limit, a step without a dictionary, a key of another
     * length: unrestorable, and no record. */
    moat_call_journal *j = moat_call_journal_new();
    moat_bencode *d = moat_bencode_new_dictionary();
    for (int i = 0; i < MOAT_CALL_JOURNAL_MAX_STEPS; i++)
        moat_call_journal_add_step(j, d);
    g_assert_true(moat_call_journal_restorable(j));
    moat_call_journal_add_step(j, d);
    g_assert_false(moat_call_journal_restorable(j));
    GByteArray *record = g_byte_array_new();
    g_assert_false(moat_call_journal_encode(j, "x", 0, record));
    g_assert_cmpuint(record->len, ==, 0);
    moat_call_journal_free(j);

    j = moat_call_journal_new();
    moat_call_journal_add_step(j, NULL);
    g_assert_false(moat_call_journal_restorable(j));
    moat_call_journal_free(j);

    j = moat_call_journal_new();
    uint8_t key[64] = {1};
    moat_call_journal_add_key(j, key, 0);
    g_assert_false(moat_call_journal_restorable(j));
    moat_call_journal_free(j);
    j = moat_call_journal_new();
    moat_call_journal_add_key(j, key, MOAT_CALL_JOURNAL_MAX_KEY + 1);
    g_assert_false(moat_call_journal_restorable(j));
    moat_call_journal_free(j);
    j = moat_call_journal_new();
    uint16_t ports[2] = {2, 4};
    for (int i = 0; i < MOAT_CALL_JOURNAL_MAX_PORTS / 2; i++)
        moat_call_journal_add_ports(j, ports);
    g_assert_true(moat_call_journal_restorable(j));
    moat_call_journal_add_ports(j, ports);
    g_assert_false(moat_call_journal_restorable(j));
    moat_call_journal_free(j);
    moat_bencode_free(d);
    g_byte_array_free(record, TRUE);
}

static void refused(const char *text, const char *why)
{
    moat_call_journal_header header;
    char error[192] = "";
    moat_call_journal *j =
        moat_call_journal_decode((const uint8_t *)text, strlen(text), &header, error, sizeof error);
    if (j)
        g_error("accepted: %s", text);
    g_assert_nonnull(strstr(error, why));
}

static void test_journal_refusals(void)
{
    const char *step = "d7:command5:offere"; /* 18 octets */
    char text[512];
    refused("", "not a bencode dictionary");
    refused("li1ee", "not a bencode dictionary");
    refused("d1:vi2ee", "not a version 1");
    refused("d1:vi1ee", "bad \"call-id\"");
    refused("d7:call-id0:1:vi1ee", "bad \"call-id\"");
    refused("d7:call-id1:x1:vi1ee", "bad \"created\"");
    refused("d7:call-id1:x7:createdi0e1:vi1ee", "\"steps\" is missing");
    refused("d7:call-id1:x7:createdi0e5:stepsle1:vi1ee", "no steps");
    refused("d7:call-id1:x7:createdi0e5:stepsl3:abce1:vi1ee", "step 0 is not an ng dictionary");
    snprintf(text, sizeof text, "d7:call-id1:x7:createdi0e5:stepsl18:%se1:vi1ee", step);
    refused(text, "\"ports\" is missing");
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsli2ee5:stepsl18:%se1:vi1ee", step);
    refused(text, "odd number of ports");
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsli0ei2ee5:stepsl18:%se1:vi1ee", step);
    refused(text, "port 0 is not a port number");
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsli2ei65536ee5:stepsl18:%se1:vi1ee", step);
    refused(text, "port 1 is not a port number");
    snprintf(text, sizeof text, "d7:call-id1:x7:createdi0e4:keysl0:e5:portsle5:stepsl18:%se1:vi1ee",
             step);
    refused(text, "key 0 is not");
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsle4:srtplli16ei0ei1ei1ei1ei1ei1ei1ei3eee"
             "5:stepsl18:%se1:vi1ee",
             step);
    refused(text, "srtp entry 0 is not 9 integers in range"); /* stream 16 */
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsle4:srtplli0ei0ei1ei1ei65536ei1ei1ei1ei3eee"
             "5:stepsl18:%se1:vi1ee",
             step);
    refused(text, "srtp entry 0 is not 9 integers in range"); /* sequence 65536 */
    snprintf(text, sizeof text,
             "d7:call-id1:x7:createdi0e4:keysle5:portsle4:srtplli0ei0ee"
             "e5:stepsl18:%se1:vi1ee",
             step);
    refused(text, "srtp entry 0 is not 9 integers in range"); /* too short */
    GString *many = g_string_new("d7:call-id1:x7:createdi0e4:keysle5:portsl");
    for (int i = 0; i <= MOAT_CALL_JOURNAL_MAX_PORTS; i++)
        g_string_append(many, "i2e");
    g_string_append_printf(many, "e5:stepsl18:%se1:vi1ee", step);
    refused(many->str, "\"ports\" has more than");
    g_string_free(many, TRUE);
    /* Over the size limit: refused before it is parsed. */
    size_t big = MOAT_CALL_JOURNAL_MAX_BYTES + 1;
    uint8_t *huge = g_malloc0(big);
    moat_call_journal_header header;
    char error[192] = "";
    g_assert_null(moat_call_journal_decode(huge, big, &header, error, sizeof error));
    g_assert_nonnull(strstr(error, "record over"));
    g_free(huge);
}

static uint16_t port_of(call_fixture *f, const char *id, int side)
{
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f->registry, id, &view), ==, 0);
    return view.sides[side].media[0].local_port;
}

static void test_registry_restore(void)
{
    store s;
    store_init(&s);
    moat_call_journal_sink sink = {store_put, store_remove, &s};
    call_fixture f;
    call_fixture_setup(&f, PORT_MIN, PORT_MAX);
    moat_call_registry_set_journal(f.registry, &sink, 0);
    uint16_t caller_port, callee_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);

    /* Plain caller, SDES callee: Moat writes keys on the offer. */
    char *offer_sdp = call_phone_sdp(caller_port, NULL, 0);
    char *offered = run(f.registry, "offer", "keep-1", "a", NULL, offer_sdp, "RTP/SAVP");
    moat_call_sdp parsed = call_parse_sdp(offered);
    moat_sdp_crypto callee_key = parsed.media[0].crypto[0];
    char *answer_sdp = call_phone_sdp(callee_port, &callee_key, 1); /* picks Moat's first */
    char *answered = run(f.registry, "answer", "keep-1", "a", "b", answer_sdp, NULL);
    /* A re-offer from the caller (Kamailio's in-dialog offer): new keys. */
    char *reoffered = run(f.registry, "offer", "keep-1", "a", "b", offer_sdp, "RTP/SAVP");
    g_assert_cmpuint(s.puts, ==, 3);
    g_assert_true(g_hash_table_contains(s.records, "keep-1"));
    /* A re-offer that fails after Moat wrote its keys (its one codec
     * stripped: the rewrite fails): nobody got them, the journal forgets them (else a replay of
     * the offers that succeeded would take the wrong keys). */
    command bad;
    command_make(&bad, "offer", "keep-1", "a", "b", offer_sdp, "RTP/SAVP");
    moat_bencode *codec = moat_bencode_new_dictionary(), *names = moat_bencode_new_list();
    moat_bencode_append(names, moat_bencode_new_cstring("PCMA"));
    moat_bencode_set(codec, "strip", names);
    moat_bencode_set(bad.dictionary, "codec", codec);
    moat_ng_request_clear(&bad.request);
    char why[160];
    g_assert_cmpint(moat_ng_request_parse(bad.dictionary, &bad.request, why, sizeof why), ==, 0);
    moat_call_reply failed = {0};
    moat_call_offer(f.registry, &bad.request, &failed);
    g_assert_nonnull(strstr(failed.error, "no codec left"));
    moat_call_reply_clear(&failed);
    command_clear(&bad);
    g_assert_cmpuint(s.puts, ==, 3);
    /* The callee answers the re-offer that succeeded: this record holds
     * the keys of every offer that succeeded, and no other. */
    moat_call_sdp reparsed = call_parse_sdp(reoffered);
    moat_sdp_crypto rekey = reparsed.media[0].crypto[0];
    char *reanswer_sdp = call_phone_sdp(callee_port, &rekey, 1);
    g_free(run(f.registry, "answer", "keep-1", "a", "b", reanswer_sdp, NULL));
    g_free(reanswer_sdp);
    g_assert_cmpuint(s.puts, ==, 4);
    uint16_t ports[2] = {port_of(&f, "keep-1", 0), port_of(&f, "keep-1", 1)};
    GBytes *record = g_bytes_ref(g_hash_table_lookup(s.records, "keep-1"));

    /* The process ends: freeing the registry leaves the record. */
    call_fixture_teardown(&f);
    g_assert_cmpuint(s.removes, ==, 0);

    call_fixture_setup(&f, PORT_MIN, PORT_MAX);
    moat_call_registry_set_journal(f.registry, &sink, 0);
    gsize length = 0;
    const uint8_t *data = g_bytes_get_data(record, &length);
    char error[192] = "";
    g_assert_cmpint(moat_call_registry_restore(f.registry, data, length, error, sizeof error), ==,
                    MOAT_CALL_RESTORED);
    g_assert_cmpuint(s.puts, ==, 4); /* replaying puts nothing */
    g_assert_cmpuint(port_of(&f, "keep-1", 0), ==, ports[0]);
    g_assert_cmpuint(port_of(&f, "keep-1", 1), ==, ports[1]);
    /* Once more: the call exists. */
    g_assert_cmpint(moat_call_registry_restore(f.registry, data, length, error, sizeof error), ==,
                    MOAT_CALL_RESTORE_SKIPPED);
    /* What the restored call would put is the record it came from, byte for
     * byte (same steps, ports and keys; the keys reaching the SRTP legs is
     * tests/integration/test_cluster_calls.py's). */
    moat_call_registry_journal_all(f.registry);
    g_assert_cmpuint(s.puts, ==, 5);
    g_assert_true(g_bytes_equal(g_hash_table_lookup(s.records, "keep-1"), record));

    /* Ports taken by somebody else: the restore fails and leaves nothing. */
    moat_call_journal_sink none = {0};
    moat_call_registry_set_journal(f.registry, &none, 0);
    command del;
    command_make(&del, "delete", "keep-1", "a", NULL, NULL, NULL);
    moat_call_reply reply = {0};
    del.request.delete_delay_s = 0;
    moat_call_delete(f.registry, &del.request, &reply);
    command_clear(&del);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    call_fixture_teardown(&f);
    call_fixture_setup(&f, PORT_MIN, PORT_MAX);
    /* Hold the caller-side pair's RTP port. */
    int blocker = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 at = {.sin6_family = AF_INET6, .sin6_port = htons(ports[1])};
    int off = 0;
    setsockopt(blocker, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    g_assert_cmpint(bind(blocker, (struct sockaddr *)&at, sizeof at), ==, 0);
    g_assert_cmpint(moat_call_registry_restore(f.registry, data, length, error, sizeof error), ==,
                    MOAT_CALL_RESTORE_FAILED);
    g_assert_nonnull(strstr(error, "Ran out of ports"));
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    close(blocker);
    /* Freed: its port back, the record restores now. */
    g_assert_cmpint(moat_call_registry_restore(f.registry, data, length, error, sizeof error), ==,
                    MOAT_CALL_RESTORED);

    /* A delete withdraws the record. */
    g_hash_table_destroy(s.records);
    store_init(&s);
    moat_call_registry_set_journal(f.registry, &sink, 0);
    moat_call_registry_journal_all(f.registry);
    g_assert_cmpuint(s.puts, ==, 1);
    command_make(&del, "delete", "keep-1", "a", NULL, NULL, NULL);
    reply = (moat_call_reply){0};
    moat_call_delete(f.registry, &del.request, &reply); /* with delete-delay: withdrawn now */
    command_clear(&del);
    g_assert_cmpuint(s.removes, ==, 1);
    g_assert_false(g_hash_table_contains(s.records, "keep-1"));
    call_fixture_teardown(&f);

    g_hash_table_destroy(s.records);
    g_bytes_unref(record);
    g_free(offer_sdp);
    g_free(offered);
    g_free(answer_sdp);
    g_free(answered);
    g_free(reoffered);
    close(caller);
    close(callee);
}

static void test_restored_idle(void)
{
    store s;
    store_init(&s);
    moat_call_journal_sink sink = {store_put, store_remove, &s};
    call_fixture f;
    call_fixture_setup(&f, PORT_MIN, PORT_MAX);
    moat_call_registry_set_journal(f.registry, &sink, 0);
    uint16_t caller_port, callee_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    char *offer_sdp = call_phone_sdp(caller_port, NULL, 0);
    char *answer_sdp = call_phone_sdp(callee_port, NULL, 0);
    const char *ids[] = {"idle-1", "back-1"};
    for (int i = 0; i < 2; i++) {
        g_free(run(f.registry, "offer", ids[i], "a", NULL, offer_sdp, NULL));
        g_free(run(f.registry, "answer", ids[i], "a", "b", answer_sdp, NULL));
    }
    GBytes *records[2] = {g_bytes_ref(g_hash_table_lookup(s.records, ids[0])),
                          g_bytes_ref(g_hash_table_lookup(s.records, ids[1]))};
    call_fixture_teardown(&f);

    call_fixture_setup(&f, PORT_MIN, PORT_MAX);
    moat_call_registry_set_journal(f.registry, &sink, 5);
    char error[192] = "";
    for (int i = 0; i < 2; i++) {
        gsize length = 0;
        const uint8_t *data = g_bytes_get_data(records[i], &length);
        g_assert_cmpint(moat_call_registry_restore(f.registry, data, length, error, sizeof error),
                        ==, MOAT_CALL_RESTORED);
    }
    int64_t restored = g_get_monotonic_time();
    uint8_t packet[172] = {0x80, 8, 0, 1, 0, 0, 0, 160, 0x11, 0x22, 0x33, 0x44};
    call_send_to(caller, port_of(&f, "back-1", 0), packet, sizeof packet);
    for (int i = 0;; i++) {
        moat_call_view view;
        g_assert_cmpint(moat_call_query(f.registry, "back-1", &view), ==, 0);
        if (view.sides[0].media[0].counters.rtp.packets == 1)
            break;
        g_assert_cmpint(i, <, 200);
        g_usleep(10000);
    }
    moat_call_registry_sweep(f.registry, restored + 4 * G_USEC_PER_SEC);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 2);
    moat_call_registry_sweep(f.registry, restored + 5 * G_USEC_PER_SEC);
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "idle-1", &view), ==, -1);
    g_assert_cmpint(moat_call_query(f.registry, "back-1", &view), ==, 0);
    g_assert_false(g_hash_table_contains(s.records, "idle-1")); /* withdrawn */
    g_assert_true(g_hash_table_contains(s.records, "back-1"));
    GString *metrics = g_string_new(NULL);
    moat_call_registry_metrics(f.registry, metrics);
    g_assert_nonnull(strstr(metrics->str, "moat_calls_restored_total{outcome=\"idle\"} 1\n"));
    g_string_free(metrics, TRUE);
    call_fixture_teardown(&f);

    g_hash_table_destroy(s.records);
    g_bytes_unref(records[0]);
    g_bytes_unref(records[1]);
    g_free(offer_sdp);
    g_free(answer_sdp);
    close(caller);
    close(callee);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call_journal/round_trip", test_journal_round_trip);
    g_test_add_func("/call_journal/limits", test_journal_limits);
    g_test_add_func("/call_journal/refusals", test_journal_refusals);
    g_test_add_func("/call_restore/registry", test_registry_restore);
    g_test_add_func("/call_restore/idle", test_restored_idle);
    return g_test_run();
}
