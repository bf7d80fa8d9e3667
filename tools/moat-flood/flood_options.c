/* moat-flood's command line: --help, parsing of every option against its
 * default and bounds, and the checks of options that only work together. */
#include "flood_options.h"

#include "sfu_source.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RATE     1000.0
#define MAX_RATE         10000000.0
#define MAX_DURATION_S   86400.0
#define DEFAULT_DURATION 10.0

enum {
    OPT_WHIP = 256,
    OPT_TOKEN,
    OPT_SESSIONS,
    OPT_MEDIA,
    OPT_SRTPPLUS,
    OPT_SRTP_PROFILES,
    OPT_SETUP_TIMEOUT,
    OPT_WHEP,
    OPT_JANUS,
    OPT_SUBSCRIBERS,
    OPT_VIDEO_PPS,
    OPT_TARGET,
    OPT_ATTACK,
    OPT_RATE,
    OPT_RAMP,
    OPT_RAMP_STEP,
    OPT_COUNT,
    OPT_BATCH,
    OPT_DURATION,
    OPT_DRAIN,
    OPT_ATTACK_AFTER,
    OPT_ATTACK_FOR,
    OPT_MIGRATE_AFTER,
    OPT_MIGRATE_TO,
    OPT_MIGRATE_RESTART,
    OPT_JITTER,
    OPT_FORGE_AHEAD,
    OPT_ALLOW_REMOTE,
    OPT_JSON,
    OPT_CSV,
    OPT_PLOT,
    OPT_INTERVAL,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"whip", required_argument, NULL, OPT_WHIP},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"sessions", required_argument, NULL, OPT_SESSIONS},
    {"media", required_argument, NULL, OPT_MEDIA},
    {"srtpplus", required_argument, NULL, OPT_SRTPPLUS},
    {"srtp-profiles", required_argument, NULL, OPT_SRTP_PROFILES},
    {"setup-timeout", required_argument, NULL, OPT_SETUP_TIMEOUT},
    {"whep", required_argument, NULL, OPT_WHEP},
    {"janus", required_argument, NULL, OPT_JANUS},
    {"subscribers", required_argument, NULL, OPT_SUBSCRIBERS},
    {"video-pps", required_argument, NULL, OPT_VIDEO_PPS},
    {"target", required_argument, NULL, OPT_TARGET},
    {"attack", required_argument, NULL, OPT_ATTACK},
    {"rate", required_argument, NULL, OPT_RATE},
    {"ramp", required_argument, NULL, OPT_RAMP},
    {"ramp-step", required_argument, NULL, OPT_RAMP_STEP},
    {"count", required_argument, NULL, OPT_COUNT},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"drain", required_argument, NULL, OPT_DRAIN},
    {"attack-after", required_argument, NULL, OPT_ATTACK_AFTER},
    {"attack-for", required_argument, NULL, OPT_ATTACK_FOR},
    {"migrate-after", required_argument, NULL, OPT_MIGRATE_AFTER},
    {"migrate-to", required_argument, NULL, OPT_MIGRATE_TO},
    {"migrate-restart", no_argument, NULL, OPT_MIGRATE_RESTART},
    {"jitter", required_argument, NULL, OPT_JITTER},
    {"forge-ahead", required_argument, NULL, OPT_FORGE_AHEAD},
    {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
    {"json", no_argument, NULL, OPT_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void print_help(void)
{
    printf("Usage: moat-flood [OPTION]...\n"
           "Load and flood generator for SRTP media gateways (Moat or any WHIP endpoint).\n"
           "\n"
           "Legitimate load:\n"
           "  --whip URL           WHIP endpoint to publish to (POST offer, DELETE at the end)\n"
           "  --token TOKEN        bearer token for the WHIP endpoint\n"
           "  --sessions N         WHIP sessions to hold (default 1 with --whip, at most %d);\n"
           "                       each is a controlling ICE agent, DTLS client and SRTP sender\n"
           "  --media KIND         g711 (PCMU, 20 ms, 172-byte packets), opus (48 kHz, 20 ms,\n"
           "                       variable size) or video (VP8-like, 30 fps, keyframe bursts\n"
           "                       every 3 s and on PLI); default g711\n"
           "  --srtpplus SCHEME    SRTP+ scheme offered in the SDP: prn, chain or none\n"
           "                       (default none); tags are added only if the answer accepts\n"
           "  --srtp-profiles LIST DTLS use_srtp profiles offered, colon-separated, e.g.\n"
           "                       SRTP_AES128_CM_SHA1_80 (default: GCM, then SHA1_80, SHA1_32)\n"
           "  --setup-timeout S    give up on sessions not connected after S seconds\n"
           "                       (default 15); no WHIP POST (nor a Retry-After wait) runs\n"
           "                       past S s from the setup's start, and sessions not yet\n"
           "                       POSTed then fail as \"setup timeout: not opened\"\n"
           "                       (fan-out: each peer's POST within S s of its own start)\n"
           "  With an echoing endpoint (Moat's /whip/echo) every session measures loss,\n"
           "  jitter and round-trip time from the packets that come back.\n"
           "\n"
           "Fan-out (an SFU):\n"
           "  --subscribers N      one publisher (--whip URL: audio and video sendonly,\n"
           "                       Opus 50 pps and VP8-shaped video 150 pps of ~1200 octets,\n"
           "                       about 1.5 Mbit/s, paced evenly) and N subscribers (at most\n"
           "                       %d) that decrypt what they receive and count sequence\n"
           "                       gaps per SSRC; the summary gives max and mean loss\n"
           "  --whep URL           where the subscribers play (WHEP: recvonly offers)\n"
           "  --video-pps N        the publisher's video packets a second, 1..%d (default\n"
           "                       %d): a rate past a real camera's makes the publisher a\n"
           "                       flood of authenticated media through the SFU\n"
           "  --janus URL          instead of --whip and --whep: Janus's HTTP API root\n"
           "                       (e.g. http://HOST:8088/janus); a videoroom is created, the\n"
           "                       publisher joins it with an offer, each subscriber answers\n"
           "                       Janus's offer (as an ICE-lite, DTLS-passive peer)\n"
           "\n"
           "Attacks:\n"
           "  --attack LIST        comma-separated classes, each KIND or KIND:PPS:\n",
           FLOOD_MAX_SESSIONS, FLOOD_MAX_SESSIONS, FLOOD_MAX_VIDEO_PPS, SFU_VIDEO_PPS);
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        printf("                       %c %-16s %s\n",
               attack_kind_needs_session((attack_kind)k) ? '*' : ' ',
               attack_kind_name((attack_kind)k), attack_kind_description((attack_kind)k));
    printf("                       (* needs --whip: sent on a live session's 5-tuple)\n"
           "  --target HOST:PORT   where session-less classes go (default: the first\n"
           "                       session's media address)\n"
           "  --rate PPS           packets per second of each class (default %.0f)\n"
           "  --ramp T             every T seconds, raise each class's rate by --ramp-step\n"
           "  --ramp-step PPS      rate added at every ramp step (default: --rate)\n"
           "  --count N            stop a class after N packets (default: no limit)\n"
           "  --batch N            datagrams per sendmmsg call, 1..%d (default 32)\n"
           "\n"
           "Bounds and safety:\n"
           "  --duration S         run for S seconds after setup (default %.0f, at most %.0f);\n"
           "                       the run also ends when every class has sent --count packets\n"
           "  --drain S            wait S seconds for echoes after sending stops (default 0.5)\n"
           "  --attack-after S     start the attacks S seconds after the media (default 0)\n"
           "  --attack-for S       stop the attacks after S seconds; the sessions go on\n"
           "                       until --duration (default: attack until the end)\n"
           "  --migrate-to ADDR    address migration: every session moves its socket to the\n"
           "                       local address ADDR (--migrate-after seconds after the\n"
           "                       media starts, default 1) and re-nominates its pair from\n"
           "                       there, keeping DTLS and SRTP (a network handover);\n"
           "                       sessions use only candidates of ADDR's address family\n"
           "  --migrate-after S    when --migrate-to moves the sessions\n"
           "  --migrate-restart    move through an ICE restart (WHIP PATCH with new\n"
           "                       credentials) rather than re-nominating the pair\n"
           "  --jitter PCT         send legitimate frames up to PCT %% of their interval\n"
           "                       early or late, at random (default 0)\n"
           "  --forge-ahead MIN[:SPREAD]\n"
           "                       forged SRTP uses sequence numbers MIN..MIN+SPREAD-1 ahead\n"
           "                       of the live stream (default 100:1000; e.g. 1:30 lands\n"
           "                       where SRTP+ chain tags are already learned)\n"
           "  --allow-remote       send to addresses outside loopback and private networks\n"
           "                       (refused by default)\n"
           "\n"
           "Output:\n"
           "  (stderr)             a live progress line: packets/s per class, loss, RTT\n"
           "  --quiet              no progress line\n"
           "  --json               print a JSON summary on stdout (\"sent\": packets per class,\n"
           "                       \"sessions\": each session's loss, jitter_ms, rtt_ms); the\n"
           "                       human summary then goes to stderr\n"
           "  --csv FILE           time series, one row per --interval\n"
           "  --plot FILE.png      legitimate loss and RTT against attack rate\n"
           "  --interval S         sampling interval of the progress line, CSV and plot\n"
           "                       (default 1)\n"
           "  --help               this text\n"
           "  --version            version\n"
           "\n"
           "Exit status: 0 done, 1 the run failed (no session connected, I/O error),\n"
           "2 bad usage or a refused target.\n",
           DEFAULT_RATE, FLOOD_MAX_BATCH, DEFAULT_DURATION, MAX_DURATION_S);
}

static bool fail(char *error, size_t size, const char *format, const char *value)
{
    snprintf(error, size, format, value);
    return false;
}

static bool parse_double(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value < min || value > max)
        return false;
    *out = value;
    return true;
}

static bool parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (text[0] == '-')
        return false;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
        return false;
    *out = value;
    return true;
}

/* "forged-own,replay:2000": rates of classes without ":PPS" are filled in
 * from --rate after every option is read. */
static bool parse_attacks(const char *list, flood_options *o, double explicit_rate[], char *error,
                          size_t size)
{
    char *copy = strdup(list);
    if (copy == NULL)
        return fail(error, size, "%s", "out of memory");
    bool ok = true;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (colon != NULL)
            *colon = '\0';
        attack_kind kind;
        if (!attack_kind_from_name(item, &kind)) {
            ok = fail(error, size, "unknown attack class \"%s\" (see --help)", item);
            break;
        }
        o->attack[kind] = true;
        o->any_attack = true;
        if (colon != NULL && !parse_double(colon + 1, 1, MAX_RATE, &explicit_rate[kind]))
            ok = fail(error, size, "bad rate in --attack %s (1..10000000 pps)", colon + 1);
    }
    free(copy);
    if (ok && !o->any_attack)
        ok = fail(error, size, "%s", "--attack needs at least one class");
    return ok;
}

static bool parse_choice(const char *value, const char *const names[], int n, int *out)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

static const char *const media_names[] = {"g711", "opus", "video"};
static const char *const srtpplus_names[] = {"none", "prn", "chain"};

const char *flood_media_name(flood_media media)
{
    return media_names[media];
}

const char *flood_srtpplus_name(flood_srtpplus srtpplus)
{
    return srtpplus_names[srtpplus];
}

static void set_defaults(flood_options *o)
{
    memset(o, 0, sizeof *o);
    o->media = FLOOD_MEDIA_G711;
    o->srtpplus = FLOOD_SRTPPLUS_NONE;
    o->setup_timeout_s = 15;
    o->migrate_after_s = 1;
    o->batch = 32;
    o->duration_s = DEFAULT_DURATION;
    o->drain_s = 0.5;
    o->interval_s = 1;
    o->video_pps = SFU_VIDEO_PPS;
}

/* A fan-out run: a publisher and subscribers, nothing else. */
static bool check_fan_out(const flood_options *o, bool sessions_given, char *error, size_t size)
{
    if (o->subscribers == 0)
        return o->whep_url == NULL && o->janus_url == NULL && o->video_pps == SFU_VIDEO_PPS
                   ? true
                   : fail(error, size, "%s",
                          "--whep, --janus and --video-pps need --subscribers N");
    if (o->janus_url == NULL && (o->whip_url == NULL || o->whep_url == NULL))
        return fail(error, size, "%s",
                    "--subscribers needs --whip URL and --whep URL, or --janus URL");
    if (o->janus_url != NULL && (o->whip_url != NULL || o->whep_url != NULL))
        return fail(error, size, "%s", "--janus replaces --whip and --whep");
    if (o->any_attack || sessions_given || o->migrate_to != NULL)
        return fail(error, size, "%s",
                    "--subscribers runs alone: no --attack, --sessions or --migrate-to");
    return true;
}

/* Checks what single options cannot: combinations. */
static bool check_combinations(flood_options *o, bool sessions_given, double rate,
                               const double explicit_rate[], char *error, size_t size)
{
    if (!check_fan_out(o, sessions_given, error, size))
        return false;
    if (o->subscribers > 0)
        return true;
    if (o->whip_url == NULL && sessions_given)
        return fail(error, size, "%s", "--sessions needs --whip");
    if (o->whip_url != NULL && !sessions_given)
        o->sessions = 1;
    if (o->whip_url == NULL && !o->any_attack)
        return fail(error, size, "%s", "nothing to do: give --whip URL, --attack LIST or both");
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        if (!o->attack[k])
            continue;
        if (attack_kind_needs_session((attack_kind)k) && o->whip_url == NULL)
            return fail(error, size, "attack class %s sends on a live session: it needs --whip",
                        attack_kind_name((attack_kind)k));
        o->class_rate[k] = explicit_rate[k] > 0 ? explicit_rate[k] : rate;
    }
    if (o->any_attack && o->whip_url == NULL && o->target == NULL)
        return fail(error, size, "%s", "session-less attacks need --target HOST:PORT or --whip");
    if (o->ramp_s > 0 && o->ramp_step == 0)
        o->ramp_step = rate;
    return true;
}

flood_options_result flood_options_parse(int argc, char **argv, flood_options *out, char *error,
                                         size_t size)
{
    flood_options o;
    set_defaults(&o);
    double rate = DEFAULT_RATE;
    double explicit_rate[ATTACK_KIND_COUNT] = {0};
    bool sessions_given = false;
    uint64_t number;
    int choice;
    int c;
    bool ok = true;

    optind = 1;
    opterr = 0;
    while (ok && (c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_WHIP:
            o.whip_url = optarg;
            break;
        case OPT_TOKEN:
            o.token = optarg;
            break;
        case OPT_SESSIONS:
            ok = parse_u64(optarg, 1, FLOOD_MAX_SESSIONS, &number) ||
                 fail(error, size, "bad --sessions %s (1..1000)", optarg);
            o.sessions = (unsigned)number;
            sessions_given = true;
            break;
        case OPT_MEDIA:
            ok = parse_choice(optarg, media_names, 3, &choice) ||
                 fail(error, size, "bad --media %s (g711, opus or video)", optarg);
            o.media = (flood_media)choice;
            break;
        case OPT_SRTPPLUS:
            ok = parse_choice(optarg, srtpplus_names, 3, &choice) ||
                 fail(error, size, "bad --srtpplus %s (prn, chain or none)", optarg);
            o.srtpplus = (flood_srtpplus)choice;
            break;
        case OPT_SRTP_PROFILES:
            o.srtp_profiles = optarg;
            break;
        case OPT_WHEP:
            o.whep_url = optarg;
            break;
        case OPT_JANUS:
            o.janus_url = optarg;
            break;
        case OPT_SUBSCRIBERS:
            ok = parse_u64(optarg, 1, FLOOD_MAX_SESSIONS, &number) ||
                 fail(error, size, "bad --subscribers %s (1..1000)", optarg);
            o.subscribers = (unsigned)number;
            break;
        case OPT_VIDEO_PPS:
            ok = parse_u64(optarg, 1, FLOOD_MAX_VIDEO_PPS, &number) ||
                 fail(error, size, "bad --video-pps %s (1..100000)", optarg);
            o.video_pps = (unsigned)number;
            break;
        case OPT_SETUP_TIMEOUT:
            ok = parse_double(optarg, 0.1, 600, &o.setup_timeout_s) ||
                 fail(error, size, "bad --setup-timeout %s (0.1..600 s)", optarg);
            break;
        case OPT_TARGET:
            o.target = optarg;
            break;
        case OPT_ATTACK:
            ok = parse_attacks(optarg, &o, explicit_rate, error, size);
            break;
        case OPT_RATE:
            ok = parse_double(optarg, 1, MAX_RATE, &rate) ||
                 fail(error, size, "bad --rate %s (1..10000000 pps)", optarg);
            break;
        case OPT_RAMP:
            ok = parse_double(optarg, 0.1, MAX_DURATION_S, &o.ramp_s) ||
                 fail(error, size, "bad --ramp %s (seconds, at least 0.1)", optarg);
            break;
        case OPT_RAMP_STEP:
            ok = parse_double(optarg, 1, MAX_RATE, &o.ramp_step) ||
                 fail(error, size, "bad --ramp-step %s (1..10000000 pps)", optarg);
            break;
        case OPT_COUNT:
            ok = parse_u64(optarg, 1, UINT64_MAX / 2, &o.count) ||
                 fail(error, size, "bad --count %s (a positive number of packets)", optarg);
            break;
        case OPT_BATCH:
            ok = parse_u64(optarg, 1, FLOOD_MAX_BATCH, &number) ||
                 fail(error, size, "bad --batch %s (1..64)", optarg);
            o.batch = (unsigned)number;
            break;
        case OPT_DURATION:
            ok = parse_double(optarg, 0.1, MAX_DURATION_S, &o.duration_s) ||
                 fail(error, size, "bad --duration %s (0.1..86400 s)", optarg);
            break;
        case OPT_DRAIN:
            ok = parse_double(optarg, 0, 60, &o.drain_s) ||
                 fail(error, size, "bad --drain %s (0..60 s)", optarg);
            break;
        case OPT_ATTACK_AFTER:
            ok = parse_double(optarg, 0, MAX_DURATION_S, &o.attack_after_s) ||
                 fail(error, size, "bad --attack-after %s (seconds)", optarg);
            break;
        case OPT_MIGRATE_AFTER:
            ok = parse_double(optarg, 0, MAX_DURATION_S, &o.migrate_after_s) ||
                 fail(error, size, "bad --migrate-after %s (seconds)", optarg);
            break;
        case OPT_MIGRATE_TO:
            o.migrate_to = optarg;
            break;
        case OPT_MIGRATE_RESTART:
            o.migrate_restart = true;
            break;
        case OPT_ATTACK_FOR:
            ok = parse_double(optarg, 0.1, MAX_DURATION_S, &o.attack_for_s) ||
                 fail(error, size, "bad --attack-for %s (seconds, at least 0.1)", optarg);
            break;
        case OPT_JITTER:
            ok = parse_double(optarg, 0, 50, &o.jitter) ||
                 fail(error, size, "bad --jitter %s (0..50 %%)", optarg);
            o.jitter /= 100.0;
            break;
        case OPT_FORGE_AHEAD: {
            unsigned ahead = 0, spread = 0;
            int fields = sscanf(optarg, "%u:%u", &ahead, &spread);
            ok = (fields == 1 || fields == 2) && ahead >= 1 && ahead <= 30000 &&
                 (fields == 1 || (spread >= 1 && spread <= 30000));
            if (ok) {
                o.forge_ahead = ahead;
                o.forge_spread = fields == 2 ? spread : 1000;
            } else {
                fail(error, size, "bad --forge-ahead %s (MIN[:SPREAD], 1..30000)", optarg);
            }
            break;
        }
        case OPT_ALLOW_REMOTE:
            o.allow_remote = true;
            break;
        case OPT_JSON:
            o.json = true;
            break;
        case OPT_CSV:
            o.csv_path = optarg;
            break;
        case OPT_PLOT:
            o.plot_path = optarg;
            break;
        case OPT_INTERVAL:
            ok = parse_double(optarg, 0.05, 3600, &o.interval_s) ||
                 fail(error, size, "bad --interval %s (0.05..3600 s)", optarg);
            break;
        case OPT_QUIET:
            o.quiet = true;
            break;
        case OPT_HELP:
            print_help();
            return FLOOD_OPTIONS_EXIT;
        case OPT_VERSION:
            printf("moat-flood %s\n", MOAT_VERSION);
            return FLOOD_OPTIONS_EXIT;
        default:
            ok =
                fail(error, size, "unknown or incomplete option %s (see --help)", argv[optind - 1]);
            break;
        }
    }
    if (!ok)
        return FLOOD_OPTIONS_ERROR;
    if (optind < argc) {
        fail(error, size, "unexpected argument %s (see --help)", argv[optind]);
        return FLOOD_OPTIONS_ERROR;
    }
    if (!check_combinations(&o, sessions_given, rate, explicit_rate, error, size))
        return FLOOD_OPTIONS_ERROR;
    *out = o;
    return FLOOD_OPTIONS_RUN;
}
