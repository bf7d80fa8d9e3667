/* The transcoder through real GStreamer pipelines: a 440 Hz tone crosses
 * PCMU -> Opus, Opus -> PCMU and PCMU -> G.722 -> PCMA and is still 440 Hz,
 * with the output payload type, SSRC, timestamp steps and continuous
 * sequence numbers; telephone-events are re-stamped onto the output stream;
 * input faster than real time (120 ms Opus packets 1 ms apart) is metered,
 * its output bounded by the arrival times; a burst beyond the queue is
 * dropped and counted; free with packets in flight is clean. Sources pass
 * the arrival times of a real-time stream (20 ms a packet) and push as
 * fast as the pipeline goes. Opus is encoded and decoded with libopus,
 * G.711 by hand. */
#include "transcode/transcoder.h"

#include "tone.h"

#include <glib.h>
#include <opus.h>
#include <string.h>

#define SSRC_IN      0x11223344u
#define SSRC_OUT     0xcafe0001u
#define PT_OPUS      111
#define PT_DTMF_8K   101
#define PT_DTMF_48K  110
#define TONE_HZ      440.0
#define TONE_PACKETS 150 /* 3 s */
#define WAIT_US      (15 * G_USEC_PER_SEC)
#define FRAME_US     20000 /* a real-time source's packets arrive this far apart */

typedef struct {
    GMutex lock;
    GPtrArray *packets; /* GBytes */
} collector;

static void collect(void *context, const uint8_t *packet, size_t length)
{
    collector *c = context;
    g_mutex_lock(&c->lock);
    g_ptr_array_add(c->packets, g_bytes_new(packet, length));
    g_mutex_unlock(&c->lock);
}

static void collector_init(collector *c)
{
    g_mutex_init(&c->lock);
    c->packets = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
}

static void collector_clear(collector *c)
{
    g_ptr_array_unref(c->packets);
    g_mutex_clear(&c->lock);
}

static const uint8_t *packet_at(collector *c, guint i, size_t *length)
{
    return g_bytes_get_data(g_ptr_array_index(c->packets, i), length);
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wait_for_output(moat_transcoder *transcoder, uint64_t packets)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    moat_transcoder_stats stats;
    do {
        g_usleep(10000);
        moat_transcoder_get_stats(transcoder, &stats);
    } while (stats.packets_out < packets && g_get_monotonic_time() < deadline);
}

/* Every packet: the payload type, the SSRC, sequence numbers one apart and
 * timestamps `step` apart (audio packets only). */
static void check_stream(collector *c, uint8_t payload_type, uint32_t step)
{
    g_assert_cmpuint(c->packets->len, >, 1);
    for (guint i = 0; i < c->packets->len; i++) {
        size_t length;
        const uint8_t *p = packet_at(c, i, &length);
        g_assert_cmpuint(length, >, 12);
        g_assert_cmpuint(p[0] >> 6, ==, 2);
        g_assert_cmpuint(p[1] & 0x7f, ==, payload_type);
        g_assert_cmphex(rd32(p + 8), ==, SSRC_OUT);
        if (i == 0)
            continue;
        const uint8_t *prev = packet_at(c, i - 1, &length);
        g_assert_cmpuint((uint16_t)(rd16(p + 2) - rd16(prev + 2)), ==, 1);
        g_assert_cmpuint(rd32(p + 4) - rd32(prev + 4), ==, step);
    }
}

/* ---- sources ---- */

/* Keeps at most 32 packets in flight, so a slow machine (sanitizers, a
 * loaded CI) paces the source instead of overflowing the queue. */
static void throttle(moat_transcoder *transcoder)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    moat_transcoder_stats stats;
    for (;;) {
        moat_transcoder_get_stats(transcoder, &stats);
        if (stats.packets_in < stats.packets_out + 32 || g_get_monotonic_time() > deadline)
            return;
        g_usleep(1000);
    }
}

/* `downstream`: a transcoder fed by this one's output, paced too (or NULL). */
static void push_pcmu_tone(moat_transcoder *transcoder, moat_transcoder *downstream,
                           uint32_t first_ts, int packets)
{
    for (int n = 0; n < packets; n++) {
        int16_t pcm[160];
        uint8_t payload[160], packet[200];
        tone_fill(pcm, 160, TONE_HZ, 8000, (uint64_t)n * 160);
        for (int i = 0; i < 160; i++)
            payload[i] = tone_ulaw_encode(pcm[i]);
        size_t length = tone_rtp(packet, 0, (uint16_t)(1000 + n), first_ts + (uint32_t)n * 160,
                                 SSRC_IN, payload, sizeof payload);
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * FRAME_US);
        g_usleep(2000);
        throttle(transcoder);
        if (downstream)
            throttle(downstream);
    }
}

static void push_opus_tone(moat_transcoder *transcoder, int packets)
{
    int error;
    OpusEncoder *encoder = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &error);
    g_assert_cmpint(error, ==, OPUS_OK);
    for (int n = 0; n < packets; n++) {
        int16_t pcm[960];
        uint8_t payload[400], packet[500];
        tone_fill(pcm, 960, TONE_HZ, 48000, (uint64_t)n * 960);
        int bytes = opus_encode(encoder, pcm, 960, payload, sizeof payload);
        g_assert_cmpint(bytes, >, 0);
        size_t length = tone_rtp(packet, PT_OPUS, (uint16_t)(7 + n), 5000 + (uint32_t)n * 960,
                                 SSRC_IN, payload, (size_t)bytes);
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * FRAME_US);
        g_usleep(2000);
        throttle(transcoder);
    }
    opus_encoder_destroy(encoder);
}

/* ---- sinks: decode and measure, skipping the codecs' start-up ---- */

static double g711_frequency(collector *c, bool alaw)
{
    GArray *pcm = g_array_new(FALSE, FALSE, sizeof(int16_t));
    for (guint i = 0; i < c->packets->len; i++) {
        size_t length;
        const uint8_t *p = packet_at(c, i, &length);
        for (size_t j = 12; j < length; j++) {
            int16_t s = alaw ? tone_alaw_decode(p[j]) : tone_ulaw_decode(p[j]);
            g_array_append_val(pcm, s);
        }
    }
    size_t skip = 8000 / 5;
    g_assert_cmpuint(pcm->len, >, skip + 8000);
    double hz = tone_frequency((int16_t *)pcm->data + skip, pcm->len - skip, 8000);
    g_array_unref(pcm);
    return hz;
}

static double opus_frequency(collector *c)
{
    int error;
    OpusDecoder *decoder = opus_decoder_create(48000, 1, &error);
    g_assert_cmpint(error, ==, OPUS_OK);
    GArray *pcm = g_array_new(FALSE, FALSE, sizeof(int16_t));
    for (guint i = 0; i < c->packets->len; i++) {
        size_t length;
        const uint8_t *p = packet_at(c, i, &length);
        int16_t frame[5760];
        int samples = opus_decode(decoder, p + 12, (opus_int32)(length - 12), frame, 5760, 0);
        g_assert_cmpint(samples, ==, 960);
        g_array_append_vals(pcm, frame, (guint)samples);
    }
    opus_decoder_destroy(decoder);
    size_t skip = 48000 / 5;
    g_assert_cmpuint(pcm->len, >, skip + 48000);
    double hz = tone_frequency((int16_t *)pcm->data + skip, pcm->len - skip, 48000);
    g_array_unref(pcm);
    return hz;
}

/* ---- tests ---- */

static const moat_transcoder_codec pcmu = {"PCMU", 8000, 1, 0, PT_DTMF_8K, 8000};
static const moat_transcoder_codec pcma = {"PCMA", 8000, 1, 8, 0, 0};
static const moat_transcoder_codec g722 = {"G722", 8000, 1, 9, 0, 0};
static const moat_transcoder_codec opus = {"opus", 48000, 2, PT_OPUS, PT_DTMF_48K, 48000};

static moat_transcoder *make(const moat_transcoder_codec *in, const moat_transcoder_codec *out,
                             moat_transcoder_output_fn fn, void *context)
{
    char error[256] = "";
    moat_transcoder *transcoder =
        moat_transcoder_new(in, out, SSRC_OUT, fn, context, error, sizeof error);
    if (!transcoder)
        g_error("%s", error);
    return transcoder;
}

static void test_supports(void)
{
    g_assert_true(moat_transcoder_supports("opus"));
    g_assert_true(moat_transcoder_supports("PCMU"));
    g_assert_true(moat_transcoder_supports("pcma"));
    g_assert_true(moat_transcoder_supports("G722"));
    g_assert_false(moat_transcoder_supports("telephone-event"));
    g_assert_false(moat_transcoder_supports("VP8"));
    g_assert_false(moat_transcoder_supports(NULL));
    char error[256] = "";
    moat_transcoder_codec vp8 = {"VP8", 90000, 0, 96, 0, 0};
    g_assert_null(moat_transcoder_new(&vp8, &pcmu, 1, collect, NULL, error, sizeof error));
    g_assert_nonnull(strstr(error, "VP8"));
}

static void test_pcmu_to_opus(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&pcmu, &opus, collect, &c);
    push_pcmu_tone(transcoder, NULL, 123456, TONE_PACKETS);
    wait_for_output(transcoder, TONE_PACKETS - 5);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    g_assert_cmpuint(stats.dropped_too_fast, ==, 0);
    check_stream(&c, PT_OPUS, 960);
    double hz = opus_frequency(&c);
    g_test_message("PCMU -> Opus: %u packets, %.1f Hz", c.packets->len, hz);
    g_assert_cmpfloat_with_epsilon(hz, TONE_HZ, 10.0);
    collector_clear(&c);
}

static void test_opus_to_pcmu(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&opus, &pcmu, collect, &c);
    push_opus_tone(transcoder, TONE_PACKETS);
    wait_for_output(transcoder, TONE_PACKETS - 5);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    g_assert_cmpuint(stats.packets_in, ==, TONE_PACKETS);
    g_assert_cmpuint(stats.dropped_queue_full + stats.dropped_invalid + stats.dropped_late +
                         stats.dropped_too_fast,
                     ==, 0);
    check_stream(&c, 0, 160);
    double hz = g711_frequency(&c, false);
    g_test_message("Opus -> PCMU: %u packets, %.1f Hz", c.packets->len, hz);
    g_assert_cmpfloat_with_epsilon(hz, TONE_HZ, 10.0);
    collector_clear(&c);
}

/* PCMU -> G.722 -> PCMA: the first transcoder's output feeds the second,
 * 20 ms a packet apart like the first's input. */
static void chain(void *context, const uint8_t *packet, size_t length)
{
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(context, &stats);
    moat_transcoder_push(context, packet, length, (int64_t)stats.packets_in * FRAME_US);
}

static void test_g722_pcma_chain(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *second = make(&g722, &pcma, collect, &c);
    moat_transcoder *first = make(&pcmu, &g722, chain, second);
    push_pcmu_tone(first, second, 0, TONE_PACKETS);
    wait_for_output(second, TONE_PACKETS - 8);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(second, &stats);
    moat_transcoder_free(first);
    moat_transcoder_free(second);
    g_assert_cmpuint(stats.dropped_queue_full + stats.dropped_invalid + stats.dropped_late +
                         stats.dropped_too_fast,
                     ==, 0);
    check_stream(&c, 8, 160);
    double hz = g711_frequency(&c, true);
    g_test_message("PCMU -> G.722 -> PCMA: %u packets, %.1f Hz", c.packets->len, hz);
    g_assert_cmpfloat_with_epsilon(hz, TONE_HZ, 10.0);
    collector_clear(&c);
}

/* ---- telephone-events ---- */

static size_t event_packet(uint8_t *out, uint8_t payload_type, bool marker, uint16_t sequence,
                           uint32_t timestamp, bool end, uint16_t duration)
{
    uint8_t event[4] = {5, (uint8_t)((end ? 0x80 : 0) | 10), (uint8_t)(duration >> 8),
                        (uint8_t)duration};
    size_t length = tone_rtp(out, payload_type, sequence, timestamp, SSRC_IN, event, 4);
    if (marker)
        out[1] |= 0x80;
    return length;
}

/* Audio at T0 + n*160, then event 5 at T0 + 8000 (1 s in): on the Opus side
 * it must sit 48000 ticks after the first audio packet, durations scaled
 * by 6, payload type and SSRC the output's, sequence numbers one stream. */
static void test_dtmf_restamp(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&pcmu, &opus, collect, &c);
    const uint32_t t0 = 0xfffff000u; /* wraps during the call */
    push_pcmu_tone(transcoder, NULL, t0, 50);
    const uint16_t durations[] = {160, 320, 480, 640, 640, 640};
    for (int i = 0; i < 6; i++) {
        uint8_t packet[32];
        size_t length = event_packet(packet, PT_DTMF_8K, i == 0, (uint16_t)(1050 + i), t0 + 8000,
                                     i >= 3, durations[i]);
        moat_transcoder_push(transcoder, packet, length, 50 * FRAME_US);
    }
    wait_for_output(transcoder, 45 + 6);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    g_assert_cmpuint(stats.dtmf_events, ==, 6);
    g_assert_cmpuint(stats.dropped_dtmf, ==, 0);

    uint32_t first_audio = 0;
    int events = 0;
    for (guint i = 0; i < c.packets->len; i++) {
        size_t length;
        const uint8_t *p = packet_at(&c, i, &length);
        g_assert_cmphex(rd32(p + 8), ==, SSRC_OUT);
        if (i > 0) {
            size_t previous_length;
            const uint8_t *prev = packet_at(&c, i - 1, &previous_length);
            g_assert_cmpuint((uint16_t)(rd16(p + 2) - rd16(prev + 2)), ==, 1);
        }
        if ((p[1] & 0x7f) == PT_OPUS) {
            if (i == 0)
                first_audio = rd32(p + 4);
            continue;
        }
        g_assert_cmpuint(p[1] & 0x7f, ==, PT_DTMF_48K);
        g_assert_cmpuint(length, ==, 16);
        g_assert_cmpuint(p[1] >> 7, ==, events == 0);
        g_assert_cmpuint(rd32(p + 4), ==, first_audio + 48000);
        g_assert_cmpuint(p[12], ==, 5);
        g_assert_cmpuint(p[13], ==, (events >= 3 ? 0x80 : 0) | 10);
        g_assert_cmpuint(rd16(p + 14), ==, durations[events] * 6);
        events++;
    }
    g_assert_cmpint(events, ==, 6);
    collector_clear(&c);
}

/* No telephone-event on the output side: counted and dropped; none on the
 * input side: not a payload type of the input, invalid. */
static void test_dtmf_without_counterpart(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&pcmu, &pcma, collect, &c);
    moat_transcoder *reverse = make(&pcma, &pcmu, collect, &c);
    for (int i = 0; i < 3; i++) {
        uint8_t packet[32];
        size_t length = event_packet(packet, PT_DTMF_8K, i == 0, (uint16_t)i, 1000, false, 160);
        moat_transcoder_push(transcoder, packet, length, 0);
        moat_transcoder_push(reverse, packet, length, 0);
    }
    moat_transcoder_stats stats;
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    do {
        g_usleep(10000);
        moat_transcoder_get_stats(transcoder, &stats);
    } while (stats.dropped_dtmf < 3 && g_get_monotonic_time() < deadline);
    g_assert_cmpuint(stats.dropped_dtmf, ==, 3);
    g_assert_cmpuint(stats.dtmf_events, ==, 0);
    moat_transcoder_get_stats(reverse, &stats);
    g_assert_cmpuint(stats.dropped_invalid, ==, 3);
    g_assert_cmpuint(stats.packets_in, ==, 0);
    moat_transcoder_free(transcoder);
    moat_transcoder_free(reverse);
    g_assert_cmpuint(c.packets->len, ==, 0);
    collector_clear(&c);
}

/* ---- hostile and excess input ---- */

static void test_invalid_and_late(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&pcmu, &pcma, collect, &c);
    uint8_t payload[160] = {0xff}, packet[200];
    moat_transcoder_push(transcoder, payload, 5, 0); /* shorter than a header */
    size_t length = tone_rtp(packet, 96, 1, 0, SSRC_IN, payload, sizeof payload);
    moat_transcoder_push(transcoder, packet, length, 0); /* neither codec */
    length = tone_rtp(packet, 0, 1, 0, SSRC_IN, payload, sizeof payload);
    packet[0] = 0x40; /* version 1 */
    moat_transcoder_push(transcoder, packet, length, 0);
    length = tone_rtp(packet, 0, 1, 0, SSRC_IN, payload, 0); /* no payload */
    moat_transcoder_push(transcoder, packet, length, 0);
    const uint32_t timestamps[] = {0, 160, 160, 80, 320};
    for (int i = 0; i < 5; i++) {
        length =
            tone_rtp(packet, 0, (uint16_t)(2 + i), timestamps[i], SSRC_IN, payload, sizeof payload);
        moat_transcoder_push(transcoder, packet, length, (int64_t)i * FRAME_US);
    }
    moat_transcoder_stats stats;
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    do {
        g_usleep(10000);
        moat_transcoder_get_stats(transcoder, &stats);
    } while (stats.dropped_late < 2 && g_get_monotonic_time() < deadline);
    moat_transcoder_free(transcoder);
    g_assert_cmpuint(stats.dropped_invalid, ==, 4);
    g_assert_cmpuint(stats.packets_in, ==, 5);
    g_assert_cmpuint(stats.dropped_late, ==, 2);
    g_assert_false(stats.failed);
    collector_clear(&c);
}

/* 120 ms Opus packets (a few dozen bytes each) arriving 1 ms apart,
 * timestamps 120 ms apart: each decodes to six 20 ms PCMU packets. The
 * meter lets through what the arrival times allow (1.2 s of media a second
 * and a 500 ms burst); the rest is dropped and counted. Unmetered, all 400
 * made 2,400 packets. */
static void test_faster_than_real_time(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&opus, &pcmu, collect, &c);
    int error;
    OpusEncoder *encoder = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &error);
    g_assert_cmpint(error, ==, OPUS_OK);
    g_assert_cmpint(opus_encoder_ctl(encoder, OPUS_SET_BITRATE(6000)), ==, OPUS_OK);
    int16_t pcm[5760];
    uint8_t payload[1000], packet[1100];
    for (int n = 0; n < 400; n++) {
        tone_fill(pcm, 5760, TONE_HZ, 48000, (uint64_t)n * 5760);
        int bytes = opus_encode(encoder, pcm, 5760, payload, sizeof payload);
        g_assert_cmpint(bytes, >, 0);
        size_t length = tone_rtp(packet, PT_OPUS, (uint16_t)n, (uint32_t)n * 5760, SSRC_IN, payload,
                                 (size_t)bytes);
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * 1000);
    }
    opus_encoder_destroy(encoder);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    /* 500 ms at once, then 1.2 x 399 ms: 8 packets of 120 ms. */
    g_assert_cmpuint(stats.packets_in, ==, 400);
    g_assert_cmpuint(stats.dropped_too_fast, ==, 400 - 8);
    g_assert_cmpuint(stats.dropped_queue_full, ==, 0);
    wait_for_output(transcoder, 8 * 6 - 6);
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    g_test_message("%u packets out of 8 x 120 ms", c.packets->len);
    g_assert_cmpuint(c.packets->len, <=, 8 * 6);
    g_assert_cmpuint(c.packets->len, >=, 8 * 6 - 6);
    for (guint i = 0; i < c.packets->len; i++) {
        size_t length;
        const uint8_t *p = packet_at(&c, i, &length);
        g_assert_cmpuint(p[1] & 0x7f, ==, 0);
        g_assert_cmpuint(length, ==, 12 + 160);
    }
    collector_clear(&c);
}

/* 10000 packets at once, far more than the queue (as if the pipeline had
 * fallen 200 s behind a real-time source): push never waits, the excess is
 * counted, and freeing with the rest in flight is clean. */
static void test_burst_then_free(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *transcoder = make(&pcmu, &opus, collect, &c);
    uint8_t payload[160], packet[200];
    memset(payload, 0xff, sizeof payload);
    for (int n = 0; n < 10000; n++) {
        size_t length =
            tone_rtp(packet, 0, (uint16_t)n, (uint32_t)n * 160, SSRC_IN, payload, sizeof payload);
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * FRAME_US);
    }
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    g_test_message("burst: %" G_GUINT64_FORMAT " of 10000 dropped, queue full",
                   stats.dropped_queue_full);
    g_assert_cmpuint(stats.packets_in, ==, 10000);
    g_assert_cmpuint(stats.dropped_queue_full, >, 0);
    g_assert_cmpuint(stats.dropped_queue_full, <, 10000);
    g_assert_cmpuint(stats.dropped_too_fast, ==, 0);
    collector_clear(&c);
}

/* Freed at once, and freed while its output feeds another transcoder. */
static void test_free_in_flight(void)
{
    collector c;
    collector_init(&c);
    moat_transcoder *idle = make(&opus, &pcmu, collect, &c);
    moat_transcoder_free(idle);
    moat_transcoder *second = make(&g722, &pcma, collect, &c);
    moat_transcoder *first = make(&pcmu, &g722, chain, second);
    for (int round = 0; round < 3; round++) {
        uint8_t payload[160], packet[200];
        memset(payload, 0x7f, sizeof payload);
        for (int n = 0; n < 40; n++) {
            size_t length = tone_rtp(packet, 0, (uint16_t)n, (uint32_t)(round * 40 + n) * 160,
                                     SSRC_IN, payload, sizeof payload);
            moat_transcoder_push(first, packet, length, (int64_t)(round * 40 + n) * FRAME_US);
        }
        g_usleep(5000);
    }
    moat_transcoder_free(first);
    moat_transcoder_free(second);
    collector_clear(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcoder/supports", test_supports);
    g_test_add_func("/transcoder/pcmu_to_opus", test_pcmu_to_opus);
    g_test_add_func("/transcoder/opus_to_pcmu", test_opus_to_pcmu);
    g_test_add_func("/transcoder/g722_pcma_chain", test_g722_pcma_chain);
    g_test_add_func("/transcoder/dtmf_restamp", test_dtmf_restamp);
    g_test_add_func("/transcoder/dtmf_without_counterpart", test_dtmf_without_counterpart);
    g_test_add_func("/transcoder/invalid_and_late", test_invalid_and_late);
    g_test_add_func("/transcoder/faster_than_real_time", test_faster_than_real_time);
    g_test_add_func("/transcoder/burst_then_free", test_burst_then_free);
    g_test_add_func("/transcoder/free_in_flight", test_free_in_flight);
    return g_test_run();
}
