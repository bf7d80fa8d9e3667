/* libFuzzer target for transport-wide feedback (rtp/transport_cc.h): the
 * input is the FCI of an RTPFB FMT 15 packet. Invariants: no read past it
 * (ASan), never more statuses than asked for, and what parsed with
 * arrival times the builder can express (non-negative, in one feedback)
 * builds again and parses back to the same arrival times. The parsed
 * statuses then go to the sender-side estimator (rtp/send_side_bwe.h), as
 * a subscriber's feedback does, twice (a replay): it never counts more
 * packets acknowledged or lost than were sent, and its estimate stays in
 * its bounds. */
#include <stdlib.h>
#include <string.h>

#include "rtp/send_side_bwe.h"
#include "rtp/transport_cc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SENT 600

static void feed_estimator(const moat_twcc_header *h, const int64_t *arrival, size_t n,
                           uint8_t mode)
{
    static moat_ssbwe e;
    moat_ssbwe_init(&e, 1000000);
    /* The packets the feedback talks about were sent (base_seq - 100 on),
     * some as a probe. */
    e.next_seq = (uint16_t)(h->base_seq - 100);
    if (mode & 1)
        moat_ssbwe_probe_start(&e, 3000000, 1000);
    for (uint64_t i = 0; i < SENT; i++)
        moat_ssbwe_on_send(&e, 1200, 1000 + i * 1000, false);
    moat_ssbwe_probe_end(&e, 700000);
    moat_ssbwe_on_feedback(&e, h->base_seq, arrival, n, 800000);
    moat_ssbwe_on_feedback(&e, h->base_seq, arrival, n, 2000000);
    uint64_t estimate = moat_ssbwe_estimate(&e);
    if (e.stats.packets_acked > SENT || e.stats.packets_acked + e.stats.packets_lost > 2 * n ||
        estimate < MOAT_SSBWE_MIN_BPS || estimate > MOAT_SSBWE_MAX_BPS)
        abort();
    moat_ssbwe_take_probe_result(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fci = malloc(size ? size : 1);
    if (!fci)
        return 0;
    memcpy(fci, data, size);
    moat_rtcp_fb fb = {
        .type = MOAT_RTCP_RTPFB, .fmt = MOAT_RTCP_FMT_TRANSPORT_CC, .fci = fci, .fci_length = size};
    moat_twcc_header h;
    static int64_t arrival[MOAT_TWCC_MAX_STATUS], again[MOAT_TWCC_MAX_STATUS];
    size_t max = size ? data[0] % (MOAT_TWCC_MAX_STATUS + 1) : 0;
    int n = moat_twcc_parse(&fb, &h, arrival, max);
    if (n > (int)max)
        abort();
    bool expressible = n > 0 && h.reference_time >= 0 && h.reference_time < 0x400000;
    for (int i = 0; i < n && expressible; i++)
        expressible = arrival[i] >= -1;
    uint8_t buf[4096];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof buf);
    if (expressible &&
        moat_twcc_build(&w, 1, 2, h.base_seq, arrival, (size_t)n, h.fb_count) == MOAT_RTP_OK) {
        moat_rtcp_fb back = {.type = MOAT_RTCP_RTPFB,
                             .fmt = MOAT_RTCP_FMT_TRANSPORT_CC,
                             .fci = buf + 12,
                             .fci_length = w.length - 12};
        moat_twcc_header h2;
        if (moat_twcc_parse(&back, &h2, again, (size_t)n) != n || h2.base_seq != h.base_seq)
            abort();
        for (int i = 0; i < n; i++)
            if (again[i] != arrival[i])
                abort();
    }
    if (n > 0)
        feed_estimator(&h, arrival, (size_t)n, size > 1 ? data[1] : 0);
    free(fci);
    return 0;
}
