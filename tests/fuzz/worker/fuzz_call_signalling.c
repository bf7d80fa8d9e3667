/* libFuzzer target for ng signalling as a SIP proxy relays it: a sequence
 * of offers (from either party), answers and deletes of one call, with
 * the transport, ICE and rtcp-mux flags Kamailio passes and the parties'
 * SDPs, into a call registry on a real worker (call unit tests' fixture:
 * phones on loopback allowed, no WebRTC gateway). Besides the sanitizers,
 * one property is checked after every step: no party's destination may be
 * an address the destination policy refuses (unspecified but not hold,
 * multicast, broadcast, link-local, or one of those behind an IPv6 form),
 * whatever path the step took (a WebRTC-looking answer to a plain offer
 * once skipped the check). Moat's own ports are not part of the property:
 * a port of the leg range that is free when the SDP is checked may be
 * given to a leg afterwards, which the loop guard covers (the datagram
 * arrives from Moat's own address and is dropped, test_voip_hostile).
 *
 * Input: at most MAX_STEPS steps, each [command][flags] then the SDP text
 * up to the next 0 octet. command & 3: 0 offer from "a", 1
 * offer from "b" (a re-offer by the callee), 2 answer by "b", 3 delete.
 * flags & 3: transport-protocol none, RTP/AVP, RTP/SAVP,
 * UDP/TLS/RTP/SAVPF; & 4: ICE=force; & 8: ICE=remove; & 16: rtcp-mux
 * offer; & 32: rtcp-mux demux; & 64: SDES-off. After each input the call
 * is deleted (by its call-id alone: a step's delete whose tags name no
 * party leaves it). Seeds: tests/fuzz/seeds/fuzz_call_signalling. */
#include "call_test_support.h"

#include "call/call_address.h"
#include "call/call_registry.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

/* As in fuzz_call_restore.c: an answer asks the transcoder for its codecs,
 * whose GStreamer start-up abandons GLib's constructor block. */
const char *__lsan_default_suppressions(void)
{
    return "leak:_dl_init\nleak:__sanitizer::GetThreadStackTopAndBottom\n";
}

const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}

#define PORT_MIN  43200
#define PORT_MAX  43299
#define MAX_STEPS 8

static call_fixture fixture;
static bool ready;

/* The property: every party's RTP destination passes the policy the
 * registry was given (loopback allowed). */
static void check_destinations(void)
{
    moat_call_destination_policy policy = {.allow_loopback = true};
    const char *ids[4];
    size_t n = moat_call_list(fixture.registry, ids, 4);
    for (size_t c = 0; c < n; c++) {
        moat_call_view view;
        if (moat_call_query(fixture.registry, ids[c], &view) != 0)
            continue;
        for (int side = 0; side < 2; side++) {
            for (size_t m = 0; m < view.sides[side].n_media; m++) {
                const moat_call_media_view *media = &view.sides[side].media[m];
                struct sockaddr_in6 to = media->sdp_address;
                char reason[160];
                if (media->webrtc || to.sin6_family != AF_INET6 || to.sin6_port == 0 ||
                    IN6_IS_ADDR_UNSPECIFIED(&to.sin6_addr))
                    continue;
                if (moat_call_destination_check(&policy, &to, reason, sizeof reason) != 0)
                    abort(); /* a leg aimed where the policy forbids */
            }
        }
    }
}

static const char *const TRANSPORTS[4] = {NULL, "RTP/AVP", "RTP/SAVP", "UDP/TLS/RTP/SAVPF"};

static void run_step(uint8_t command, uint8_t flags, const char *sdp)
{
    int kind = command & 3;
    moat_ng_request request =
        call_request("c", kind == 1 ? "b" : "a", kind == 1 ? "a" : "b", sdp[0] ? sdp : NULL);
    request.transport_protocol = TRANSPORTS[flags & 3];
    request.ice = (flags & 4)   ? MOAT_NG_ICE_FORCE
                  : (flags & 8) ? MOAT_NG_ICE_REMOVE
                                : MOAT_NG_ICE_DEFAULT;
    request.rtcp_mux =
        ((flags & 16) ? MOAT_NG_RTCP_MUX_OFFER : 0u) | ((flags & 32) ? MOAT_NG_RTCP_MUX_DEMUX : 0u);
    request.sdes_off = (flags & 64) != 0;
    moat_call_reply reply = {0};
    if (kind == 2) {
        moat_call_answer(fixture.registry, &request, &reply);
    } else if (kind == 3) {
        request.delete_delay_s = 0;
        moat_call_delete(fixture.registry, &request, &reply);
    } else {
        moat_call_offer(fixture.registry, &request, &reply);
    }
    if (getenv("FUZZ_VERBOSE")) /* seeds: say what each step did */
        fprintf(stderr, "step %d: %s\n", kind, reply.error[0] ? reply.error : "ok");
    moat_call_reply_clear(&reply);
    check_destinations();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        call_fixture_setup(&fixture, PORT_MIN, PORT_MAX);
        ready = true;
    }
    size_t at = 0;
    for (int step = 0; step < MAX_STEPS && at + 2 <= size; step++) {
        /* the SDP ends at the next 0 octet after the two header octets */
        const uint8_t *end = memchr(data + at + 2, 0, size - at - 2);
        size_t length = end ? (size_t)(end - (data + at)) : size - at;
        char *sdp = g_strndup((const char *)data + at + 2, length - 2);
        run_step(data[at], data[at + 1], sdp);
        g_free(sdp);
        at += length + 1;
    }
    moat_ng_request request = call_request("c", NULL, NULL, NULL); /* whoever its parties are */
    request.delete_delay_s = 0;
    moat_call_reply reply = {0};
    moat_call_delete(fixture.registry, &request, &reply);
    moat_call_reply_clear(&reply);
    while (g_main_context_iteration(NULL, FALSE))
        ; /* what the control thread's loop would run (deferred frees) */
    return 0;
}
