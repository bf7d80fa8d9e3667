/* What an answer may start, through the call layer's C API on a real
 * worker with real GStreamer pipelines: transcoders only in a call an
 * offer of which carried codec-transcode (an answer naming a codec its
 * plain offer lacks is relayed as is; a re-INVITE of a call that asked
 * keeps transcoding), at most [call] max_transcoders pipelines (beyond:
 * that m-line relayed as is with a warning, counted as `limit`; a
 * re-answer makes room with its own pair), and none at all with 0. */
#include <glib.h>
#include <string.h>

#include "call/call_registry.h"
#include "call_test_support.h"
#include "transcode/transcoder.h"

enum { PORT_MIN = 47200, PORT_MAX = 47299 };

static void setup(call_fixture *f, int max_transcoders)
{
    char error[256];
    f->worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    g_assert_nonnull(f->worker);
    g_assert_cmpint(moat_worker_start(f->worker, error, sizeof error), ==, 0);
    moat_worker *workers[] = {f->worker};
    moat_call_settings settings = {workers, 1, "127.0.0.1", PORT_MIN, PORT_MAX, "127.0.0.1", 30};
    settings.allow_loopback_destinations = true;
    settings.max_transcoders = max_transcoders;
    f->registry = moat_call_registry_new(&settings, error, sizeof error);
    g_assert_nonnull(f->registry);
}

/* `lines` audio m-lines on 127.0.0.1, each with one codec. */
static char *phone_sdp(int port, const char *payload_type, const char *rtpmap, int lines)
{
    GString *sdp = g_string_new("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n"
                                "c=IN IP4 127.0.0.1\r\nt=0 0\r\n");
    for (int i = 0; i < lines; i++)
        g_string_append_printf(sdp, "m=audio %d RTP/AVP %s\r\na=rtpmap:%s %s\r\n", port + 2 * i,
                               payload_type, payload_type, rtpmap);
    return g_string_free(sdp, FALSE);
}

/* A PCMU offer (codec-transcode opus when `transcode`) answered with Opus;
 * the answer's reply (its SDP freed, the warning kept). */
static moat_call_reply pcmu_to_opus(call_fixture *f, const char *call_id, int lines, bool transcode)
{
    char *offer_sdp = phone_sdp(20000, "0", "PCMU/8000", lines);
    moat_ng_request offer = call_request(call_id, "a", NULL, offer_sdp);
    if (transcode) {
        offer.codec_transcode.names[0] = "opus";
        offer.codec_transcode.count = 1;
    }
    moat_call_reply reply = {0};
    moat_call_offer(f->registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    char *answer_sdp = phone_sdp(22000, "111", "opus/48000/2", lines);
    moat_ng_request answer = call_request(call_id, "a", "b", answer_sdp);
    memset(&reply, 0, sizeof reply);
    moat_call_answer(f->registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    g_free(offer_sdp);
    g_free(answer_sdp);
    return reply;
}

static bool metric_is(call_fixture *f, const char *line)
{
    GString *out = g_string_new(NULL);
    moat_call_registry_metrics(f->registry, out);
    bool found = strstr(out->str, line) != NULL;
    if (!found)
        g_test_message("no \"%s\" in\n%s", line, out->str);
    g_string_free(out, TRUE);
    return found;
}

static void delete_now(call_fixture *f, const char *call_id)
{
    moat_ng_request request = call_request(call_id, NULL, NULL, NULL);
    request.delete_delay_s = 0;
    moat_call_reply reply = {0};
    moat_call_delete(f->registry, &request, &reply);
    g_assert_cmpstr(reply.error, ==, "");
}

/* Transcoders are freed once their worker let go (a main-loop idle). */
static void wait_live(unsigned want)
{
    for (int i = 0; i < 500 && moat_transcoder_live() != want; i++) {
        while (g_main_context_iteration(NULL, FALSE)) {
        }
        g_usleep(10 * 1000);
    }
    g_assert_cmpuint(moat_transcoder_live(), ==, want);
}

static void test_only_when_the_offer_asked(void)
{
    call_fixture f;
    setup(&f, 64);
    moat_call_reply reply = pcmu_to_opus(&f, "plain", 8, false);
    g_assert_cmpstr(reply.warning, ==, "");
    g_assert_cmpuint(moat_transcoder_live(), ==, 0);
    reply = pcmu_to_opus(&f, "asked", 2, true);
    g_assert_cmpstr(reply.warning, ==, "");
    g_assert_cmpuint(moat_transcoder_live(), ==, 4);
    /* The call was asked for once: a re-INVITE whose offer has no
     * codec-transcode keeps transcoding (new pairs replace the old). */
    reply = pcmu_to_opus(&f, "asked", 2, false);
    g_assert_cmpstr(reply.warning, ==, "");
    wait_live(4);
    delete_now(&f, "asked");
    wait_live(0);
    call_fixture_teardown(&f);
}

static void test_capped(void)
{
    call_fixture f;
    setup(&f, 6);
    moat_call_reply reply = pcmu_to_opus(&f, "first", 2, true);
    g_assert_cmpstr(reply.warning, ==, "");
    reply = pcmu_to_opus(&f, "second", 2, true);
    g_assert_nonnull(strstr(reply.warning, "m-line 1 relayed as is"));
    g_assert_nonnull(strstr(reply.warning, "max_transcoders"));
    g_assert_cmpuint(moat_transcoder_live(), ==, 6);
    g_assert_true(metric_is(&f, "moat_call_transcode_refused_total{reason=\"limit\"} 1\n"));
    /* The first call re-offered and re-answered at the limit: its own
     * pairs make room for their replacements. */
    reply = pcmu_to_opus(&f, "first", 2, true);
    g_assert_cmpstr(reply.warning, ==, "");
    g_assert_true(metric_is(&f, "moat_call_transcode_refused_total{reason=\"limit\"} 1\n"));
    wait_live(6);
    delete_now(&f, "first");
    wait_live(2);
    reply = pcmu_to_opus(&f, "third", 2, true);
    g_assert_cmpstr(reply.warning, ==, "");
    g_assert_cmpuint(moat_transcoder_live(), ==, 6);
    call_fixture_teardown(&f);
    wait_live(0);
}

static void test_zero_is_off(void)
{
    call_fixture f;
    setup(&f, 0);
    moat_call_reply reply = pcmu_to_opus(&f, "off", 1, true);
    g_assert_nonnull(strstr(reply.warning, "max_transcoders (0 pipelines)"));
    g_assert_cmpuint(moat_transcoder_live(), ==, 0);
    g_assert_true(metric_is(&f, "moat_call_transcode_refused_total{reason=\"limit\"} 1\n"));
    call_fixture_teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/transcode/only-when-the-offer-asked", test_only_when_the_offer_asked);
    g_test_add_func("/call/transcode/capped", test_capped);
    g_test_add_func("/call/transcode/zero-is-off", test_zero_is_off);
    return g_test_run();
}
