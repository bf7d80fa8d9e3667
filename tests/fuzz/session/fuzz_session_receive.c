/* libFuzzer target for a session's receive path: worker dispatch (RFC 7983
 * demux, ufrag and tuple lookup), STUN checks and their rate limit, DTLS
 * before a handshake, the stream guard, the detector, SRTP and SRTCP
 * (including NACKs answered from the retransmission cache, transport-cc
 * feedback and the repairs of what it reports lost) against a live
 * session keyed with known SRTP keys.
 *
 * Input: a sequence of records, each [flags][length hi][length lo][bytes].
 * flags bit 0-1: source (0: the session's checked tuple, 1: another tuple,
 * 2: another address); bit 2: protect the bytes as RTP with the peer's keys,
 * bit 3: as RTCP (so the fuzzer reaches what follows authentication); bits
 * 4-7: how far the clock moves first (0..15 ms), with a session tick. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "engine/worker_receive.h"

#include <stdint.h>
#include <string.h>

static session_harness harness;
static bool ready;
static uint64_t now_us = 1000000;

static void setup(void)
{
    session_harness_init(&harness);
    /* transport-cc toward the peer: its feedback reaches the estimator
     * and the repairs of what it reports lost. */
    harness.negotiation.media[0].transport_cc_extension_id = 3;
    /* and the playout delay a NACKing peer is asked for (session_playout.c) */
    harness.negotiation.media[0].playout_delay_extension_id = 5;
    moat_worker_set_now_us(harness.worker, now_us);
    session_harness_create(&harness, NULL);
    session_harness_key(&harness);
    /* Something in the retransmission cache for NACKs to find. */
    for (uint16_t i = 0; i < 64; i++) {
        moat_worker_set_now_us(harness.worker, now_us += 10000);
        session_harness_gateway_send_rtp(&harness, i, 400);
    }
    session_harness_flush(&harness);
    session_harness_drain_peer(&harness, NULL);
    ready = true;
}

static moat_path source(uint8_t which)
{
    moat_path path = harness.path;
    if (which == 1)
        path.remote.sin6_port ^= 0x0101;
    else if (which >= 2)
        path.remote.sin6_addr.s6_addr[15] ^= 0x5a;
    return path;
}

static void feed(uint8_t flags, const uint8_t *bytes, size_t length)
{
    uint8_t datagram[MOAT_DATAGRAM_CAPACITY];
    if (length > MOAT_DATAGRAM_CAPACITY - 64)
        length = MOAT_DATAGRAM_CAPACITY - 64;
    memcpy(datagram, bytes, length);
    if (flags & 0x0c) {
        if (length < 12)
            return;
        datagram[0] = (uint8_t)(0x80 | (datagram[0] & 0x3f));
        datagram[1] = (flags & 0x08) ? (uint8_t)(200 + datagram[1] % 8) : datagram[1] & 0x7f;
        size_t protected_length = length;
        int status = (flags & 0x08) ? moat_srtp_protect_rtcp(harness.peer_srtp, datagram,
                                                             &protected_length, sizeof datagram)
                                    : moat_srtp_protect_rtp(harness.peer_srtp, datagram,
                                                            &protected_length, sizeof datagram);
        if (status != MOAT_SRTP_OK)
            return;
        length = protected_length;
    }
    unsigned advance_ms = flags >> 4;
    if (advance_ms) {
        moat_worker_set_now_us(harness.worker, now_us += advance_ms * 1000u);
        if (moat_worker_find_session(harness.worker, "harness") &&
            !moat_session_tick(harness.session, now_us))
            moat_session_end(harness.session, moat_session_end_reason(harness.session));
    }
    moat_path from = source(flags & 3);
    moat_worker_dispatch(harness.worker, &from, datagram, length);
    session_harness_flush(&harness);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready)
        setup();
    size_t offset = 0;
    while (offset + 3 <= size) {
        uint8_t flags = data[offset];
        size_t length = (size_t)data[offset + 1] << 8 | data[offset + 2];
        offset += 3;
        if (length > size - offset)
            length = size - offset;
        feed(flags, data + offset, length);
        offset += length;
    }
    session_harness_drain_peer(&harness, NULL);
    /* A session that ended (consent, a plugin close) is replaced, so every
     * input meets a live one. */
    if (!moat_worker_find_session(harness.worker, "harness")) {
        harness.session = NULL;
        session_harness_clear(&harness);
        ready = false;
    }
    return 0;
}
