/* moat-tunnel's framing and command line (pure parts): packets split across
 * reads and several packets in one read come out whole and byte-exact; a
 * zero or oversized length is an error; the options refuse what does not
 * fit together. */
#include "tunnel_frame.h"
#include "tunnel_options.h"

#include <glib.h>
#include <string.h>

static tunnel_frame_reader reader;

/* Feeds `length` bytes in pieces of `piece`; returns the packets' total
 * length, and their count in *count; -1 on an error. */
static long feed_all(const uint8_t *data, size_t length, size_t piece, uint8_t *out, int *count)
{
    size_t offset = 0, written = 0;
    *count = 0;
    while (offset < length) {
        size_t n = length - offset < piece ? length - offset : piece;
        size_t used = 0;
        while (used < n) {
            const uint8_t *packet;
            size_t packet_length;
            long took =
                tunnel_frame_feed(&reader, data + offset + used, n - used, &packet, &packet_length);
            if (took < 0)
                return -1;
            used += (size_t)took;
            if (packet) {
                memcpy(out + written, packet, packet_length);
                written += packet_length;
                (*count)++;
            }
        }
        offset += n;
    }
    return (long)written;
}

static void test_split_and_joined(void)
{
    uint8_t stream[3 * (2 + 1500)], expected[3 * 1500], out[sizeof expected];
    size_t n = 0;
    for (int p = 0; p < 3; p++) {
        size_t length = p == 1 ? 1 : 1500;
        g_assert_cmpint(tunnel_frame_header(length, stream + n), ==, 0);
        n += 2;
        for (size_t i = 0; i < length; i++)
            stream[n + i] = (uint8_t)(p * 31 + i);
        n += length;
    }
    size_t e = 0;
    for (size_t i = 0; i < n;) {
        size_t length = ((size_t)stream[i] << 8) | stream[i + 1];
        memcpy(expected + e, stream + i + 2, length);
        e += length;
        i += 2 + length;
    }
    size_t pieces[] = {1, 2, 3, 7, 1499, 1502, sizeof stream};
    for (size_t k = 0; k < G_N_ELEMENTS(pieces); k++) {
        int count;
        tunnel_frame_reader_init(&reader, 1500);
        g_assert_cmpint(feed_all(stream, n, pieces[k], out, &count), ==, (long)e);
        g_assert_cmpint(count, ==, 3);
        g_assert_cmpmem(out, e, expected, e);
    }
}

static void test_bad_lengths(void)
{
    const uint8_t zero[] = {0, 0, 1};
    const uint8_t big[] = {0x05, 0xDD, 1}; /* 1501 */
    uint8_t out[16];
    int count;
    tunnel_frame_reader_init(&reader, 1500);
    g_assert_cmpint(feed_all(zero, sizeof zero, 3, out, &count), ==, -1);
    tunnel_frame_reader_init(&reader, 1500);
    g_assert_cmpint(feed_all(big, sizeof big, 1, out, &count), ==, -1);
    uint8_t header[2];
    g_assert_cmpint(tunnel_frame_header(0, header), ==, -1);
    g_assert_cmpint(tunnel_frame_header(65536, header), ==, -1);
    g_assert_cmpint(tunnel_frame_header(65535, header), ==, 0);
    g_assert_cmpuint(header[0], ==, 0xFF);
}

static int parse(const char *line, tunnel_options *o, char *error)
{
    gchar **argv = g_strsplit(line, " ", -1);
    int argc = (int)g_strv_length(argv);
    int rc = tunnel_options_parse(o, argc, argv, error, 256);
    g_strfreev(argv);
    return rc;
}

static void test_options(void)
{
    tunnel_options o;
    char error[256];
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip http://g/whip/tunnel/x "
                          "--mode unreliable",
                          &o, error),
                    ==, 0);
    g_assert_cmpint(o.transport, ==, TUNNEL_TRANSPORT_SCTP);
    g_assert_cmpint(o.mode, ==, TUNNEL_MODE_UNRELIABLE);
    g_assert_cmpuint(o.mtu, ==, TUNNEL_DEFAULT_MTU);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --transport tcp --listen 1.2.3.4:5 "
                          "--peer-fingerprint AB",
                          &o, error),
                    ==, 0);
    g_assert_cmpint(o.transport, ==, TUNNEL_TRANSPORT_TCP);
    /* What does not fit together is refused with a reason. */
    g_assert_cmpint(parse("moat-tunnel --whip http://g/", &o, error), ==, -1);
    g_assert_nonnull(strstr(error, "--address"));
    g_assert_cmpint(
        parse("moat-tunnel --address 10.0.0.1/24 --transport udp --listen a:1", &o, error), ==, -1);
    g_assert_nonnull(strstr(error, "--peer-fingerprint"));
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --transport udp --listen a:1 "
                          "--connect b:2 --peer-fingerprint AB",
                          &o, error),
                    ==, -1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --mtu 100", &o, error), ==,
                    -1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --mode sideways", &o, error),
                    ==, -1);
    g_assert_cmpint(
        parse("moat-tunnel --address 10.0.0.1/24 --whip u --keepalive 5 --dead 5", &o, error), ==,
        -1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --cert c.pem", &o, error), ==,
                    -1);
}

/* The SCTP tunnel's congestion control: RFC 9260's unless told (H-TCP held
 * its window at three packets under 1 % loss). */
static void test_sctp_congestion(void)
{
    tunnel_options o;
    char error[256];
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u", &o, error), ==, 0);
    g_assert_cmpint(o.sctp_cc, ==, TUNNEL_SCTP_CC_RFC2581);
    g_assert_cmpint(
        parse("moat-tunnel --address 10.0.0.1/24 --whip u --sctp-congestion htcp", &o, error), ==,
        0);
    g_assert_cmpint(o.sctp_cc, ==, TUNNEL_SCTP_CC_HTCP);
    g_assert_cmpint(
        parse("moat-tunnel --address 10.0.0.1/24 --whip u --sctp-congestion bbr", &o, error), ==,
        -1);
}

/* --lanes: 1 to 8 for sctp (default TUNNEL_DEFAULT_LANES) and for the TCP
 * baseline (K connections; one unless set), refused for UDP's. */
static void test_lanes_option(void)
{
    tunnel_options o;
    char error[256];
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u", &o, error), ==, 0);
    g_assert_cmpuint(o.lanes, ==, TUNNEL_DEFAULT_LANES);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --lanes 1", &o, error), ==,
                    0);
    g_assert_cmpuint(o.lanes, ==, 1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --lanes 8", &o, error), ==,
                    0);
    g_assert_cmpuint(o.lanes, ==, 8);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --lanes 0", &o, error), ==,
                    -1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --whip u --lanes 9", &o, error), ==,
                    -1);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --transport tcp --listen a:1 "
                          "--peer-fingerprint AB",
                          &o, error),
                    ==, 0);
    g_assert_false(o.lanes_set);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --transport tcp --listen a:1 "
                          "--peer-fingerprint AB --lanes 2",
                          &o, error),
                    ==, 0);
    g_assert_cmpuint(o.lanes, ==, 2);
    g_assert_cmpint(parse("moat-tunnel --address 10.0.0.1/24 --transport udp --listen a:1 "
                          "--peer-fingerprint AB --lanes 2",
                          &o, error),
                    ==, -1);
    g_assert_nonnull(strstr(error, "--lanes"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel/frame/split_and_joined", test_split_and_joined);
    g_test_add_func("/tunnel/frame/bad_lengths", test_bad_lengths);
    g_test_add_func("/tunnel/options", test_options);
    g_test_add_func("/tunnel/options/sctp_congestion", test_sctp_congestion);
    g_test_add_func("/tunnel/options/lanes", test_lanes_option);
    return g_test_run();
}
