/* DCEP parsing and building (RFC 8832) and the channel table. */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "sctp/data_channel.h"
#include "sctp/dcep.h"

/* DATA_CHANNEL_OPEN as Chromium sends it for
 * createDataChannel("chat", {ordered: false, maxRetransmits: 3, protocol: "p1"}). */
static const uint8_t chrome_open[] = {
    0x03, 0x81, 0x01, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00,
    0x04, 0x00, 0x02, 'c',  'h',  'a',  't',  'p',  '1',
};

static void test_parse_open(void)
{
    moat_dcep_message m;
    g_assert_cmpint(moat_dcep_parse(chrome_open, sizeof chrome_open, &m), ==, 0);
    g_assert_cmpuint(m.type, ==, MOAT_DCEP_OPEN);
    g_assert_cmpuint(m.channel_type, ==, 0x81);
    g_assert_cmpuint(m.priority, ==, 256);
    g_assert_cmpuint(m.reliability, ==, 3);
    g_assert_cmpuint(m.label_length, ==, 4);
    g_assert_cmpuint(m.protocol_length, ==, 2);

    moat_data_channel_info info;
    g_assert_cmpint(moat_dcep_open_to_info(&m, 6, &info), ==, 0);
    g_assert_cmpuint(info.stream_id, ==, 6);
    g_assert_cmpstr(info.label, ==, "chat");
    g_assert_cmpstr(info.protocol, ==, "p1");
    g_assert_false(info.ordered);
    g_assert_cmpint(info.max_retransmits, ==, 3);
    g_assert_cmpint(info.max_lifetime_ms, ==, -1);
    g_assert_false(info.negotiated);
}

static void test_parse_ack(void)
{
    moat_dcep_message m;
    const uint8_t ack[] = {0x02};
    g_assert_cmpint(moat_dcep_parse(ack, 1, &m), ==, 0);
    g_assert_cmpuint(m.type, ==, MOAT_DCEP_ACK);
    const uint8_t long_ack[] = {0x02, 0x00};
    g_assert_cmpint(moat_dcep_parse(long_ack, 2, &m), ==, -EBADMSG);
}

static void test_build_roundtrip(void)
{
    struct {
        bool ordered;
        int32_t rtx, ttl;
        uint8_t type;
    } cases[] = {
        {true, -1, -1, 0x00}, {false, -1, -1, 0x80},  {true, 5, -1, 0x01},
        {false, 0, -1, 0x81}, {true, -1, 1500, 0x02}, {false, -1, 0, 0x82},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        moat_data_channel_info in;
        memset(&in, 0, sizeof in);
        g_strlcpy(in.label, "label ünïcödé", sizeof in.label);
        g_strlcpy(in.protocol, i % 2 ? "" : "json", sizeof in.protocol);
        in.ordered = cases[i].ordered;
        in.max_retransmits = cases[i].rtx;
        in.max_lifetime_ms = cases[i].ttl;
        uint8_t buffer[600];
        size_t length = moat_dcep_build_open(&in, buffer, sizeof buffer);
        g_assert_cmpuint(length, ==, moat_dcep_open_length(&in));
        g_assert_cmpuint(buffer[1], ==, cases[i].type);
        g_assert_cmpuint(moat_dcep_build_open(&in, buffer, length - 1), ==, 0);

        moat_dcep_message m;
        moat_data_channel_info out;
        g_assert_cmpint(moat_dcep_parse(buffer, length, &m), ==, 0);
        g_assert_cmpint(moat_dcep_open_to_info(&m, 42, &out), ==, 0);
        g_assert_cmpstr(out.label, ==, in.label);
        g_assert_cmpstr(out.protocol, ==, in.protocol);
        g_assert_cmpint(out.ordered, ==, in.ordered);
        g_assert_cmpint(out.max_retransmits, ==, in.max_retransmits);
        g_assert_cmpint(out.max_lifetime_ms, ==, in.max_lifetime_ms);
    }
    uint8_t ack[1];
    g_assert_cmpuint(moat_dcep_build_ack(ack, sizeof ack), ==, 1);
    g_assert_cmpuint(ack[0], ==, MOAT_DCEP_ACK);
    g_assert_cmpuint(moat_dcep_build_ack(ack, 0), ==, 0);
}

static void test_parse_rejects(void)
{
    moat_dcep_message m;
    uint8_t buffer[64];
    memcpy(buffer, chrome_open, sizeof chrome_open);
    g_assert_cmpint(moat_dcep_parse(buffer, 0, &m), ==, -EBADMSG);
    g_assert_cmpint(moat_dcep_parse(NULL, 4, &m), ==, -EBADMSG);
    /* Every truncation of a valid OPEN. */
    for (size_t n = 1; n < sizeof chrome_open; n++)
        g_assert_cmpint(moat_dcep_parse(buffer, n, &m), ==, -EBADMSG);
    /* Trailing byte. */
    g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open + 1, &m), ==, -EBADMSG);
    /* Label length beyond the message. */
    buffer[8] = 0xff;
    buffer[9] = 0xff;
    g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open, &m), ==, -EBADMSG);
    memcpy(buffer, chrome_open, sizeof chrome_open);
    /* Protocol length beyond the message. */
    buffer[11] = 0x03;
    g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open, &m), ==, -EBADMSG);
    memcpy(buffer, chrome_open, sizeof chrome_open);
    /* Unknown channel type and message types. */
    buffer[1] = 0x03;
    g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open, &m), ==, -EPROTO);
    buffer[1] = 0x7f;
    g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open, &m), ==, -EPROTO);
    memcpy(buffer, chrome_open, sizeof chrome_open);
    for (unsigned type = 0; type < 256; type++) {
        if (type == MOAT_DCEP_OPEN || type == MOAT_DCEP_ACK)
            continue;
        buffer[0] = (uint8_t)type;
        g_assert_cmpint(moat_dcep_parse(buffer, sizeof chrome_open, &m), ==, -EPROTO);
    }
}

static void test_open_to_info_rejects(void)
{
    /* A 300-byte label parses but does not fit a channel name. */
    size_t length = MOAT_DCEP_OPEN_HEADER_SIZE + 300;
    uint8_t *buffer = g_malloc0(length);
    buffer[0] = MOAT_DCEP_OPEN;
    buffer[8] = 300 >> 8;
    buffer[9] = 300 & 0xff;
    memset(buffer + MOAT_DCEP_OPEN_HEADER_SIZE, 'x', 300);
    moat_dcep_message m;
    moat_data_channel_info info;
    g_assert_cmpint(moat_dcep_parse(buffer, length, &m), ==, 0);
    g_assert_cmpint(moat_dcep_open_to_info(&m, 1, &info), ==, -ENAMETOOLONG);
    g_free(buffer);

    /* Invalid UTF-8, and an embedded NUL. */
    uint8_t bad_utf8[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x02, 0x00, 0x00, 0xc3, 0x28};
    g_assert_cmpint(moat_dcep_parse(bad_utf8, sizeof bad_utf8, &m), ==, 0);
    g_assert_cmpint(moat_dcep_open_to_info(&m, 1, &info), ==, -EILSEQ);
    uint8_t nul[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                     0x00, 0x00, 0x00, 0x00, 0x02, 'a',  0x00};
    g_assert_cmpint(moat_dcep_parse(nul, sizeof nul, &m), ==, 0);
    g_assert_cmpint(moat_dcep_open_to_info(&m, 1, &info), ==, -EILSEQ);

    /* Huge reliability values are clamped, not wrapped negative. */
    uint8_t timed[] = {0x03, 0x02, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00};
    g_assert_cmpint(moat_dcep_parse(timed, sizeof timed, &m), ==, 0);
    g_assert_cmpint(moat_dcep_open_to_info(&m, 1, &info), ==, 0);
    g_assert_cmpint(info.max_lifetime_ms, ==, G_MAXINT32);
    g_assert_cmpint(info.max_retransmits, ==, -1);
    g_assert_true(info.ordered);
}

static void test_info_check(void)
{
    moat_data_channel_info info;
    memset(&info, 0, sizeof info);
    info.max_retransmits = -1;
    info.max_lifetime_ms = -1;
    g_assert_cmpint(moat_data_channel_info_check(&info), ==, 0);
    info.max_retransmits = 2;
    info.max_lifetime_ms = 100;
    g_assert_cmpint(moat_data_channel_info_check(&info), ==, -EINVAL);
    info.max_lifetime_ms = -2;
    g_assert_cmpint(moat_data_channel_info_check(&info), ==, -EINVAL);
    info.max_lifetime_ms = -1;
    memset(info.label, 'a', sizeof info.label);
    g_assert_cmpint(moat_data_channel_info_check(&info), ==, -EINVAL);
    info.label[0] = '\0';
    info.negotiated = true;
    info.stream_id = 65535;
    g_assert_cmpint(moat_data_channel_info_check(&info), ==, -EINVAL);
    g_assert_cmpint(moat_data_channel_info_check(NULL), ==, -EINVAL);
}

static void test_table(void)
{
    moat_data_channel_table *t = moat_data_channel_table_new();
    moat_data_channel_info info;
    memset(&info, 0, sizeof info);
    uint16_t id;
    /* Even ids for the DTLS client, odd for the server, all distinct. */
    for (unsigned i = 0; i < 5; i++) {
        g_assert_cmpint(moat_data_channel_table_pick_id(t, true, 10, &id), ==, 0);
        g_assert_cmpuint(id, ==, i * 2);
        info.stream_id = id;
        g_assert_nonnull(moat_data_channel_table_add(t, &info));
    }
    g_assert_cmpint(moat_data_channel_table_pick_id(t, true, 10, &id), ==, -ENOSPC);
    g_assert_cmpint(moat_data_channel_table_pick_id(t, false, 10, &id), ==, 0);
    g_assert_cmpuint(id, ==, 1);
    info.stream_id = 4;
    g_assert_null(moat_data_channel_table_add(t, &info));
    /* A freed id is found again, after the ones not yet used. */
    moat_data_channel_table_remove(t, 4);
    g_assert_cmpint(moat_data_channel_table_pick_id(t, true, 10, &id), ==, 0);
    g_assert_cmpuint(id, ==, 4);
    g_assert_cmpuint(moat_data_channel_table_count(t), ==, 4);
    g_assert_nonnull(moat_data_channel_table_find(t, 8));
    g_assert_null(moat_data_channel_table_find(t, 4));
    /* Stream 65535 is never picked. */
    g_assert_cmpint(moat_data_channel_table_pick_id(t, false, 70000, &id), ==, 0);
    g_assert_cmpuint(id % 2, ==, 1);
    moat_data_channel_table_free(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/dcep/parse-open", test_parse_open);
    g_test_add_func("/sctp/dcep/parse-ack", test_parse_ack);
    g_test_add_func("/sctp/dcep/build-roundtrip", test_build_roundtrip);
    g_test_add_func("/sctp/dcep/parse-rejects", test_parse_rejects);
    g_test_add_func("/sctp/dcep/open-to-info-rejects", test_open_to_info_rejects);
    g_test_add_func("/sctp/data-channel/info-check", test_info_check);
    g_test_add_func("/sctp/data-channel/table", test_table);
    return g_test_run();
}
