/* The end-of-run text summary: packets and rates per attack class, each
 * session's state, profile and measurements, and the legitimate totals (loss,
 * RTT, jitter) the other reports share. */
#include "flood_reports.h"
#include "target_policy.h"
#include "whip_session.h"

#include <arpa/inet.h>

void flood_legit_totals_get(const flood_result *r, flood_legit_totals *out)
{
    memset(out, 0, sizeof *out);
    double rtt_sum = 0, jitter_sum = 0;
    uint64_t rtt_samples = 0, jitter_sessions = 0;
    for (size_t i = 0; i < r->n_sessions; i++) {
        const echo_stats *e = &r->sessions[i].echo;
        out->sent += e->sent;
        out->received += e->received < e->sent ? e->received : e->sent;
        out->reception_reports += r->sessions[i].reception_reports;
        rtt_sum += e->rtt_sum_ms;
        rtt_samples += e->rtt_samples;
        if (e->stream_started) {
            jitter_sum += echo_stats_jitter_ms(e);
            jitter_sessions++;
        }
    }
    out->loss = out->sent > 0 ? (double)(out->sent - out->received) / (double)out->sent : 0;
    out->rtt_mean_ms = rtt_samples > 0 ? rtt_sum / (double)rtt_samples : -1;
    out->jitter_ms = jitter_sessions > 0 ? jitter_sum / (double)jitter_sessions : 0;
}

static void print_attacks(FILE *out, const flood_result *r)
{
    const flood_options *o = r->options;
    bool sessionless = false;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        sessionless = sessionless || (o->attack[k] && !attack_kind_needs_session((attack_kind)k));
    if (sessionless && r->has_target) {
        char target[INET6_ADDRSTRLEN];
        target_address_text((const struct sockaddr *)&r->target, target, sizeof target);
        fprintf(out, "attacks (session-less classes to %s port %u):\n", target,
                ntohs(r->target.sin6_port));
    } else {
        fprintf(out, "attacks:\n");
    }
    uint64_t total = 0;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        if (!o->attack[k])
            continue;
        double pps = r->run_s > 0 ? (double)r->attack_sent[k] / r->run_s : 0;
        fprintf(out, "  %-17s %12llu packets  %10.0f pps\n", attack_kind_name((attack_kind)k),
                (unsigned long long)r->attack_sent[k], pps);
        total += r->attack_sent[k];
    }
    fprintf(out, "  %-17s %12llu packets", "total", (unsigned long long)total);
    if (r->attack_errors > 0)
        fprintf(out, "  (%llu send errors)", (unsigned long long)r->attack_errors);
    fprintf(out, "\n");
}

static void print_session(FILE *out, const flood_session *s)
{
    fprintf(out, "  #%-3u %-9s", s->index, flood_session_state_name(s->state));
    if (s->profile != 0)
        fprintf(out, " %s", moat_srtp_profile_name(s->profile));
    fprintf(out, " srtp+ %s", s->srtpplus_negotiated ? s->srtpplus_scheme.scheme : "none");
    const echo_stats *e = &s->echo;
    fprintf(out, "  sent %llu echoed %llu loss %.2f%% jitter %.3f ms", (unsigned long long)e->sent,
            (unsigned long long)e->received, echo_stats_loss(e) * 100, echo_stats_jitter_ms(e));
    if (e->rtt_samples > 0)
        fprintf(out, " rtt %.3f/%.3f/%.3f ms", e->rtt_min_ms, echo_stats_rtt_mean_ms(e),
                e->rtt_max_ms);
    fprintf(out, " reports sent %llu (reception %llu)", (unsigned long long)s->rtcp_sent,
            (unsigned long long)s->reception_reports);
    if (s->error[0] != '\0')
        fprintf(out, "  (%s)", s->error);
    fprintf(out, "\n");
}

void report_summary(FILE *out, const flood_result *r)
{
    const flood_options *o = r->options;
    fprintf(out, "moat-flood: %.2f s run%s", r->run_s, r->interrupted ? " (interrupted)" : "");
    if (o->whip_url != NULL)
        fprintf(out, " against %s, %zu/%zu sessions connected in %.2f s", o->whip_url,
                r->n_connected, r->n_sessions, r->setup_s);
    if (r->n_not_opened > 0)
        fprintf(out, " (%zu not opened: setup timeout)", r->n_not_opened);
    fprintf(out, "\n");
    if (o->any_attack)
        print_attacks(out, r);
    if (r->n_sessions == 0)
        return;
    fprintf(out, "legitimate sessions (%s, SRTP+ offered: %s):\n", flood_media_name(o->media),
            flood_srtpplus_name(o->srtpplus));
    for (size_t i = 0; i < r->n_sessions; i++)
        print_session(out, &r->sessions[i]);
    flood_legit_totals totals;
    flood_legit_totals_get(r, &totals);
    fprintf(out, "  all: sent %llu, echoed %llu, loss %.2f%%, jitter %.3f ms",
            (unsigned long long)totals.sent, (unsigned long long)totals.received, totals.loss * 100,
            totals.jitter_ms);
    if (totals.rtt_mean_ms >= 0)
        fprintf(out, ", mean rtt %.3f ms", totals.rtt_mean_ms);
    fprintf(out, ", reception reports sent %llu", (unsigned long long)totals.reception_reports);
    fprintf(out, "\n");
    if (totals.sent > 0 && totals.received == 0)
        fprintf(out, "  no packet came back: the endpoint does not echo (try /whip/echo on Moat), "
                     "or every one was lost\n");
    if (r->hangup_failures > 0)
        fprintf(out, "  %u WHIP DELETEs failed (first: %s)\n", r->hangup_failures, r->hangup_error);
}
