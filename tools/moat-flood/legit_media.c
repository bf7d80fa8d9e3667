/* A connected session's legitimate traffic: RTP from its source through SRTP
 * (and SRTP+), a sender report every second, and the echoes and RTCP coming
 * back (loss, jitter, RTT; PLI/FIR ask for a keyframe). */
#include "legit_media.h"
#include "rtp_probe.h"
#include "whip_session.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_packet.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define REPORT_INTERVAL_US 1000000u
#define NTP_UNIX_OFFSET    2208988800ull

static size_t nominal_payload(flood_media media)
{
    switch (media) {
    case FLOOD_MEDIA_G711:
        return 160;
    case FLOOD_MEDIA_OPUS:
        return 120;
    case FLOOD_MEDIA_VIDEO:
    default:
        return RTP_SOURCE_MAX_PAYLOAD;
    }
}

void legit_media_prepare(flood_session *s)
{
    s->srtp_tag_length = moat_srtp_session_rtp_overhead(s->srtp);
    s->srtcp_trailer_length = moat_srtp_session_rtcp_overhead(s->srtp);
    size_t srtpplus = s->srtpplus != NULL ? srtpplus_sender_rtp_overhead(s->srtpplus) : 0;
    s->typical_length = RTP_SOURCE_HEADER_LENGTH + nominal_payload(s->env->options->media) +
                        s->srtp_tag_length + srtpplus;
    if (s->env->options->attack[ATTACK_REPLAY] && s->capture == NULL)
        s->capture = capture_ring_new();
}

void legit_media_start(flood_session *s, uint64_t now_us)
{
    flood_random random;
    flood_random_seed(&random);
    uint64_t offset = flood_random_range(&random, 0, 19999);
    rtp_source_init(&s->source, s->env->options->media, s->payload_type, s->ssrc, now_us + offset);
    s->source.jitter = s->env->options->jitter;
    echo_stats_init(&s->echo, s->source.clock_rate);
    atomic_store(&s->next_sequence, s->source.sequence);
    s->next_report_us = now_us + REPORT_INTERVAL_US;
    s->sending = true;
}

/* Plain RTP in, SRTP(+) on the wire. */
static int protect_rtp(flood_session *s, uint8_t *packet, size_t *length)
{
    if (s->srtpplus != NULL) {
        int status =
            srtpplus_sender_prepare_rtp(s->srtpplus, packet, length, FLOOD_PACKET_CAPACITY);
        if (status != SRTPPLUS_OK && status != SRTPPLUS_ERR_PADDING)
            return -1;
    }
    if (moat_srtp_protect_rtp(s->srtp, packet, length, FLOOD_PACKET_CAPACITY) != MOAT_SRTP_OK)
        return -1;
    if (s->srtpplus != NULL && srtpplus_sender_append_tag_rtp(s->srtpplus, packet, length,
                                                              FLOOD_PACKET_CAPACITY) != SRTPPLUS_OK)
        return -1;
    return 0;
}

static void send_frame(flood_session *s, uint64_t now_us)
{
    rtp_frame frame;
    rtp_source_next_frame(&s->source, now_us, &frame);
    uint8_t packet[FLOOD_PACKET_CAPACITY];
    for (size_t i = 0; i < frame.n_packets; i++) {
        size_t length = rtp_source_write(&s->source, &frame, i, now_us, packet, sizeof packet);
        size_t plain = length;
        if (length == 0 || protect_rtp(s, packet, &length) != 0) {
            s->send_errors++;
            continue;
        }
        atomic_store(&s->next_sequence, s->source.sequence);
        if (flood_session_send(s, packet, length, NULL) != 0)
            continue;
        echo_stats_on_sent(&s->echo);
        s->octets_sent += plain - RTP_SOURCE_HEADER_LENGTH;
        s->typical_length = length;
        if (s->env->timeline != NULL)
            timeline_on_sent(s->env->timeline, now_us);
        if (s->capture != NULL)
            capture_ring_store(s->capture, packet, length, now_us);
    }
}

static uint64_t ntp_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t fraction = ((uint64_t)now.tv_nsec << 32) / 1000000000u;
    return (((uint64_t)now.tv_sec + NTP_UNIX_OFFSET) << 32) | fraction;
}

static void send_report(flood_session *s, uint64_t now_us)
{
    uint8_t packet[FLOOD_PACKET_CAPACITY];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, packet, 256);
    moat_rtcp_sr report;
    memset(&report, 0, sizeof report);
    report.ssrc = s->ssrc;
    report.ntp_timestamp = ntp_now();
    report.rtp_timestamp = s->source.timestamp;
    report.packet_count = (uint32_t)s->echo.sent;
    report.octet_count = (uint32_t)s->octets_sent;
    /* An active sender reports its reception in its SR (RFC 3550 §6.4). */
    if (echo_stats_report_block(&s->echo, now_us, &report.reports[0]))
        report.n_reports = 1;
    if (moat_rtcp_build_sr(&writer, &report) != MOAT_RTP_OK ||
        moat_rtcp_build_sdes_cname(&writer, s->ssrc, "moat-flood", 10) != MOAT_RTP_OK)
        return;
    size_t length = writer.length;
    if (moat_srtp_protect_rtcp(s->srtp, packet, &length, sizeof packet) != MOAT_SRTP_OK ||
        (s->srtpplus != NULL && srtpplus_sender_append_tag_rtcp(s->srtpplus, packet, &length,
                                                                sizeof packet) != SRTPPLUS_OK)) {
        s->send_errors++;
        return;
    }
    if (flood_session_send(s, packet, length, NULL) == 0) {
        s->rtcp_sent++;
        s->reception_reports += report.n_reports;
    }
}

void legit_media_send_due(flood_session *s, uint64_t now_us)
{
    if (!s->sending || s->state != FLOOD_SESSION_CONNECTED)
        return;
    while (rtp_source_frame_due(&s->source, now_us))
        send_frame(s, now_us);
    if (now_us >= s->next_report_us) {
        send_report(s, now_us);
        s->next_report_us = now_us + REPORT_INTERVAL_US;
    }
}

uint64_t legit_media_next_due_us(const flood_session *s)
{
    if (!s->sending || s->state != FLOOD_SESSION_CONNECTED)
        return UINT64_MAX;
    uint64_t frame = s->source.next_frame_us;
    return frame < s->next_report_us ? frame : s->next_report_us;
}

static void on_rtcp(flood_session *s, const uint8_t *packet, size_t length, uint64_t now_us)
{
    s->echo.rtcp_received++;
    moat_rtcp_iter it;
    moat_rtcp_header header;
    moat_rtcp_iter_init(&it, packet, length);
    while (moat_rtcp_iter_next(&it, &header) > 0) {
        moat_rtcp_sr report;
        if (header.type == MOAT_RTCP_SR && moat_rtcp_parse_sr(&header, &report) == MOAT_RTP_OK) {
            echo_stats_on_sender_report(&s->echo, report.ssrc, report.ntp_timestamp, now_us);
            continue;
        }
        moat_rtcp_fb feedback;
        if (header.type != MOAT_RTCP_PSFB || moat_rtcp_parse_fb(&header, &feedback) != MOAT_RTP_OK)
            continue;
        if (moat_rtcp_fb_is_pli(&feedback) || moat_rtcp_fb_is_fir(&feedback))
            rtp_source_request_keyframe(&s->source);
    }
}

static void on_rtp(flood_session *s, const uint8_t *packet, size_t length, uint64_t now_us)
{
    moat_rtp_header header;
    uint64_t sent_us;
    if (moat_rtp_parse(packet, length, &header) != MOAT_RTP_OK ||
        !rtp_probe_read(packet + header.payload_offset, header.payload_length,
                        rtp_source_probe_offset(s->env->options->media), &sent_us) ||
        sent_us > now_us)
        return;
    echo_stats_on_echo(&s->echo, header.ssrc, header.sequence, header.timestamp, sent_us, now_us);
    if (s->env->timeline != NULL)
        timeline_on_echo(s->env->timeline, sent_us, (double)(now_us - sent_us) / 1000.0);
}

void legit_media_on_srtp(flood_session *s, uint8_t *data, size_t length, uint64_t now_us)
{
    if (s->srtp == NULL)
        return;
    /* Both directions carry SRTP+ tags once negotiated (SRTPPLUS.md §1). */
    if (s->srtpplus_negotiated) {
        if (length <= SRTPPLUS_TAG_LEN) {
            s->echo.unprotect_failures++;
            return;
        }
        length -= SRTPPLUS_TAG_LEN;
    }
    bool rtcp = moat_rtp_is_rtcp(data, length);
    int status = rtcp ? moat_srtp_unprotect_rtcp(s->srtp, data, &length)
                      : moat_srtp_unprotect_rtp(s->srtp, data, &length);
    if (status != MOAT_SRTP_OK) {
        s->echo.unprotect_failures++;
        return;
    }
    if (rtcp)
        on_rtcp(s, data, length, now_us);
    else
        on_rtp(s, data, length, now_us);
}
