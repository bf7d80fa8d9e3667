/* The routing core's BUNDLE demux (rtp/rtp_demux.h): m-line by mid, declared
 * or learned SSRC and payload type; header extensions in both forms;
 * extended sequence numbers across rollover and reordering; RTX unwrapped in
 * place to the original stream. */
#include <glib.h>
#include <string.h>

#include "rtp/rtp_demux.h"
#include "rtp/rtp_packet.h"

enum { MID = 1, LEVEL = 2, ABS = 3, TWCC = 4, RID = 5, RRID = 6, CVO = 7 };

typedef struct {
    moat_media_info media[2];
    moat_rtp_demux demux;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    memset(f->media, 0, sizeof f->media);
    moat_media_info *a = &f->media[0], *v = &f->media[1];
    a->kind = MOAT_MEDIA_KIND_AUDIO;
    g_strlcpy(a->mid, "a", sizeof a->mid);
    a->peer_sends = true;
    a->payload_types[0] = 111;
    a->n_payload_types = 1;
    a->extensions = (moat_extension_ids){
        .mid = MID, .audio_level = LEVEL, .abs_send_time = ABS, .transport_wide_cc = TWCC};
    v->kind = MOAT_MEDIA_KIND_VIDEO;
    g_strlcpy(v->mid, "v", sizeof v->mid);
    v->peer_sends = true;
    v->remote_ssrc = 0x2000;
    v->remote_rtx_ssrc = 0x2001;
    v->payload_types[0] = 96;
    v->n_payload_types = 1;
    v->codecs[0] =
        (moat_codec_info){.payload_type = 96, .clock_rate = 90000, .rtx_payload_type = 97};
    g_strlcpy(v->codecs[0].name, "VP8", sizeof v->codecs[0].name);
    v->n_codecs = 1;
    v->extensions = (moat_extension_ids){
        .mid = MID, .rid = RID, .repaired_rid = RRID, .video_orientation = CVO};
    moat_rtp_demux_init(&f->demux, f->media, 2);
}

static void teardown(fixture *f, gconstpointer data) {}

/* Fixed header; returns 12. */
static size_t header(uint8_t *p, uint8_t pt, uint16_t seq, uint32_t ts, uint32_t ssrc)
{
    memset(p, 0, 12);
    p[0] = 0x80;
    p[1] = pt;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    p[4] = (uint8_t)(ts >> 24);
    p[5] = (uint8_t)(ts >> 16);
    p[6] = (uint8_t)(ts >> 8);
    p[7] = (uint8_t)ts;
    p[8] = (uint8_t)(ssrc >> 24);
    p[9] = (uint8_t)(ssrc >> 16);
    p[10] = (uint8_t)(ssrc >> 8);
    p[11] = (uint8_t)ssrc;
    return 12;
}

/* Appends a one-byte extension block holding `elements` (id, len, bytes...)
 * already encoded, padded to words. */
static size_t extension(uint8_t *p, size_t n, const uint8_t *elements, size_t len)
{
    p[0] |= 0x10;
    size_t words = (len + 3) / 4;
    p[n] = 0xBE;
    p[n + 1] = 0xDE;
    p[n + 2] = 0;
    p[n + 3] = (uint8_t)words;
    memset(p + n + 4, 0, words * 4);
    memcpy(p + n + 4, elements, len);
    return n + 4 + words * 4;
}

static size_t payload(uint8_t *p, size_t n, size_t len)
{
    for (size_t i = 0; i < len; i++)
        p[n + i] = (uint8_t)(0x30 + i);
    return n + len;
}

static void test_mid_and_extensions(fixture *f, gconstpointer data)
{
    uint8_t p[256];
    size_t n = header(p, 111, 7, 960, 0x1000);
    const uint8_t ext[] = {
        MID << 4 | 0, 'a', LEVEL << 4 | 0, 0x80 | 42, ABS << 4 | 2, 1, 2, 3, TWCC << 4 | 1,
        0x12,         0x34};
    n = extension(p, n, ext, sizeof ext);
    n = payload(p, n, 20);
    moat_rtp_packet out;
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 5, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, 0);
    g_assert_cmpint(out.kind, ==, MOAT_MEDIA_KIND_AUDIO);
    g_assert_cmpstr(out.mid, ==, "a");
    g_assert_true(out.has_audio_level);
    g_assert_true(out.voice_activity);
    g_assert_cmpuint(out.audio_level, ==, 42);
    g_assert_true(out.has_abs_send_time);
    g_assert_cmpuint(out.abs_send_time, ==, 0x010203);
    g_assert_true(out.has_transport_sequence);
    g_assert_cmpuint(out.transport_sequence, ==, 0x1234);
    g_assert_cmpuint(out.payload_length, ==, 20);
    g_assert_cmpuint(out.timestamp, ==, 960);
    g_assert_cmpuint(out.arrival_us, ==, 5);
    /* Learned: the next packet without a mid lands on the same m-line. */
    n = payload(p, header(p, 111, 8, 1920, 0x1000), 20);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 6, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, 0);
    g_assert_cmpuint(out.extended_sequence, ==, 65536 + 8);
}

/* An id-0 octet with a nonzero length ends the one-byte block for the demux
 * as for moat_rtp_find_extension: the mid after it is read by neither. */
static void test_one_byte_id0_with_length_ends_the_block(fixture *f, gconstpointer data)
{
    uint8_t p[256];
    size_t n = header(p, 111, 7, 960, 0x1000);
    const uint8_t ext[] = {0x01, 0x55, 0x55, MID << 4 | 0, 'a', TWCC << 4 | 1, 0x12, 0x34};
    n = extension(p, n, ext, sizeof ext);
    n = payload(p, n, 20);
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    const uint8_t *value;
    size_t size;
    g_assert_cmpint(moat_rtp_find_extension(p, &h, MID, &value, &size), ==, MOAT_RTP_ERR_NOT_FOUND);
    moat_rtp_packet out;
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 5, &out), ==, 0);
    g_assert_cmpstr(out.mid, ==, "");
    g_assert_false(out.has_transport_sequence);
}

static void test_two_byte_form_and_rid(fixture *f, gconstpointer data)
{
    uint8_t p[256];
    size_t n = header(p, 96, 1, 0, 0x3000);
    p[0] |= 0x10;
    const uint8_t ext[] = {MID, 1, 'v', RID, 1, 'h', CVO, 1, 0x03, 0};
    p[12] = 0x10;
    p[13] = 0x00;
    p[14] = 0;
    p[15] = 3;
    memset(p + 16, 0, 12);
    memcpy(p + 16, ext, sizeof ext);
    n = payload(p, 28, 10);
    moat_rtp_packet out;
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, 1);
    g_assert_cmpstr(out.rid, ==, "h");
    g_assert_true(out.has_video_orientation);
    g_assert_cmpuint(out.video_orientation, ==, 3);
    g_assert_false(out.repaired);
    g_assert_false(out.rtx);
}

static void test_declared_ssrc_and_payload_type(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    size_t n = payload(p, header(p, 96, 1, 0, 0x2000), 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, 1);
    /* A new SSRC without mid: by payload type. */
    n = payload(p, header(p, 111, 1, 0, 0x4444), 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, 0);
    /* Nothing matches. */
    n = payload(p, header(p, 50, 1, 0, 0x5555), 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_cmpint(out.media_index, ==, -1);
    /* Not RTP. */
    p[0] = 0x40;
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, -1);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, 8, sizeof p, 0, &out), ==, -1);
}

static void test_extended_sequence(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    const uint16_t seqs[] = {65534, 65535, 0, 65533, 1, 2};
    const uint64_t want[] = {65536 + 65534, 65536 + 65535, 131072, 65536 + 65533, 131073, 131074};
    for (size_t i = 0; i < G_N_ELEMENTS(seqs); i++) {
        size_t n = payload(p, header(p, 96, seqs[i], 0, 0x2000), 10);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
        g_assert_cmpuint(out.extended_sequence, ==, want[i]);
    }
}

static void test_rtx_unwrapped(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    size_t n = payload(p, header(p, 96, 100, 9000, 0x2000), 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    /* RTX of sequence 99: OSN in the first two payload octets. */
    n = header(p, 97 | 0x80, 5, 8000, 0x2001);
    p[12] = 0;
    p[13] = 99;
    n = payload(p, 14, 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.repaired);
    g_assert_false(out.rtx);
    g_assert_cmpint(out.media_index, ==, 1);
    g_assert_cmpuint(out.ssrc, ==, 0x2000);
    g_assert_cmpuint(out.sequence, ==, 99);
    g_assert_cmpuint(out.extended_sequence, ==, 65536 + 99);
    g_assert_cmpuint(out.payload_type, ==, 96);
    g_assert_true(out.marker);
    g_assert_cmpuint(out.length, ==, n - 2);
    g_assert_cmpuint(out.payload_length, ==, 10);
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(p, out.length, &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.ssrc, ==, 0x2000);
    g_assert_cmpuint(h.sequence, ==, 99);
    g_assert_cmpuint(h.payload_type, ==, 96);
    g_assert_cmpuint(p[12], ==, 0x30);
    /* A padding probe on the RTX SSRC stays as it is. */
    n = header(p, 97, 6, 8000, 0x2001);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.rtx);
    g_assert_false(out.repaired);
    g_assert_cmpuint(out.ssrc, ==, 0x2001);
}

static void test_rtx_by_repaired_rid(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    const uint8_t rid[] = {MID << 4, 'v', RID << 4, 'l'};
    size_t n = payload(p, extension(p, header(p, 96, 10, 0, 0x7000), rid, sizeof rid), 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_cmpstr(out.rid, ==, "l");
    const uint8_t rrid[] = {MID << 4, 'v', RRID << 4, 'l'};
    n = extension(p, header(p, 97, 1, 0, 0x7001), rrid, sizeof rrid);
    p[n] = 0;
    p[n + 1] = 9;
    n = payload(p, n + 2, 4);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.repaired);
    g_assert_cmpuint(out.ssrc, ==, 0x7000);
    g_assert_cmpuint(out.sequence, ==, 9);
}

/* A layer that moved to a new SSRC (an encoder restart) keeps its old
 * stream in the table: a repair by repaired-rid is for the stream of that
 * rid that sent last (before, the first: a repair of the new stream came
 * out as the old SSRC, and the room moved the layer back). */
static void test_rtx_repairs_the_rids_latest_stream(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    const uint8_t rid[] = {MID << 4, 'v', RID << 4, 'l'};
    const uint8_t rrid[] = {MID << 4, 'v', RRID << 4, 'l'};
    const uint32_t senders[] = {0x7000, 0x7100, 0x7000};
    for (size_t i = 0; i < G_N_ELEMENTS(senders); i++) {
        size_t n = payload(p, extension(p, header(p, 96, 10, 0, senders[i]), rid, sizeof rid), 10);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 1000 * (i + 1), &out), ==,
                        0);
        n = extension(p, header(p, 97, (uint16_t)(1 + i), 0, 0x7001), rrid, sizeof rrid);
        p[n] = 0;
        p[n + 1] = 9;
        n = payload(p, n + 2, 4);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 1000 * (i + 1) + 1, &out),
                        ==, 0);
        g_assert_true(out.repaired);
        g_assert_cmpuint(out.ssrc, ==, senders[i]);
    }
}

/* Simulcast: three layers name their rid in their first packets only; later
 * packets carry the learned rid, and an RTX stream learned by repaired-rid
 * unwraps later retransmissions (without the extension) to its own layer. */
static void test_simulcast_layers(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    const char rids[3] = {'h', 'm', 'l'};
    for (uint32_t i = 0; i < 3; i++) {
        const uint8_t ext[] = {MID << 4, 'v', RID << 4, (uint8_t)rids[i]};
        size_t n = payload(p, extension(p, header(p, 96, 100, 0, 0x5000 + i), ext, sizeof ext), 8);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
        g_assert_cmpint(out.media_index, ==, 1);
    }
    for (uint32_t i = 0; i < 3; i++) {
        size_t n = payload(p, header(p, 96, 101, 3000, 0x5000 + i), 8);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
        g_assert_cmpint(out.media_index, ==, 1);
        g_assert_cmpint(out.rid[0], ==, rids[i]);
        g_assert_cmpuint(out.extended_sequence, ==, 65536 + 101);
    }
    /* RTX for "m": the first packet names it, the second does not. */
    const uint8_t rrid[] = {MID << 4, 'v', RRID << 4, 'm'};
    size_t n = extension(p, header(p, 97, 1, 0, 0x6001), rrid, sizeof rrid);
    p[n] = 0;
    p[n + 1] = 100;
    n = payload(p, n + 2, 4);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.repaired);
    g_assert_cmpuint(out.ssrc, ==, 0x5001);
    g_assert_cmpstr(out.rid, ==, "m");
    n = header(p, 97, 2, 0, 0x6001);
    p[n] = 0;
    p[n + 1] = 101;
    n = payload(p, n + 2, 4);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.repaired);
    g_assert_cmpuint(out.ssrc, ==, 0x5001);
    g_assert_cmpuint(out.sequence, ==, 101);
    g_assert_cmpstr(out.rid, ==, "m");
    g_assert_cmpuint(out.extended_sequence, ==, 65536 + 101);
}

/* More SSRCs than the table holds: still routed, by the slower paths. */
/* A cascade leg's layers are declared (their packets carry no mid or rid):
 * each packet of a declared SSRC reaches its m-line named by its rid, and
 * a declared RTX stream is unwrapped onto its layer. */
static void test_declared_layers(fixture *f, gconstpointer data)
{
    g_assert_true(moat_rtp_demux_declare(&f->demux, 0x5000, 1, "s0", false));
    g_assert_true(moat_rtp_demux_declare(&f->demux, 0x5001, 1, "s1", false));
    g_assert_true(moat_rtp_demux_declare(&f->demux, 0x5101, 1, "s1", true));
    g_assert_false(moat_rtp_demux_declare(&f->demux, 0x5000, 1, "s2", false)); /* known */
    g_assert_false(moat_rtp_demux_declare(&f->demux, 0x5002, 2, "s2", false)); /* no m-line */
    g_assert_false(moat_rtp_demux_declare(&f->demux, 0, 1, "s2", false));
    uint8_t p[256];
    moat_rtp_packet out;
    for (int i = 0; i < 2; i++) {
        size_t n = payload(p, header(p, 96, (uint16_t)(10 + i), 0, 0x5000 + (uint32_t)i), 10);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
        g_assert_cmpint(out.media_index, ==, 1);
        g_assert_cmpstr(out.rid, ==, i ? "s1" : "s0");
        g_assert_false(out.repaired);
    }
    /* RTX of layer s1: OSN 11 in its first two payload bytes. */
    size_t n = header(p, 97, 500, 0, 0x5101);
    p[n] = 0;
    p[n + 1] = 11;
    n = payload(p, n + 2, 10);
    g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
    g_assert_true(out.repaired);
    g_assert_cmpuint(out.ssrc, ==, 0x5001);
    g_assert_cmpuint(out.sequence, ==, 11);
    g_assert_cmpstr(out.rid, ==, "s1");
}

static void test_table_full(fixture *f, gconstpointer data)
{
    uint8_t p[64];
    moat_rtp_packet out;
    for (uint32_t i = 0; i < MOAT_DEMUX_MAX_STREAMS + 8; i++) {
        size_t n = payload(p, header(p, 111, 1, 0, 0x9000 + i), 4);
        g_assert_cmpint(moat_rtp_demux_packet(&f->demux, p, n, sizeof p, 0, &out), ==, 0);
        g_assert_cmpint(out.media_index, ==, 0);
    }
    g_assert_cmpuint(f->demux.n_streams, ==, MOAT_DEMUX_MAX_STREAMS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, fixture, NULL, setup, fn, teardown)
    ADD("/demux/mid-and-extensions", test_mid_and_extensions);
    ADD("/demux/one-byte-id0-with-length-ends-the-block",
        test_one_byte_id0_with_length_ends_the_block);
    ADD("/demux/two-byte-form-and-rid", test_two_byte_form_and_rid);
    ADD("/demux/declared-ssrc-and-payload-type", test_declared_ssrc_and_payload_type);
    ADD("/demux/extended-sequence", test_extended_sequence);
    ADD("/demux/rtx-unwrapped", test_rtx_unwrapped);
    ADD("/demux/rtx-by-repaired-rid", test_rtx_by_repaired_rid);
    ADD("/demux/rtx-repairs-the-rids-latest-stream", test_rtx_repairs_the_rids_latest_stream);
    ADD("/demux/declared-layers", test_declared_layers);
    ADD("/demux/table-full", test_table_full);
    ADD("/demux/simulcast-layers", test_simulcast_layers);
#undef ADD
    return g_test_run();
}
