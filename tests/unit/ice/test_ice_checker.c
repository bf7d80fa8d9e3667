/* moat_ice_checker against requests from libnice's client side (interop) and
 * against hand-made hostile ones. */
#include "ice/ice_checker.h"
#include "stun_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include <glib.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

#define PRIORITY    0x6E7F1EFFu
#define TIE_BREAKER 0x0123456789ABCDEFull

typedef struct {
    moat_ice_check_result result;
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length;
    moat_ice_check_info info;
} outcome;

static struct sockaddr_in v4_sender(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(40000)};
    g_assert_cmpint(inet_pton(AF_INET, "198.51.100.7", &a.sin_addr), ==, 1);
    return a;
}

static struct sockaddr_in6 v6_sender(const char *text, uint16_t port)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    g_assert_cmpint(inet_pton(AF_INET6, text, &a.sin6_addr), ==, 1);
    return a;
}

/* Runs the checker with the test session's credentials; the reply buffer is
 * pre-filled so that "nothing written" can be asserted byte for byte. */
static moat_ice_check_result run_with(moat_ice_checker *c, const uint8_t *request, size_t length,
                                      const char *remote_ufrag, const struct sockaddr *from,
                                      socklen_t from_length, outcome *out)
{
    memset(out->reply, 0xA5, sizeof out->reply);
    out->reply_length = sizeof out->reply;
    memset(&out->info, 0x5A, sizeof out->info);
    out->result = moat_ice_checker_handle_request(c, request, length, TEST_LOCAL_UFRAG,
                                                  TEST_LOCAL_PWD, remote_ufrag, from, from_length,
                                                  out->reply, &out->reply_length, &out->info);
    return out->result;
}

static moat_ice_check_result run(moat_ice_checker *c, const uint8_t *request, size_t length,
                                 outcome *out)
{
    struct sockaddr_in from = v4_sender();
    return run_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from, sizeof from,
                    out);
}

static void assert_nothing_written(const outcome *out)
{
    g_assert_cmpuint(out->reply_length, ==, 0);
    for (size_t i = 0; i < sizeof out->reply; i++)
        g_assert_cmpuint(out->reply[i], ==, 0xA5);
    moat_ice_check_info zero = {0};
    g_assert_cmpmem(&out->info, sizeof out->info, &zero, sizeof zero);
}

/* The reply must pass the peer's own validation (MESSAGE-INTEGRITY with the
 * password it used, FINGERPRINT, transaction) and map to the sender. */
static void assert_reply_maps_to(StunAgent *client, const uint8_t *request, const outcome *out,
                                 const struct sockaddr *expected)
{
    StunMessage msg;
    g_assert_cmpint(stun_agent_validate(client, &msg, out->reply, out->reply_length, NULL, NULL),
                    ==, STUN_VALIDATION_SUCCESS);
    g_assert_cmpint(stun_message_get_class(&msg), ==, STUN_RESPONSE);
    g_assert_cmpint(stun_message_get_method(&msg), ==, STUN_BINDING);
    g_assert_cmpmem(out->reply + 8, 12, request + 8, 12);

    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    g_assert_cmpint(stun_usage_ice_conncheck_process(&msg, &mapped, &mapped_length,
                                                     STUN_USAGE_ICE_COMPATIBILITY_RFC5245),
                    ==, STUN_USAGE_ICE_RETURN_SUCCESS);
    g_assert_cmpint(mapped.ss_family, ==, expected->sa_family);
    if (expected->sa_family == AF_INET) {
        const struct sockaddr_in *want = (const struct sockaddr_in *)expected;
        const struct sockaddr_in *got = (const struct sockaddr_in *)&mapped;
        g_assert_cmpuint(mapped_length, ==, sizeof *got);
        g_assert_cmpuint(got->sin_port, ==, want->sin_port);
        g_assert_cmpuint(got->sin_addr.s_addr, ==, want->sin_addr.s_addr);
    } else {
        const struct sockaddr_in6 *want = (const struct sockaddr_in6 *)expected;
        const struct sockaddr_in6 *got = (const struct sockaddr_in6 *)&mapped;
        g_assert_cmpuint(mapped_length, ==, sizeof *got);
        g_assert_cmpuint(got->sin6_port, ==, want->sin6_port);
        g_assert_cmpmem(&got->sin6_addr, 16, &want->sin6_addr, 16);
    }
}

static size_t valid_request(StunAgent *client, uint8_t *buffer, size_t capacity)
{
    test_client_init(client, true);
    return test_client_request(client, buffer, capacity, TEST_USERNAME, TEST_LOCAL_PWD, true, true,
                               PRIORITY, TIE_BREAKER);
}

static void test_ipv4_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    struct sockaddr_in from = v4_sender();
    outcome out;

    g_assert_cmpint(run_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                             sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    g_assert_true(out.info.use_candidate);
    g_assert_true(out.info.peer_controlling);
    g_assert_cmpuint(out.info.priority, ==, PRIORITY);
    g_assert_cmpuint(out.info.tie_breaker, ==, TIE_BREAKER);
    g_assert_cmpuint(out.reply_length, >, 20);
    g_assert_cmpuint(out.reply_length, <=, MOAT_ICE_REPLY_CAPACITY);
    assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_v4_mapped_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    struct sockaddr_in6 from = v6_sender("::ffff:127.0.0.1", 5000);
    outcome out;

    g_assert_cmpint(run_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                             sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    struct sockaddr_in expected = {.sin_family = AF_INET, .sin_port = htons(5000)};
    expected.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&expected);

    /* On the wire: family 0x01 and an 8-byte value, as a browser expects. */
    StunMessage msg = {.buffer = out.reply, .buffer_len = out.reply_length};
    uint16_t attribute_length = 0;
    const uint8_t *xor_mapped =
        stun_message_find(&msg, STUN_ATTRIBUTE_XOR_MAPPED_ADDRESS, &attribute_length);
    g_assert_nonnull(xor_mapped);
    g_assert_cmpuint(attribute_length, ==, 8);
    g_assert_cmpuint(xor_mapped[1], ==, 0x01);
    moat_ice_checker_free(c);
}

static void test_ipv6_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    struct sockaddr_in6 from = v6_sender("2001:db8::5", 61000);
    outcome out;

    g_assert_cmpint(run_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                             sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_unknown_remote_ufrag(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    struct sockaddr_in from = v4_sender();
    outcome out;

    g_assert_cmpint(run_with(c, request, length, NULL, (struct sockaddr *)&from, sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_without_use_candidate(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, true, 1234, 99);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
    g_assert_false(out.info.use_candidate);
    g_assert_true(out.info.peer_controlling);
    g_assert_cmpuint(out.info.priority, ==, 1234);
    g_assert_cmpuint(out.info.tie_breaker, ==, 99);
    moat_ice_checker_free(c);
}

/* The checker must not keep per-request state: more requests than libnice's
 * transaction table holds all succeed, each from a fresh peer. */
static void test_many_requests(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    for (int i = 0; i < 3 * STUN_AGENT_MAX_SAVED_IDS; i++) {
        StunAgent client;
        uint8_t request[512];
        size_t length = valid_request(&client, request, sizeof request);
        outcome out;
        g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
        struct sockaddr_in from = v4_sender();
        assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    }
    moat_ice_checker_free(c);
}

static void test_wrong_password(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        "not-the-right-password!!", true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_wrong_ufrags(void)
{
    static const char *const usernames[] = {
        "Lk9fQm2y:" TEST_REMOTE_UFRAG, /* other local ufrag */
        TEST_LOCAL_UFRAG ":rEmX",      /* other remote ufrag */
        TEST_LOCAL_UFRAG,              /* no separator */
        TEST_LOCAL_UFRAG ":",          /* empty remote part */
        TEST_LOCAL_UFRAG "x:" TEST_REMOTE_UFRAG,
        ":" TEST_REMOTE_UFRAG,
        TEST_REMOTE_UFRAG ":" TEST_LOCAL_UFRAG, /* halves swapped */
    };
    moat_ice_checker *c = moat_ice_checker_new();
    for (size_t i = 0; i < G_N_ELEMENTS(usernames); i++) {
        StunAgent client;
        uint8_t request[512];
        test_client_init(&client, true);
        size_t length = test_client_request(&client, request, sizeof request, usernames[i],
                                            TEST_LOCAL_PWD, true, true, PRIORITY, 1);
        outcome out;
        g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
        assert_nothing_written(&out);
    }
    moat_ice_checker_free(c);
}

static void test_missing_fingerprint(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, false);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_BAD_FINGERPRINT);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_wrong_fingerprint(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    request[length - 1] ^= 0x01;
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_BAD_FINGERPRINT);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_missing_integrity(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME, NULL, true,
                                        true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_missing_username(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, NULL, TEST_LOCAL_PWD,
                                        true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_truncated_everywhere(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    outcome out;

    for (size_t cut = 0; cut < length; cut++) {
        /* A heap copy of exactly cut bytes lets ASan see any overread. */
        uint8_t *copy = g_memdup2(request, cut);
        g_assert_cmpint(run(c, copy, cut, &out), ==, MOAT_ICE_CHECK_MALFORMED);
        assert_nothing_written(&out);
        g_free(copy);
    }
    /* Also with the header's length field rewritten to match the cut, so the
     * attribute walk itself meets the truncation. */
    for (size_t cut = 20; cut < length; cut += 4) {
        uint8_t *copy = g_memdup2(request, cut);
        copy[2] = (uint8_t)((cut - 20) >> 8);
        copy[3] = (uint8_t)(cut - 20);
        g_assert_cmpint(run(c, copy, cut, &out), !=, MOAT_ICE_CHECK_OK);
        assert_nothing_written(&out);
        g_free(copy);
    }
    moat_ice_checker_free(c);
}

static void test_every_bit_flip_rejected(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    outcome out;

    for (size_t i = 0; i < length * 8; i++) {
        uint8_t *copy = g_memdup2(request, length);
        copy[i / 8] ^= (uint8_t)(1u << (i % 8));
        moat_ice_check_result r = run(c, copy, length, &out);
        g_assert_cmpint(r, !=, MOAT_ICE_CHECK_OK);
        g_assert_cmpint(r, !=, MOAT_ICE_CHECK_ROLE_CONFLICT);
        assert_nothing_written(&out);
        g_free(copy);
    }
    moat_ice_checker_free(c);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* A Binding request header with the magic cookie and body_length. */
static void put_header(uint8_t *p, uint16_t type, uint16_t body_length)
{
    put16(p, type);
    put16(p + 2, body_length);
    static const uint8_t cookie_and_id[16] = {0x21, 0x12, 0xA4, 0x42, 1, 2,  3,  4,
                                              5,    6,    7,    8,    9, 10, 11, 12};
    memcpy(p + 4, cookie_and_id, sizeof cookie_and_id);
}

static void test_attribute_past_end(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    uint8_t *request = g_malloc0(32);
    put_header(request, 0x0001, 12);
    put16(request + 20, 0x0006); /* USERNAME claiming 200 bytes, 8 present */
    put16(request + 22, 200);
    memcpy(request + 24, TEST_LOCAL_UFRAG, 8);
    outcome out;

    g_assert_cmpint(run(c, request, 32, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    assert_nothing_written(&out);

    /* A valid PRIORITY, then an attribute whose 8-byte value is missing. */
    memset(request, 0, 32);
    put_header(request, 0x0001, 12);
    put16(request + 20, 0x0024);
    put16(request + 22, 4);
    put16(request + 28, 0x0025);
    put16(request + 30, 8);
    g_assert_cmpint(run(c, request, 32, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    assert_nothing_written(&out);
    g_free(request);
    moat_ice_checker_free(c);
}

/* RFC 8489 §14.7: CRC-32 (ISO HDLC) of the message up to FINGERPRINT, XOR
 * 0x5354554e. Bitwise: speed does not matter in a test. */
static uint32_t stun_fingerprint_of(const uint8_t *data, size_t length)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc ^ 0x5354554Eu;
}

/* libnice hashes 20 bytes from MESSAGE-INTEGRITY whatever its length says;
 * a short one placed last, behind a correct FINGERPRINT so that libnice would
 * get that far, must be refused before it reads 8 bytes past the datagram.
 * (libnice is not instrumented, so ASan cannot see that read: the result
 * code is what proves the refusal.) */
static void test_short_integrity_attribute(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t full[512];
    size_t length = valid_request(&client, full, sizeof full);
    /* Keep everything before MESSAGE-INTEGRITY, then put a 4-byte one and a
     * FINGERPRINT. */
    size_t integrity_at = length - 8 - 24;
    uint32_t libnice_crc = stun_fingerprint_of(full, length - 8);
    g_assert_cmpuint(full[length - 4], ==, (uint8_t)(libnice_crc >> 24));
    g_assert_cmpuint(full[length - 1], ==, (uint8_t)libnice_crc);
    g_assert_cmpuint(full[integrity_at], ==, 0x00);
    g_assert_cmpuint(full[integrity_at + 1], ==, 0x08);
    size_t short_length = integrity_at + 8 + 8;
    uint8_t *request = g_malloc0(short_length);
    memcpy(request, full, integrity_at);
    put16(request + 2, (uint16_t)(short_length - 20));
    put16(request + integrity_at, 0x0008);
    put16(request + integrity_at + 2, 4);
    put16(request + integrity_at + 8, 0x8028);
    put16(request + integrity_at + 10, 4);
    uint32_t crc = stun_fingerprint_of(request, integrity_at + 8);
    put16(request + integrity_at + 12, (uint16_t)(crc >> 16));
    put16(request + integrity_at + 14, (uint16_t)crc);
    outcome out;

    g_assert_cmpint(run(c, request, short_length, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    assert_nothing_written(&out);
    g_free(request);
    moat_ice_checker_free(c);
}

typedef struct {
    bool priority;
    bool controlling;
    bool controlled;
    uint16_t extra_type; /* 0: none */
    uint16_t method;
} custom_request;

/* Requests libnice's conncheck usage would never build, authenticated with
 * the right password so that only the property under test is wrong. */
static size_t build_custom(StunAgent *client, uint8_t *buffer, size_t capacity,
                           const custom_request *spec)
{
    StunMessage msg;
    test_client_init(client, true);
    g_assert_true(stun_agent_init_request(client, &msg, buffer, capacity, spec->method));
    if (spec->priority)
        g_assert_cmpint(stun_message_append32(&msg, STUN_ATTRIBUTE_PRIORITY, 7), ==, 0);
    if (spec->controlling)
        g_assert_cmpint(stun_message_append64(&msg, STUN_ATTRIBUTE_ICE_CONTROLLING, 5), ==, 0);
    if (spec->controlled)
        g_assert_cmpint(stun_message_append64(&msg, STUN_ATTRIBUTE_ICE_CONTROLLED, 5), ==, 0);
    if (spec->extra_type != 0)
        g_assert_cmpint(stun_message_append32(&msg, spec->extra_type, 1), ==, 0);
    g_assert_cmpint(stun_message_append_string(&msg, STUN_ATTRIBUTE_USERNAME, TEST_USERNAME), ==,
                    0);
    size_t length = stun_agent_finish_message(client, &msg, (const uint8_t *)TEST_LOCAL_PWD,
                                              strlen(TEST_LOCAL_PWD));
    g_assert_cmpuint(length, >, 20);
    return length;
}

static void test_custom_requests(void)
{
    static const struct {
        custom_request spec;
        moat_ice_check_result expected;
    } cases[] = {
        {{true, true, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_OK},
        {{false, true, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED}, /* no PRIORITY */
        {{true, false, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED}, /* no role */
        {{true, true, true, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED},   /* both roles */
        /* GOOG-NETWORK-INFO is comprehension-optional: ignored. */
        {{true, true, false, 0xC057, STUN_BINDING}, MOAT_ICE_CHECK_OK},
        /* An unknown comprehension-required attribute may not be ignored. */
        {{true, true, false, 0x0031, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED},
        {{true, true, false, 0, STUN_ALLOCATE}, MOAT_ICE_CHECK_NOT_REQUEST},
    };
    moat_ice_checker *c = moat_ice_checker_new();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        StunAgent client;
        uint8_t request[512];
        size_t length = build_custom(&client, request, sizeof request, &cases[i].spec);
        outcome out;
        g_test_message("case %zu", i);
        g_assert_cmpint(run(c, request, length, &out), ==, cases[i].expected);
        if (cases[i].expected == MOAT_ICE_CHECK_OK) {
            struct sockaddr_in from = v4_sender();
            assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
        } else {
            assert_nothing_written(&out);
        }
    }
    moat_ice_checker_free(c);
}

static void test_not_requests(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t message[512];
    StunMessage msg;
    outcome out;

    test_client_init(&client, true);
    g_assert_true(stun_agent_init_indication(&client, &msg, message, sizeof message, STUN_BINDING));
    size_t length = stun_agent_finish_message(&client, &msg, NULL, 0);
    g_assert_cmpint(run(c, message, length, &out), ==, MOAT_ICE_CHECK_NOT_REQUEST);
    assert_nothing_written(&out);

    /* A Binding success response (our own reply) fed back in. */
    uint8_t request[512];
    length = valid_request(&client, request, sizeof request);
    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
    uint8_t response[MOAT_ICE_REPLY_CAPACITY];
    size_t response_length = out.reply_length;
    memcpy(response, out.reply, response_length);
    g_assert_cmpint(run(c, response, response_length, &out), ==, MOAT_ICE_CHECK_NOT_REQUEST);
    assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

/* A peer that claims ICE-CONTROLLED against a lite agent is told to switch
 * with an authenticated 487, which libnice's client reads as a role conflict. */
static void test_role_conflict(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, false, PRIORITY, 77);
    outcome out;

    g_assert_cmpint(run(c, request, length, &out), ==, MOAT_ICE_CHECK_ROLE_CONFLICT);
    g_assert_false(out.info.peer_controlling);
    g_assert_cmpuint(out.info.tie_breaker, ==, 77);
    g_assert_cmpuint(out.reply_length, >, 20);

    StunMessage msg;
    g_assert_cmpint(stun_agent_validate(&client, &msg, out.reply, out.reply_length, NULL, NULL), ==,
                    STUN_VALIDATION_SUCCESS);
    int code = 0;
    g_assert_cmpint(stun_message_find_error(&msg, &code), ==, STUN_MESSAGE_RETURN_SUCCESS);
    g_assert_cmpint(code, ==, 487);
    g_assert_nonnull(stun_message_find(&msg, STUN_ATTRIBUTE_MESSAGE_INTEGRITY, &(uint16_t){0}));
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    g_assert_cmpint(stun_usage_ice_conncheck_process(&msg, &mapped, &mapped_length,
                                                     STUN_USAGE_ICE_COMPATIBILITY_RFC5245),
                    ==, STUN_USAGE_ICE_RETURN_ROLE_CONFLICT);
    moat_ice_checker_free(c);
}

static void test_invalid_arguments(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = valid_request(&client, request, sizeof request);
    struct sockaddr_in from = v4_sender();
    const struct sockaddr *f = (const struct sockaddr *)&from;
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length;

#define CHECK(ufrag, pwd, remote, addr, addr_len, capacity)                                        \
    do {                                                                                           \
        reply_length = (capacity);                                                                 \
        g_assert_cmpint(moat_ice_checker_handle_request(c, request, length, ufrag, pwd, remote,    \
                                                        addr, addr_len, reply, &reply_length,      \
                                                        NULL),                                     \
                        ==, MOAT_ICE_CHECK_INVALID_ARGUMENT);                                      \
        g_assert_cmpuint(reply_length, ==, 0);                                                     \
    } while (0)

    /* An empty password would otherwise make libnice skip the HMAC. */
    CHECK(TEST_LOCAL_UFRAG, "", TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, NULL, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK("", TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(NULL, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, "", f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, NULL, 0, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from - 1, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from,
          MOAT_ICE_REPLY_CAPACITY - 1);
    struct sockaddr_un unix_from = {.sun_family = AF_UNIX};
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, (struct sockaddr *)&unix_from,
          sizeof unix_from, sizeof reply);
    struct sockaddr_in6 v6 = v6_sender("2001:db8::1", 1);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, (struct sockaddr *)&v6,
          sizeof(struct sockaddr_in), sizeof reply);
#undef CHECK

    g_assert_cmpint(moat_ice_checker_handle_request(c, request, length, TEST_LOCAL_UFRAG,
                                                    TEST_LOCAL_PWD, NULL, f, sizeof from, reply,
                                                    NULL, NULL),
                    ==, MOAT_ICE_CHECK_INVALID_ARGUMENT);
    moat_ice_checker_free(c);
    moat_ice_checker_free(NULL);
}

static void test_result_names(void)
{
    const char *seen[MOAT_ICE_CHECK_INVALID_ARGUMENT + 1];
    for (int r = MOAT_ICE_CHECK_OK; r <= MOAT_ICE_CHECK_INVALID_ARGUMENT; r++) {
        seen[r] = moat_ice_check_result_name((moat_ice_check_result)r);
        g_assert_nonnull(seen[r]);
        g_assert_cmpstr(seen[r], !=, "unknown");
        for (int k = 0; k < r; k++)
            g_assert_cmpstr(seen[k], !=, seen[r]);
    }
    g_assert_cmpstr(moat_ice_check_result_name(MOAT_ICE_CHECK_UNAUTHORIZED), ==, "unauthorized");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/checker/ipv4-sender", test_ipv4_sender);
    g_test_add_func("/ice/checker/v4-mapped-sender", test_v4_mapped_sender);
    g_test_add_func("/ice/checker/ipv6-sender", test_ipv6_sender);
    g_test_add_func("/ice/checker/unknown-remote-ufrag", test_unknown_remote_ufrag);
    g_test_add_func("/ice/checker/without-use-candidate", test_without_use_candidate);
    g_test_add_func("/ice/checker/many-requests", test_many_requests);
    g_test_add_func("/ice/checker/wrong-password", test_wrong_password);
    g_test_add_func("/ice/checker/wrong-ufrags", test_wrong_ufrags);
    g_test_add_func("/ice/checker/missing-fingerprint", test_missing_fingerprint);
    g_test_add_func("/ice/checker/wrong-fingerprint", test_wrong_fingerprint);
    g_test_add_func("/ice/checker/missing-integrity", test_missing_integrity);
    g_test_add_func("/ice/checker/missing-username", test_missing_username);
    g_test_add_func("/ice/checker/truncated-everywhere", test_truncated_everywhere);
    g_test_add_func("/ice/checker/every-bit-flip-rejected", test_every_bit_flip_rejected);
    g_test_add_func("/ice/checker/attribute-past-end", test_attribute_past_end);
    g_test_add_func("/ice/checker/short-integrity-attribute", test_short_integrity_attribute);
    g_test_add_func("/ice/checker/custom-requests", test_custom_requests);
    g_test_add_func("/ice/checker/not-requests", test_not_requests);
    g_test_add_func("/ice/checker/role-conflict", test_role_conflict);
    g_test_add_func("/ice/checker/invalid-arguments", test_invalid_arguments);
    g_test_add_func("/ice/checker/result-names", test_result_names);
    return g_test_run();
}
