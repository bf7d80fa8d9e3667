/* BUNDLE demultiplexing, header extensions, extended sequence numbers and
 * RTX unwrapping (rtp_demux.h). */
#include "rtp/rtp_demux.h"

#include "rtp/rtp_packet.h"

#include <string.h>

static void take_id(uint8_t *slot, uint8_t id)
{
    if (*slot == 0)
        *slot = id;
}

void moat_rtp_demux_init(moat_rtp_demux *demux, const moat_media_info *media, size_t n_media)
{
    memset(demux, 0, sizeof *demux);
    demux->media = media;
    demux->n_media = n_media < MOAT_PLUGIN_MAX_MEDIA ? n_media : MOAT_PLUGIN_MAX_MEDIA;
    for (size_t i = 0; i < demux->n_media; i++) {
        const moat_extension_ids *x = &media[i].extensions;
        take_id(&demux->ids.mid, x->mid ? x->mid : media[i].mid_extension_id);
        take_id(&demux->ids.rid, x->rid);
        take_id(&demux->ids.repaired_rid, x->repaired_rid);
        take_id(&demux->ids.abs_send_time, x->abs_send_time);
        take_id(&demux->ids.transport_wide_cc, x->transport_wide_cc);
        take_id(&demux->ids.audio_level, x->audio_level);
        take_id(&demux->ids.video_orientation, x->video_orientation);
        demux->primary[i] = media[i].remote_ssrc;
    }
}

static void copy_string(char *out, const uint8_t *value, size_t len)
{
    if (len >= MOAT_PLUGIN_RID_SIZE)
        len = MOAT_PLUGIN_RID_SIZE - 1;
    memcpy(out, value, len);
    out[len] = '\0';
}

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static void take_extension(const moat_extension_ids *ids, uint8_t id, const uint8_t *value,
                           size_t len, moat_rtp_packet *out)
{
    if (id == 0 || len == 0)
        return;
    if (id == ids->mid)
        copy_string(out->mid, value, len);
    else if (id == ids->rid)
        copy_string(out->rid, value, len);
    else if (id == ids->repaired_rid)
        copy_string(out->repaired_rid, value, len);
    else if (id == ids->abs_send_time && len >= 3) {
        out->has_abs_send_time = true;
        out->abs_send_time = be24(value);
    } else if (id == ids->transport_wide_cc && len >= 2) {
        out->has_transport_sequence = true;
        out->transport_sequence = (uint16_t)(value[0] << 8 | value[1]);
    } else if (id == ids->audio_level) {
        out->has_audio_level = true;
        out->voice_activity = (value[0] & 0x80) != 0;
        out->audio_level = value[0] & 0x7f;
    } else if (id == ids->video_orientation) {
        out->has_video_orientation = true;
        out->video_orientation = value[0] & 0x0f;
    }
}

/* Two-byte form (RFC 8285 §4.3): a zero octet in place of an id is padding. */
static void read_two_byte(const moat_extension_ids *ids, const uint8_t *p, size_t n,
                          moat_rtp_packet *out)
{
    size_t i = 0;
    while (i < n) {
        if (p[i] == 0) {
            i++;
            continue;
        }
        if (i + 1 >= n)
            return;
        uint8_t id = p[i];
        size_t len = p[i + 1];
        i += 2;
        if (i + len > n)
            return;
        take_extension(ids, id, p + i, len, out);
        i += len;
    }
}

/* One pass over the one-byte (moat_rtp_one_byte_next's rule) or two-byte form. */
static void read_extensions(const moat_extension_ids *ids, const uint8_t *data,
                            const moat_rtp_header *h, moat_rtp_packet *out)
{
    if (!h->extension || h->extension_length == 0)
        return;
    const uint8_t *p = data + h->extension_offset;
    size_t n = h->extension_length;
    if (h->extension_profile == 0xBEDE) {
        size_t at = 0;
        uint8_t id;
        const uint8_t *value;
        size_t size;
        while (moat_rtp_one_byte_next(p, n, &at, &id, &value, &size) == MOAT_RTP_ONE_BYTE_ELEMENT)
            take_extension(ids, id, value, size, out);
        return;
    }
    if ((h->extension_profile & 0xFFF0) == 0x1000)
        read_two_byte(ids, p, n, out);
}

static moat_demux_stream *find_stream(moat_rtp_demux *demux, uint32_t ssrc)
{
    for (size_t i = 0; i < demux->n_streams; i++) {
        if (demux->streams[i].ssrc == ssrc)
            return &demux->streams[i];
    }
    return NULL;
}

static int by_mid(const moat_rtp_demux *demux, const char *mid)
{
    if (mid[0] == '\0')
        return -1;
    for (size_t i = 0; i < demux->n_media; i++) {
        if (strcmp(demux->media[i].mid, mid) == 0)
            return (int)i;
    }
    return -1;
}

static int by_declared_ssrc(const moat_rtp_demux *demux, uint32_t ssrc)
{
    for (size_t i = 0; i < demux->n_media; i++) {
        const moat_media_info *m = &demux->media[i];
        if ((m->remote_ssrc != 0 && m->remote_ssrc == ssrc) ||
            (m->remote_rtx_ssrc != 0 && m->remote_rtx_ssrc == ssrc))
            return (int)i;
    }
    return -1;
}

static bool has_payload_type(const moat_media_info *m, uint8_t pt)
{
    size_t n = m->n_payload_types < 16 ? m->n_payload_types : 16;
    for (size_t k = 0; k < n; k++) {
        if (m->payload_types[k] == pt)
            return true;
    }
    for (size_t k = 0; k < m->n_codecs && k < MOAT_PLUGIN_MAX_CODECS; k++) {
        if (m->codecs[k].rtx_payload_type == pt)
            return true;
    }
    return false;
}

/* Bundled m-lines may share payload types: an m-line the peer sends on whose
 * stream is not known yet is the better guess, so two new streams with the
 * same codec land on two m-lines. */
bool moat_rtp_demux_accepts(const moat_rtp_demux *demux, int media_index, uint8_t pt)
{
    if (media_index < 0 || (size_t)media_index >= demux->n_media)
        return false;
    return has_payload_type(&demux->media[media_index], pt);
}

static int by_payload_type(const moat_rtp_demux *demux, uint8_t pt)
{
    int first = -1;
    for (size_t i = 0; i < demux->n_media; i++) {
        const moat_media_info *m = &demux->media[i];
        if (!m->peer_sends || !has_payload_type(m, pt))
            continue;
        if (demux->primary[i] == 0)
            return (int)i;
        if (first < 0)
            first = (int)i;
    }
    return first;
}

/* The payload type an RTX payload type repairs on m-line `m`, 0 if none. */
static uint8_t original_payload_type(const moat_media_info *m, uint8_t rtx_pt)
{
    for (size_t k = 0; k < m->n_codecs && k < MOAT_PLUGIN_MAX_CODECS; k++) {
        if (m->codecs[k].rtx_payload_type == rtx_pt)
            return m->codecs[k].payload_type;
    }
    return 0;
}

static bool is_rtx(const moat_media_info *m, uint32_t ssrc, uint8_t pt, const moat_rtp_packet *p)
{
    return (m->remote_rtx_ssrc != 0 && ssrc == m->remote_rtx_ssrc) ||
           original_payload_type(m, pt) != 0 || p->repaired_rid[0] != '\0';
}

static moat_demux_stream *learn(moat_rtp_demux *demux, uint32_t ssrc, int index,
                                const moat_rtp_packet *p)
{
    if (index < 0 || demux->n_streams >= MOAT_DEMUX_MAX_STREAMS)
        return NULL; /* a full table only costs the slower lookup */
    moat_demux_stream *s = &demux->streams[demux->n_streams++];
    memset(s, 0, sizeof *s);
    s->ssrc = ssrc;
    s->media_index = index;
    s->rtx = is_rtx(&demux->media[index], ssrc, p->payload_type, p);
    memcpy(s->rid, s->rtx ? p->repaired_rid : p->rid, sizeof s->rid);
    return s;
}

bool moat_rtp_demux_declare(moat_rtp_demux *demux, uint32_t ssrc, int media_index, const char *rid,
                            bool rtx)
{
    if (ssrc == 0 || media_index < 0 || (size_t)media_index >= demux->n_media ||
        demux->n_streams >= MOAT_DEMUX_MAX_STREAMS || find_stream(demux, ssrc))
        return false;
    moat_demux_stream *s = &demux->streams[demux->n_streams++];
    memset(s, 0, sizeof *s);
    s->ssrc = ssrc;
    s->media_index = media_index;
    s->rtx = rtx;
    copy_string(s->rid, (const uint8_t *)rid, strlen(rid));
    return true;
}

static uint64_t extend(moat_demux_stream *s, uint16_t sequence)
{
    if (!s)
        return sequence;
    if (!s->started) {
        s->started = true;
        s->highest = (uint64_t)sequence + 65536u; /* room for early reordering */
        return s->highest;
    }
    int16_t delta = (int16_t)(sequence - (uint16_t)s->highest);
    uint64_t ext = s->highest + (uint64_t)(int64_t)delta;
    if (delta > 0)
        s->highest = ext;
    return ext;
}

/* The original SSRC an RTX stream repairs: by repaired-rid (the stream of
 * that rid that sent last: a layer that moved to a new SSRC keeps its old
 * stream here, and a repair of the new one unwrapped as the old one made the
 * room move the layer back), else the m-line's declared or first media
 * SSRC. */
static uint32_t repaired_ssrc(const moat_rtp_demux *demux, int index, const char *rrid)
{
    if (rrid[0] != '\0') {
        const moat_demux_stream *found = NULL;
        for (size_t i = 0; i < demux->n_streams; i++) {
            const moat_demux_stream *s = &demux->streams[i];
            if (!s->rtx && s->media_index == index && strcmp(s->rid, rrid) == 0 &&
                (!found || s->last_us >= found->last_us))
                found = s;
        }
        return found ? found->ssrc : 0;
    }
    return demux->primary[index];
}

/* A simulcast stream names its layer in its first packets only: later ones
 * carry the rid (or repaired rid) the stream was learned with. */
static void stream_rid(moat_demux_stream *s, moat_rtp_packet *out)
{
    char *carried = s->rtx ? out->repaired_rid : out->rid;
    if (carried[0] == '\0')
        memcpy(carried, s->rid, sizeof s->rid);
    else if (s->rid[0] == '\0')
        memcpy(s->rid, carried, sizeof s->rid);
}

static void unwrap_rtx(moat_rtp_demux *demux, moat_rtp_packet *p)
{
    const moat_media_info *m = &demux->media[p->media_index];
    uint8_t pt = original_payload_type(m, p->payload_type);
    uint32_t ssrc = repaired_ssrc(demux, p->media_index, p->repaired_rid);
    if (p->payload_length < 2 || pt == 0 || ssrc == 0) {
        p->rtx = true;
        return;
    }
    uint8_t *d = p->data;
    uint16_t osn = (uint16_t)(d[p->payload_offset] << 8 | d[p->payload_offset + 1]);
    memmove(d + p->payload_offset, d + p->payload_offset + 2, p->length - p->payload_offset - 2);
    p->length -= 2;
    p->payload_length -= 2;
    d[1] = (uint8_t)((d[1] & 0x80) | pt);
    d[2] = (uint8_t)(osn >> 8);
    d[3] = (uint8_t)osn;
    moat_rtp_set_ssrc(d, ssrc);
    p->payload_type = pt;
    p->sequence = osn;
    p->ssrc = ssrc;
    p->repaired = true;
    memcpy(p->rid, p->repaired_rid, sizeof p->rid);
    moat_demux_stream *original = find_stream(demux, ssrc);
    p->extended_sequence =
        original && original->started
            ? original->highest + (uint64_t)(int64_t)(int16_t)(osn - (uint16_t)original->highest)
            : osn;
}

int moat_rtp_demux_packet(moat_rtp_demux *demux, uint8_t *data, size_t length, size_t capacity,
                          uint64_t arrival_us, moat_rtp_packet *out)
{
    moat_rtp_header h;
    if (moat_rtp_parse(data, length, &h) != MOAT_RTP_OK)
        return -1;
    moat_rtp_demux_parsed(demux, data, length, capacity, &h, arrival_us, out);
    return 0;
}

void moat_rtp_demux_parsed(moat_rtp_demux *demux, uint8_t *data, size_t length, size_t capacity,
                           const moat_rtp_header *header, uint64_t arrival_us, moat_rtp_packet *out)
{
    const moat_rtp_header h = *header;
    memset(out, 0, sizeof *out);
    out->data = data;
    out->length = length;
    out->capacity = capacity;
    out->ssrc = h.ssrc;
    out->sequence = h.sequence;
    out->timestamp = h.timestamp;
    out->marker = h.marker;
    out->payload_type = h.payload_type;
    out->payload_offset = h.payload_offset;
    out->payload_length = h.payload_length;
    out->arrival_us = arrival_us;
    read_extensions(&demux->ids, data, &h, out);

    moat_demux_stream *s = find_stream(demux, h.ssrc);
    int index = s ? s->media_index : by_mid(demux, out->mid);
    if (index < 0)
        index = by_declared_ssrc(demux, h.ssrc);
    if (index < 0)
        index = by_payload_type(demux, h.payload_type);
    out->media_index = index;
    if (index < 0) {
        out->extended_sequence = h.sequence;
        return;
    }
    out->kind = demux->media[index].kind;
    if (!s)
        s = learn(demux, h.ssrc, index, out);
    else
        stream_rid(s, out);
    bool rtx = s ? s->rtx : is_rtx(&demux->media[index], h.ssrc, h.payload_type, out);
    if (!rtx) {
        if (s)
            s->last_us = arrival_us;
        if (demux->primary[index] == 0 && h.payload_length > 0)
            demux->primary[index] = h.ssrc;
        out->extended_sequence = extend(s, h.sequence);
        return;
    }
    extend(s, h.sequence);
    unwrap_rtx(demux, out);
}
