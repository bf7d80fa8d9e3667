/* What Moat tells a WebRTC party on renegotiation (call_webrtc_describe.h):
 * the party's identity (ICE credentials and fingerprint), each m-line's
 * direction taken from the other party's SDP (its own, the session's, or
 * sendrecv), the o= version bumped only when the text changes, and new
 * ICE credentials after a restart. */
#include <glib.h>
#include <string.h>

#include "call/call_webrtc_describe.h"

static const char MOAT[] = "v=0\r\no=- 7 3 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
                           "a=ice-ufrag:moat\r\na=ice-pwd:moatmoatmoatmoatmoatmo\r\n"
                           "a=fingerprint:sha-256 AA:BB\r\n"
                           "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=sendrecv\r\n"
                           "a=rtpmap:111 opus/48000/2\r\n"
                           "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:1\r\na=rtpmap:0 PCMU/8000\r\n";

static const char *phone(const char *session, const char *first, const char *second)
{
    static char text[512];
    g_snprintf(text, sizeof text,
               "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\n%s"
               "m=audio 4000 RTP/AVP 0\r\n%sm=audio 4002 RTP/AVP 0\r\n%s",
               session, first, second);
    return text;
}

static void test_identity(void)
{
    char id[MOAT_CALL_WEBRTC_IDENTITY_SIZE];
    g_assert_true(moat_call_webrtc_identity(MOAT, sizeof MOAT - 1, id));
    g_assert_cmpstr(id, ==, "moat moatmoatmoatmoatmoatmo sha-256 AA:BB");
    const char *no_fingerprint = "a=ice-ufrag:x\r\na=ice-pwd:y\r\n";
    g_assert_false(moat_call_webrtc_identity(no_fingerprint, strlen(no_fingerprint), id));
    GString *long_ufrag = g_string_new("a=ice-ufrag:");
    for (int i = 0; i < 600; i++)
        g_string_append_c(long_ufrag, 'u');
    g_string_append(long_ufrag, "\r\na=ice-pwd:p\r\na=fingerprint:sha-256 AA\r\n");
    g_assert_false(moat_call_webrtc_identity(long_ufrag->str, long_ufrag->len, id));
    g_string_free(long_ufrag, TRUE);
}

static void test_directions(void)
{
    /* Unchanged: sendrecv everywhere, no version bump. */
    const char *same = phone("", "a=sendrecv\r\n", "");
    char *out = moat_call_webrtc_redescribe(MOAT, same, strlen(same));
    g_assert_cmpstr(out, ==, MOAT);
    g_free(out);
    /* Hold on the first m-line; the session level holds the second. */
    const char *hold = phone("a=inactive\r\n", "a=sendonly\r\n", "");
    out = moat_call_webrtc_redescribe(MOAT, hold, strlen(hold));
    g_assert_nonnull(strstr(out, "o=- 7 4 IN IP4 0.0.0.0\r\n"));
    g_assert_nonnull(strstr(out, "a=mid:0\r\na=sendonly\r\n"));
    g_assert_null(strstr(out, "a=sendrecv"));
    g_assert_nonnull(strstr(out, "a=rtpmap:0 PCMU/8000\r\na=inactive\r\n"));
    /* Resumed: back to sendrecv, the version grows again. */
    const char *resume = phone("", "", "");
    char *again = moat_call_webrtc_redescribe(out, resume, strlen(resume));
    g_assert_nonnull(strstr(again, "o=- 7 5 IN IP4 0.0.0.0\r\n"));
    g_assert_nonnull(strstr(again, "a=mid:0\r\na=sendrecv\r\n"));
    g_assert_null(strstr(again, "a=inactive"));
    g_assert_null(strstr(again, "a=sendonly"));
    /* The identity never changes. */
    char before[MOAT_CALL_WEBRTC_IDENTITY_SIZE], after[MOAT_CALL_WEBRTC_IDENTITY_SIZE];
    g_assert_true(moat_call_webrtc_identity(MOAT, sizeof MOAT - 1, before));
    g_assert_true(moat_call_webrtc_identity(again, strlen(again), after));
    g_assert_cmpstr(before, ==, after);
    g_free(out);
    g_free(again);
    /* No o= line: nothing to bump (phone() reuses its buffer: a new hold). */
    hold = phone("", "a=sendonly\r\n", "");
    g_assert_null(moat_call_webrtc_redescribe("m=audio 9 RTP/AVP 0\r\n", hold, strlen(hold)));
}

static void test_new_credentials(void)
{
    char *out = moat_call_webrtc_new_credentials(MOAT, "fresh", "freshfreshfreshfreshfr");
    g_assert_nonnull(strstr(out, "o=- 7 4 IN IP4 0.0.0.0\r\n"));
    g_assert_nonnull(strstr(out, "a=ice-ufrag:fresh\r\na=ice-pwd:freshfreshfreshfreshfr\r\n"));
    g_assert_null(strstr(out, "a=ice-ufrag:moat"));
    g_assert_nonnull(strstr(out, "a=fingerprint:sha-256 AA:BB\r\n"));
    g_free(out);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call-webrtc-describe/identity", test_identity);
    g_test_add_func("/call-webrtc-describe/directions", test_directions);
    g_test_add_func("/call-webrtc-describe/new-credentials", test_new_credentials);
    return g_test_run();
}
