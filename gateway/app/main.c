/* moat: the media gateway daemon. Configuration comes from built-in
 * defaults, then --config FILE, then MOAT_<SECTION>_<KEY> environment
 * variables, then command-line options. */
#include "base/config.h"
#include "app/config_check.h"
#include "app/gateway.h"
#include "cluster/cluster.h"
#include "base/log.h"
#include "base/version.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_help(void)
{
    printf("Usage: moat [--config FILE] [OPTION=VALUE ...]\n\n"
           "Moat is a WebRTC media gateway: WHIP/WHEP, ICE-lite, DTLS-SRTP, data channels,\n"
           "and an SRTP+ prefilter against SRTP floods.\n\n"
           "  --help                         this text\n"
           "  --version                      versions of Moat, libsrtp (and its crypto), OpenSSL\n"
           "  --config FILE                  configuration file (see config/moat.conf)\n"
           "  --check-config                 validate the configuration and exit\n\n"
           "Every configuration option is also a command-line option (--name=VALUE or\n"
           "--name VALUE) and an environment variable MOAT_<SECTION>_<KEY>:\n");
    moat_config_print_options();
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The container image gives the binary CAP_BPF and CAP_PERFMON (the
 * verifier wants it for the filter's pointer arithmetic) as permitted file
 * capabilities only (setcap cap_bpf,cap_perfmon+p), so that it starts
 * whether or not the container was granted them; those it was granted are
 * raised here for the kernel filter ([prefilter] kernel). Nothing else is
 * raised. */
static void raise_permitted_bpf(void)
{
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &header, data) != 0)
        return;
    bool raise = false;
    static const int wanted[] = {CAP_BPF, CAP_PERFMON};
    for (size_t i = 0; i < G_N_ELEMENTS(wanted); i++) {
        unsigned word = (unsigned)wanted[i] / 32, bit = 1u << (wanted[i] % 32);
        if ((data[word].permitted & bit) && !(data[word].effective & bit)) {
            data[word].effective |= bit;
            raise = true;
        }
    }
    if (raise && syscall(SYS_capset, &header, data) != 0)
        moat_log_warn("gateway", "cannot raise CAP_BPF: the kernel filter may be unavailable");
}

/* Stop signals taken by the main loop; a second one ends the session drain
 * at once (moat_gateway_hurry; after the loop, moat_gateway_catch_stop_signals). */
static unsigned stop_signals;

static void count_stop_signal(void)
{
    if (++stop_signals > 1)
        moat_gateway_hurry();
}

/* SIGINT: stop now (sessions still end as on a hang-up). */
static gboolean on_sigint(gpointer data)
{
    moat_gateway *gateway = data;
    count_stop_signal();
    moat_log_info("gateway", "SIGINT received, shutting down");
    g_main_loop_quit(gateway->loop);
    return G_SOURCE_REMOVE;
}

/* SIGTERM, and SIGHUP alike (its default action killed the process without
 * ending sessions or finishing recordings): a cluster node drains first
 * (out of placement while its sessions end, [cluster] drain_timeout_s at
 * most; a second signal stops it now, without the 6 s wait for data
 * channel drains). */
static gboolean graceful_stop(moat_gateway *gateway, const char *signal_name)
{
    count_stop_signal();
    if (!gateway->cluster) {
        moat_log_info("gateway", "%s received, shutting down", signal_name);
        g_main_loop_quit(gateway->loop);
        return G_SOURCE_REMOVE;
    }
    moat_log_info("gateway", "%s: draining before shutting down", signal_name);
    moat_cluster_drain_and_quit(gateway->cluster, gateway->loop);
    return G_SOURCE_CONTINUE;
}

static gboolean on_sigterm(gpointer data)
{
    return graceful_stop(data, "SIGTERM");
}

static gboolean on_sighup(gpointer data)
{
    return graceful_stop(data, "SIGHUP");
}

static int parse_arguments(int argc, char **argv, moat_config *config, bool *check_only,
                           char *error, size_t error_size)
{
    /* The config file comes first whatever its position, so that options
     * given on the command line override it. */
    const char *config_path = getenv("MOAT_CONFIG");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc) {
                snprintf(error, error_size, "--config needs a file name");
                return -1;
            }
            config_path = argv[++i];
        } else if (g_str_has_prefix(argv[i], "--config=")) {
            config_path = argv[i] + strlen("--config=");
        }
    }
    if (config_path && moat_config_load_file(config, config_path, error, error_size) != 0)
        return -1;
    if (moat_config_apply_environment(config, error, error_size) != 0)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--config") == 0) {
            i++;
            continue;
        }
        if (g_str_has_prefix(arg, "--config="))
            continue;
        if (strcmp(arg, "--check-config") == 0) {
            *check_only = true;
            continue;
        }
        if (!g_str_has_prefix(arg, "--")) {
            snprintf(error, error_size, "unexpected argument \"%s\" (see --help)", arg);
            return -1;
        }
        char *name = g_strdup(arg + 2);
        const char *value = NULL;
        char *equals = strchr(name, '=');
        if (equals) {
            *equals = '\0';
            value = equals + 1;
        } else if (!moat_config_option_known(name)) {
            snprintf(error, error_size, "unknown option --%s (see --help)", name);
            g_free(name);
            return -1;
        } else if (moat_config_option_is_bool(name) &&
                   (i + 1 >= argc || g_str_has_prefix(argv[i + 1], "--"))) {
            value = "true"; /* a flag alone */
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(error, error_size, "--%s needs a value (see --help)", name);
            g_free(name);
            return -1;
        }
        int status = moat_config_set_by_option(config, name, value, error, error_size);
        if (status == 1)
            snprintf(error, error_size, "unknown option --%s (see --help)", name);
        g_free(name);
        if (status != 0)
            return -1;
    }
    /* What the start would refuse (files it names, bind addresses, the
     * cluster's settings) is a configuration error (status 2), found by
     * --check-config too. */
    return moat_app_config_check(config, error, error_size);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_help();
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0) {
            moat_version_print();
            return 0;
        }
    }
    moat_gateway gateway;
    memset(&gateway, 0, sizeof gateway);
    moat_config_init(&gateway.config);
    char error[512] = "";
    bool check_only = false;
    if (parse_arguments(argc, argv, &gateway.config, &check_only, error, sizeof error) != 0) {
        fprintf(stderr, "moat: %s\n", error);
        moat_config_clear(&gateway.config);
        return 2;
    }
    if (check_only) {
        printf("configuration ok\n");
        moat_config_clear(&gateway.config);
        return 0;
    }
    raise_permitted_bpf();
    if (moat_gateway_start(&gateway, error, sizeof error) != 0) {
        fprintf(stderr, "moat: %s\n", error);
        moat_gateway_stop(&gateway);
        moat_config_clear(&gateway.config);
        return 1;
    }
    gateway.loop = g_main_loop_new(NULL, FALSE);
    g_unix_signal_add(SIGTERM, on_sigterm, &gateway);
    g_unix_signal_add(SIGHUP, on_sighup, &gateway);
    g_unix_signal_add(SIGINT, on_sigint, &gateway);
    g_main_loop_run(gateway.loop);
    moat_gateway_catch_stop_signals();
    moat_gateway_stop(&gateway);
    g_main_loop_unref(gateway.loop);
    moat_log_info("gateway", "stopped");
    moat_config_clear(&gateway.config);
    return 0;
}
