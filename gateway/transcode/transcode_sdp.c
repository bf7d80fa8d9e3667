/* Reading an m-line's codecs and planning a call's transcoding (see
 * transcode_sdp.h); the offer rewrite is in transcode_sdp_add.c. */
#include "transcode/transcode_sdp.h"

#include "sdp/sdp_lex.h"
#include "transcode/transcode_sdp_section.h"

#include <string.h>

static const moat_transcode_sdp_codec static_types[] = {
    {"PCMU", 8000, 1, 0}, {"GSM", 8000, 1, 3},  {"G723", 8000, 1, 4},
    {"PCMA", 8000, 1, 8}, {"G722", 8000, 1, 9}, {"G729", 8000, 1, 18},
};

static bool static_type(uint8_t payload_type, moat_transcode_sdp_codec *out)
{
    for (size_t i = 0; i < G_N_ELEMENTS(static_types); i++) {
        if (static_types[i].payload_type == payload_type) {
            *out = static_types[i];
            return true;
        }
    }
    return false;
}

/* "<pt> <name>/<rate>[/<channels>]" */
static bool parse_rtpmap(moat_sdp_span value, moat_transcode_sdp_codec *out)
{
    moat_sdp_span pt, encoding, name, rest, rate, channels;
    uint32_t number, clock, count = 1;
    if (!moat_sdp_span_next_token(&value, &pt) || !moat_sdp_span_u32(pt, 127, &number) ||
        !moat_sdp_span_next_token(&value, &encoding))
        return false;
    moat_sdp_span_split(encoding, '/', &name, &rest);
    bool has_channels = moat_sdp_span_split(rest, '/', &rate, &channels);
    if (!moat_sdp_span_u32(rate, 1000000, &clock) || clock == 0 ||
        (has_channels && !moat_sdp_span_u32(channels, 255, &count)) ||
        !moat_sdp_span_copy(name, out->name, sizeof out->name))
        return false;
    out->payload_type = (uint8_t)number;
    out->clock_rate = clock;
    out->channels = count;
    return true;
}

int moat_transcode_sdp_section_read(const moat_sdp_span *lines, size_t n_lines,
                                    moat_transcode_sdp_section *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    moat_sdp_span value = {lines[0].p + 2, lines[0].len - 2}, kind, port, proto, format;
    if (lines[0].len < 2 || !moat_sdp_span_next_token(&value, &kind) ||
        !moat_sdp_span_next_token(&value, &port) || !moat_sdp_span_next_token(&value, &proto)) {
        moat_sdp_errorf(error, error_size, "m= is not \"<media> <port> <proto> <formats>\"");
        return -1;
    }
    out->audio = moat_sdp_span_eq(kind, "audio");
    uint32_t number;
    while (moat_sdp_span_next_token(&value, &format)) {
        if (!moat_sdp_span_u32(format, 127, &number))
            continue; /* not RTP (e.g. webrtc-datachannel) */
        if (out->n_formats == MOAT_TRANSCODE_SDP_MAX_CODECS) {
            moat_sdp_errorf(error, error_size, "more than %d formats on an m-line",
                            MOAT_TRANSCODE_SDP_MAX_CODECS);
            return -1;
        }
        out->formats[out->n_formats++] = (uint8_t)number;
    }
    for (size_t i = 1; i < n_lines; i++) {
        if (lines[i].len < 2 || lines[i].p[0] != 'a')
            continue;
        moat_sdp_span name, rest, line = {lines[i].p + 2, lines[i].len - 2};
        moat_sdp_span_split(line, ':', &name, &rest);
        if (!moat_sdp_span_eq(name, "rtpmap"))
            continue;
        moat_transcode_sdp_codec codec;
        if (!parse_rtpmap(rest, &codec)) {
            moat_sdp_errorf(error, error_size, "a=rtpmap is not \"<pt> <name>/<rate>\"");
            return -1;
        }
        if (out->n_rtpmaps < MOAT_TRANSCODE_SDP_MAX_CODECS)
            out->rtpmaps[out->n_rtpmaps++] = codec;
    }
    return 0;
}

void moat_transcode_sdp_section_codecs(const moat_transcode_sdp_section *section,
                                       moat_transcode_sdp_codecs *out)
{
    out->n_codecs = 0;
    for (size_t i = 0; i < section->n_formats; i++) {
        moat_transcode_sdp_codec codec;
        bool named = false;
        for (size_t j = 0; j < section->n_rtpmaps && !named; j++) {
            if (section->rtpmaps[j].payload_type == section->formats[i]) {
                codec = section->rtpmaps[j];
                named = true;
            }
        }
        if (named || static_type(section->formats[i], &codec))
            out->codecs[out->n_codecs++] = codec;
    }
}

int moat_transcode_sdp_codecs_of(const char *text, size_t length, size_t media_index,
                                 moat_transcode_sdp_codecs *out, char *error, size_t error_size)
{
    out->n_codecs = 0;
    moat_transcode_sdp_lines lines;
    size_t first, end;
    if (moat_transcode_sdp_lines_section(text, length, media_index, &lines, &first, &end, error,
                                         error_size) != 0)
        return -1;
    moat_transcode_sdp_section section;
    int result = moat_transcode_sdp_section_read(&g_array_index(lines.lines, moat_sdp_span, first),
                                                 end - first, &section, error, error_size);
    if (result == 0)
        moat_transcode_sdp_section_codecs(&section, out);
    moat_transcode_sdp_lines_clear(&lines);
    return result;
}

/* ---- the plan ---- */

static bool is_event(const moat_transcode_sdp_codec *codec)
{
    return g_ascii_strcasecmp(codec->name, "telephone-event") == 0;
}

static const moat_transcode_sdp_codec *first_supported(const moat_transcode_sdp_codecs *codecs)
{
    for (size_t i = 0; i < codecs->n_codecs; i++) {
        if (!is_event(&codecs->codecs[i]) && moat_transcoder_supports(codecs->codecs[i].name))
            return &codecs->codecs[i];
    }
    return NULL;
}

static const moat_transcode_sdp_codec *event_of(const moat_transcode_sdp_codecs *codecs,
                                                uint32_t clock_rate)
{
    const moat_transcode_sdp_codec *any = NULL;
    for (size_t i = 0; i < codecs->n_codecs; i++) {
        if (!is_event(&codecs->codecs[i]))
            continue;
        if (codecs->codecs[i].clock_rate == clock_rate)
            return &codecs->codecs[i];
        any = any ? any : &codecs->codecs[i];
    }
    return any;
}

static moat_transcoder_codec side_of(const moat_transcode_sdp_codec *codec,
                                     const moat_transcode_sdp_codecs *codecs)
{
    const moat_transcode_sdp_codec *event = event_of(codecs, codec->clock_rate);
    return (moat_transcoder_codec){
        .name = codec->name,
        .clock_rate = codec->clock_rate,
        .channels = codec->channels,
        .payload_type = codec->payload_type,
        .dtmf_payload_type = event ? event->payload_type : 0,
        .dtmf_clock_rate = event ? event->clock_rate : 0,
    };
}

static bool offer_has(const moat_transcode_sdp_codecs *offer, const moat_transcode_sdp_codec *codec)
{
    for (size_t i = 0; i < offer->n_codecs; i++) {
        if (g_ascii_strcasecmp(offer->codecs[i].name, codec->name) == 0 &&
            offer->codecs[i].clock_rate == codec->clock_rate)
            return true;
    }
    return false;
}

int moat_transcode_plan_make(const moat_transcode_sdp_codecs *offer,
                             const moat_transcode_sdp_codecs *answer, moat_transcode_plan *plan,
                             char *error, size_t error_size)
{
    memset(plan, 0, sizeof *plan);
    const moat_transcode_sdp_codec *chosen = NULL;
    for (size_t i = 0; i < answer->n_codecs && !chosen; i++)
        chosen = is_event(&answer->codecs[i]) ? NULL : &answer->codecs[i];
    if (!chosen) {
        moat_sdp_errorf(error, error_size, "the answer has no audio codec");
        return -1;
    }
    if (offer_has(offer, chosen))
        return 0;
    const moat_transcode_sdp_codec *offered = first_supported(offer);
    if (!offered || !moat_transcoder_supports(chosen->name)) {
        moat_sdp_errorf(error, error_size, "cannot transcode between the offer and %s",
                        chosen->name);
        return -1;
    }
    plan->transcode = true;
    plan->sides[0] = side_of(offered, offer);
    plan->sides[1] = side_of(chosen, answer);
    return 0;
}
