/* What a session publishes to its worker's kernel filter, on plain memory
 * standing in for the maps the BPF program reads: the SDP's SSRCs (0 there
 * means none was declared) and every SSRC seen on a packet that
 * authenticated, SSRC 0 included (legal in RFC 3550: the program would
 * drop an unlisted one as unknown_ssrc while enforcing). */
#include "session_harness.h"

#include "session/session_internal.h"
#include "session/session_kernel.h"

#include <glib.h>
#include <string.h>

typedef struct {
    struct moat_kf_control control;
    struct moat_kf_session sessions[MOAT_KF_MAX_SESSIONS];
    struct moat_kf_ring rings[MOAT_KF_MAX_RINGS];
    moat_kf_state state;
} maps;

static maps *maps_new(void)
{
    maps *m = g_new0(maps, 1);
    moat_kf_shared shared = {.control = &m->control, .sessions = m->sessions, .rings = m->rings};
    moat_kf_state_init(&m->state, shared);
    return m;
}

static void maps_free(maps *m)
{
    moat_kf_state_clear(&m->state);
    g_free(m);
}

/* One RTP packet from the peer on `ssrc`, protected with the peer's keys. */
static void peer_sends(session_harness *h, uint32_t ssrc, uint16_t sequence)
{
    uint8_t packet[256] = {0x80, 96};
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    for (int i = 0; i < 4; i++)
        packet[8 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    size_t length = 12 + 40;
    g_assert_cmpint(moat_srtp_protect_rtp(h->peer_srtp, packet, &length, sizeof packet), ==, 0);
    moat_session_handle_srtp(h->session, NULL, packet, length, sizeof packet);
}

/* The listed entry of `ssrc` in the slot, or NULL. */
static const struct moat_kf_ssrc *listed(const maps *m, int slot, uint32_t ssrc)
{
    const struct moat_kf_session *session = &m->sessions[slot];
    for (uint32_t i = 0; i < session->n_ssrcs && i < MOAT_KF_SESSION_SSRCS; i++) {
        if (session->ssrcs[i].ssrc == ssrc)
            return &session->ssrcs[i];
    }
    return NULL;
}

static void test_ssrc_zero_seen_on_authentic_packets_is_listed(void)
{
    session_harness h;
    session_harness_init(&h);
    h.settings.mode = MOAT_DETECTOR_MODE_ALWAYS; /* enforcing: synced every tick */
    h.negotiation.media[0].remote_rtx_ssrc = 0;  /* no RTX declared */
    session_harness_create(&h, NULL);
    moat_worker_set_now_us(h.worker, 1000000);
    session_harness_key(&h);
    maps *m = maps_new();
    int slot = moat_kf_state_slot(&m->state, h.session, true);
    g_assert_cmpint(slot, >=, 0);

    /* Before any packet: the declared SSRC only; the SDP's 0 lists nothing. */
    moat_session_kernel_publish(h.session, &m->state);
    g_assert_cmpuint(m->sessions[slot].n_ssrcs, ==, 1);
    g_assert_nonnull(listed(m, slot, HARNESS_REMOTE_SSRC));
    g_assert_null(listed(m, slot, 0));

    /* The peer sends on SSRC 0 (not in its SDP) and on the declared one. */
    for (uint16_t sequence = 1; sequence <= 10; sequence++) {
        peer_sends(&h, 0, sequence);
        peer_sends(&h, HARNESS_REMOTE_SSRC, sequence);
    }
    g_assert_cmpuint(moat_counter_read(&h.session->counters.rtp_received), ==, 20);
    moat_session_kernel_publish(h.session, &m->state);
    g_assert_cmpuint(m->sessions[slot].flags & MOAT_KF_SESSION_ENFORCING, !=, 0);
    g_assert_cmpuint(m->sessions[slot].n_ssrcs, ==, 2);
    const struct moat_kf_ssrc *zero = listed(m, slot, 0);
    g_assert_nonnull(zero);
    g_assert_cmpuint(zero->flags & MOAT_KF_SSRC_HAS_HIGHEST, !=, 0);
    g_assert_cmpuint(zero->highest, ==, 10);
    const struct moat_kf_ssrc *declared = listed(m, slot, HARNESS_REMOTE_SSRC);
    g_assert_nonnull(declared);
    g_assert_cmpuint(declared->highest, ==, 10);

    moat_kf_state_release(&m->state, slot);
    maps_free(m);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/kernel/ssrc-zero-listed",
                    test_ssrc_zero_seen_on_authentic_packets_is_listed);
    return g_test_run();
}
