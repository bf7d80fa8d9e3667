/* SCTP's CRC32c (sctp_crc32c.c): known vectors, agreement with usrsctp's
 * own implementation, the packet helpers. */
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
    g_test_add_func("/sctp/crc32c/packet-checksum", test_packet_checksum);
    return g_test_run();
}
