/* Session lifecycle, consent and the DTLS glue (ICE-lite checks and
 * restarts: session_ice.c). */
#include "session/session_internal.h"

#include <inttypes.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A session whose DTLS never completes is closed after this long. */
#define SESSION_SETUP_TIMEOUT_US (30ull * 1000000ull)
/* How long a graceful end waits for the peer to acknowledge more of its
 * queued data: the wait starts again whenever it does (a slow peer that
 * keeps acknowledging gets everything), up to SESSION_DRAIN_MAX_US in all. */
#define SESSION_DRAIN_TIMEOUT_US (5ull * 1000000ull)
#define SESSION_DRAIN_MAX_US     (60ull * 1000000ull)
/* How often a connected session offers its DTLS record buffers back
 * (moat_dtls_transport_trim: only when no datagram came or went since). */
#define DTLS_TRIM_INTERVAL_US (1000000ull)
/* Authenticated STUN checks per second (and burst) a session takes
 * (session_ice.c; forged ones are refused by their MESSAGE-INTEGRITY
 * first and take nothing). A full agent paces new checks at one per 50 ms
 * (RFC 8445 Ta) with retransmissions; consent freshness (RFC 7675) is one
 * check per pair every 4 to 6 s. */
#define STUN_KNOWN_RATE  50.0
#define STUN_KNOWN_BURST 100.0
#define STUN_NEW_RATE    100.0
#define STUN_NEW_BURST   200.0

bool moat_session_log_allow(moat_session *session, bool repeating, moat_log_level level,
                            char *fields, size_t fields_size)
{
    fields[0] = '\0';
    if (moat_log_get_level() < level)
        return false;
    uint64_t mine = 0, workers = 0;
    if (repeating &&
        !moat_log_limiter_allow(&session->log_limiter, moat_worker_now_us(session->worker), &mine))
        return false;
    if (!moat_worker_log_allow(session->worker, level, &workers))
        return false;
    if (mine + workers > 0)
        snprintf(fields, fields_size, "suppressed=%" PRIu64, mine + workers);
    return true;
}

static void dtls_send(void *user, const uint8_t *datagram, size_t length)
{
    moat_session *session = user;
    if (moat_session_may_send(session))
        moat_worker_send(session->worker, &session->selected, datagram, length);
    else if (session->has_selected)
        moat_session_drop(session, MOAT_DROP_NO_CONSENT);
}

static void dtls_connected(void *user, const moat_srtp_keying *keys)
{
    moat_session *session = user;
    session->dtls_connected = true;
    moat_counter_add(&moat_worker_counters_mut(session->worker)->dtls_handshakes_completed, 1);
    if (moat_session_media_keys(session, keys) != 0 ||
        moat_session_prefilter_keys(session, keys) != 0) {
        /* This runs inside the DTLS transport's call stack, which uses the
         * transport after we return: the session (and the transport) ends on
         * the next tick, never here. */
        session->end_reason = "srtp setup failed";
        session->ending = true;
        return;
    }
    moat_session_log(session, MOAT_LOG_INFO, "session",
                     "session %s: DTLS connected (%s), SRTP ready", session->label,
                     session->dtls_role == MOAT_DTLS_ROLE_CLIENT ? "client" : "server");
    if (session->negotiation.has_data_channel)
        moat_session_data_start(session);
}

static void dtls_application_data(void *user, const uint8_t *data, size_t length)
{
    moat_session *session = user;
    session->dtls_application_seen = true;
    moat_session_data_receive(session, data, length);
}

static void dtls_closed(void *user, moat_dtls_state state, const char *reason)
{
    moat_session *session = user;
    if (state == MOAT_DTLS_FAILED) {
        moat_counter_add(&moat_worker_counters_mut(session->worker)->dtls_handshakes_failed, 1);
        moat_session_log(session, MOAT_LOG_WARN, "session", "session %s: DTLS failed: %s",
                         session->label, reason);
        session->end_reason = "dtls failed";
    } else {
        session->end_reason = "dtls closed";
    }
    /* Ending happens on the next tick, outside OpenSSL's call stack. */
    session->ending = true;
}

static const moat_dtls_callbacks dtls_callbacks = {
    .send = dtls_send,
    .connected = dtls_connected,
    .application_data = dtls_application_data,
    .closed = dtls_closed,
};

/* The transport's part of the negotiation (the m-lines: media_init). */
static void keep_negotiation(moat_session_negotiation *out, const moat_sdp_negotiation *in)
{
    g_strlcpy(out->remote_fingerprint_alg, in->remote_fingerprint_alg,
              sizeof out->remote_fingerprint_alg);
    g_strlcpy(out->remote_fingerprint, in->remote_fingerprint, sizeof out->remote_fingerprint);
    out->local_setup = in->local_setup;
    out->has_data_channel = in->has_data_channel;
    out->remote_sctp_port = in->remote_sctp_port;
    out->remote_max_message_size = in->remote_max_message_size;
    out->srtpplus = in->srtpplus;
    out->srtpplus_scheme = in->srtpplus_scheme;
}

moat_session *moat_session_new(const moat_session_params *params, char *error, size_t error_size)
{
    moat_session *session = g_new0(moat_session, 1);
    session->id = g_strdup(params->id);
    g_snprintf(session->label, sizeof session->label, "%" G_GUINT64_FORMAT, params->serial);
    session->worker = params->worker;
    session->plain_fd = -1;
    session->on_ended = params->on_ended;
    session->dtls_context = params->dtls_context;
    const moat_sdp_negotiation *negotiation = params->negotiation;
    keep_negotiation(&session->negotiation, negotiation);
    moat_ice_pairs_init(&session->pairs);
    g_strlcpy(session->local_ufrag, params->local_ufrag, sizeof session->local_ufrag);
    g_strlcpy(session->local_pwd, params->local_pwd, sizeof session->local_pwd);
    g_strlcpy(session->remote_ufrag, negotiation->remote_ufrag, sizeof session->remote_ufrag);
    g_strlcpy(session->remote_pwd, negotiation->remote_pwd, sizeof session->remote_pwd);
    session->consent_timeout_us = (uint64_t)params->consent_timeout_s * 1000000ull;
    session->pending_timeout_us = (uint64_t)params->pending_timeout_s * 1000000ull;
    if (params->pending_counter) {
        session->pending_counter = params->pending_counter;
        g_atomic_int_inc(session->pending_counter);
        session->source_pending_counter = params->source_pending_counter;
        if (session->source_pending_counter)
            g_atomic_int_inc(session->source_pending_counter);
    }
    session->dtls_role = session->negotiation.local_setup == MOAT_SDP_SETUP_ACTIVE
                             ? MOAT_DTLS_ROLE_CLIENT
                             : MOAT_DTLS_ROLE_SERVER;
    moat_log_limiter_init(&session->log_limiter, 5, 10 * 1000000ull);
    session->cascade_created = params->cascade;
    session->relay_layers = params->relay_layers < 3 ? params->relay_layers : 3;
    moat_session_media_init(session, negotiation);
    moat_session_prefilter_init(session, params->prefilter);
    session->playout_max_ms = (uint16_t)MIN(params->lossy_playout_delay_max_ms, 10000u);
    session->plugin = params->plugin;
    session->handle = moat_session_handle_new(session, session->worker);
    moat_session_info info = {
        .session_id = session->id,
        .media = session->media,
        .n_media = session->n_media,
        .has_data_channel = session->negotiation.has_data_channel,
        .endpoint = params->endpoint ? params->endpoint : "whip",
        .resource = params->resource ? params->resource : "",
        .worker_index = session->worker ? (int)moat_worker_index(session->worker) : -1,
        .cascade = session->cascade_created,
    };
    const char *plugin_error = "plugin refused the session";
    session->plugin_state = session->plugin->attach(session->handle, &info, &plugin_error);
    if (!session->plugin_state) {
        snprintf(error, error_size, "%s", plugin_error);
        session->plugin = NULL;
        moat_session_free(session);
        return NULL;
    }
    return session;
}

moat_plugin_session *moat_session_plugin_handle(moat_session *session)
{
    return session->handle;
}

const char *moat_session_id(const moat_session *session)
{
    return session->id;
}

void moat_session_start(moat_session *session)
{
    char error[256];
    session->started = true;
    session->created_us = moat_worker_now_us(session->worker);
    session->last_consent_us = session->created_us;
    moat_token_bucket_init(&session->stun_known, STUN_KNOWN_RATE, STUN_KNOWN_BURST,
                           session->created_us);
    moat_token_bucket_init(&session->stun_new, STUN_NEW_RATE, STUN_NEW_BURST, session->created_us);
    double media_rate =
        session->prefilter ? (double)session->prefilter->session_media_bytes_per_s : 0;
    moat_token_bucket_init(&session->media_rate, media_rate, media_rate, session->created_us);
    if (session->plain_fd >= 0) {
        moat_worker_add_session(session->worker, session);
        moat_session_plain_start(session);
        return;
    }
    /* Without a DTLS context (benchmarks) keys arrive through
     * moat_session_bypass_handshake instead. */
    if (session->dtls_context)
        session->dtls = moat_dtls_transport_new(
            session->dtls_context, session->dtls_role, session->negotiation.remote_fingerprint_alg,
            session->negotiation.remote_fingerprint, &dtls_callbacks, session, error, sizeof error);
    moat_worker_add_session(session->worker, session);
    if (!session->dtls && session->dtls_context) {
        moat_session_log(session, MOAT_LOG_WARN, "session", "session %s: %s", session->label,
                         error);
        moat_session_end(session, "dtls setup failed");
        return;
    }
    moat_worker_bind_ufrag(session->worker, session->local_ufrag, session);
}

void moat_session_bypass_handshake(moat_session *session, const moat_path *path, const void *keys)
{
    static const uint8_t no_transaction[12];
    moat_ice_check_event event = {
        .remote = &path->remote,
        .local = &path->local,
        .remote_priority = moat_worker_local_priority(session->worker, &path->local),
        .local_priority = moat_worker_local_priority(session->worker, &path->local),
        .nominated = true,
        .transaction = no_transaction,
        .now_us = moat_worker_now_us(session->worker),
    };
    moat_ice_pairs_outcome outcome;
    bool accepted =
        moat_ice_pairs_on_check(&session->pairs, &event, &outcome) == MOAT_ICE_PAIRS_ACCEPTED;
    if (session->cascade_leg) {
        /* A leg without its routes would receive nothing, lose consent and
         * be taken for a dead link: it ends now, and says why. */
        if (!moat_session_cascade_bind(session, &path->remote)) {
            moat_counter_add(&moat_worker_counters_mut(session->worker)->cascade_legs_unrouted, 1);
            session->end_reason = "cascade routes refused";
            session->ending = true;
            return;
        }
    } else if (accepted) {
        moat_session_apply_bindings(session, &outcome, &path->remote);
    }
    session->selected = *path;
    session->has_selected = true;
    session->last_consent_us = moat_worker_now_us(session->worker);
    dtls_connected(session, keys);
}

bool moat_session_handle_dtls(moat_session *session, const moat_path *path, const uint8_t *data,
                              size_t length)
{
    if (!session->dtls || session->ending)
        return false;
    if (!session->has_selected)
        moat_session_select_tuple(session, path);
    session->dtls_application_seen = false;
    if (moat_dtls_transport_receive(session->dtls, data, length) != 0)
        moat_session_drop(session, MOAT_DROP_DTLS);
    if (session->dtls_application_seen)
        moat_session_confirm_path(session, path);
    return session->dtls_application_seen;
}

static void leave_pending(moat_session *session)
{
    if (session->pending_counter) {
        g_atomic_int_add(session->pending_counter, -1);
        session->pending_counter = NULL;
    }
    if (session->source_pending_counter) {
        g_atomic_int_add(session->source_pending_counter, -1);
        session->source_pending_counter = NULL;
    }
}

/* A media-only session's DTLS has nothing left to do but close: once the
 * peer has sent authenticated SRTP or SRTCP (it holds our last flight, so no
 * handshake retransmission can be asked of us) and DTLS was quiet for a trim
 * interval, the transport drops OpenSSL's state (~29 KB). The negotiation
 * never changes after creation (PATCH only trickles candidates or restarts
 * ICE), so a session without a data channel never needs one. */
static void retire_dtls_when_done(moat_session *session)
{
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(session->dtls, &stats);
    uint64_t seen = stats.datagrams_received + stats.datagrams_sent;
    bool quiet = seen == session->dtls_seen;
    session->dtls_seen = seen;
    bool peer_sent_media = moat_counter_read(&session->counters.rtp_received) > 0 ||
                           moat_counter_read(&session->counters.rtcp_received) > 0;
    if (!quiet || !peer_sent_media || stats.retired || session->negotiation.has_data_channel ||
        session->draining)
        return;
    char error[160];
    if (moat_dtls_transport_retire(session->dtls, error, sizeof error) != MOAT_DTLS_OK) {
        moat_session_log(session, MOAT_LOG_DEBUG, "session", "session %s: DTLS not retired: %s",
                         session->label, error);
        return;
    }
    moat_counter_add(&moat_worker_counters_mut(session->worker)->dtls_retired, 1);
}

/* A drain ends once all is acknowledged, after SESSION_DRAIN_TIMEOUT_US
 * without the peer acknowledging more, or after SESSION_DRAIN_MAX_US. */
static bool drain_over(moat_session *session, uint64_t now_us)
{
    if (moat_session_data_drained(session))
        return true;
    size_t pending = moat_session_data_pending_bytes(session);
    if (pending < session->drain_pending_bytes)
        session->drain_deadline_us = now_us + SESSION_DRAIN_TIMEOUT_US;
    session->drain_pending_bytes = pending;
    return now_us > session->drain_deadline_us ||
           now_us - session->drain_started_us > SESSION_DRAIN_MAX_US;
}

/* The transport is dead (never up, or the peer withdrew its consent): the
 * session ends without a drain of its data channels (moat_session_end sees
 * `ending`): RFC 7675 forbids sending on a pair without consent, and a peer
 * that never connected has nothing to drain. Ending at once also keeps the
 * next tick from judging (and counting) the same death again. */
static bool transport_dead(moat_session *session, const char *reason)
{
    session->end_reason = reason;
    session->ending = true;
    return false;
}

bool moat_session_tick(moat_session *session, uint64_t now_us)
{
    if (session->draining && drain_over(session, now_us)) /* closed by its plugin too */
        return false;
    if (session->ending)
        return false;
    if (session->plain_fd >= 0) {
        if (session->plain_idle_timeout_us && now_us > session->plain_last_rx_us &&
            now_us - session->plain_last_rx_us > session->plain_idle_timeout_us) {
            session->end_reason = "ingest idle";
            return false;
        }
        moat_session_media_tick(session, now_us);
        return !session->ending;
    }
    /* Counted against its source until DTLS is up, not just ICE: one check
     * and then silence would otherwise hold a session (and a max_sessions
     * slot) for the setup timeout outside any per-source cap. */
    if (session->dtls_connected)
        leave_pending(session);
    if (!session->has_selected && session->pending_timeout_us &&
        now_us - session->created_us > session->pending_timeout_us)
        return transport_dead(session, "ice timeout");
    if (!moat_session_consent_tick(session, now_us)) {
        moat_counter_add(&moat_worker_counters_mut(session->worker)->consent_expired, 1);
        return transport_dead(session, "consent expired");
    }
    moat_session_expire_pairs(session, now_us);
    if (!session->dtls_connected && now_us - session->created_us > SESSION_SETUP_TIMEOUT_US)
        return transport_dead(session, "setup timeout");
    if (session->dtls && session->dtls_started) {
        int64_t due = moat_dtls_transport_timeout_ms(session->dtls);
        if (due == 0)
            moat_dtls_transport_handle_timeout(session->dtls);
        /* OpenSSL's record buffers go back while DTLS is quiet (after the
         * handshake of a media-only session: for good). */
        if (session->dtls_connected && now_us >= session->dtls_trim_us) {
            session->dtls_trim_us = now_us + DTLS_TRIM_INTERVAL_US;
            moat_dtls_transport_trim(session->dtls);
            retire_dtls_when_done(session);
        }
    }
    if (session->ending)
        return false;
    moat_session_prefilter_tick(session, now_us);
    moat_session_media_tick(session, now_us);
    moat_session_data_tick(session);
    return !session->ending;
}

const char *moat_session_end_reason(const moat_session *session)
{
    return session->end_reason ? session->end_reason : "closed";
}

/* close_notify: false for an end the peer must not take for a clean one. */
static void finish_end(moat_session *session, const char *reason, bool close_notify)
{
    /* Sessions that never connected are what an offer flood leaves behind:
     * their end is not worth a line each. */
    moat_session_log(session, session->has_selected ? MOAT_LOG_INFO : MOAT_LOG_DEBUG, "session",
                     "session %s: ended (%s)", session->label, reason);
    if (session->plugin && session->plugin->hangup)
        session->plugin->hangup(session->plugin_state);
    moat_session_data_clear(session);
    if (close_notify && session->dtls && session->dtls_connected)
        moat_dtls_transport_shutdown(session->dtls);
    if (session->on_ended)
        session->on_ended(session->id, reason);
    moat_worker_remove_session(session->worker, session);
}

bool moat_session_draining(const moat_session *session)
{
    return session->draining;
}

void moat_session_end(moat_session *session, const char *reason)
{
    if (session->handle)
        atomic_store(&session->handle->ending, true);
    if (session->draining) {
        /* A second end (the drain finished, timed out, or the transport
         * failed meanwhile) completes the first one. */
        char *first = session->drain_reason;
        session->drain_reason = NULL;
        finish_end(session, first ? first : reason, true);
        g_free(first);
        return;
    }
    bool graceful = !session->ending || session->end_reason == NULL ||
                    strcmp(session->end_reason, "closed by plugin") == 0;
    if (graceful && moat_session_data_begin_drain(session)) {
        session->draining = true;
        session->drain_reason = g_strdup(reason);
        session->drain_started_us = moat_worker_now_us(session->worker);
        session->drain_deadline_us = session->drain_started_us + SESSION_DRAIN_TIMEOUT_US;
        session->drain_pending_bytes = moat_session_data_pending_bytes(session);
        session->ending = false;
        moat_log_debug("session", "session %s: draining data channels before close",
                       session->label);
        return;
    }
    finish_end(session, reason, true);
}

bool moat_session_cut_drain(moat_session *session)
{
    if (!session->draining)
        return false;
    session->draining = false;
    g_free(session->drain_reason);
    session->drain_reason = NULL;
    moat_session_data_abort(session);
    finish_end(session, "drain cut at shutdown", false);
    return true;
}

void moat_session_set_plain(moat_session *session, int fd, const struct sockaddr_in6 *source,
                            uint32_t idle_timeout_s)
{
    session->plain_fd = fd;
    moat_session_plain_mark_own(session);
    session->plain_idle_timeout_us = (uint64_t)idle_timeout_s * 1000000ull;
    session->dtls_context = NULL;
    session->pending_timeout_us = 0;
    leave_pending(session); /* no ICE to wait for: not an admission concern */
    if (source) {
        session->plain_source = *source;
        session->plain_source_fixed = true;
    }
}

void moat_session_release_bindings(moat_session *session)
{
    moat_session_plain_stop(session);
    moat_worker_unbind_ufrag(session->worker, session->local_ufrag, session);
    if (session->previous_local_ufrag[0])
        moat_worker_unbind_ufrag(session->worker, session->previous_local_ufrag, session);
    for (size_t i = 0; i < session->pairs.n_pairs; i++)
        moat_worker_unbind_tuple(session->worker, &session->pairs.pairs[i].remote, session);
    for (size_t i = 0; session->has_selected && i < session->n_cascade_ssrcs; i++)
        moat_worker_unbind_route(session->worker, &session->selected.remote,
                                 session->cascade_ssrcs[i], session);
}

void moat_session_free(moat_session *session)
{
    if (!session)
        return;
    leave_pending(session);
    if (session->plugin && session->plugin->detach)
        session->plugin->detach(session->plugin_state);
    if (session->handle) {
        /* Calls on the handle fail from now on; queued relays are dropped. */
        atomic_store_explicit(&session->handle->session, NULL, memory_order_release);
        moat_session_handle_unref(session->handle);
        session->handle = NULL;
    }
    if (session->plain_fd >= 0) /* never started: no worker registration to undo */
        close(session->plain_fd);
    moat_session_plain_clear_keys(session); /* keys of an ingest that never started */
    moat_session_clear_tap(session);
    moat_session_data_clear(session);
    moat_session_media_clear(session);
    moat_session_prefilter_clear(session);
    moat_dtls_transport_free(session->dtls);
    moat_stun_integrity_free(session->stun_integrity);
    moat_stun_integrity_free(session->stun_integrity_previous);
    g_free(session->drain_reason);
    g_free(session->id);
    g_free(session);
}
