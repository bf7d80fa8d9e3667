/* Owns the translation between ng replies (bencode dictionaries, the keys
 * rtpengine uses) and the call registry's C API. */
#include "call/call_ng.h"

#include <arpa/inet.h>
#include <stdio.h>

#define LIST_MAX 1000

static void put_reply(const moat_call_reply *result, moat_bencode *reply)
{
    if (result->error[0] && result->load_limit) {
        moat_bencode_set_string(reply, "result", "load limit");
        moat_bencode_set_string(reply, "message", result->error);
        return;
    }
    if (result->error[0]) {
        moat_bencode_set_string(reply, "result", "error");
        moat_bencode_set_string(reply, "error-reason", result->error);
        return;
    }
    moat_bencode_set_string(reply, "result", "ok");
    if (result->warning[0])
        moat_bencode_set_string(reply, "warning", result->warning);
    if (result->sdp)
        moat_bencode_set_string(reply, "sdp", result->sdp);
}

typedef void (*call_command_fn)(moat_call_registry *, const moat_ng_request *, moat_call_reply *);

static void run(call_command_fn command, void *context, const moat_ng_request *request,
                moat_bencode *reply)
{
    moat_call_reply result = {0};
    command(context, request, &result);
    put_reply(&result, reply);
    moat_call_reply_clear(&result);
}

static void on_offer(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    run(moat_call_offer, context, request, reply);
}

static void on_answer(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    run(moat_call_answer, context, request, reply);
}

static void on_delete(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    run(moat_call_delete, context, request, reply);
}

static moat_bencode *flow_dictionary(const moat_call_flow_counters *flow)
{
    moat_bencode *d = moat_bencode_new_dictionary();
    moat_bencode_set_integer(d, "packets", (int64_t)flow->packets);
    moat_bencode_set_integer(d, "bytes", (int64_t)flow->bytes);
    moat_bencode_set_integer(d, "errors", (int64_t)flow->errors);
    return d;
}

static moat_bencode *endpoint_dictionary(const struct sockaddr_in6 *address)
{
    moat_bencode *d = moat_bencode_new_dictionary();
    char text[INET6_ADDRSTRLEN] = "";
    bool v4 = IN6_IS_ADDR_V4MAPPED(&address->sin6_addr);
    if (address->sin6_family == AF_INET6) {
        if (v4)
            inet_ntop(AF_INET, &address->sin6_addr.s6_addr[12], text, sizeof text);
        else
            inet_ntop(AF_INET6, &address->sin6_addr, text, sizeof text);
    }
    moat_bencode_set_string(d, "family", v4 ? "IPv4" : "IPv6");
    moat_bencode_set_string(d, "address", text);
    moat_bencode_set_integer(d, "port", ntohs(address->sin6_port));
    return d;
}

static moat_bencode *media_dictionary(const moat_call_media_view *media, size_t index)
{
    moat_bencode *d = moat_bencode_new_dictionary();
    moat_bencode_set_integer(d, "index", (int64_t)index + 1);
    moat_bencode_set_string(d, "type", media->kind);
    moat_bencode_set_string(d, "protocol", media->protocol);
    if (media->webrtc)
        moat_bencode_set_string(d, "ICE", "force");
    moat_bencode *streams = moat_bencode_new_list();
    for (int rtcp = 0; rtcp < 2; rtcp++) {
        moat_bencode *stream = moat_bencode_new_dictionary();
        moat_bencode_set_integer(stream, "local port", media->local_port + rtcp);
        moat_bencode_set(stream, "endpoint", endpoint_dictionary(&media->sdp_address));
        moat_bencode_set(stream, "stats",
                         flow_dictionary(rtcp ? &media->counters.rtcp : &media->counters.rtp));
        if (!rtcp)
            moat_bencode_set_integer(stream, "latched", media->counters.latched);
        moat_bencode_append(streams, stream);
        if (media->rtcp_mux)
            break;
    }
    moat_bencode_set(d, "streams", streams);
    return d;
}

static void add_flow(moat_call_flow_counters *total, const moat_call_flow_counters *flow)
{
    total->packets += flow->packets;
    total->bytes += flow->bytes;
    total->errors += flow->errors;
}

static void on_query(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    moat_call_view view;
    if (moat_call_query(context, request->call_id, &view) != 0) {
        moat_bencode_set_string(reply, "result", "error");
        moat_bencode_set_string(reply, "error-reason",
                                request->call_id ? "Unknown call-id" : "No call-id in message");
        return;
    }
    moat_bencode_set_string(reply, "result", "ok");
    moat_bencode_set_integer(reply, "created", view.created_s);
    moat_bencode *tags = moat_bencode_new_dictionary();
    moat_bencode *ssrcs = moat_bencode_new_dictionary();
    moat_call_flow_counters rtp = {0}, rtcp = {0};
    for (int side = 0; side < 2; side++) {
        const moat_call_side_view *s = &view.sides[side];
        if (!s->tag)
            continue;
        moat_bencode *tag = moat_bencode_new_dictionary();
        moat_bencode_set_string(tag, "tag", s->tag);
        if (view.sides[1 - side].tag)
            moat_bencode_set_string(tag, "in dialogue with", view.sides[1 - side].tag);
        moat_bencode *medias = moat_bencode_new_list();
        for (size_t i = 0; i < s->n_media; i++) {
            moat_bencode_append(medias, media_dictionary(&s->media[i], i));
            add_flow(&rtp, &s->media[i].counters.rtp);
            add_flow(&rtcp, &s->media[i].counters.rtcp);
            if (s->media[i].counters.has_ssrc) {
                char key[16];
                snprintf(key, sizeof key, "%u", s->media[i].counters.last_ssrc);
                moat_bencode *ssrc = moat_bencode_new_dictionary();
                moat_bencode_set_string(ssrc, "tag", s->tag);
                moat_bencode_set_integer(ssrc, "packets",
                                         (int64_t)s->media[i].counters.rtp.packets);
                moat_bencode_set(ssrcs, key, ssrc);
            }
        }
        moat_bencode_set(tag, "medias", medias);
        moat_bencode_set(tags, s->tag, tag);
    }
    moat_bencode_set(reply, "tags", tags);
    moat_bencode_set(reply, "SSRC", ssrcs);
    moat_bencode *totals = moat_bencode_new_dictionary();
    moat_bencode_set(totals, "RTP", flow_dictionary(&rtp));
    moat_bencode_set(totals, "RTCP", flow_dictionary(&rtcp));
    moat_bencode_set(reply, "totals", totals);
}

static void on_list(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    const char **ids = g_new(const char *, LIST_MAX);
    size_t limit = LIST_MAX;
    int64_t asked = 0;
    const moat_bencode *key =
        request->dictionary ? moat_bencode_get(request->dictionary, "limit") : NULL;
    if (key && moat_bencode_integer(key, &asked) && asked >= 0 && asked < LIST_MAX)
        limit = (size_t)asked;
    size_t n = moat_call_list(context, ids, limit);
    moat_bencode *calls = moat_bencode_new_list();
    for (size_t i = 0; i < n; i++)
        moat_bencode_append(calls, moat_bencode_new_cstring(ids[i]));
    moat_bencode_set_string(reply, "result", "ok");
    moat_bencode_set(reply, "calls", calls);
    g_free(ids);
}

static bool refuse_own_source(void *context, const struct sockaddr *from, socklen_t from_length)
{
    return moat_call_registry_is_own_source(context, from, from_length);
}

moat_ng_handlers moat_call_ng_handlers(moat_call_registry *registry)
{
    return (moat_ng_handlers){
        .context = registry,
        .offer = on_offer,
        .answer = on_answer,
        .delete_call = on_delete,
        .query = on_query,
        .list = on_list,
        .refuse_source = refuse_own_source,
    };
}
