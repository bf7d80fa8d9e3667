/* Restricting one m-line of an SDP to the codec Moat transcodes to for
 * that party (transcode_sdp.h). */
#include "sdp/sdp_lex.h"
#include "transcode/transcode_sdp.h"
#include "transcode/transcode_sdp_section.h"

#include <stdio.h>

static void append_line(GString *out, moat_sdp_span line)
{
    g_string_append_len(out, line.p, (gssize)line.len);
    g_string_append(out, "\r\n");
}

/* "m=<media> <port> <proto>" of the m-line, then the new formats. */
static bool write_media_line(moat_sdp_span line, const moat_transcoder_codec *codec, GString *out)
{
    moat_sdp_span value = {line.p + 2, line.len - 2}, kind, port, proto;
    if (!moat_sdp_span_next_token(&value, &kind) || !moat_sdp_span_next_token(&value, &port) ||
        !moat_sdp_span_next_token(&value, &proto))
        return false;
    g_string_append_len(out, line.p, (gssize)(proto.p + proto.len - line.p));
    g_string_append_printf(out, " %u", codec->payload_type);
    if (codec->dtmf_payload_type)
        g_string_append_printf(out, " %u", codec->dtmf_payload_type);
    g_string_append(out, "\r\n");
    return true;
}

static bool is_codec_attribute(moat_sdp_span line)
{
    return moat_sdp_span_has_prefix(line, "a=rtpmap:") || moat_sdp_span_has_prefix(line, "a=fmtp:");
}

static void write_codec_attributes(const moat_transcoder_codec *codec, GString *out)
{
    g_string_append_printf(out, "a=rtpmap:%u %s/%u", codec->payload_type, codec->name,
                           codec->clock_rate);
    if (codec->channels > 1)
        g_string_append_printf(out, "/%u", codec->channels);
    g_string_append(out, "\r\n");
    if (!codec->dtmf_payload_type)
        return;
    g_string_append_printf(out, "a=rtpmap:%u telephone-event/%u\r\na=fmtp:%u 0-16\r\n",
                           codec->dtmf_payload_type,
                           codec->dtmf_clock_rate ? codec->dtmf_clock_rate : codec->clock_rate,
                           codec->dtmf_payload_type);
}

int moat_transcode_sdp_restrict(const char *text, size_t length, size_t media_index,
                                const moat_transcoder_codec *codec, GString *out, char *error,
                                size_t error_size)
{
    moat_transcode_sdp_lines lines;
    size_t first, end;
    if (moat_transcode_sdp_lines_section(text, length, media_index, &lines, &first, &end, error,
                                         error_size) != 0)
        return -1;
    const moat_sdp_span *all = (const moat_sdp_span *)(void *)lines.lines->data;
    int result = 0;
    for (size_t i = 0; i < lines.lines->len && result == 0; i++) {
        if (i < first || i >= end) {
            append_line(out, all[i]);
            continue;
        }
        if (i == first && !write_media_line(all[i], codec, out)) {
            moat_sdp_errorf(error, error_size, "m= is not \"<media> <port> <proto> <formats>\"");
            result = -1;
        } else if (i != first && !is_codec_attribute(all[i])) {
            append_line(out, all[i]);
        }
        if (i + 1 == end)
            write_codec_attributes(codec, out);
    }
    moat_transcode_sdp_lines_clear(&lines);
    return result;
}
