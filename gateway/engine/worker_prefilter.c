/* A worker socket's defences: its detector (floods spread over many
 * 5-tuples), its load monitor (overload from what the socket shows), the
 * data-channel limits it hands its sessions, the record of Moat's own
 * sockets its loop guard reads, and the eBPF kernel filter on its socket.
 * Worker thread, except the setters called before it starts. */
#include "engine/worker_private.h"

void moat_worker_set_prefilter(moat_worker *worker, const moat_prefilter_settings *settings)
{
    worker->prefilter = settings;
    moat_detector_config config = {
        .mode = settings->mode,
        .hold_ms = settings->hold_ms,
        .rate_factor = settings->rate_factor,
        .min_excess_pps = settings->worker_min_excess_pps,
        .auth_failures_per_s = settings->worker_failures_per_s,
        .declared_pps = 0,
    };
    moat_detector_init(&worker->detector, &config, 0);
    moat_load_monitor_init(&worker->load);
}

void moat_worker_note_wake(moat_worker *worker, unsigned datagrams, bool drained)
{
    moat_load_monitor_note_wake(&worker->load, datagrams, drained);
}

const moat_prefilter_settings *moat_worker_prefilter(const moat_worker *worker)
{
    return worker->prefilter;
}

uint32_t moat_worker_admission_chance(const moat_worker *worker)
{
    return moat_load_monitor_chance(&worker->load);
}

void moat_worker_set_data_limits(moat_worker *worker, struct moat_data_limits_s *limits)
{
    worker->data_limits = limits;
}

struct moat_data_limits_s *moat_worker_data_limits(moat_worker *worker)
{
    return worker->data_limits;
}

void moat_worker_set_own_sockets(moat_worker *worker, moat_own_sockets *own)
{
    moat_own_sockets_release(worker->own, worker->port);
    worker->own = own;
    moat_own_sockets_hold(own, worker->port);
}

moat_own_sockets *moat_worker_own_sockets(const moat_worker *worker)
{
    return worker->own;
}

int moat_worker_attach_kernel_filter(moat_worker *worker, char *error, size_t error_size)
{
    if (!worker->kernel)
        worker->kernel = moat_kernel_filter_attach(worker->socket_fd, error, error_size);
    return worker->kernel ? 0 : -1;
}

void moat_worker_detach_kernel_filter(moat_worker *worker)
{
    moat_kernel_filter_free(worker->kernel);
    worker->kernel = NULL;
}

const moat_kernel_filter *moat_worker_kernel_filter(const moat_worker *worker)
{
    return worker->kernel;
}

bool moat_worker_enforcing(const moat_worker *worker)
{
    return worker->prefilter && moat_detector_enforcing(&worker->detector);
}

void moat_worker_report_detector(moat_worker *worker, moat_detector_event event)
{
    if (event == MOAT_DETECTOR_EVENT_NONE || !moat_worker_log_allow(worker, MOAT_LOG_INFO, NULL)) {
        if (event == MOAT_DETECTOR_EVENT_ON) {
            worker->detector_on_us = worker->now_us;
            moat_counter_add(&worker->counters.worker_detector_switches_on, 1);
        }
        return;
    }
    if (event == MOAT_DETECTOR_EVENT_ON) {
        worker->detector_on_us = worker->now_us;
        moat_counter_add(&worker->counters.worker_detector_switches_on, 1);
        moat_log_warn("prefilter", "worker %u: socket detector on (%s), ingress %.0f pkt/s",
                      worker->index, moat_anomaly_name(worker->detector.last_anomaly),
                      moat_detector_rate(&worker->detector));
    } else if (event == MOAT_DETECTOR_EVENT_OFF) {
        moat_log_info("prefilter",
                      "worker %u: socket detector off after %.1f s, baseline %.0f pkt/s",
                      worker->index, (worker->now_us - worker->detector_on_us) / 1e6,
                      worker->detector.baseline_pps);
    }
}

void moat_worker_note_datagram(moat_worker *worker)
{
    if (worker->prefilter)
        moat_worker_report_detector(worker,
                                    moat_detector_on_packet(&worker->detector, worker->arrival_us));
}

void moat_worker_note_bad_datagram(moat_worker *worker)
{
    if (worker->prefilter)
        moat_worker_report_detector(worker,
                                    moat_detector_on_failure(&worker->detector, worker->now_us));
}
