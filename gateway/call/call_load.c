/* Owns the workers' CPU load sampler behind [ng] max_load (call_load.h). */
#include "call/call_load.h"

#include <glib.h>

unsigned moat_call_load_percent(const uint64_t *before, const uint64_t *after, unsigned n,
                                uint64_t wall_ns)
{
    if (n == 0 || wall_ns == 0)
        return 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t used = after[i] > before[i] ? after[i] - before[i] : 0;
        sum += MIN(used, wall_ns) * 100u / wall_ns;
    }
    return (unsigned)(sum / n);
}

void moat_call_load_init(moat_call_load *load, moat_worker *const *workers, unsigned n_workers)
{
    load->workers = workers;
    load->n_workers = n_workers;
    load->cpu_ns = g_new0(uint64_t, n_workers ? n_workers : 1);
    load->wall_ns = 0;
    load->percent = 0;
}

void moat_call_load_clear(moat_call_load *load)
{
    g_free(load->cpu_ns);
    load->cpu_ns = NULL;
}

unsigned moat_call_load_sample(moat_call_load *load, uint64_t now_ns)
{
    if (load->wall_ns && now_ns - load->wall_ns < MOAT_CALL_LOAD_WINDOW_NS)
        return load->percent;
    uint64_t *now_cpu = g_new0(uint64_t, load->n_workers ? load->n_workers : 1);
    for (unsigned i = 0; i < load->n_workers; i++)
        now_cpu[i] = load->workers && load->workers[i] ? moat_worker_cpu_ns(load->workers[i]) : 0;
    if (load->wall_ns)
        load->percent =
            moat_call_load_percent(load->cpu_ns, now_cpu, load->n_workers, now_ns - load->wall_ns);
    g_free(load->cpu_ns);
    load->cpu_ns = now_cpu;
    load->wall_ns = now_ns;
    return load->percent;
}
