/* --csv: one row per interval. Columns: end of the interval (s), its
 * length, the attack rate targeted and achieved (pps, all classes), pps per
 * class, legitimate packets sent and echoed, loss (%), mean RTT and jitter
 * (ms). A value that does not exist (no legitimate packet sent, no echo) is
 * left empty. */
#include "flood_reports.h"

#include <errno.h>
#include <string.h>

static void optional(FILE *f, double value, const char *format)
{
    fputc(',', f);
    if (value >= 0)
        fprintf(f, format, value);
}

int report_csv(const char *path, const flood_result *r, char *error, size_t error_size)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    const flood_options *o = r->options;
    fprintf(f, "time_s,interval_s,attack_target_pps,attack_pps");
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        if (o->attack[k])
            fprintf(f, ",%s_pps", attack_kind_name((attack_kind)k));
    fprintf(f, ",legit_sent,legit_received,loss_percent,rtt_ms,jitter_ms\n");
    const timeline *t = &r->timeline;
    for (size_t i = 0; i < t->n_intervals; i++) {
        const timeline_interval *in = &t->intervals[i];
        if (!in->closed || in->length_s <= 0)
            continue;
        fprintf(f, "%.3f,%.3f,%.1f,%.1f", in->start_s + in->length_s, in->length_s,
                in->target_attack_pps, timeline_interval_attack_pps(in));
        for (int k = 0; k < ATTACK_KIND_COUNT; k++)
            if (o->attack[k])
                fprintf(f, ",%.1f", (double)in->attack_sent[k] / in->length_s);
        fprintf(f, ",%llu,%llu", (unsigned long long)in->legit_sent,
                (unsigned long long)in->legit_received);
        double loss = timeline_interval_loss(in);
        optional(f, loss >= 0 ? loss * 100 : -1, "%.3f");
        optional(f, timeline_interval_rtt_ms(in), "%.3f");
        optional(f, r->n_sessions > 0 ? in->jitter_ms : -1, "%.3f");
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
