/* moat-tunnel: IP over a WebRTC data channel through a Moat gateway's
 * tunnel plugin, or over the TLS/TCP and DTLS/UDP baselines between two
 * peers (tunnel_options.h). Opens the TUN device, runs the transport until
 * SIGINT/SIGTERM or the end of the session, prints a summary. Exit status:
 * 0 stopped or ended by the other side, 1 failed, 2 bad usage. */
#include "tun_device.h"
#include "tunnel_run.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int signal_number)
{
    (void)signal_number;
    tunnel_stop_requested = tunnel_stop_requested + 1;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static moat_certificate *load_identity(const tunnel_options *o, char *error, size_t error_size)
{
    if (o->cert)
        return moat_certificate_load(o->cert, o->key, error, error_size);
    return moat_certificate_generate(error, error_size);
}

int main(int argc, char **argv)
{
    tunnel_options options;
    char error[512];
    if (tunnel_options_parse(&options, argc, argv, error, sizeof error) != 0) {
        fprintf(stderr, "moat-tunnel: %s\n%s", error, tunnel_options_usage);
        return 2;
    }
    if (options.help) {
        fputs(tunnel_options_usage, stdout);
        return 0;
    }
    tunnel_run run;
    memset(&run, 0, sizeof run);
    run.options = &options;
    if (tunnel_source_rule_init(&run.sources, options.address, options.allow_any_source) != 0) {
        fprintf(stderr, "moat-tunnel: --address %s is not an IPv4 CIDR (a.b.c.d/len)\n",
                options.address);
        return 2;
    }
    run.started_s = tunnel_now_s();
    run.certificate = load_identity(&options, error, sizeof error);
    if (!run.certificate) {
        fprintf(stderr, "moat-tunnel: identity: %s\n", error);
        return 1;
    }
    run.tun_fd = tun_device_open(options.tun_name, options.address, options.mtu, run.tun_name,
                                 error, sizeof error);
    if (run.tun_fd < 0) {
        fprintf(stderr, "moat-tunnel: %s\n", error);
        moat_certificate_free(run.certificate);
        return 1;
    }
    fprintf(stderr, "moat-tunnel: device %s, fingerprint sha-256 %s\n", run.tun_name,
            moat_certificate_fingerprint(run.certificate));
    install_signals();
    run.next_progress_s = run.started_s + options.progress_s;
    int rc = options.transport == TUNNEL_TRANSPORT_SCTP  ? tunnel_sctp_run(&run)
             : options.transport == TUNNEL_TRANSPORT_TCP ? tunnel_tls_run(&run)
                                                         : tunnel_dtls_run(&run);
    if (tunnel_stop_requested && !run.end_reason[0])
        tunnel_run_end(&run, "stopped by a signal");
    tunnel_run_summary(&run);
    if (rc != 0)
        fprintf(stderr, "moat-tunnel: %s\n", run.end_reason);
    close(run.tun_fd);
    moat_certificate_free(run.certificate);
    return rc == 0 ? 0 : 1;
}
