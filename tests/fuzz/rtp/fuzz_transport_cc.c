/* libFuzzer target for transport-wide feedback (rtp/transport_cc.h): the
 * input is the FCI of an RTPFB FMT 15 packet. Invariants: no read past it
 * (ASan), never more statuses than asked for, and what parsed with
 * arrival times the builder can express (non-negative, in one feedback)
 * builds again and parses back to the same arrival times. */
#include <stdlib.h>
#include <string.h>

#include "rtp/transport_cc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    free(fci);
    return 0;
}
