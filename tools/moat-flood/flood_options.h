/* moat-flood's command line: every option, its default and its bounds. */
#ifndef FLOOD_OPTIONS_H
#define FLOOD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attack_kind.h"

typedef enum { FLOOD_MEDIA_G711, FLOOD_MEDIA_OPUS, FLOOD_MEDIA_VIDEO } flood_media;
typedef enum { FLOOD_SRTPPLUS_NONE, FLOOD_SRTPPLUS_PRN, FLOOD_SRTPPLUS_CHAIN } flood_srtpplus;

#define FLOOD_MAX_SESSIONS 1000
#define FLOOD_MAX_BATCH    64
/* --video-pps: at most one video packet every 10 µs. */
#define FLOOD_MAX_VIDEO_PPS 100000

typedef struct {
    /* Legitimate load */
    const char *whip_url; /* NULL: no sessions */
    const char *token;    /* bearer token, or NULL */
    unsigned sessions;
    flood_media media;
    flood_srtpplus srtpplus;
    const char *srtp_profiles; /* use_srtp list, NULL: the DTLS module's default */
    double setup_timeout_s;

    /* Fan-out (an SFU): one publisher (--whip or Janus) and subscribers */
    const char *whep_url;  /* WHEP endpoint subscribers play from */
    const char *janus_url; /* Janus HTTP API root: videoroom instead of WHIP/WHEP */
    unsigned subscribers;  /* 0: no fan-out run */
    unsigned video_pps;    /* the publisher's video packets a second (SFU_VIDEO_PPS) */

    /* Attacks */
    const char *target; /* HOST:PORT for session-less classes, or NULL */
    bool attack[ATTACK_KIND_COUNT];
    double class_rate[ATTACK_KIND_COUNT]; /* pps, from --rate or KIND:PPS */
    bool any_attack;
    double ramp_s;         /* 0: no ramp */
    double ramp_step;      /* pps added per class at every ramp step */
    uint64_t count;        /* per class, 0: unbounded */
    unsigned batch;        /* sendmmsg batch */
    double attack_after_s; /* attacks start this long after the media */
    double attack_for_s;   /* and last this long; 0: until the end */
    double jitter;         /* legitimate frames: send time jitter, fraction of the interval */
    uint32_t forge_ahead;  /* forged sequence numbers: this far ahead of the live stream */
    uint32_t forge_spread; /* ... spread over this many numbers */

    /* Address migration (a network handover) */
    double migrate_after_s; /* this long after the media starts */
    const char *migrate_to; /* to this local address; NULL: no migration */
    bool migrate_restart;   /* through an ICE restart (WHIP PATCH) */

    /* Bounds and safety */
    double duration_s;
    double drain_s;
    bool allow_remote;

    /* Output */
    bool json;
    const char *csv_path;
    const char *plot_path;
    double interval_s;
    bool quiet;
} flood_options;

typedef enum {
    FLOOD_OPTIONS_RUN,   /* parsed; run the tool */
    FLOOD_OPTIONS_EXIT,  /* --help or --version was printed; exit 0 */
    FLOOD_OPTIONS_ERROR, /* message in error; exit 2 */
} flood_options_result;

flood_options_result flood_options_parse(int argc, char **argv, flood_options *out, char *error,
                                         size_t error_size);

const char *flood_media_name(flood_media media);
const char *flood_srtpplus_name(flood_srtpplus srtpplus);

#endif
