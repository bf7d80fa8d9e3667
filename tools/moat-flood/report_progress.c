/* The live progress line on stderr: per interval, attack packets/s per class
 * and the legitimate sessions' loss and RTT; rewritten in place on a terminal. */
#include "report_progress.h"

#include <unistd.h>

static int line_open;

void report_progress(FILE *out, const flood_result *r, const timeline_interval *interval)
{
    bool terminal = isatty(fileno(out));
    double length = interval->length_s > 0 ? interval->length_s : 1;
    fprintf(out, "%s[%6.1fs]", terminal ? "\r\033[K" : "", interval->start_s + length);
    const flood_options *o = r->options;
    if (o->any_attack) {
        fprintf(out, " attack %.0f pps (", timeline_interval_attack_pps(interval));
        const char *separator = "";
        for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
            if (!o->attack[k])
                continue;
            fprintf(out, "%s%s %.0f", separator, attack_kind_name((attack_kind)k),
                    (double)interval->attack_sent[k] / length);
            separator = ", ";
        }
        fprintf(out, ")");
    }
    if (r->n_sessions > 0) {
        double loss = timeline_interval_loss(interval);
        double rtt = timeline_interval_rtt_ms(interval);
        fprintf(out, " | legit %.0f pps", (double)interval->legit_sent / length);
        if (loss >= 0)
            fprintf(out, " loss %.2f%%", loss * 100);
        if (rtt >= 0)
            fprintf(out, " rtt %.2f ms", rtt);
        fprintf(out, " | sessions %zu/%zu", r->n_connected, r->n_sessions);
    }
    if (terminal) {
        line_open = 1;
    } else {
        fputc('\n', out);
    }
    fflush(out);
}

void report_progress_finish(FILE *out)
{
    if (line_open) {
        fputc('\n', out);
        line_open = 0;
    }
}
