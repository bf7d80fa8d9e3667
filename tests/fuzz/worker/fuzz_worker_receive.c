/* libFuzzer target for the whole receive path of the worker socket and the
 * ingest ports, end to end: moat_worker_dispatch (what a recvmmsg batch hands
 * each datagram to) and moat_session_plain_handle (the same for an ingest
 * port), into the real echo and room plugins, their relays to subscribers on
 * the same worker (the direct path) and on another worker (the relay ring,
 * drained here as the other worker's wake-up would), and SRTP out.
 *
 * Two workers, never started: this thread plays whichever one it feeds
 * (moat_worker_drive_from_caller), then the other one draining its ring.
 * Sessions, all keyed as a finished handshake would (session_harness):
 *   worker 0: echo; room "r" publisher and one subscriber; ingest into room
 *             "i" (plain RTP, latched) and one subscriber; a subscriber of
 *             room "q"; a subscriber of room "s".
 *   worker 1: room "q" publisher; subscribers of rooms "r" and "i"; an
 *             SRTP ingest into room "s" (keys as the API's "srtp" gives).
 *
 * Input: records [target][flags][length hi][length lo][bytes].
 * target: low 3 bits pick the session (ENDPOINTS below), bits 3-4 the
 * source (0: its peer's tuple, 1: another port, 2: another address, 3: an
 * IPv4 address nobody uses); flags bit 0: stamp the bytes as RTP of the
 * session's negotiated SSRC and payload type, bit 1: protect them as SRTP
 * with the peer's keys, bit 2: as SRTCP instead, bit 3: the length is one of
 * the buffers' limits (LIMITS[length % N]) rather than the record's, the
 * record's bytes repeated to fill it; bits 4-7: how far the clock moves
 * first (ms), with a tick of the session. A length over the receive
 * capacity (MOAT_DATAGRAM_CAPACITY - 64) is what the kernel truncates:
 * the worker socket drops it before dispatch (MSG_TRUNC), an ingest port
 * gets its real length. */
#include "fuzz_datagram.h"
#include "session_harness.h"

#include "engine/relay.h"
#include "session/session_internal.h"
#include "engine/worker_receive.h"

#include <glib.h>
#include <stdint.h>
#include <string.h>

const moat_plugin *moat_echo_plugin_entry(void);
const moat_plugin *moat_room_plugin_entry(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECEIVE_CAPACITY FUZZ_RECEIVE_CAPACITY

typedef struct {
    const char *id;
    unsigned worker;
    const char *plugin; /* "echo" or "room" */
    const char *endpoint;
    const char *resource;
    bool plain;
    bool srtp; /* an SRTP ingest (plain too) */
} endpoint_spec;

/* Publishers come before their subscribers (a room is made by its
 * publisher). */
static const endpoint_spec ENDPOINTS[] = {
    {"echo", 0, "echo", "whip", "", false},     {"pub-r", 0, "room", "whip", "r", false},
    {"ingest-i", 0, "room", "whip", "i", true}, {"pub-q", 1, "room", "whip", "q", false},
    {"sub-r0", 0, "room", "whep", "r", false},  {"sub-r1", 1, "room", "whep", "r", false},
    {"sub-i0", 0, "room", "whep", "i", false},  {"sub-i1", 1, "room", "whep", "i", false},
    {"sub-q0", 0, "room", "whep", "q", false},  {"ingest-s", 1, "room", "whip", "s", true, true},
    {"sub-s0", 0, "room", "whep", "s", false},
};
#define N_ENDPOINTS (sizeof ENDPOINTS / sizeof ENDPOINTS[0])
/* What the fuzzer sends to: every publisher and ingest, one subscriber of
 * each room on worker 0 (target & 7). */
static const unsigned TARGETS[8] = {0, 1, 2, 3, 4, 9, 6, 8};
/* Every buffer's limit and one past it: relay MTU, its copy, the receive
 * capacity, the datagram capacity. */
static const size_t LIMITS[] = {1499, 1500, 1501, 1563, 1564, 1565, 1983, 1984, 1985, 2048};

static moat_worker *workers[2];
static moat_relay *relay;
static session_harness harnesses[N_ENDPOINTS];
static bool ready;
static uint64_t now_us = 1000000;

static void drive(unsigned index)
{
    if (workers[1 - index]) /* NULL once teardown freed it */
        moat_worker_drive_from_caller(workers[1 - index], false);
    moat_worker_drive_from_caller(workers[index], true);
}

/* Each worker's wake-up: tasks, its relay ring, its send batch. */
static void settle(void)
{
    for (unsigned round = 0; round < 2; round++) {
        for (unsigned w = 0; w < 2; w++) {
            drive(w);
            moat_worker_run_pending(workers[w]);
            moat_worker_flush(workers[w]);
        }
    }
}

static const moat_plugin *plugin_named(const char *name)
{
    return strcmp(name, "echo") == 0 ? moat_echo_plugin_entry() : moat_room_plugin_entry();
}

static void setup(void)
{
    static bool plugins_ready;
    if (!plugins_ready) {
        if (moat_echo_plugin_entry()->init(&moat_session_gateway_calls) != 0 ||
            moat_room_plugin_entry()->init(&moat_session_gateway_calls) != 0)
            abort();
        plugins_ready = true;
    }
    char error[256];
    static moat_relay_ops ops;
    static moat_prefilter_settings settings;
    ops = moat_session_relay_ops;
    ops.user = workers;
    relay = moat_relay_new(2, 256, 256, &ops);
    for (unsigned w = 0; w < 2; w++) {
        workers[w] = moat_worker_new(w, "127.0.0.1", 0, error, sizeof error);
        if (!workers[w])
            abort();
        moat_worker_set_relay(workers[w], relay);
        moat_worker_set_now_us(workers[w], now_us);
    }
    for (unsigned i = 0; i < N_ENDPOINTS; i++) {
        const endpoint_spec *spec = &ENDPOINTS[i];
        session_harness *h = &harnesses[i];
        session_harness_init_on(h, workers[spec->worker]);
        if (i == 0) {
            settings = h->settings; /* outlives the workers */
            moat_worker_set_prefilter(workers[0], &settings);
            moat_worker_set_prefilter(workers[1], &settings);
        }
        g_strlcpy(h->id, spec->id, sizeof h->id);
        g_snprintf(h->local_ufrag, sizeof h->local_ufrag, "uf%s", spec->id);
        h->plugin = plugin_named(spec->plugin);
        h->endpoint = spec->endpoint;
        h->resource = spec->resource;
        /* Subscribers receive; publishers and echo send (and receive). */
        if (strcmp(spec->endpoint, "whep") == 0)
            h->negotiation.media[0].peer_sends = false;
        h->negotiation.media[0].local_ssrc = HARNESS_LOCAL_SSRC + i;
        drive(spec->worker);
        if (spec->srtp) {
            session_harness_create_plain_srtp(h, NULL);
        } else if (spec->plain) {
            session_harness_create_plain(h, NULL);
        } else {
            session_harness_create(h, NULL);
            session_harness_key(h);
        }
    }
    settle();
    ready = true;
}

static void teardown(void)
{
    for (unsigned i = N_ENDPOINTS; i-- > 0;) {
        drive(ENDPOINTS[i].worker);
        session_harness_clear(&harnesses[i]);
    }
    for (unsigned w = 0; w < 2; w++) {
        drive(w);
        moat_worker_free(workers[w]);
        workers[w] = NULL;
    }
    moat_relay_free(relay);
    relay = NULL;
    ready = false;
}

static struct sockaddr_in6 source(const session_harness *h, unsigned which)
{
    struct sockaddr_in6 from = h->path.remote;
    if (which == 1)
        from.sin6_port ^= htons(0x0101);
    else if (which == 2)
        from.sin6_addr.s6_addr[15] ^= 0x5a;
    else if (which == 3)
        from.sin6_addr.s6_addr[12] = 198; /* 198.x.x.x */
    return from;
}

static void stamp(const session_harness *h, uint8_t *datagram, size_t length)
{
    if (length < 12)
        return;
    uint32_t ssrc = h->negotiation.media[0].remote_ssrc;
    datagram[0] = (uint8_t)(0x80 | (datagram[0] & 0x3f));
    datagram[1] = (uint8_t)((datagram[1] & 0x80) | h->negotiation.media[0].payload_types[0]);
    datagram[8] = (uint8_t)(ssrc >> 24);
    datagram[9] = (uint8_t)(ssrc >> 16);
    datagram[10] = (uint8_t)(ssrc >> 8);
    datagram[11] = (uint8_t)ssrc;
}

/* Protects in place; false when the peer has no keys or SRTP refuses. */
static bool protect(session_harness *h, bool rtcp, uint8_t *datagram, size_t *length)
{
    if (!h->peer_srtp || *length < 12)
        return false;
    if (rtcp) {
        datagram[0] = (uint8_t)(0x80 | (datagram[0] & 0x3f));
        datagram[1] = (uint8_t)(200 + datagram[1] % 8);
    }
    int status = rtcp ? moat_srtp_protect_rtcp(h->peer_srtp, datagram, length, RECEIVE_CAPACITY)
                      : moat_srtp_protect_rtp(h->peer_srtp, datagram, length, RECEIVE_CAPACITY);
    return status == MOAT_SRTP_OK;
}

/* `length` bytes at `bytes`; `declared` is the record's length field. */
static void feed(uint8_t target, uint8_t flags, const uint8_t *bytes, size_t length,
                 size_t declared)
{
    unsigned index = TARGETS[target & 7];
    const endpoint_spec *spec = &ENDPOINTS[index];
    session_harness *h = &harnesses[index];
    /* The real length, and the bytes a receive buffer holds of it. */
    static uint8_t datagram[MOAT_DATAGRAM_CAPACITY];
    size_t held;
    length = fuzz_datagram_fill(datagram, flags, bytes, length, declared,
                                (fuzz_limits){LIMITS, sizeof LIMITS / sizeof LIMITS[0]}, &held);
    if (flags & 0x01)
        stamp(h, datagram, held);
    if ((flags & 0x06) && length <= RECEIVE_CAPACITY) {
        /* Room for the tag: what the peer protects fits a receive buffer. */
        size_t tag = (flags & 0x04) ? 14 : 10;
        held = length = length > RECEIVE_CAPACITY - tag ? RECEIVE_CAPACITY - tag : length;
        if (!protect(h, flags & 0x04, datagram, &held))
            return;
        length = held;
    }
    drive(spec->worker);
    unsigned advance_ms = flags >> 4;
    if (advance_ms) {
        now_us += advance_ms * 1000u;
        moat_worker_set_now_us(workers[0], now_us);
        moat_worker_set_now_us(workers[1], now_us);
        if (moat_worker_find_session(h->worker, h->id) && !moat_session_tick(h->session, now_us))
            moat_session_end(h->session, moat_session_end_reason(h->session));
        if (!moat_worker_find_session(h->worker, h->id))
            return;
    }
    struct sockaddr_in6 from = source(h, (target >> 3) & 3);
    if (spec->plain) {
        moat_session_plain_handle(h->session, &from, datagram, length, sizeof datagram);
    } else if (length <= RECEIVE_CAPACITY) {
        moat_path path = {.remote = from, .local = h->path.local};
        moat_worker_dispatch(h->worker, &path, datagram, length);
    } else {
        return; /* MSG_TRUNC: moat_worker_receive drops it before dispatch */
    }
    moat_worker_flush(h->worker);
    settle();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready)
        setup();
    fuzz_records_each(data, size, feed);
    bool all_there = true;
    for (unsigned i = 0; i < N_ENDPOINTS; i++) {
        session_harness_drain_peer(&harnesses[i], NULL);
        if (!moat_worker_find_session(harnesses[i].worker, harnesses[i].id))
            all_there = false;
    }
    /* A session that ended (consent, a room closed) is replaced, so every
     * input meets all of them live. */
    if (!all_there)
        teardown();
    return 0;
}
