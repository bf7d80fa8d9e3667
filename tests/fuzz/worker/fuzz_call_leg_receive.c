/* libFuzzer target for the call legs' receive path end to end: datagrams on
 * a leg's RTP or RTCP port (moat_call_stream_receive, what the leg's
 * recvmmsg batch hands each datagram to) and on the worker socket for a
 * WebRTC party (moat_worker_dispatch), through latching, SDES unprotect and
 * protect, and the relay into a WebRTC leg's core session.
 *
 * Calls set up with their SDP through the registry (ng offer and answer),
 * on one worker this thread plays (moat_worker_drive_from_caller):
 *   "plain":  plain phone A (side 0) and plain phone B (side 1);
 *   "sdes":   plain phone C and SDES phone D (Moat offers keys, D answers
 *             with its own, known here so the fuzzer can send authentic
 *             SRTP);
 *   "webrtc": plain phone E and, on side 1, a WebRTC party: a keyed core
 *             session (session_harness) bridged to the leg with
 *             moat_call_stream_set_webrtc. Its plugin stands in for the
 *             internal call plugin (call_webrtc.c, which only its gateway
 *             can create): decrypted RTP goes to moat_call_stream_inject,
 *             what the leg relays to it is re-stamped and sent (on_relay).
 *
 * Input: records [target][flags][length hi][length lo][bytes].
 * target: low 3 bits pick the socket (TARGETS), bit 3: its RTCP socket,
 * bits 4-5 the source (0: the address and port its SDP names, 1: that
 * address, another port, 2: another loopback address, 3: 198.x.x.x).
 * flags bit 0: stamp as RTP (PCMA, the phone's SSRC), bit 1: protect as
 * SRTP with the sender's keys (D and the WebRTC party), bit 2: as SRTCP,
 * bit 3: the length is one of the buffers' limits (LIMITS[length % N]),
 * the record's bytes repeated to fill it. A length past the receive
 * capacity (2048 - 64) is a truncated datagram (dropped as such). */
#include "call_test_support.h"
#include "fuzz_datagram.h"
#include "session_harness.h"

#include "call/call_registry.h"
#include "session/session_internal.h"
#include "engine/worker_receive.h"
#include "rtp/rtp_packet.h"
#include "sdp/sdes_keys.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECEIVE_CAPACITY FUZZ_RECEIVE_CAPACITY
#define PHONE_SSRC       0x0a0b0c0du
#define SETUP_INPUTS     256

static const size_t LIMITS[] = {0, 1, 12, 1499, 1500, 1501, 1564, 1565, 1983, 1984, 1985, 2048};

enum { PHONE_A, PHONE_B, PHONE_C, PHONE_D, PHONE_E, N_PHONES };

typedef struct {
    const char *call;
    int side;
    int phone;   /* who sends to it (PHONE_*), or -1: the WebRTC party */
    bool worker; /* the worker socket (the WebRTC party's session) */
} target_spec;

static const target_spec TARGETS[8] = {
    {"plain", 0, PHONE_A, false}, {"plain", 1, PHONE_B, false},  {"sdes", 0, PHONE_C, false},
    {"sdes", 1, PHONE_D, false},  {"webrtc", 0, PHONE_E, false}, {"webrtc", 1, -1, false},
    {"webrtc", 1, -1, true},      {"plain", 1, PHONE_A, false},
};

static moat_worker *worker;
static moat_call_registry *registry;
static session_harness party; /* the WebRTC party of call "webrtc" */
static int phones[N_PHONES];
static uint16_t phone_ports[N_PHONES];
static moat_srtp_session *phone_d_srtp;
static bool ready;

/* The internal call plugin's media bridge, for the harness session. */
typedef struct {
    moat_call_stream *stream;
    moat_plugin_session *handle;
} bridge;
static bridge party_bridge;

static void *bridge_attach(moat_plugin_session *handle, const moat_session_info *info,
                           const char **error)
{
    party_bridge.handle = handle;
    return &party_bridge;
}

static void bridge_detach(void *state)
{
    ((bridge *)state)->handle = NULL;
}

static void bridge_media(void *state, moat_rtp_packet *packet)
{
    bridge *b = state;
    if (b->stream && packet->media_index == 0)
        moat_call_stream_inject(b->stream, 1, packet->data, packet->length);
}

static void bridge_relay(void *state, moat_rtp_packet *packet)
{
    bridge *b = state;
    if (packet->length < 12)
        return;
    moat_rtp_set_ssrc(packet->data, HARNESS_LOCAL_SSRC);
    moat_session_gateway_calls.send_rtp(b->handle, packet->data, packet->length);
}

static const moat_plugin bridge_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "call-bridge",
    .attach = bridge_attach,
    .detach = bridge_detach,
    .on_media = bridge_media,
    .on_relay = bridge_relay,
};

static void run_worker(void)
{
    moat_worker_run_pending(worker);
    moat_worker_flush(worker);
}

static void must(const moat_call_reply *reply, const char *what)
{
    if (reply->error[0] || !reply->sdp) {
        fprintf(stderr, "%s: %s\n", what, reply->error);
        abort();
    }
}

/* Offer from side 0, answer from side 1; returns Moat's offer to side 1
 * parsed (its crypto lines for an SDES answerer). */
static moat_call_sdp call(const char *id, uint16_t offerer, const char *transport,
                          char *(*answer_sdp)(const moat_call_sdp *offered, void *data), void *data)
{
    moat_call_reply reply = {0};
    char *offer_sdp = call_phone_sdp(offerer, NULL, 0);
    moat_ng_request offer = call_request(id, "a", NULL, offer_sdp);
    offer.transport_protocol = transport;
    moat_call_offer(registry, &offer, &reply);
    must(&reply, "offer");
    moat_call_sdp offered = call_parse_sdp(reply.sdp);
    moat_call_reply_clear(&reply);
    char *answer_text = answer_sdp(offered.media[0].n_crypto ? &offered : NULL, data);
    moat_ng_request answer = call_request(id, "a", "b", answer_text);
    moat_call_answer(registry, &answer, &reply);
    must(&reply, "answer");
    moat_call_reply_clear(&reply);
    g_free(offer_sdp);
    g_free(answer_text);
    run_worker();
    return offered;
}

static char *plain_answer(const moat_call_sdp *offered, void *data)
{
    return call_phone_sdp(*(uint16_t *)data, NULL, 0);
}

static char *sdes_answer(const moat_call_sdp *offered, void *data)
{
    moat_sdp_crypto mine;
    char error[160];
    if (!offered || moat_sdes_answer(&offered->media[0].crypto[0], &mine, error, sizeof error))
        abort();
    phone_d_srtp = call_phone_srtp(&mine, &offered->media[0].crypto[0]);
    return call_phone_sdp(phone_ports[PHONE_D], &mine, 1);
}

static void setup(void)
{
    static bool once;
    char error[256];
    if (!once) {
        for (int i = 0; i < N_PHONES; i++)
            phones[i] = call_udp_socket(&phone_ports[i]);
        once = true;
    }
    session_harness_init(&party);
    worker = party.worker;
    moat_worker_drive_from_caller(worker, true);
    moat_worker_set_now_us(worker, 1000000);
    /* Ports of our own (not another target's or test's): a random range. */
    int port_min = 20000 + (int)(getpid() % 400) * 100;
    moat_worker *workers[] = {worker};
    moat_call_settings settings = {workers,       1,           "127.0.0.1", port_min,
                                   port_min + 99, "127.0.0.1", 30};
    settings.allow_loopback_destinations = true; /* the phones are sockets on this host */
    settings.max_transcoders = 64;               /* the gateway's default */
    registry = moat_call_registry_new(&settings, error, sizeof error);
    if (!registry)
        abort();
    call("plain", phone_ports[PHONE_A], NULL, plain_answer, &phone_ports[PHONE_B]);
    call("sdes", phone_ports[PHONE_C], "RTP/SAVP", sdes_answer, NULL);
    call("webrtc", phone_ports[PHONE_E], NULL, plain_answer, &phone_ports[PHONE_B]);

    moat_sdp_negotiated_media *media = &party.negotiation.media[0];
    media->kind = MOAT_MEDIA_KIND_AUDIO;
    media->payload_types[0] = 8;
    strcpy(media->codec_names[0], "PCMA");
    media->clock_rates[0] = 8000;
    party.plugin = &bridge_plugin;
    g_strlcpy(party.id, "call-party", sizeof party.id);
    session_harness_create(&party, NULL);
    session_harness_key(&party);
    party_bridge.stream = moat_call_registry_stream(registry, "webrtc", 0);
    moat_call_stream_set_webrtc(party_bridge.stream, 1, party_bridge.handle,
                                &moat_session_gateway_calls);
    run_worker();
    ready = true;
}

static void teardown(void)
{
    party_bridge.stream = NULL;
    /* As the gateway does: the worker stops, then the calls go. */
    moat_worker_stop(worker);
    moat_call_registry_free(registry);
    session_harness_clear(&party);
    moat_srtp_session_free(phone_d_srtp);
    phone_d_srtp = NULL;
    ready = false;
}

static struct sockaddr_in6 source(const target_spec *t, unsigned which)
{
    struct sockaddr_in6 from = party.path.remote; /* ::ffff:127.0.0.1 */
    if (t->phone >= 0)
        from.sin6_port = htons(phone_ports[t->phone]);
    if (which == 1)
        from.sin6_port ^= htons(0x0101);
    else if (which == 2)
        from.sin6_addr.s6_addr[15] = 2;
    else if (which == 3)
        from.sin6_addr.s6_addr[12] = 198;
    return from;
}

static void feed(uint8_t target, uint8_t flags, const uint8_t *bytes, size_t length,
                 size_t declared)
{
    const target_spec *t = &TARGETS[target & 7];
    static uint8_t datagram[MOAT_DATAGRAM_CAPACITY];
    size_t held;
    length = fuzz_datagram_fill(datagram, flags, bytes, length, declared,
                                (fuzz_limits){LIMITS, sizeof LIMITS / sizeof LIMITS[0]}, &held);
    if ((flags & 0x01) && held >= 12) {
        uint32_t ssrc = t->phone >= 0 ? PHONE_SSRC : HARNESS_REMOTE_SSRC;
        datagram[0] = (uint8_t)(0x80 | (datagram[0] & 0x3f));
        datagram[1] = (uint8_t)((datagram[1] & 0x80) | 8);
        moat_rtp_set_ssrc(datagram, ssrc);
    }
    moat_srtp_session *keys = t->phone == PHONE_D ? phone_d_srtp
                              : t->phone < 0      ? party.peer_srtp
                                                  : NULL;
    if ((flags & 0x06) && keys && length <= RECEIVE_CAPACITY && held >= 12) {
        bool rtcp = flags & 0x04;
        size_t tag = rtcp ? 14 : 10;
        held = length = length > RECEIVE_CAPACITY - tag ? RECEIVE_CAPACITY - tag : length;
        if (rtcp)
            datagram[1] = (uint8_t)(200 + datagram[1] % 8);
        int status = rtcp ? moat_srtp_protect_rtcp(keys, datagram, &held, RECEIVE_CAPACITY)
                          : moat_srtp_protect_rtp(keys, datagram, &held, RECEIVE_CAPACITY);
        if (status != MOAT_SRTP_OK)
            return;
        length = held;
    }
    struct sockaddr_in6 from = source(t, (target >> 4) & 3);
    if (t->worker) {
        if (length > RECEIVE_CAPACITY)
            return; /* MSG_TRUNC: dropped before dispatch */
        moat_path path = {.remote = from, .local = party.path.local};
        moat_worker_dispatch(worker, &path, datagram, length);
    } else {
        moat_call_stream *stream = moat_call_registry_stream(registry, t->call, 0);
        moat_call_stream_receive(stream, t->side, target & 0x08, &from, datagram, length);
    }
    run_worker();
}

static void drain_phones(void)
{
    uint8_t buffer[4096];
    for (int i = 0; i < N_PHONES; i++)
        while (recv(phones[i], buffer, sizeof buffer, MSG_DONTWAIT) >= 0)
            continue;
    session_harness_drain_peer(&party, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready)
        setup();
    fuzz_records_each(data, size, feed);
    drain_phones();
    /* Latching is per call: fresh calls every SETUP_INPUTS inputs (every
     * input would cost 40 times the speed) let the fuzzer meet the
     * first-packet paths again. */
    static unsigned inputs;
    if (++inputs % SETUP_INPUTS == 0 || !moat_worker_find_session(worker, party.id))
        teardown();
    return 0;
}
