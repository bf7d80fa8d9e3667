/* The transcoder's real-time meter on a made-up clock: a real-time call with
 * jitter and a hiccup's backlog loses nothing; a sender faster than real
 * time gets 1.2x the wall clock plus the burst and no more; idle time banks
 * no more than the burst. And the media durations it charges: G.711/G.722
 * by length, Opus by its TOC (every configuration, frame-count codes,
 * packets that do not parse). */
#include "transcode/transcode_meter.h"

#include <glib.h>

#define FRAME_US 20000

/* 20 ms packets for 60 s, each up to 30 ms late (never reordered), with a
 * 400 ms hiccup every 10 s whose backlog arrives at once. */
static void test_real_time_with_jitter_and_hiccups(void)
{
    moat_transcode_meter meter;
    moat_transcode_meter_init(&meter);
    int64_t arrival = 1000000, previous = 0;
    for (int n = 0; n < 3000; n++) {
        int64_t sent = (int64_t)n * FRAME_US;
        int64_t late = g_test_rand_int_range(0, 30000);
        if (n % 500 >= 480)
            late = (500 - n % 500) * FRAME_US; /* the hiccup: all at its end */
        arrival = MAX(previous, 1000000 + sent + late);
        previous = arrival;
        g_assert_true(moat_transcode_meter_admit(&meter, arrival, FRAME_US));
    }
}

/* Packets arriving all at once: the burst, then 1.2x the wall clock. */
static void test_faster_than_real_time(void)
{
    moat_transcode_meter meter;
    moat_transcode_meter_init(&meter);
    int admitted = 0;
    for (int n = 0; n < 100; n++)
        admitted += moat_transcode_meter_admit(&meter, 5000, FRAME_US);
    g_assert_cmpint(admitted, ==, MOAT_TRANSCODE_METER_BURST_US / FRAME_US);
    /* 10 s of 120 ms packets every 10 ms (12x real time): 12 s of media
     * fits in 10 s * 1.2; nothing more, however it is cut. */
    int64_t media = 0;
    for (int64_t now = 5000; now <= 5000 + 10000000; now += 10000)
        media += moat_transcode_meter_admit(&meter, now, 120000) ? 120000 : 0;
    g_assert_cmpint(media, <=, 10000000 * MOAT_TRANSCODE_METER_RATE_PERCENT / 100);
    g_assert_cmpint(media, >=, 10000000 * MOAT_TRANSCODE_METER_RATE_PERCENT / 100 - 240000);
    /* Tiny packets cannot slip through between refills either. */
    moat_transcode_meter_init(&meter);
    int64_t tiny = 0;
    for (int64_t now = 0; now < 1000000; now++)
        tiny += moat_transcode_meter_admit(&meter, now, 125) ? 125 : 0;
    g_assert_cmpint(tiny, <=, MOAT_TRANSCODE_METER_BURST_US + 1200000);
    g_assert_cmpint(tiny, >=, MOAT_TRANSCODE_METER_BURST_US + 1200000 - 250);
}

/* A long silence (hold, DTX) banks the burst only; a dropped packet takes
 * nothing; a clock that stands still or steps back adds nothing. */
static void test_idle_and_clock(void)
{
    const int64_t hour = INT64_C(3600) * G_USEC_PER_SEC;
    moat_transcode_meter meter;
    moat_transcode_meter_init(&meter);
    g_assert_true(moat_transcode_meter_admit(&meter, 0, MOAT_TRANSCODE_METER_BURST_US));
    g_assert_false(moat_transcode_meter_admit(&meter, 0, 1));
    g_assert_false(moat_transcode_meter_admit(&meter, -5000000, 1));
    g_assert_true(moat_transcode_meter_admit(&meter, hour, 300000));
    g_assert_false(moat_transcode_meter_admit(&meter, hour, 300000));
    g_assert_true(moat_transcode_meter_admit(&meter, hour, 200000));
    g_assert_false(moat_transcode_meter_admit(&meter, hour + 1000, 2000));
    g_assert_true(moat_transcode_meter_admit(&meter, hour + 1000, 1200));
}

static void test_payload_durations(void)
{
    uint8_t bytes[1500] = {0};
    g_assert_cmpuint(moat_transcode_payload_us(8, bytes, 160), ==, 20000); /* G.711 20 ms */
    g_assert_cmpuint(moat_transcode_payload_us(8, bytes, 1), ==, 125);     /* one sample */
    g_assert_cmpuint(moat_transcode_payload_us(8, bytes, 1500), ==, 187500);
    /* Opus, one frame (code 0) of each configuration (RFC 6716 table 2). */
    static const uint32_t frame_us[32] = {10000, 20000, 40000, 60000, 10000, 20000, 40000, 60000,
                                          10000, 20000, 40000, 60000, 10000, 20000, 10000, 20000,
                                          2500,  5000,  10000, 20000, 2500,  5000,  10000, 20000,
                                          2500,  5000,  10000, 20000, 2500,  5000,  10000, 20000};
    for (unsigned config = 0; config < 32; config++) {
        bytes[0] = (uint8_t)(config << 3);
        g_assert_cmpuint(moat_transcode_payload_us(0, bytes, 1), ==, frame_us[config]);
        bytes[0] |= 1; /* two frames, equal sizes */
        g_assert_cmpuint(moat_transcode_payload_us(0, bytes, 3), ==, 2 * frame_us[config]);
        bytes[0] ^= 3; /* two frames, different sizes */
        g_assert_cmpuint(moat_transcode_payload_us(0, bytes, 3), ==, 2 * frame_us[config]);
    }
    /* Code 3: the count byte; six 20 ms CELT frames are 120 ms. */
    const uint8_t six[] = {31 << 3 | 3, 6};
    g_assert_cmpuint(moat_transcode_payload_us(0, six, 2), ==, 120000);
    const uint8_t forty_eight[] = {16 << 3 | 3, 0x80 | 48, 0}; /* 48 x 2.5 ms, VBR flag */
    g_assert_cmpuint(moat_transcode_payload_us(0, forty_eight, 3), ==, 120000);
    const uint8_t three[] = {1 << 3 | 3, 0x40 | 3}; /* 3 x 20 ms SILK, padding flag */
    g_assert_cmpuint(moat_transcode_payload_us(0, three, 2), ==, 60000);
    /* What does not parse is charged the most a packet can carry. */
    const uint8_t too_many[] = {31 << 3 | 3, 7};    /* 140 ms */
    const uint8_t none[] = {31 << 3 | 3, 0};        /* no frame */
    const uint8_t no_count[] = {31 << 3 | 3};       /* no count byte */
    const uint8_t sixty_three[] = {3 << 3 | 3, 63}; /* 63 x 60 ms */
    g_assert_cmpuint(moat_transcode_payload_us(0, too_many, 2), ==, MOAT_TRANSCODE_OPUS_MAX_US);
    g_assert_cmpuint(moat_transcode_payload_us(0, none, 2), ==, MOAT_TRANSCODE_OPUS_MAX_US);
    g_assert_cmpuint(moat_transcode_payload_us(0, no_count, 1), ==, MOAT_TRANSCODE_OPUS_MAX_US);
    g_assert_cmpuint(moat_transcode_payload_us(0, sixty_three, 2), ==, MOAT_TRANSCODE_OPUS_MAX_US);
    g_assert_cmpuint(moat_transcode_payload_us(0, bytes, 0), ==, MOAT_TRANSCODE_OPUS_MAX_US);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcode_meter/real_time_with_jitter_and_hiccups",
                    test_real_time_with_jitter_and_hiccups);
    g_test_add_func("/transcode_meter/faster_than_real_time", test_faster_than_real_time);
    g_test_add_func("/transcode_meter/idle_and_clock", test_idle_and_clock);
    g_test_add_func("/transcode_meter/payload_durations", test_payload_durations);
    return g_test_run();
}
