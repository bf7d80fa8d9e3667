/* --json: the machine-readable summary. "sent" counts packets per attack
 * class, "sessions" has each session's loss (a fraction), jitter_ms,
 * rtt_ms (the mean; null without echoes) and the RTCP it sent and received
 * (reception_reports: report blocks on the echoes in its SRs). */
#include "flood_reports.h"
#include "target_policy.h"
#include "tool_text.h"
#include "whip_session.h"

#include <arpa/inet.h>
#include <glib.h>
#include <jansson.h>
#include <stdio.h>

static json_t *number_or_null(double value)
{
    return value >= 0 ? json_real(value) : json_null();
}

/* text as a JSON string; text that is not UTF-8 (jansson refuses it) as
 * its printable ASCII copy (tool_text.h), so the key is never lost. */
static json_t *json_text(const char *text)
{
    json_t *value = json_string(text);
    if (value != NULL)
        return value;
    char *copy = g_strdup(text);
    tool_text_printable(copy);
    value = json_string(copy);
    g_free(copy);
    return value;
}

static json_t *session_json(const flood_session *s)
{
    const echo_stats *e = &s->echo;
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(s->index));
    json_object_set_new(o, "state", json_string(flood_session_state_name(s->state)));
    json_object_set_new(o, "error", s->error[0] ? json_text(s->error) : json_null());
    json_object_set_new(o, "srtp_profile",
                        s->profile != 0 ? json_string(moat_srtp_profile_name(s->profile))
                                        : json_null());
    json_object_set_new(o, "srtpplus",
                        json_string(s->srtpplus_negotiated ? s->srtpplus_scheme.scheme : "none"));
    json_object_set_new(o, "ssrc", json_integer(s->ssrc));
    json_object_set_new(o, "sent", json_integer((json_int_t)e->sent));
    json_object_set_new(o, "received", json_integer((json_int_t)e->received));
    json_object_set_new(o, "migrations", json_integer((json_int_t)s->migrations));
    json_object_set_new(
        o, "received_after_migration",
        json_integer((json_int_t)(s->migrations > 0 ? e->received - s->received_at_migration : 0)));
    json_object_set_new(o, "loss", json_real(echo_stats_loss(e)));
    json_object_set_new(o, "jitter_ms", json_real(echo_stats_jitter_ms(e)));
    json_object_set_new(o, "rtt_ms", number_or_null(echo_stats_rtt_mean_ms(e)));
    json_object_set_new(o, "rtt_min_ms", e->rtt_samples ? json_real(e->rtt_min_ms) : json_null());
    json_object_set_new(o, "rtt_max_ms", e->rtt_samples ? json_real(e->rtt_max_ms) : json_null());
    json_object_set_new(o, "rtcp_sent", json_integer((json_int_t)s->rtcp_sent));
    json_object_set_new(o, "rtcp_received", json_integer((json_int_t)e->rtcp_received));
    json_object_set_new(o, "reception_reports", json_integer((json_int_t)s->reception_reports));
    json_object_set_new(o, "sender_reports_received", json_integer((json_int_t)e->sender_reports));
    json_object_set_new(o, "consent_responses", json_integer((json_int_t)s->consent_responses));
    json_object_set_new(o, "unprotect_failures", json_integer((json_int_t)e->unprotect_failures));
    json_object_set_new(o, "send_errors", json_integer((json_int_t)s->send_errors));
    return o;
}

static json_t *attacks_json(const flood_result *r, json_t **sent_out, json_t **rates_out)
{
    const flood_options *o = r->options;
    json_t *names = json_array();
    json_t *sent = json_object();
    json_t *rates = json_object();
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        if (!o->attack[k])
            continue;
        const char *name = attack_kind_name((attack_kind)k);
        json_array_append_new(names, json_string(name));
        json_object_set_new(sent, name, json_integer((json_int_t)r->attack_sent[k]));
        json_object_set_new(rates, name, json_real(o->class_rate[k]));
    }
    *sent_out = sent;
    *rates_out = rates;
    return names;
}

int report_json(FILE *out, const flood_result *r, char *error, size_t error_size)
{
    const flood_options *o = r->options;
    json_t *sent, *rates;
    json_t *attacks = attacks_json(r, &sent, &rates);
    uint64_t sent_total = 0;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        sent_total += o->attack[k] ? r->attack_sent[k] : 0;
    json_t *sessions = json_array();
    for (size_t i = 0; i < r->n_sessions; i++)
        json_array_append_new(sessions, session_json(&r->sessions[i]));
    flood_legit_totals totals;
    flood_legit_totals_get(r, &totals);
    char target[INET6_ADDRSTRLEN + 8] = "";
    if (r->has_target) {
        char address[INET6_ADDRSTRLEN];
        target_address_text((const struct sockaddr *)&r->target, address, sizeof address);
        snprintf(target, sizeof target, "%s:%u", address, ntohs(r->target.sin6_port));
    }
    json_t *root = json_object();
    json_object_set_new(root, "tool", json_string("moat-flood"));
    json_object_set_new(root, "version", json_string(MOAT_VERSION));
    json_object_set_new(root, "whip", o->whip_url ? json_string(o->whip_url) : json_null());
    json_object_set_new(root, "target", r->has_target ? json_string(target) : json_null());
    json_object_set_new(root, "media", json_string(flood_media_name(o->media)));
    json_object_set_new(root, "srtpplus_offered", json_string(flood_srtpplus_name(o->srtpplus)));
    json_object_set_new(root, "duration_s", json_real(o->duration_s));
    json_object_set_new(root, "setup_s", json_real(r->setup_s));
    json_object_set_new(root, "run_s", json_real(r->run_s));
    json_object_set_new(root, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(root, "attacks", attacks);
    json_object_set_new(root, "rate_pps", rates);
    json_object_set_new(root, "ramp_s", json_real(o->ramp_s));
    json_object_set_new(root, "ramp_step_pps", json_real(o->ramp_step));
    json_object_set_new(root, "count", json_integer((json_int_t)o->count));
    json_object_set_new(root, "sent", sent);
    json_object_set_new(root, "sent_total", json_integer((json_int_t)sent_total));
    json_object_set_new(root, "send_errors", json_integer((json_int_t)r->attack_errors));
    json_object_set_new(root, "sessions_requested", json_integer((json_int_t)r->n_sessions));
    json_object_set_new(root, "sessions_connected", json_integer((json_int_t)r->n_connected));
    json_object_set_new(root, "sessions_not_opened", json_integer((json_int_t)r->n_not_opened));
    json_t *legit = json_object();
    json_object_set_new(legit, "sent", json_integer((json_int_t)totals.sent));
    json_object_set_new(legit, "received", json_integer((json_int_t)totals.received));
    json_object_set_new(legit, "loss", json_real(totals.loss));
    json_object_set_new(legit, "jitter_ms", json_real(totals.jitter_ms));
    json_object_set_new(legit, "rtt_ms", number_or_null(totals.rtt_mean_ms));
    json_object_set_new(legit, "reception_reports",
                        json_integer((json_int_t)totals.reception_reports));
    json_object_set_new(root, "legitimate", legit);
    json_object_set_new(root, "sessions", sessions);
    int status =
        json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(root);
    fputc('\n', out);
    if (status != 0 || fflush(out) != 0) {
        snprintf(error, error_size, "cannot write the JSON summary");
        return -1;
    }
    return 0;
}
