/* libFuzzer target for the RTP side of gateway/rtp: header parsing,
 * extension lookup and rewrites on the input as one packet, then the input
 * as a stream of (seq, timestamp, arrival) records through the receive
 * statistics and as packets through the retransmission cache. Any invariant
 * broken aborts. */
#include <stdlib.h>
#include <string.h>

#include "rtp/retransmit_cache.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"
#include "rtp/rtp_receive_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static void fuzz_header(const uint8_t *data, size_t size)
{
    moat_rtp_header h;
    if (moat_rtp_parse(data, size, &h) != MOAT_RTP_OK) {
        return;
    }
    CHECK(h.version == 2);
    CHECK(h.header_length >= 12 + 4u * h.csrc_count);
    CHECK(h.payload_offset == h.header_length);
    CHECK(h.payload_offset + h.payload_length + h.padding_length == size);
    CHECK(!h.padding || h.padding_length > 0);
    if (h.extension)
        CHECK(h.extension_offset + h.extension_length <= h.header_length);

    /* Every id of both forms; found data lies inside the extension. */
    for (unsigned id = 0; id < 256; id++) {
        const uint8_t *value;
        size_t len;
        if (moat_rtp_find_extension(data, &h, (uint8_t)id, &value, &len) == MOAT_RTP_OK) {
            CHECK(value >= data + h.extension_offset);
            CHECK(value + len <= data + h.extension_offset + h.extension_length);
        }
    }

    /* Rewrites change exactly the fields they own. */
    uint8_t *copy = malloc(size);
    if (copy == NULL)
        return;
    memcpy(copy, data, size);
    moat_rtp_set_ssrc(copy, ~h.ssrc);
    moat_rtp_set_sequence(copy, (uint16_t)(h.sequence + 1));
    moat_rtp_set_timestamp(copy, h.timestamp + 1);
    moat_rtp_set_payload_type(copy, (uint8_t)(h.payload_type ^ 1));
    moat_rtp_header h2;
    CHECK(moat_rtp_parse(copy, size, &h2) == MOAT_RTP_OK);
    CHECK(h2.ssrc == ~h.ssrc);
    CHECK(h2.sequence == (uint16_t)(h.sequence + 1));
    CHECK(h2.timestamp == h.timestamp + 1);
    CHECK(h2.payload_type == (h.payload_type ^ 1));
    CHECK(h2.marker == h.marker);
    CHECK(memcmp(copy + 12, data + 12, size - 12) == 0);
    free(copy);
}

static void fuzz_receive_stats(const uint8_t *data, size_t size)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    uint16_t missing[MOAT_RTP_MISSING_WINDOW];
    moat_rtp_receive_stats_init(&s, 1, size > 0 ? data[0] % 4 : 0);
    uint64_t now = 0;
    for (size_t off = 1; off + 10 <= size; off += 10) {
        const uint8_t *r = data + off;
        uint16_t seq = moat_rd16(r);
        moat_rtp_receive_stats_update(&s, seq, moat_rd32(r + 2), moat_rd32(r + 6));
        now += r[9];
        switch (r[2] & 3) {
        case 0:
            if (moat_rtp_receive_stats_fill_report(&s, now, &rb))
                CHECK(rb.highest_sequence == moat_rtp_receive_stats_extended_max(&s));
            break;
        case 1: {
            size_t n = moat_rtp_receive_stats_missing(&s, missing, MOAT_RTP_MISSING_WINDOW);
            CHECK(n < MOAT_RTP_MISSING_WINDOW);
            for (size_t i = 0; i < n; i++)
                CHECK(missing[i] != s.max_seq);
            break;
        }
        case 2:
            moat_rtp_receive_stats_forget_missing(&s, seq ^ r[8]);
            break;
        default:
            moat_rtp_receive_stats_on_sr(&s, moat_rd32(r + 2), now);
            break;
        }
    }
}

static void fuzz_retransmit_cache(const uint8_t *data, size_t size)
{
    moat_retransmit_cache *c = moat_retransmit_cache_new(16, 10, 1000);
    if (c == NULL)
        return;
    /* Input as packets of 12 + (first octet % 64) octets with version 2. */
    uint8_t pkt[12 + 64];
    uint64_t now = 0;
    size_t off = 0;
    while (off + 12 <= size) {
        size_t len = 12 + data[off] % 64;
        if (len > size - off)
            len = size - off;
        memcpy(pkt, data + off, len);
        pkt[0] = (uint8_t)(0x80 | (pkt[0] & 0x3F));
        off += len;
        now += pkt[1];
        uint16_t seq = moat_rd16(pkt + 2);
        CHECK(moat_retransmit_cache_store(c, pkt, len, now) == MOAT_RTP_OK);
        const uint8_t *got;
        size_t got_len;
        CHECK(moat_retransmit_cache_get(c, seq, &got, &got_len) == MOAT_RTP_OK);
        CHECK(got_len == len && memcmp(got, pkt, len) == 0);
        uint16_t probe = (uint16_t)(seq - pkt[4] % 32);
        if (moat_retransmit_cache_resend(c, probe, now, &got, &got_len) == MOAT_RTP_OK)
            CHECK(moat_rd16(got + 2) == probe);
    }
    moat_retransmit_cache_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_header(data, size);
    (void)moat_rtp_is_rtcp(data, size);
    fuzz_receive_stats(data, size);
    fuzz_retransmit_cache(data, size);
    return 0;
}
