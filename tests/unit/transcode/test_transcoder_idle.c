/* A transcoder with no media costs no wake-ups: its feeding thread sleeps
 * until a packet is pushed, the pipeline posts a message or free stops it
 * (before, it polled every 4 ms: 250 wake-ups a second per direction, a
 * core for 400 idle ones). A packet pushed afterwards still comes out. */
#include "transcode/transcoder.h"

#include "tone.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SSRC_IN  0x11223344u
#define FRAME_US 20000

static const moat_transcoder_codec pcmu = {"PCMU", 8000, 1, 0, 0, 0};
static const moat_transcoder_codec opus = {"opus", 48000, 2, 111, 0, 0};

static void count(void *context, const uint8_t *packet, size_t length)
{
    (void)packet;
    (void)length;
    atomic_fetch_add((atomic_uint *)context, 1);
}

/* The feeder thread's voluntary context switches (each one a wake-up), from
 * /proc; -1 when no thread of that name runs. */
static long feeder_wakeups(void)
{
    GDir *dir = g_dir_open("/proc/self/task", 0, NULL);
    g_assert_nonnull(dir);
    long found = -1;
    const char *tid;
    while (found < 0 && (tid = g_dir_read_name(dir))) {
        char *path = g_strdup_printf("/proc/self/task/%s/comm", tid), *comm = NULL;
        if (g_file_get_contents(path, &comm, NULL, NULL) &&
            g_str_has_prefix(comm, "moat-transcode")) {
            char *status_path = g_strdup_printf("/proc/self/task/%s/status", tid), *status = NULL;
            g_assert_true(g_file_get_contents(status_path, &status, NULL, NULL));
            const char *line = strstr(status, "voluntary_ctxt_switches:");
            g_assert_nonnull(line);
            found = strtol(line + strlen("voluntary_ctxt_switches:"), NULL, 10);
            g_free(status);
            g_free(status_path);
        }
        g_free(comm);
        g_free(path);
    }
    g_dir_close(dir);
    return found;
}

static void test_idle_feeder_sleeps(void)
{
    atomic_uint out = 0;
    char error[256] = "";
    moat_transcoder *transcoder =
        moat_transcoder_new(&pcmu, &opus, 0xcafe0001u, count, &out, error, sizeof error);
    g_assert_nonnull(transcoder);
    g_usleep(300000); /* the pipeline's start-up messages */
    long before = feeder_wakeups();
    g_assert_cmpint(before, >=, 0);
    g_usleep(500000);
    long idle = feeder_wakeups() - before;
    g_test_message("idle feeder: %ld wake-ups in 500 ms", idle);
    g_assert_cmpint(idle, <=, 5);
    uint8_t payload[160], packet[200];
    memset(payload, 0xff, sizeof payload);
    for (int n = 0; n < 10; n++) {
        size_t length =
            tone_rtp(packet, 0, (uint16_t)n, (uint32_t)n * 160, SSRC_IN, payload, sizeof payload);
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * FRAME_US);
    }
    gint64 deadline = g_get_monotonic_time() + 15 * G_USEC_PER_SEC;
    while (atomic_load(&out) == 0 && g_get_monotonic_time() < deadline)
        g_usleep(10000);
    g_assert_cmpuint(atomic_load(&out), >, 0);
    moat_transcoder_free(transcoder);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcoder/idle_feeder_sleeps", test_idle_feeder_sleeps);
    return g_test_run();
}
