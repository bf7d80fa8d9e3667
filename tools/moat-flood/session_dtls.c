/* DTLS-SRTP for one session on the gateway's transport (dtls/dtls_transport.h):
 * the handshake over the selected pair, then the SRTP session and, when the
 * answer accepted SRTP+, the SRTP+ sender keyed from the same keys. */
#include "legit_media.h"
#include "session_parts.h"
#include "whip_session.h"

#include <stdio.h>

static void dtls_send(void *user, const uint8_t *datagram, size_t length)
{
    flood_session *s = user;
    flood_session_send(s, datagram, length, NULL);
}

static bool srtpplus_profile_of(moat_srtp_profile profile, enum srtpplus_profile *out)
{
    switch (profile) {
    case MOAT_SRTP_PROFILE_AES128_CM_SHA1_80:
        *out = SRTPPLUS_PROFILE_AES128_CM_SHA1_80;
        return true;
    case MOAT_SRTP_PROFILE_AES128_CM_SHA1_32:
        *out = SRTPPLUS_PROFILE_AES128_CM_SHA1_32;
        return true;
    case MOAT_SRTP_PROFILE_AEAD_AES_128_GCM:
        *out = SRTPPLUS_PROFILE_AEAD_AES_128_GCM;
        return true;
    }
    return false;
}

static int start_srtpplus(flood_session *s, const moat_srtp_keying *keys)
{
    enum srtpplus_profile profile;
    if (!srtpplus_profile_of(keys->profile, &profile))
        return -1;
    bool chain = s->srtpplus_scheme.scheme[0] == 'c';
    struct srtpplus_sender_config config;
    srtpplus_sender_config_init(&config, chain ? SRTPPLUS_SCHEME_CHAIN : SRTPPLUS_SCHEME_PRN,
                                profile);
    if (chain) {
        config.chain.depth = s->srtpplus_scheme.depth;
        config.chain.copies = s->srtpplus_scheme.copies;
    }
    return srtpplus_sender_new(&config, keys->local_key, keys->key_length, keys->local_salt,
                               keys->salt_length, &s->srtpplus);
}

static void dtls_connected(void *user, const moat_srtp_keying *keys)
{
    flood_session *s = user;
    char error[256];
    s->srtp = moat_srtp_session_new(keys, error, sizeof error);
    if (s->srtp == NULL) {
        session_fail(s, "SRTP: %s", error);
        return;
    }
    s->profile = keys->profile;
    if (s->srtpplus_negotiated && start_srtpplus(s, keys) != SRTPPLUS_OK) {
        session_fail(s, "SRTP+: cannot key the sender");
        return;
    }
    s->state = FLOOD_SESSION_CONNECTED;
    legit_media_prepare(s);
}

static void dtls_closed(void *user, moat_dtls_state state, const char *reason)
{
    flood_session *s = user;
    session_fail(s, "DTLS %s: %s", state == MOAT_DTLS_CLOSED ? "closed" : "failed", reason);
}

static const moat_dtls_callbacks callbacks = {
    .send = dtls_send,
    .connected = dtls_connected,
    .closed = dtls_closed,
};

int session_dtls_start(flood_session *s, uint64_t now_us)
{
    char error[256];
    s->dtls = moat_dtls_transport_new(s->env->dtls_context, s->dtls_role, s->remote_fingerprint_alg,
                                      s->remote_fingerprint, &callbacks, s, error, sizeof error);
    if (s->dtls == NULL) {
        session_fail(s, "DTLS: %s", error);
        return -1;
    }
    if (moat_dtls_transport_start(s->dtls) != MOAT_DTLS_OK) {
        session_fail(s, "DTLS: cannot start the handshake");
        return -1;
    }
    return 0;
}

void session_dtls_on_datagram(flood_session *s, const uint8_t *data, size_t length)
{
    moat_dtls_transport_receive(s->dtls, data, length);
}

void session_dtls_tick(flood_session *s, uint64_t now_us)
{
    if (s->dtls != NULL && s->state == FLOOD_SESSION_DTLS &&
        moat_dtls_transport_timeout_ms(s->dtls) == 0)
        moat_dtls_transport_handle_timeout(s->dtls);
}

uint64_t session_dtls_next_timer_us(const flood_session *s, uint64_t now_us)
{
    if (s->dtls == NULL || s->state != FLOOD_SESSION_DTLS)
        return UINT64_MAX;
    int64_t ms = moat_dtls_transport_timeout_ms(s->dtls);
    return ms < 0 ? UINT64_MAX : now_us + (uint64_t)ms * 1000u;
}
