/* One SRTP session (RFC 3711) on libsrtp: an outbound context keyed with our
 * DTLS-SRTP key and an inbound one with the peer's, protect and unprotect of
 * RTP and RTCP, the bound on each context's streams (srtp_stream_table.h)
 * and the status mapping (one media worker only). */
#include "srtp_session.h"
#include "srtp_stream_table.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <openssl/crypto.h>
#include <srtp2/srtp.h>

/* RFC 3711 §4.2 and RFC 5764 §4.1.2: AES-CM profiles carry an 80- or 32-bit
 * HMAC tag on SRTP, and always the 80-bit one on SRTCP. RFC 7714: AES-GCM
 * carries a 128-bit tag on both. SRTCP adds the 32-bit E||index word. */
#define SRTCP_INDEX_LENGTH 4

#define REPLAY_WINDOW 1024

/* [0] outbound, [1] inbound */
typedef struct {
    moat_srtp_position at;          /* where the stream was (a resumed stream's, until it goes) */
    bool resuming;                  /* `at` names a stream another process ran */
    moat_srtp_position now;         /* the last packet through */
    moat_srtp_stream_table streams; /* the SSRCs libsrtp holds a stream for */
    uint64_t evicted;               /* streams removed to make room */
} direction_state;

struct moat_srtp_session {
    srtp_t outbound;
    srtp_t inbound;
    size_t rtp_overhead;
    size_t rtcp_overhead;
    direction_state directions[2];
    bool track;                 /* keep `now` (moat_srtp_session_track_positions) */
    uint64_t *eviction_counter; /* moat_srtp_session_count_evictions; NULL none */
};

static gpointer library_init_once(gpointer unused)
{
    return GINT_TO_POINTER(srtp_init() == srtp_err_status_ok ? 1 : -1);
}

int moat_srtp_library_init(void)
{
    static GOnce once = G_ONCE_INIT;
    g_once(&once, library_init_once, NULL);
    return GPOINTER_TO_INT(once.retval) == 1 ? MOAT_SRTP_OK : MOAT_SRTP_ERR_OTHER;
}

const char *moat_srtp_library_version(void)
{
    return srtp_get_version_string();
}

/* Sets both crypto policies for a profile and returns the tag length on SRTP
 * and SRTCP, or -1 for a profile this wrapper does not know. */
static int set_crypto_policies(moat_srtp_profile profile, srtp_policy_t *policy, size_t *rtp_tag,
                               size_t *rtcp_tag)
{
    switch (profile) {
    case MOAT_SRTP_PROFILE_AES128_CM_SHA1_80:
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtcp);
        *rtp_tag = 10;
        *rtcp_tag = 10;
        return 0;
    case MOAT_SRTP_PROFILE_AES128_CM_SHA1_32:
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy->rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtcp);
        *rtp_tag = 4;
        *rtcp_tag = 10;
        return 0;
    case MOAT_SRTP_PROFILE_AEAD_AES_128_GCM:
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy->rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy->rtcp);
        *rtp_tag = 16;
        *rtcp_tag = 16;
        return 0;
    }
    return -1;
}

/* The policy both directions share: the profile's crypto, the replay
 * window, repeated indexes allowed. 0, or -1 with error. */
static int base_policy(const moat_srtp_keying *keys, srtp_policy_t *policy, size_t *rtp_tag,
                       size_t *rtcp_tag, char *error, size_t error_size)
{
    size_t key_length = moat_srtp_profile_key_length(keys->profile);
    size_t salt_length = moat_srtp_profile_salt_length(keys->profile);
    memset(policy, 0, sizeof *policy);
    if (key_length == 0 || set_crypto_policies(keys->profile, policy, rtp_tag, rtcp_tag) != 0) {
        snprintf(error, error_size, "unsupported SRTP profile %d", (int)keys->profile);
        return -1;
    }
    if (keys->key_length != key_length || keys->salt_length != salt_length) {
        snprintf(error, error_size, "%s needs a %zu-byte key and %zu-byte salt, got %zu and %zu",
                 moat_srtp_profile_name(keys->profile), key_length, salt_length, keys->key_length,
                 keys->salt_length);
        return -1;
    }
    policy->window_size = REPLAY_WINDOW;
    /* A NACK answer re-sends a packet with its original sequence number. */
    policy->allow_repeat_tx = 1;
    return 0;
}

/* Keys `policy` with one direction's master key (our key outbound, the
 * peer's inbound) and makes a context of it, or (into != NULL) adds it to
 * that context as one more stream. */
static srtp_err_status_t keyed(srtp_policy_t policy, const moat_srtp_keying *keys, bool inbound,
                               srtp_t into, srtp_t *created)
{
    /* libsrtp wants the master key immediately followed by the master salt. */
    uint8_t master[MOAT_SRTP_MAX_KEY_LENGTH + MOAT_SRTP_MAX_SALT_LENGTH];
    memcpy(master, inbound ? keys->remote_key : keys->local_key, keys->key_length);
    memcpy(master + keys->key_length, inbound ? keys->remote_salt : keys->local_salt,
           keys->salt_length);
    policy.key = master;
    srtp_err_status_t status =
        into ? srtp_add_stream(into, &policy) : srtp_create(created, &policy);
    /* libsrtp has copied and expanded the key; no copy of it stays here. */
    OPENSSL_cleanse(master, sizeof master);
    return status;
}

static srtp_t create_context(const srtp_policy_t *base, const moat_srtp_keying *keys, bool inbound,
                             char *error, size_t error_size)
{
    srtp_policy_t policy = *base;
    policy.ssrc.type = inbound ? ssrc_any_inbound : ssrc_any_outbound;
    srtp_t ctx = NULL;
    srtp_err_status_t status = keyed(policy, keys, inbound, NULL, &ctx);
    if (status != srtp_err_status_ok) {
        snprintf(error, error_size, "srtp_create (%s) failed: libsrtp error %d",
                 inbound ? "inbound" : "outbound", (int)status);
        return NULL;
    }
    return ctx;
}

moat_srtp_session *moat_srtp_session_new(const moat_srtp_keying *keys, char *error,
                                         size_t error_size)
{
    if (keys == NULL) {
        snprintf(error, error_size, "no SRTP keying");
        return NULL;
    }
    srtp_policy_t policy;
    size_t rtp_tag = 0, rtcp_tag = 0;
    if (base_policy(keys, &policy, &rtp_tag, &rtcp_tag, error, error_size) != 0)
        return NULL;
    if (moat_srtp_library_init() != MOAT_SRTP_OK) {
        snprintf(error, error_size, "srtp_init failed");
        return NULL;
    }

    moat_srtp_session *s = g_new0(moat_srtp_session, 1);
    s->rtp_overhead = rtp_tag;
    s->rtcp_overhead = rtcp_tag + SRTCP_INDEX_LENGTH;
    s->outbound = create_context(&policy, keys, false, error, error_size);
    if (s->outbound == NULL) {
        moat_srtp_session_free(s);
        return NULL;
    }
    s->inbound = create_context(&policy, keys, true, error, error_size);
    if (s->inbound == NULL) {
        moat_srtp_session_free(s);
        return NULL;
    }
    return s;
}

void moat_srtp_session_free(moat_srtp_session *s)
{
    if (s == NULL)
        return;
    if (s->outbound)
        srtp_dealloc(s->outbound);
    if (s->inbound)
        srtp_dealloc(s->inbound);
    g_free(s);
}

size_t moat_srtp_session_rtp_overhead(const moat_srtp_session *s)
{
    return s->rtp_overhead;
}

size_t moat_srtp_session_rtcp_overhead(const moat_srtp_session *s)
{
    return s->rtcp_overhead;
}

static int map_status(srtp_err_status_t status)
{
    switch (status) {
    case srtp_err_status_ok:
        return MOAT_SRTP_OK;
    case srtp_err_status_auth_fail:
        return MOAT_SRTP_ERR_AUTH;
    case srtp_err_status_replay_fail:
    case srtp_err_status_replay_old:
        return MOAT_SRTP_ERR_REPLAY;
    default:
        return MOAT_SRTP_ERR_OTHER;
    }
}

typedef srtp_err_status_t (*srtp_transform)(srtp_t, void *, int *);

/* libsrtp writes exactly the tag (and SRTCP index) past the packet when no
 * MKI is used, so the room checked here is all it needs. */
static int protect(srtp_t ctx, srtp_transform transform, size_t overhead, uint8_t *packet,
                   size_t *length, size_t capacity)
{
    if (packet == NULL || length == NULL || *length > (size_t)INT_MAX - overhead)
        return MOAT_SRTP_ERR_INVALID;
    if (capacity < *length || capacity - *length < overhead)
        return MOAT_SRTP_ERR_NOSPACE;
    int len = (int)*length;
    int rc = map_status(transform(ctx, packet, &len));
    if (rc == MOAT_SRTP_OK)
        *length = (size_t)len;
    return rc;
}

static int unprotect(srtp_t ctx, srtp_transform transform, uint8_t *packet, size_t *length)
{
    if (packet == NULL || length == NULL || *length > (size_t)INT_MAX)
        return MOAT_SRTP_ERR_OTHER;
    int len = (int)*length;
    int rc = map_status(transform(ctx, packet, &len));
    if (rc == MOAT_SRTP_OK)
        *length = (size_t)len;
    return rc;
}

/* RTP's SSRC and sequence number (the header was checked by the caller's
 * parse; only the fixed 12 bytes are read here). */
static bool rtp_ids(const uint8_t *packet, size_t length, uint32_t *ssrc, uint16_t *seq)
{
    if (packet == NULL || length < 12)
        return false;
    *seq = (uint16_t)(packet[2] << 8 | packet[3]);
    *ssrc = (uint32_t)packet[8] << 24 | (uint32_t)packet[9] << 16 | (uint32_t)packet[10] << 8 |
            packet[11];
    return true;
}

/* The rollover `seq` implies against a stream that stood at `at`. */
static uint32_t implied_roc(moat_srtp_position at, uint16_t seq)
{
    if (seq < at.seq && at.seq - seq > 0x8000)
        return at.roc + 1; /* wrapped since */
    if (seq > at.seq && seq - at.seq > 0x8000 && at.roc > 0)
        return at.roc - 1; /* from before the last wrap */
    return at.roc;
}

/* Before a packet of a resumed stream: libsrtp takes it at the implied
 * rollover (srtp_set_stream_roc: its next packet's index). */
static void before(srtp_t ctx, direction_state *d, const uint8_t *packet, size_t length)
{
    uint32_t ssrc;
    uint16_t seq;
    if (!rtp_ids(packet, length, &ssrc, &seq) || ssrc != d->at.ssrc)
        return;
    /* Every packet until one goes through (0 too: "none pending", which a
     * stream that never had a packet takes as rollover 0): a forged packet
     * before the first real one leaves nothing behind. */
    srtp_set_stream_roc(ctx, ssrc, implied_roc(d->at, seq));
}

/* After a packet went through: where its stream stands now. */
static void after(direction_state *d, const uint8_t *packet, size_t length)
{
    uint32_t ssrc;
    uint16_t seq;
    if (!rtp_ids(packet, length, &ssrc, &seq))
        return;
    if (d->resuming && ssrc == d->at.ssrc) {
        d->now = (moat_srtp_position){ssrc, implied_roc(d->at, seq), seq, true};
        d->resuming = false; /* libsrtp carries the index on from here */
        return;
    }
    if (!d->now.valid || d->now.ssrc != ssrc) {
        d->now = (moat_srtp_position){ssrc, 0, seq, true};
        return;
    }
    if (seq < d->now.seq && d->now.seq - seq > 0x8000)
        d->now.roc++;
    else if (seq > d->now.seq && seq - d->now.seq > 0x8000)
        return; /* a late packet from before the wrap */
    if (seq > d->now.seq || d->now.seq - seq > 0x8000)
        d->now.seq = seq;
}

/* The SSRC libsrtp files a packet under: RTP's (bytes 8-11) or the SRTCP
 * sender's (bytes 4-7); false when too short for libsrtp to look one up. */
static bool stream_ssrc(const uint8_t *packet, const size_t *length, bool rtcp, uint32_t *ssrc)
{
    size_t at = rtcp ? 4 : 8;
    if (packet == NULL || length == NULL || *length < at + 4)
        return false;
    *ssrc = (uint32_t)packet[at] << 24 | (uint32_t)packet[at + 1] << 16 |
            (uint32_t)packet[at + 2] << 8 | packet[at + 3];
    return true;
}

static bool libsrtp_holds(srtp_t ctx, uint32_t ssrc)
{
    uint32_t roc;
    return srtp_get_stream_roc(ctx, ssrc, &roc) == srtp_err_status_ok;
}

static void count_eviction(moat_srtp_session *s, direction_state *d)
{
    d->evicted++;
    /* The worker's counter: single writer, relaxed (engine/counters.h). */
    if (s->eviction_counter)
        __atomic_store_n(s->eviction_counter,
                         __atomic_load_n(s->eviction_counter, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
}

/* After libsrtp took a packet of `ssrc` (`ok`: it went through): the
 * direction's table follows the streams libsrtp holds. A new SSRC's stream,
 * which this very packet made from the template, takes the slot of the least
 * recently used one (never a resumed stream still waiting for its first
 * packet), whose libsrtp stream is removed: between packets a context holds
 * at most MOAT_SRTP_MAX_STREAMS. Inbound, libsrtp makes a stream only for a
 * packet that authenticated, so a forgery neither adds nor evicts one. */
static void note_stream(moat_srtp_session *s, bool inbound, uint32_t ssrc, bool ok)
{
    direction_state *d = &s->directions[inbound ? 1 : 0];
    srtp_t ctx = inbound ? s->inbound : s->outbound;
    if (ok ? moat_srtp_stream_table_touch(&d->streams, ssrc)
           : moat_srtp_stream_table_holds(&d->streams, ssrc) || !libsrtp_holds(ctx, ssrc))
        return;
    uint32_t evicted;
    if (!moat_srtp_stream_table_add(&d->streams, ssrc, d->resuming ? &d->at.ssrc : NULL, &evicted))
        return;
    /* libsrtp files streams under the SSRC in network order. */
    if (srtp_remove_stream(ctx, htonl(evicted)) == srtp_err_status_ok)
        count_eviction(s, d);
}

int moat_srtp_protect_rtp(moat_srtp_session *s, uint8_t *packet, size_t *length, size_t capacity)
{
    direction_state *d = &s->directions[0];
    uint32_t ssrc;
    bool has_ssrc = stream_ssrc(packet, length, false, &ssrc);
    if (d->resuming && length)
        before(s->outbound, d, packet, *length);
    int rc = protect(s->outbound, srtp_protect, s->rtp_overhead, packet, length, capacity);
    if (has_ssrc)
        note_stream(s, false, ssrc, rc == MOAT_SRTP_OK);
    if (rc == MOAT_SRTP_OK && (s->track || d->resuming))
        after(d, packet, *length);
    return rc;
}

int moat_srtp_protect_rtcp(moat_srtp_session *s, uint8_t *packet, size_t *length, size_t capacity)
{
    uint32_t ssrc;
    bool has_ssrc = stream_ssrc(packet, length, true, &ssrc);
    int rc = protect(s->outbound, srtp_protect_rtcp, s->rtcp_overhead, packet, length, capacity);
    if (has_ssrc)
        note_stream(s, false, ssrc, rc == MOAT_SRTP_OK);
    return rc;
}

int moat_srtp_unprotect_rtp(moat_srtp_session *s, uint8_t *packet, size_t *length)
{
    direction_state *d = &s->directions[1];
    uint32_t ssrc;
    bool has_ssrc = stream_ssrc(packet, length, false, &ssrc);
    if (d->resuming && length)
        before(s->inbound, d, packet, *length);
    int rc = unprotect(s->inbound, srtp_unprotect, packet, length);
    if (has_ssrc)
        note_stream(s, true, ssrc, rc == MOAT_SRTP_OK);
    if (rc == MOAT_SRTP_OK && (s->track || d->resuming))
        after(d, packet, *length);
    return rc;
}

int moat_srtp_unprotect_rtcp(moat_srtp_session *s, uint8_t *packet, size_t *length)
{
    uint32_t ssrc;
    bool has_ssrc = stream_ssrc(packet, length, true, &ssrc);
    int rc = unprotect(s->inbound, srtp_unprotect_rtcp, packet, length);
    if (has_ssrc)
        note_stream(s, true, ssrc, rc == MOAT_SRTP_OK);
    return rc;
}

void moat_srtp_session_track_positions(moat_srtp_session *s)
{
    s->track = true;
}

moat_srtp_position moat_srtp_session_position(const moat_srtp_session *s, bool inbound)
{
    return s->directions[inbound ? 1 : 0].now;
}

void moat_srtp_session_count_evictions(moat_srtp_session *s, uint64_t *counter)
{
    s->eviction_counter = counter;
}

size_t moat_srtp_session_streams(const moat_srtp_session *s, bool inbound)
{
    return moat_srtp_stream_table_count(&s->directions[inbound ? 1 : 0].streams);
}

uint64_t moat_srtp_session_evictions(const moat_srtp_session *s, bool inbound)
{
    return s->directions[inbound ? 1 : 0].evicted;
}

int moat_srtp_session_resume(moat_srtp_session *s, const moat_srtp_keying *keys, bool inbound,
                             moat_srtp_position at)
{
    if (!at.valid || at.roc == 0)
        return MOAT_SRTP_OK; /* a fresh stream's rollover is right already */
    srtp_policy_t policy;
    size_t rtp_tag = 0, rtcp_tag = 0;
    char ignored[160];
    if (base_policy(keys, &policy, &rtp_tag, &rtcp_tag, ignored, sizeof ignored) != 0)
        return MOAT_SRTP_ERR_OTHER;
    policy.ssrc.type = ssrc_specific;
    policy.ssrc.value = at.ssrc;
    /* The stream must exist for its rollover to be set before its first
     * packet (a template's streams appear only with one). */
    if (keyed(policy, keys, inbound, inbound ? s->inbound : s->outbound, NULL) !=
        srtp_err_status_ok)
        return MOAT_SRTP_ERR_OTHER;
    direction_state *d = &s->directions[inbound ? 1 : 0];
    d->at = at;
    d->resuming = true;
    /* Counted like any stream, and kept until its first packet goes through. */
    note_stream(s, inbound, at.ssrc, true);
    return MOAT_SRTP_OK;
}
