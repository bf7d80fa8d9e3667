/* moat-flood: load and flood generator for SRTP media gateways. Parses the
 * options, runs, writes the reports; see --help. */
#include "flood_options.h"
#include "flood_reports.h"
#include "flood_run.h"
#include "report_progress.h"
#include "sfu_run.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The signals received: the run stops at the first; an HTTP request in
 * flight is cancelled when it changes, none is sent after the second
 * (http_guard.h). */
static volatile sig_atomic_t stop_requested;

static void on_signal(int signal_number)
{
    (void)signal_number;
    stop_requested = stop_requested + 1;
}

static void install_signal_handlers(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The files and summaries a finished run asked for; 1 if one failed. */
static int write_reports(const flood_options *options, const flood_result *result)
{
    char error[512];
    int status = 0;
    report_progress_finish(stderr);
    report_summary(options->json ? stderr : stdout, result);
    if (options->json && report_json(stdout, result, error, sizeof error) != 0) {
        fprintf(stderr, "moat-flood: %s\n", error);
        status = 1;
    }
    if (options->csv_path != NULL && report_csv(options->csv_path, result, error, sizeof error)) {
        fprintf(stderr, "moat-flood: %s\n", error);
        status = 1;
    }
    if (options->plot_path != NULL &&
        report_plot(options->plot_path, result, error, sizeof error) != 0) {
        fprintf(stderr, "moat-flood: %s\n", error);
        status = 1;
    }
    return status;
}

/* --subscribers: the fan-out run and its reports. */
static int run_fan_out(const flood_options *options)
{
    char error[512];
    sfu_result result;
    int status = sfu_run(options, &stop_requested, &result, error, sizeof error);
    if (status != 0) {
        fprintf(stderr, "moat-flood: %s\n", error);
    } else {
        sfu_report_summary(options->json ? stderr : stdout, &result);
        if (options->json && sfu_report_json(stdout, &result) != 0)
            status = 1;
    }
    sfu_result_clear(&result);
    return status;
}

int main(int argc, char **argv)
{
    flood_options options;
    char error[512];
    switch (flood_options_parse(argc, argv, &options, error, sizeof error)) {
    case FLOOD_OPTIONS_EXIT:
        return 0;
    case FLOOD_OPTIONS_ERROR:
        fprintf(stderr, "moat-flood: %s\n", error);
        return 2;
    case FLOOD_OPTIONS_RUN:
        break;
    }
    install_signal_handlers();
    if (options.subscribers > 0)
        return run_fan_out(&options);
    flood_result result;
    int status = flood_run(&options, &stop_requested, &result, error, sizeof error);
    if (status != 0) {
        report_progress_finish(stderr);
        fprintf(stderr, "moat-flood: %s\n", error);
    } else {
        status = write_reports(&options, &result);
    }
    flood_result_clear(&result);
    return status;
}
