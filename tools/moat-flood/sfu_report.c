/* What a fan-out run reports: per-subscriber loss (max, mean), the
 * publisher's packets, setup, as text, JSON and a progress line. */
#include "sfu_peer.h"
#include "sfu_run.h"
#include "whip_session.h"

#include <jansson.h>
#include <unistd.h>

double sfu_subscriber_loss(const sfu_result *r, const flood_session *s)
{
    if (s->sfu == NULL || r->published == 0 || !s->sfu->loss.counting)
        return 1.0;
    uint64_t received = sfu_loss_received(&s->sfu->loss);
    uint64_t gaps = sfu_loss_gaps(&s->sfu->loss);
    uint64_t shortfall = r->published > received ? r->published - received : 0;
    uint64_t lost = gaps > shortfall ? gaps : shortfall;
    double loss = (double)lost / (double)r->published;
    return loss > 1.0 ? 1.0 : loss;
}

static void loss_figures(const sfu_result *r, double *max, double *mean)
{
    *max = 0;
    *mean = 0;
    for (size_t i = 0; i < r->n_subscribers; i++) {
        double loss = sfu_subscriber_loss(r, &r->subscribers[i]);
        *max = loss > *max ? loss : *max;
        *mean += loss;
    }
    if (r->n_subscribers > 0)
        *mean /= (double)r->n_subscribers;
}

void sfu_report_summary(FILE *out, const sfu_result *r)
{
    double max, mean;
    loss_figures(r, &max, &mean);
    fprintf(out,
            "fan-out: %zu subscribers (%zu connected, setup %.1f s), publisher sent %llu RTP "
            "packets in %.1f s\n",
            r->n_subscribers, r->n_connected, r->setup_s, (unsigned long long)r->published,
            r->run_s);
    fprintf(out, "loss per subscriber: max %.3f%% mean %.3f%%%s\n", max * 100, mean * 100,
            r->interrupted ? " (interrupted)" : "");
    if (r->first_failure[0] != '\0')
        fprintf(out, "first failed subscriber: %s\n", r->first_failure);
}

int sfu_report_json(FILE *out, const sfu_result *r)
{
    double max, mean;
    loss_figures(r, &max, &mean);
    json_t *each = json_array();
    for (size_t i = 0; i < r->n_subscribers; i++) {
        const flood_session *s = &r->subscribers[i];
        const sfu_loss *l = &s->sfu->loss;
        json_array_append_new(
            each, json_pack("{s:s,s:f,s:I,s:I,s:I}", "state", flood_session_state_name(s->state),
                            "loss", sfu_subscriber_loss(r, s), "received",
                            (json_int_t)sfu_loss_received(l), "gaps", (json_int_t)sfu_loss_gaps(l),
                            "unprotect_failures", (json_int_t)l->unprotect_failures));
    }
    json_t *root = json_pack(
        "{s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:b,s:s,s:o}", "subscribers", (json_int_t)r->n_subscribers,
        "connected", (json_int_t)r->n_connected, "published", (json_int_t)r->published, "loss_max",
        max, "loss_mean", mean, "setup_s", r->setup_s, "run_s", r->run_s, "interrupted",
        r->interrupted, "first_failure", r->first_failure, "per_subscriber", each);
    if (root == NULL)
        return -1;
    int status = json_dumpf(root, out, JSON_COMPACT);
    fputc('\n', out);
    json_decref(root);
    return status;
}

void sfu_report_progress(FILE *out, const sfu_result *r, double elapsed_s, uint64_t published,
                         uint64_t received, double length_s)
{
    double max, mean;
    loss_figures(r, &max, &mean);
    fprintf(out,
            "%s[%6.1fs] publisher %.0f pps | %zu subscribers receive %.0f pps | loss so far "
            "max %.2f%% mean %.2f%%%s",
            isatty(fileno(out)) ? "\r\033[K" : "", elapsed_s, (double)published / length_s,
            r->n_subscribers, (double)received / length_s, max * 100, mean * 100,
            isatty(fileno(out)) ? "" : "\n");
    fflush(out);
}
