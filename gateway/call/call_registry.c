/* Owns the calls: their registry by call-id, the parties' tags, the
 * streams of each m-line, offer/answer/delete and delete-delay timers
 * (the media timeout's sweep is call_timeout.c's; what the API reads of
 * them, call_registry_view.c). */
#include "call/call_registry.h"
#include "call/call_registry_private.h"
#include "call/call_request.h"

#include "call/call_sdes.h"
#include "call/call_transcode_plan.h"
#include "call/call_webrtc_offer.h"
#include "transcode/transcode_sdp.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void call_free(void *data)
{
    moat_call *call = data;
    if (call->delete_timer)
        g_source_remove(call->delete_timer);
    moat_call_restore_withdraw(call);
    for (int side = 0; side < 2; side++)
        moat_call_webrtc_free(call->webrtc[side]); /* before the streams: call_webrtc.h */
    for (int side = 0; side < 2; side++)
        moat_call_webrtc_offer_free(call->offered[side]);
    for (size_t i = 0; i < call->n_streams; i++)
        moat_call_stream_free(call->streams[i]);
    g_free(call->tags[0]);
    g_free(call->tags[1]);
    g_free(call->offer_text);
    g_free(call->id);
    moat_call_sdes_clear(&call->sdes);
    moat_call_journal_free(call->journal);
    explicit_bzero(call->sdp, sizeof call->sdp); /* a=crypto keys */
    g_free(call);
}

/* Moat's own ports: a leg's (any call's) or the gateway's other sockets. */
static bool own_port(void *user, uint16_t port)
{
    const moat_call_registry *registry = user;
    if (moat_own_sockets_holds(registry->own, port))
        return true;
    return registry->outside.is_own_port &&
           registry->outside.is_own_port(registry->outside.user, port);
}

bool moat_call_registry_is_own_source(const moat_call_registry *registry,
                                      const struct sockaddr *from, socklen_t from_length)
{
    struct in6_addr address;
    uint16_t port;
    if (from->sa_family == AF_INET && from_length >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)from;
        memset(&address, 0, sizeof address);
        address.s6_addr[10] = address.s6_addr[11] = 0xff;
        memcpy(&address.s6_addr[12], &v4->sin_addr, 4);
        port = ntohs(v4->sin_port);
    } else if (from->sa_family == AF_INET6 &&
               from_length >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)from;
        address = v6->sin6_addr;
        port = ntohs(v6->sin6_port);
    } else {
        return false;
    }
    /* The port first: getifaddrs only for one of ours. */
    return own_port((void *)registry, port) && moat_call_address_is_host(&address);
}

moat_call_registry *moat_call_registry_new(const moat_call_settings *settings, char *error,
                                           size_t error_size)
{
    moat_call_network *denied = NULL;
    size_t n_denied = 0;
    if (moat_call_networks_parse(settings->denied_networks, &denied, &n_denied, error,
                                 error_size) != 0)
        return NULL;
    moat_own_sockets *own = settings->own_sockets;
    moat_own_sockets *own_made =
        own ? NULL : moat_own_sockets_new_for_binds(&settings->bind_address, 1);
    moat_call_ports *ports =
        moat_call_ports_new(settings->bind_address, settings->port_min, settings->port_max,
                            own ? own : own_made, error, error_size);
    if (!ports) {
        moat_own_sockets_free(own_made);
        g_free(denied);
        return NULL;
    }
    moat_call_registry *registry = g_new0(moat_call_registry, 1);
    registry->own = own ? own : own_made;
    registry->own_made = own_made;
    registry->ports = ports;
    registry->calls = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, call_free);
    registry->n_contexts = settings->n_workers;
    registry->contexts = g_new0(moat_call_worker *, settings->n_workers);
    for (unsigned i = 0; i < settings->n_workers; i++) {
        registry->contexts[i] = moat_call_worker_new(settings->workers[i]);
        moat_call_worker_set_own(registry->contexts[i], registry->own);
        moat_call_worker_set_learning(registry->contexts[i], settings->learning);
    }
    registry->address = g_strdup(settings->address);
    registry->delete_delay_s = settings->delete_delay_s;
    registry->max_calls = settings->max_calls;
    registry->max_load = settings->max_load;
    registry->max_transcoders = settings->max_transcoders;
    moat_call_load_init(&registry->load, settings->workers, settings->n_workers);
    registry->webrtc = settings->webrtc;
    registry->learning = settings->learning;
    registry->denied = denied;
    registry->destinations = (moat_call_destination_policy){
        .allow_loopback = settings->allow_loopback_destinations,
        .denied = denied,
        .n_denied = n_denied,
        .own = {own_port, registry},
    };
    registry->outside = settings->own;
    moat_call_timeout_init(registry, settings->media_timeout_s, settings->silent_timeout_s);
    return registry;
}

void moat_call_registry_free(moat_call_registry *registry)
{
    if (!registry)
        return;
    moat_call_registry_set_journal(registry, NULL, 0); /* shutdown keeps the records */
    moat_call_timeout_stop(registry);
    g_hash_table_destroy(registry->calls); /* stopped workers close the legs at once */
    for (unsigned i = 0; i < registry->n_contexts; i++)
        moat_call_worker_free(registry->contexts[i]);
    g_free(registry->contexts);
    moat_call_ports_free(registry->ports);
    moat_own_sockets_free(registry->own_made);
    g_free(registry->denied);
    g_free(registry->address);
    moat_call_load_clear(&registry->load);
    g_free(registry);
}

void moat_call_reply_clear(moat_call_reply *reply)
{
    g_free(reply->sdp);
    reply->sdp = NULL;
}

/* The worker with the fewest streams carries a new call. */
static moat_call_worker *pick_context(moat_call_registry *registry)
{
    moat_call_worker *best = registry->contexts[0];
    for (unsigned i = 1; i < registry->n_contexts; i++) {
        if (moat_call_worker_streams(registry->contexts[i]) < moat_call_worker_streams(best))
            best = registry->contexts[i];
    }
    return best;
}

static moat_call *call_new(moat_call_registry *registry, const char *call_id, const char *tag)
{
    moat_call *call = g_new0(moat_call, 1);
    call->registry = registry;
    call->id = g_strdup(call_id);
    call->tags[0] = g_strdup(tag);
    call->context = pick_context(registry);
    call->created_s = g_get_real_time() / G_USEC_PER_SEC;
    moat_call_timeout_note_signal(call);
    call->journal = moat_call_restore_journal_for_new(registry);
    call->sdes.journal = call->journal;
    g_hash_table_insert(registry->calls, call->id, call);
    return call;
}

/* One stream per m-line: a re-offer with more m-lines adds streams, on
 * the ports the journal recorded when the call is being restored. */
static bool ensure_streams(moat_call *call, size_t n_media)
{
    while (call->n_streams < n_media) {
        uint16_t at[2];
        bool recorded = moat_call_journal_take_ports(call->journal, at);
        moat_call_stream *stream =
            moat_call_stream_new(call->context, call->registry->ports, recorded ? at : NULL);
        if (!stream)
            return false;
        if (!recorded) {
            at[0] = moat_call_stream_port(stream, 0);
            at[1] = moat_call_stream_port(stream, 1);
            moat_call_journal_add_ports(call->journal, at);
        }
        call->streams[call->n_streams++] = stream;
    }
    return true;
}

static void set_endpoints(moat_call *call, int side, const moat_call_sdp *sdp,
                          const moat_ng_request *request, const bool *rtcp_mux)
{
    if (call->webrtc[side])
        return; /* its session knows where the party is */
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_call_sdp_media *media = &sdp->media[i];
        moat_call_endpoint endpoint = {
            .rtp = media->rtp,
            .rtcp_mux = rtcp_mux[i],
            .latching = !request->asymmetric,
            .strict_source = request->strict_source,
            .learning = call->registry->learning,
        };
        if (media->port == 0)
            endpoint.rtp.sin6_family = 0;
        if (media->rtcp_port && endpoint.rtp.sin6_family == AF_INET6) {
            endpoint.rtcp = endpoint.rtp;
            endpoint.rtcp.sin6_port = htons(media->rtcp_port);
        }
        moat_call_stream_set_endpoint(call->streams[i], side, &endpoint);
    }
}

/* Rewrites `text` for the party on `to_side`: it will send to Moat's legs
 * facing it. */
static bool rewrite_for(moat_call *call, int to_side, const moat_ng_request *request,
                        const moat_call_sdp *sdp, const bool *rtcp_mux,
                        const moat_call_sdp_rewrite *sdes, moat_call_reply *reply)
{
    moat_call_sdp_rewrite how = *sdes; /* the SDES fields (call_sdes.c) */
    how.address = request->media_address ? request->media_address : call->registry->address;
    how.transport_protocol = request->transport_protocol;
    if (!how.transport_protocol && call->webrtc[1 - to_side])
        how.transport_protocol = "RTP/AVP"; /* a phone facing a WebRTC party */
    how.replace_origin = request->replace_origin;
    const char *strip[2 * MOAT_NG_MAX_CODECS];
    for (size_t i = 0; i < request->codec_strip.count; i++)
        strip[how.n_strip++] = request->codec_strip.names[i];
    for (size_t i = 0; i < request->codec_mask.count; i++)
        strip[how.n_strip++] = request->codec_mask.names[i];
    how.strip = strip;
    for (size_t i = 0; i < sdp->n_media; i++) {
        how.ports[i] = sdp->media[i].port ? moat_call_stream_port(call->streams[i], to_side) : 0;
        how.rtcp_mux[i] = rtcp_mux[i];
    }
    GString *out = g_string_new(NULL);
    char error[160];
    if (moat_call_sdp_rewrite_text(request->sdp, request->sdp_length, &how, out, error,
                                   sizeof error) != 0) {
        g_string_free(out, TRUE);
        return moat_call_request_fail(reply, "Failed to rewrite SDP: %s", error);
    }
    reply->sdp = g_string_free(out, FALSE);
    return true;
}

/* The side whose tag is `tag`, else -1. */
static int tag_side(const moat_call *call, const char *tag)
{
    for (int side = 0; tag && *tag && side < 2; side++) {
        if (call->tags[side] && strcmp(call->tags[side], tag) == 0)
            return side;
    }
    return -1;
}

/* Which side sent an offer: the one its from-tag names; else the other
 * side of the one its to-tag names (a re-INVITE from a forked callee whose
 * 200 OK was not the last answer, or the callee's offer before any answer),
 * which may only be the callee's: the caller's tag is never replaced. -1:
 * the tags name no party. */
static int offer_side(const moat_call *call, const moat_ng_request *request)
{
    int side = tag_side(call, request->from_tag);
    if (side >= 0)
        return side;
    return tag_side(call, request->to_tag) == 0 ? 1 : -1;
}

/* The offer from `side` succeeded: its from-tag is now that side's. */
static void note_tag(moat_call *call, int side, const char *tag)
{
    if (call->tags[side] && strcmp(call->tags[side], tag) == 0)
        return;
    g_free(call->tags[side]);
    call->tags[side] = g_strdup(tag);
}

void moat_call_registry_set_draining(moat_call_registry *registry, bool draining)
{
    registry->draining = draining;
}

/* The request's "supports" list names "load limit" (rtpengine's
 * extension: the proxy moves the call to its next node). */
static bool supports_load_limit(const moat_ng_request *request)
{
    const moat_bencode *supports =
        request->dictionary ? moat_bencode_get(request->dictionary, "supports") : NULL;
    if (!supports || moat_bencode_type_of(supports) != MOAT_BENCODE_LIST)
        return false;
    for (size_t i = 0; i < moat_bencode_count(supports); i++) {
        size_t length = 0;
        const char *text = moat_bencode_string(moat_bencode_item(supports, i, NULL, NULL), &length);
        if (text && length == strlen("load limit") && memcmp(text, "load limit", length) == 0)
            return true;
    }
    return false;
}

/* The workers' load is over [ng] max_load (sampled now, call_load.h). */
static bool over_load(moat_call_registry *registry)
{
    if (registry->max_load <= 0)
        return false;
    unsigned percent =
        moat_call_load_sample(&registry->load, (uint64_t)g_get_monotonic_time() * 1000u);
    return percent > (unsigned)registry->max_load;
}

/* A new call within [ng] max_calls and max_load and not draining;
 * otherwise the reply rtpengine gives at its session limit. */
static bool admit_new_call(moat_call_registry *registry, const moat_ng_request *request,
                           moat_call_reply *reply)
{
    bool within =
        !registry->draining && (registry->max_calls <= 0 ||
                                g_hash_table_size(registry->calls) < (guint)registry->max_calls);
    if (within && !over_load(registry))
        return true;
    registry->refused_worker_load += within;
    registry->refused_load_limit++;
    reply->load_limit = supports_load_limit(request);
    moat_call_request_fail(reply, "Parallel session limit reached%s", NULL);
    return false;
}

void moat_call_offer_run(moat_call_registry *registry, const moat_ng_request *request,
                         moat_call_reply *reply)
{
    moat_call_sdp sdp;
    if (!moat_call_request_check_ids(request, false, reply) ||
        !moat_call_request_parse_sdp(request, &sdp, reply) ||
        !moat_call_request_check_transport(request, &sdp, false, true, reply) ||
        (!moat_call_sdp_is_webrtc(&sdp) &&
         !moat_call_request_check_destinations(&registry->destinations, &sdp, reply))) {
        explicit_bzero(&sdp, sizeof sdp); /* a=crypto keys */
        return;
    }
    bool webrtc = moat_call_sdp_is_webrtc(&sdp);
    bool offer_webrtc = moat_call_request_wants_webrtc(request);
    moat_call *call = g_hash_table_lookup(registry->calls, request->call_id);
    if (call && call->delete_timer) {
        g_hash_table_remove(registry->calls, request->call_id); /* a new call, same id */
        call = NULL;
    }
    bool created = !call;
    if (created && !admit_new_call(registry, request, reply)) {
        explicit_bzero(&sdp, sizeof sdp); /* a=crypto keys */
        return;
    }
    if (created)
        call = call_new(registry, request->call_id, request->from_tag);
    int side = offer_side(call, request);
    if (side < 0) {
        explicit_bzero(&sdp, sizeof sdp); /* a=crypto keys */
        moat_call_request_fail(reply, "From-tag and to-tag name no party of the call%s", NULL);
        return;
    }
    if (!ensure_streams(call, sdp.n_media)) {
        if (created)
            g_hash_table_remove(registry->calls, request->call_id);
        moat_call_request_fail(reply, "Ran out of ports%s", NULL);
        return;
    }
    if (webrtc && !moat_call_start_webrtc(call, side, request, reply)) {
        explicit_bzero(&sdp, sizeof sdp); /* a=crypto keys */
        if (created)
            g_hash_table_remove(registry->calls, request->call_id);
        return;
    }
    bool mux[MOAT_CALL_SDP_MAX_MEDIA];
    for (size_t i = 0; i < sdp.n_media; i++) {
        /* A WebRTC party always muxes; the phone gets it only if asked. */
        bool offered = sdp.media[i].rtcp_mux && !webrtc;
        mux[i] = (offered && !(request->rtcp_mux & MOAT_NG_RTCP_MUX_DEMUX)) ||
                 (request->rtcp_mux & MOAT_NG_RTCP_MUX_OFFER);
        call->rtcp_mux_offered[i] = mux[i];
    }
    moat_call_sdp_rewrite sdes = {0};
    /* A WebRTC party's SRTP is its session's (DTLS-SRTP); an SDES phone
     * facing it is terminated as if it faced a plain phone. */
    call->sdes.webrtc[side] = webrtc;
    call->sdes.webrtc[1 - side] = offer_webrtc || call->webrtc[1 - side];
    if (moat_call_sdes_offer(&call->sdes, side, &sdp, request, call->streams, &sdes, reply->error,
                             sizeof reply->error) != 0 ||
        !rewrite_for(call, 1 - side, request, &sdp, mux, &sdes, reply) ||
        !moat_call_request_transcode_offer(request, reply) ||
        (offer_webrtc && !moat_call_offer_webrtc_leg(call, 1 - side, request, &sdp, reply)) ||
        !moat_call_request_check_reply_size(reply, 0)) {
        if (created)
            g_hash_table_remove(registry->calls, request->call_id);
        return;
    }
    bool own_mux[MOAT_CALL_SDP_MAX_MEDIA];
    for (size_t i = 0; i < sdp.n_media; i++)
        own_mux[i] = sdp.media[i].rtcp_mux;
    set_endpoints(call, side, &sdp, request, own_mux);
    call->sdp[side] = sdp;
    g_free(call->offer_text);
    call->offer_text = webrtc ? g_strdup(moat_call_webrtc_answer(call->webrtc[side]))
                              : g_strndup(request->sdp, request->sdp_length);
    call->has_sdp[side] = true;
    call->offer_side = side;
    call->transcode_offered |= request->codec_transcode.count > 0; /* for the call's life */
    note_tag(call, side, request->from_tag);
    moat_call_timeout_note_signal(call);
    moat_call_restore_note(call, request);
}

void moat_call_answer_mux(const moat_call_sdp *answer, const bool *offered, bool *out)
{
    for (size_t i = 0; i < MOAT_CALL_SDP_MAX_MEDIA; i++)
        out[i] = i < answer->n_media && answer->media[i].rtcp_mux && offered[i];
}

/* Whether an answer may get transcoders: the proxy asked for them (an
 * offer of the call carried codec-transcode) or Moat's own WebRTC session
 * fixed a party's codec (it answered the party's offer with its first
 * codec, or runs on through a re-INVITE it cannot renegotiate). */
static bool transcode_allowed(const moat_call *call)
{
    return call->transcode_offered || call->webrtc[0] || call->webrtc[1];
}

/* What transcode_answer may still add to the answer's reply SDP after its
 * size check: its codec lines on each m-line (transcode_sdp.h). Nothing
 * when transcoding is not allowed, or when the WebRTC offerer's
 * description replaces that SDP (Moat's own answer to the party, about
 * 600 bytes an m-line). Reserved before anything of the answer is kept:
 * after it, transcoders run and the answer could no longer be refused. */
static size_t transcode_growth(const moat_call *call, int offerer, size_t n_media)
{
    if (!transcode_allowed(call) || call->webrtc[offerer])
        return 0;
    return n_media * MOAT_TRANSCODE_SDP_RESTRICT_GROWTH;
}

/* Transcoders where transcode_allowed and the answer's codec differs,
 * within [call] max_transcoders; every other m-line relays as is. */
static void transcode_answer(moat_call *call, const moat_ng_request *request,
                             const moat_call_sdp *sdp, int offerer, moat_call_reply *reply)
{
    moat_call_registry *registry = call->registry;
    moat_call_transcode_limits limits = {
        .allowed = transcode_allowed(call),
        .max_pipelines = registry->max_transcoders > 0 ? (unsigned)registry->max_transcoders : 0,
        .transcoded = call->transcoded,
        .refused = registry->transcode_refused,
    };
    moat_call_transcode_answer(call->offer_text, request, call->streams, sdp->n_media, offerer,
                               &limits, &reply->sdp, reply->warning, sizeof reply->warning);
}

void moat_call_answer(moat_call_registry *registry, const moat_ng_request *request,
                      moat_call_reply *reply)
{
    moat_call_sdp sdp;
    if (!moat_call_request_check_ids(request, true, reply))
        return;
    moat_call *call = g_hash_table_lookup(registry->calls, request->call_id);
    if (!call) {
        moat_call_request_fail(reply, "Unknown call-id%s", NULL);
        return;
    }
    int offerer = call->offer_side, answerer = 1 - offerer;
    bool answered_webrtc = call->offered[answerer] != NULL;
    if (!moat_call_request_parse_sdp(request, &sdp, reply) ||
        !moat_call_request_check_transport(request, &sdp, call->webrtc[offerer] != NULL, false,
                                           reply) ||
        !moat_call_check_answer_media(call, answerer, request, &sdp, reply)) {
        explicit_bzero(&sdp, sizeof sdp); /* a=crypto keys */
        return;
    }
    if (!ensure_streams(call, sdp.n_media)) {
        moat_call_request_fail(reply, "Ran out of ports%s", NULL);
        return;
    }
    if (answered_webrtc && !moat_call_answer_webrtc_leg(call, answerer, request, &sdp, reply))
        return;
    moat_ng_request plain = *request;
    if (answered_webrtc && !plain.transport_protocol)
        plain.transport_protocol = "RTP/AVP"; /* the phone's leg is not the party's */
    bool mux[MOAT_CALL_SDP_MAX_MEDIA];
    moat_call_answer_mux(&sdp, call->rtcp_mux_offered, mux);
    moat_call_sdp_rewrite sdes = {0};
    call->sdes.webrtc[offerer] = call->webrtc[offerer] != NULL;
    call->sdes.webrtc[answerer] = answered_webrtc || call->webrtc[answerer];
    if (moat_call_sdes_answer(&call->sdes, answerer, &sdp, call->streams, &sdes, reply->error,
                              sizeof reply->error) != 0 ||
        !rewrite_for(call, offerer, &plain, &sdp, mux, &sdes, reply) ||
        !moat_call_request_check_reply_size(reply, transcode_growth(call, offerer, sdp.n_media)))
        return;
    transcode_answer(call, request, &sdp, offerer, reply);
    if (call->webrtc[offerer]) {
        /* The WebRTC party gets its session's answer, whatever the phone's
         * transport: the streams transcode or relay between them. */
        g_free(reply->sdp);
        reply->sdp = g_strdup(
            moat_call_webrtc_describe(call->webrtc[offerer], request->sdp, request->sdp_length));
        moat_call_webrtc_start(call->webrtc[offerer]);
    }
    if (answered_webrtc)
        moat_call_webrtc_start(call->webrtc[answerer]);
    set_endpoints(call, answerer, &sdp, request, mux);
    /* The offerer muxes only if its answer (ours) says so. */
    if (call->has_sdp[offerer])
        set_endpoints(call, offerer, &call->sdp[offerer], request, mux);
    call->sdp[answerer] = sdp;
    call->has_sdp[answerer] = true;
    /* The latest answer's to-tag is the callee's (a later fork's 200 OK
     * took the call); the caller answering keeps its own. */
    if (answerer == 1 || !call->tags[answerer])
        note_tag(call, answerer, request->to_tag);
    moat_call_timeout_note_signal(call);
    moat_call_restore_note(call, request);
}

static gboolean delete_later(void *data)
{
    moat_call *call = data;
    call->delete_timer = 0;
    g_hash_table_remove(call->registry->calls, call->id);
    return G_SOURCE_REMOVE;
}

/* Whether a delete ends this call, decided as rtpengine does: without a
 * from-tag it does; else its to-tag (its from-tag when it has none) must
 * name a party, or, with a to-tag nobody has, its from-tag the caller of a
 * call not answered yet (a failed INVITE's final reply). A stale BYE of
 * another dialog on the call-id (a fork whose 200 OK lost) names none. */
static bool delete_names_the_call(const moat_call *call, const moat_ng_request *request)
{
    const char *from = request->from_tag, *to = request->to_tag;
    if (!from || !*from)
        return true;
    bool has_to = to && *to;
    if (tag_side(call, has_to ? to : from) >= 0)
        return true;
    int side = has_to ? tag_side(call, from) : -1;
    return side >= 0 && !call->tags[1 - side];
}

/* No such call: ok with a warning, or an error with "fatal" (rtpengine). */
static void delete_not_found(const moat_ng_request *request, const char *why,
                             moat_call_reply *reply)
{
    if (request->fatal)
        moat_call_request_fail(reply, "%s", why);
    else
        snprintf(reply->warning, sizeof reply->warning, "%s", why);
}

void moat_call_delete(moat_call_registry *registry, const moat_ng_request *request,
                      moat_call_reply *reply)
{
    if (!request->call_id || !*request->call_id) {
        moat_call_request_fail(reply, "No call-id in message%s", NULL);
        return;
    }
    moat_call *call = g_hash_table_lookup(registry->calls, request->call_id);
    if (!call) {
        delete_not_found(request, "Call-ID not found", reply);
        return;
    }
    if (!delete_names_the_call(call, request)) {
        delete_not_found(request, "Call-ID not found or tags didn't match", reply);
        return; /* the call goes on */
    }
    int delay = request->delete_delay_s >= 0 ? request->delete_delay_s : registry->delete_delay_s;
    if (delay == 0) {
        g_hash_table_remove(registry->calls, request->call_id);
        return;
    }
    if (!call->delete_timer)
        call->delete_timer = g_timeout_add_seconds((guint)delay, delete_later, call);
    moat_call_restore_withdraw(call); /* a restart must not bring it back */
}
