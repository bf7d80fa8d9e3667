/* SCTP's CRC32c (sctp_crc32c.c): known vectors, agreement with usrsctp's
 * own implementation (short buffers, and every length around the interleaved
 * blocks' boundaries up to whole 16 KiB packets, at odd alignments), the
 * packet helpers. */
#include <string.h>

#include <glib.h>
#include <usrsctp.h>

#include "sctp/sctp_crc32c.h"

static void test_vectors(void)
{
    g_assert_cmphex(moat_sctp_crc32c((const uint8_t *)"123456789", 9), ==, 0xE3069283u);
    uint8_t zeros[32];
    memset(zeros, 0, sizeof zeros);
    /* RFC 3720 B.4: 32 bytes of zeros. */
    g_assert_cmphex(moat_sctp_crc32c(zeros, sizeof zeros), ==, 0x8A9136AAu);
}

static void test_matches_usrsctp(void)
{
    GRand *rand = g_rand_new_with_seed(7);
    uint8_t buffer[2048];
    for (int round = 0; round < 200; round++) {
        size_t length = (size_t)g_rand_int_range(rand, 0, sizeof buffer);
        for (size_t i = 0; i < length; i++)
            buffer[i] = (uint8_t)g_rand_int(rand);
        /* usrsctp_crc32c returns the value as stored on the wire, read in
         * host order. */
        uint32_t theirs = usrsctp_crc32c(buffer, length);
        g_assert_cmphex(moat_sctp_crc32c(buffer, length), ==, GUINT32_FROM_LE(theirs));
    }
    g_rand_free(rand);
}

/* Bit by bit, straight from the polynomial: the reference. */
static uint32_t reference_crc32c(const uint8_t *data, size_t length)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static void test_long_buffers(void)
{
    enum { SIZE = 20000 };
    uint8_t *buffer = g_malloc(SIZE + 8);
    GRand *rand = g_rand_new_with_seed(11);
    for (size_t i = 0; i < SIZE + 8; i++)
        buffer[i] = (uint8_t)g_rand_int(rand);
    /* Three streams of 256 and of 2048 bytes: each side of every boundary. */
    static const size_t edges[] = {0,     1,     7,     8,     767,   768,   769,   1200,
                                   1535,  1536,  1537,  6143,  6144,  6145,  6151,  6912,
                                   12287, 12288, 12289, 16384, 16396, 18431, 18432, 20000};
    for (size_t e = 0; e < G_N_ELEMENTS(edges); e++) {
        for (size_t offset = 0; offset < 8; offset += 3) {
            if (edges[e] + offset > SIZE + 8)
                continue;
            const uint8_t *data = buffer + offset;
            g_assert_cmphex(moat_sctp_crc32c(data, edges[e]), ==, reference_crc32c(data, edges[e]));
        }
    }
    for (int round = 0; round < 100; round++) {
        size_t length = (size_t)g_rand_int_range(rand, 0, SIZE);
        size_t offset = (size_t)g_rand_int_range(rand, 0, 8);
        g_assert_cmphex(moat_sctp_crc32c(buffer + offset, length), ==,
                        reference_crc32c(buffer + offset, length));
    }
    /* A whole 16 KiB packet through the packet helpers. */
    moat_sctp_packet_set_checksum(buffer, 16384);
    g_assert_true(moat_sctp_packet_checksum_ok(buffer, 16384));
    buffer[9000] ^= 0x40;
    g_assert_false(moat_sctp_packet_checksum_ok(buffer, 16384));
    g_rand_free(rand);
    g_free(buffer);
}

static void test_packet_checksum(void)
{
    uint8_t packet[100];
    for (size_t i = 0; i < sizeof packet; i++)
        packet[i] = (uint8_t)(i * 13);
    g_assert_false(moat_sctp_packet_checksum_ok(packet, sizeof packet));
    moat_sctp_packet_set_checksum(packet, sizeof packet);
    g_assert_true(moat_sctp_packet_checksum_ok(packet, sizeof packet));
    /* The stored value is the CRC of the packet with a zero field. */
    uint8_t copy[100];
    memcpy(copy, packet, sizeof copy);
    memset(copy + MOAT_SCTP_CHECKSUM_OFFSET, 0, 4);
    uint32_t crc = moat_sctp_crc32c(copy, sizeof copy);
    g_assert_cmpuint(packet[8], ==, crc & 0xFF);
    g_assert_cmpuint(packet[11], ==, crc >> 24);
    packet[50] ^= 1;
    g_assert_false(moat_sctp_packet_checksum_ok(packet, sizeof packet));
    g_assert_false(moat_sctp_packet_checksum_ok(packet, 11));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/crc32c/vectors", test_vectors);
    g_test_add_func("/sctp/crc32c/matches-usrsctp", test_matches_usrsctp);
    g_test_add_func("/sctp/crc32c/long-buffers", test_long_buffers);
    g_test_add_func("/sctp/crc32c/packet-checksum", test_packet_checksum);
    return g_test_run();
}
