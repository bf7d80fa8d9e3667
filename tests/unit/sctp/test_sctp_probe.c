/* PLPMTUD probe packets (sctp_probe.c): building HEARTBEAT + PAD probes and
 * recognising the HEARTBEAT ACK that echoes one, alone or bundled. */
#include <string.h>

#include <glib.h>

#include "sctp/sctp_crc32c.h"
#include "sctp/sctp_probe.h"

static const moat_sctp_probe_header header = {
    .known = true, .source_port = 5000, .destination_port = 5001, .peer_tag = 0xdeadbeef};

static void test_learn(void)
{
    moat_sctp_probe_header h = {0};
    /* INIT: tag 0. */
    uint8_t init[16] = {0x13, 0x88, 0x13, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 4};
    moat_sctp_probe_learn(&h, init, sizeof init);
    g_assert_false(h.known);
    /* ABORT may reflect the tag: ignored. */
    uint8_t abort_[16] = {0x13, 0x88, 0x13, 0x88, 1, 2, 3, 4, 0, 0, 0, 0, 0x06, 1, 0, 4};
    moat_sctp_probe_learn(&h, abort_, sizeof abort_);
    g_assert_false(h.known);
    /* COOKIE ECHO carries the peer's tag. */
    uint8_t cookie[16] = {0x13, 0x88, 0x13, 0x89, 1, 2, 3, 4, 0, 0, 0, 0, 0x0a, 0, 0, 4};
    moat_sctp_probe_learn(&h, cookie, sizeof cookie);
    g_assert_true(h.known);
    g_assert_cmpuint(h.source_port, ==, 5000);
    g_assert_cmpuint(h.destination_port, ==, 5001);
    g_assert_cmphex(h.peer_tag, ==, 0x01020304);
    /* Too short: no change. */
    moat_sctp_probe_learn(&h, cookie, 12);
    g_assert_cmphex(h.peer_tag, ==, 0x01020304);
}

static void test_build(void)
{
    uint8_t buffer[16384];
    g_assert_cmpuint(moat_sctp_probe_build(&header, 7, 1432, buffer, sizeof buffer), ==, 1432);
    g_assert_true(moat_sctp_packet_checksum_ok(buffer, 1432));
    g_assert_cmpuint(buffer[0] << 8 | buffer[1], ==, 5000);
    g_assert_cmpuint(buffer[2] << 8 | buffer[3], ==, 5001);
    g_assert_cmphex((uint32_t)buffer[4] << 24 | buffer[5] << 16 | buffer[6] << 8 | buffer[7], ==,
                    0xdeadbeef);
    /* HEARTBEAT, length 20, info param type 1 length 16. */
    g_assert_cmpuint(buffer[12], ==, 0x04);
    g_assert_cmpuint(buffer[14] << 8 | buffer[15], ==, 20);
    g_assert_cmpuint(buffer[16] << 8 | buffer[17], ==, 1);
    g_assert_cmpuint(buffer[18] << 8 | buffer[19], ==, 16);
    /* PAD up to the end. */
    g_assert_cmpuint(buffer[32], ==, 0x84);
    g_assert_cmpuint(buffer[34] << 8 | buffer[35], ==, 1432 - 32);
    g_assert_cmpuint(moat_sctp_probe_build(&header, 7, 16384, buffer, sizeof buffer), ==, 16384);
    g_assert_cmpuint(
        moat_sctp_probe_build(&header, 7, MOAT_SCTP_PROBE_MIN_SIZE, buffer, sizeof buffer), ==,
        MOAT_SCTP_PROBE_MIN_SIZE);
    /* Refused: not a multiple of 4, too small, too large for the buffer,
     * header unknown. */
    g_assert_cmpuint(moat_sctp_probe_build(&header, 7, 1433, buffer, sizeof buffer), ==, 0);
    g_assert_cmpuint(moat_sctp_probe_build(&header, 7, 32, buffer, sizeof buffer), ==, 0);
    g_assert_cmpuint(moat_sctp_probe_build(&header, 7, 1432, buffer, 1000), ==, 0);
    moat_sctp_probe_header unknown = {0};
    g_assert_cmpuint(moat_sctp_probe_build(&unknown, 7, 1432, buffer, sizeof buffer), ==, 0);
}

/* The peer's answer: a HEARTBEAT ACK with the probe's information (what
 * RFC 9260 §8.3 makes any SCTP do). */
static size_t make_ack(const uint8_t *probe, uint8_t *out)
{
    memcpy(out, probe, 12);
    memcpy(out + 12, probe + 12, 20);
    out[12] = 0x05;
    moat_sctp_packet_set_checksum(out, 32);
    return 32;
}

static void test_find_ack_alone(void)
{
    uint8_t probe[2000], ack_packet[64];
    moat_sctp_probe_build(&header, 42, 1500, probe, sizeof probe);
    size_t n = make_ack(probe, ack_packet);
    moat_sctp_probe_ack ack;
    g_assert_true(moat_sctp_probe_find_ack(ack_packet, n, &ack));
    g_assert_cmpuint(ack.seq, ==, 42);
    g_assert_cmpuint(ack.size, ==, 1500);
    g_assert_cmpuint(ack.offset, ==, 12);
    g_assert_cmpuint(ack.length, ==, 20);
    g_assert_false(moat_sctp_probe_has_other_chunks(n, &ack));
    /* The probe itself (a HEARTBEAT, not an ACK) is not an answer. */
    g_assert_false(moat_sctp_probe_find_ack(probe, 1500, &ack));
    /* usrsctp's own HEARTBEAT ACK (its information is longer) is not ours. */
    uint8_t theirs[12 + 4 + 4 + 40];
    memset(theirs, 0, sizeof theirs);
    theirs[12] = 0x05;
    theirs[15] = 48;
    theirs[17] = 1;
    theirs[19] = 44;
    g_assert_false(moat_sctp_probe_find_ack(theirs, sizeof theirs, &ack));
    /* A wrong magic is not ours. */
    ack_packet[20] ^= 1;
    g_assert_false(moat_sctp_probe_find_ack(ack_packet, n, &ack));
}

static void test_find_ack_bundled(void)
{
    uint8_t probe[2000], packet[128], stripped[128];
    moat_sctp_probe_build(&header, 9, 1404, probe, sizeof probe);
    /* SACK (16 bytes), our ACK (20), a 5-byte DATA padded to 8 (21 + 3). */
    memcpy(packet, probe, 12);
    size_t n = 12;
    static const uint8_t sack[16] = {0x03, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
    memcpy(packet + n, sack, sizeof sack);
    n += sizeof sack;
    memcpy(packet + n, probe + 12, 20);
    packet[n] = 0x05;
    n += 20;
    static const uint8_t data[24] = {0x00, 0x03, 0, 21, 0,   0,   0,   2,   0,   0, 0, 0,
                                     0,    0,    0, 51, 'h', 'e', 'l', 'l', 'o', 0, 0, 0};
    memcpy(packet + n, data, sizeof data);
    n += sizeof data;
    moat_sctp_packet_set_checksum(packet, n);
    moat_sctp_probe_ack ack;
    g_assert_true(moat_sctp_probe_find_ack(packet, n, &ack));
    g_assert_cmpuint(ack.seq, ==, 9);
    g_assert_cmpuint(ack.size, ==, 1404);
    g_assert_cmpuint(ack.offset, ==, 28);
    g_assert_true(moat_sctp_probe_has_other_chunks(n, &ack));
    size_t m = moat_sctp_probe_strip_ack(packet, n, &ack, stripped);
    g_assert_cmpuint(m, ==, n - 20);
    g_assert_true(moat_sctp_packet_checksum_ok(stripped, m));
    g_assert_cmpmem(stripped + 12, 16, sack, 16);
    g_assert_cmpmem(stripped + 28, 24, data, 24);
    g_assert_false(moat_sctp_probe_find_ack(stripped, m, &ack));
}

static void test_malformed(void)
{
    moat_sctp_probe_ack ack;
    g_assert_false(moat_sctp_probe_find_ack(NULL, 0, &ack));
    uint8_t packet[64];
    memset(packet, 0, sizeof packet);
    g_assert_false(moat_sctp_probe_find_ack(packet, 11, &ack));
    g_assert_false(moat_sctp_probe_find_ack(packet, 12, &ack));
    /* A chunk length of 0 or past the end ends the walk. */
    g_assert_false(moat_sctp_probe_find_ack(packet, sizeof packet, &ack));
    packet[12] = 0x05;
    packet[14] = 0x01;
    g_assert_false(moat_sctp_probe_find_ack(packet, sizeof packet, &ack));
    /* A truncated copy of a valid ACK. */
    uint8_t probe[2000], good[64];
    moat_sctp_probe_build(&header, 1, 1300, probe, sizeof probe);
    size_t n = make_ack(probe, good);
    for (size_t cut = 0; cut < n; cut++)
        g_assert_false(moat_sctp_probe_find_ack(good, cut, &ack));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/probe/learn", test_learn);
    g_test_add_func("/sctp/probe/build", test_build);
    g_test_add_func("/sctp/probe/find_ack_alone", test_find_ack_alone);
    g_test_add_func("/sctp/probe/find_ack_bundled", test_find_ack_bundled);
    g_test_add_func("/sctp/probe/malformed", test_malformed);
    return g_test_run();
}
