/* moat_stun_classify and the bounded attribute walk. */
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"
#include "stun_test_bytes.h"
#include "stun_test_client.h"

#include <string.h>

#include <glib.h>

static void test_libnice_messages(void)
{
    StunAgent client;
    StunMessage msg;
    uint8_t buffer[512];

    size_t length = (test_client_init(&client, true),
                     test_client_request(&client, buffer, sizeof buffer, TEST_USERNAME,
                                         TEST_LOCAL_PWD, true, true, 1, 2));
    g_assert_cmpint(moat_stun_classify(buffer, length), ==, MOAT_STUN_BINDING_REQUEST);

    g_assert_true(stun_agent_init_indication(&client, &msg, buffer, sizeof buffer, STUN_BINDING));
    length = stun_agent_finish_message(&client, &msg, NULL, 0);
    g_assert_cmpint(moat_stun_classify(buffer, length), ==, MOAT_STUN_BINDING_INDICATION);

    g_assert_true(stun_agent_init_request(&client, &msg, buffer, sizeof buffer, STUN_ALLOCATE));
    length = stun_agent_finish_message(&client, &msg, NULL, 0);
    g_assert_cmpint(moat_stun_classify(buffer, length), ==, MOAT_STUN_OTHER);
}

static void test_header_classes(void)
{
    static const struct {
        uint16_t type;
        moat_stun_kind kind;
    } cases[] = {
        {0x0001, MOAT_STUN_BINDING_REQUEST},
        {0x0011, MOAT_STUN_BINDING_INDICATION},
        {0x0101, MOAT_STUN_BINDING_RESPONSE},
        {0x0111, MOAT_STUN_BINDING_RESPONSE},
        {0x0003, MOAT_STUN_OTHER},
        {0x0016, MOAT_STUN_OTHER},
        {0x0201, MOAT_STUN_OTHER},
        {0x3001, MOAT_STUN_OTHER},
    };
    uint8_t message[24] = {0};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        test_put_stun_header(message, cases[i].type, 4);
        g_assert_cmpint(moat_stun_classify(message, sizeof message), ==, cases[i].kind);
    }
}

static void test_malformed_headers(void)
{
    uint8_t message[64] = {0};

    test_put_stun_header(message, 0x0001, 8); /* says 8, carries 44 */
    g_assert_cmpint(moat_stun_classify(message, sizeof message), ==, MOAT_STUN_MALFORMED);
    test_put_stun_header(message, 0x0001, 42); /* matches the datagram, but not a multiple of 4 */
    g_assert_cmpint(moat_stun_classify(message, 62), ==, MOAT_STUN_MALFORMED);
    test_put_stun_header(message, 0x0001, 0xFFFC); /* says far more than was received */
    g_assert_cmpint(moat_stun_classify(message, sizeof message), ==, MOAT_STUN_MALFORMED);

    test_put_stun_header(message, 0x0001, 44);
    g_assert_cmpint(moat_stun_classify(message, sizeof message), ==, MOAT_STUN_BINDING_REQUEST);
    message[4] ^= 0x01; /* no magic cookie */
    g_assert_cmpint(moat_stun_classify(message, sizeof message), ==, MOAT_STUN_NOT_STUN);
}

static void test_short_input(void)
{
    uint8_t message[20] = {0};
    test_put_stun_header(message, 0x0001, 0);
    g_assert_cmpint(moat_stun_classify(message, 20), ==, MOAT_STUN_BINDING_REQUEST);
    for (size_t length = 0; length < 20; length++) {
        uint8_t *copy = g_memdup2(message, length);
        g_assert_cmpint(moat_stun_classify(copy, length), ==, MOAT_STUN_NOT_STUN);
        g_free(copy);
    }
    g_assert_cmpint(moat_stun_classify(NULL, 100), ==, MOAT_STUN_NOT_STUN);
}

static void test_rtp_and_dtls(void)
{
    /* RTP, version 2, PT 111, whose bytes 4..7 even hold the cookie. */
    uint8_t rtp[32] = {0x80, 0x6F, 0x00, 0x0C, 0x21, 0x12, 0xA4, 0x42, 0xDE, 0xAD, 0xBE, 0xEF};
    g_assert_cmpint(moat_stun_classify(rtp, sizeof rtp), ==, MOAT_STUN_NOT_STUN);
    uint8_t rtcp[28] = {0x81, 0xC8, 0x00, 0x06};
    g_assert_cmpint(moat_stun_classify(rtcp, sizeof rtcp), ==, MOAT_STUN_NOT_STUN);
    /* DTLS 1.2 handshake record: first octet 22 has its top bits clear, the
     * cookie check is what rejects it. */
    uint8_t dtls[60] = {0x16, 0xFE, 0xFD, 0x00, 0x00, 0x00, 0x00,
                        0x00, 0x00, 0x00, 0x00, 0x00, 0x30};
    g_assert_cmpint(moat_stun_classify(dtls, sizeof dtls), ==, MOAT_STUN_NOT_STUN);
    uint8_t dtls_app[40] = {0x17, 0xFE, 0xFD, 0x00, 0x01};
    g_assert_cmpint(moat_stun_classify(dtls_app, sizeof dtls_app), ==, MOAT_STUN_NOT_STUN);
}

static void test_random_bytes(void)
{
    GRand *rand = g_rand_new_with_seed(7983);
    for (int i = 0; i < 100000; i++) {
        uint8_t data[128];
        size_t length = (size_t)g_rand_int_range(rand, 0, sizeof data + 1);
        for (size_t k = 0; k < length; k++)
            data[k] = (uint8_t)g_rand_int(rand);
        if (length > 0 && (i & 1))
            data[0] &= 0x3F; /* half of them pass the first-octet test */
        moat_stun_kind kind = moat_stun_classify(data, length);
        g_assert_cmpint(kind, ==, MOAT_STUN_NOT_STUN);
    }
    g_rand_free(rand);
}

static void test_kind_names(void)
{
    for (int k = MOAT_STUN_NOT_STUN; k <= MOAT_STUN_OTHER; k++)
        g_assert_cmpstr(moat_stun_kind_name((moat_stun_kind)k), !=, "unknown");
    g_assert_cmpstr(moat_stun_kind_name(MOAT_STUN_BINDING_REQUEST), ==, "binding-request");
}

static void test_attribute_walk(void)
{
    uint8_t message[40] = {0};
    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;

    test_put_stun_header(message, 0x0001, 20);
    test_put16(message + 20, 0x0006); /* USERNAME "abc:d" padded to 8 */
    test_put16(message + 22, 5);
    memcpy(message + 24, "abc:d", 5);
    test_put16(message + 32, 0x0025); /* USE-CANDIDATE */
    test_put16(message + 34, 0);
    test_put16(message + 36, 0x8022); /* SOFTWARE, empty */
    test_put16(message + 38, 0);
    moat_stun_attribute_iter_init(&it, message, sizeof message);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 1);
    g_assert_cmpuint(attribute.type, ==, 0x0006);
    g_assert_cmpuint(attribute.length, ==, 5);
    g_assert_true(attribute.value == message + 24);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 1);
    g_assert_cmpuint(attribute.type, ==, 0x0025);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 1);
    g_assert_cmpuint(attribute.type, ==, 0x8022);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 0);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 0);

    /* A value whose padding runs past the end (13 -> 16 bytes, 12 left),
     * then a header cut in half: both -1, and the iterator stays failed. */
    test_put16(message + 22, 13);
    moat_stun_attribute_iter_init(&it, message, 36);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, -1);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, -1);
    test_put16(message + 22, 5);
    moat_stun_attribute_iter_init(&it, message, 34);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 1);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, -1);
    moat_stun_attribute_iter_init(&it, message, 19);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, -1);
    moat_stun_attribute_iter_init(&it, message, 20);
    g_assert_cmpint(moat_stun_attribute_next(&it, &attribute), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/stun-classify/libnice-messages", test_libnice_messages);
    g_test_add_func("/ice/stun-classify/header-classes", test_header_classes);
    g_test_add_func("/ice/stun-classify/malformed-headers", test_malformed_headers);
    g_test_add_func("/ice/stun-classify/short-input", test_short_input);
    g_test_add_func("/ice/stun-classify/rtp-and-dtls", test_rtp_and_dtls);
    g_test_add_func("/ice/stun-classify/random-bytes", test_random_bytes);
    g_test_add_func("/ice/stun-classify/kind-names", test_kind_names);
    g_test_add_func("/ice/stun-attributes/walk", test_attribute_walk);
    return g_test_run();
}
