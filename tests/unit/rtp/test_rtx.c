/* RTX wrapping (rtp/rtx.h, RFC 4588 section 4): the RTX header carries its
 * own payload type, sequence number and SSRC, keeps marker, timestamp and
 * extension, drops padding, and the payload starts with the original
 * sequence number. */
#include <glib.h>
#include <string.h>

#include "rtp/rtp_packet.h"
#include "rtp/rtx.h"

static void test_wrap(void)
{
    /* M=1 PT 96, seq 0x1234, ts 0x01020304, SSRC 0xaabbccdd, a one-byte
     * extension (one word), payload "VP8!", two padding octets. */
    const uint8_t packet[] = {0xb0, 0xe0, 0x12, 0x34, 0x01, 0x02, 0x03, 0x04, 0xaa,
                              0xbb, 0xcc, 0xdd, 0xbe, 0xde, 0x00, 0x01, 0x10, 0x07,
                              0x00, 0x00, 'V',  'P',  '8',  '!',  0x00, 0x02};
    uint8_t out[64];
    int n = moat_rtx_wrap(packet, sizeof packet, 97, 0xfffe, 0x01020304, out, sizeof out);
    const uint8_t want[] = {0x90, 0xe1, 0xff, 0xfe, 0x01, 0x02, 0x03, 0x04, 0x01,
                            0x02, 0x03, 0x04, 0xbe, 0xde, 0x00, 0x01, 0x10, 0x07,
                            0x00, 0x00, 0x12, 0x34, 'V',  'P',  '8',  '!'};
    g_assert_cmpint(n, ==, sizeof want);
    g_assert_cmpmem(out, (size_t)n, want, sizeof want);
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(out, (size_t)n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.payload_length, ==, 6);
    g_assert_true(h.marker);
    /* Too small a buffer, or not RTP: refused. */
    g_assert_cmpint(moat_rtx_wrap(packet, sizeof packet, 97, 1, 2, out, 20), ==,
                    MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpint(moat_rtx_wrap(packet, 8, 97, 1, 2, out, sizeof out), <, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtx/wrap", test_wrap);
    return g_test_run();
}
