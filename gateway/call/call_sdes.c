/* Owns SDES-SRTP termination of a call's legs (call_sdes.h): which leg
 * terminates, the a=crypto lines Moat answers or offers, and the keys handed
 * to the legs' SRTP sessions. */
#include "call/call_sdes.h"

#include "sdp/sdes_keys.h"

#include <stdio.h>
#include <string.h>

static bool is_srtp(const char *proto)
{
    return proto && strstr(proto, "SAVP") != NULL;
}

static moat_sdes_policy policy_of(const moat_ng_request *request)
{
    return (moat_sdes_policy){
        .off = request->sdes_off,
        .only = request->sdes_only,
        .n_only = request->n_sdes_only,
        .no = request->sdes_no,
        .n_no = request->n_sdes_no,
    };
}

/* The transport of the party on `side` as SDES sees it: a WebRTC party's
 * media reaches the legs decrypted by its session. */
static const char *party_proto(const moat_call_sdes *sdes, int side, const char *proto)
{
    return sdes->webrtc[side] ? "RTP/AVP" : proto;
}

static void leg_reset(moat_call_sdes_leg *leg)
{
    explicit_bzero(leg, sizeof *leg);
}

/* Keys the leg of `side` on stream `index`: our line and the party's; a
 * restored call's legs resume their streams where the process before left
 * them (the journal's positions, call_journal.h). */
static int key_leg(moat_call_stream *stream, size_t index, int side, moat_call_journal *journal,
                   const moat_sdp_crypto *local, const moat_sdp_crypto *remote, bool srtpplus,
                   char *error, size_t error_size)
{
    moat_srtp_keying keying;
    char why[160] = "";
    moat_call_journal_srtp at;
    bool resume = journal && moat_call_journal_resume_srtp(journal, index, side, &at);
    moat_srtp_position positions[2] = {resume ? at.sent : (moat_srtp_position){0},
                                       resume ? at.received : (moat_srtp_position){0}};
    int status = moat_sdes_keying(local, remote, &keying, why, sizeof why);
    if (status == 0)
        status = moat_call_stream_set_srtp(stream, side, &keying, srtpplus,
                                           resume ? positions : NULL, why, sizeof why);
    moat_sdes_keying_clear(&keying);
    if (status != 0)
        snprintf(error, error_size, "SDES: %s", why);
    return status;
}

/* A key Moat just wrote: a restored call's is the one it had (its journal
 * holds it), a new call's is recorded. */
static void journal_key(moat_call_journal *journal, moat_sdp_crypto *crypto)
{
    if (journal && !moat_call_journal_take_key(journal, crypto->key_salt, crypto->key_salt_length))
        moat_call_journal_add_key(journal, crypto->key_salt, crypto->key_salt_length);
}

/* The SRTP party offered: answer one of its lines and key its leg now. */
static int answer_party(moat_call_sdes_leg *leg, moat_call_journal *journal,
                        const moat_call_sdp_media *media, const moat_sdes_policy *policy,
                        moat_call_stream *stream, size_t index, int side, char *error,
                        size_t error_size)
{
    int chosen = moat_sdp_crypto_choose(media->crypto, media->n_crypto, policy);
    if (chosen < 0) {
        snprintf(error, error_size, "SDES: no usable a=crypto line in the %s m-line", media->kind);
        return -1;
    }
    char why[160] = "";
    if (moat_sdes_answer(&media->crypto[chosen], &leg->local, why, sizeof why) != 0) {
        snprintf(error, error_size, "%s", why);
        return -1;
    }
    journal_key(journal, &leg->local);
    leg->srtpplus = media->srtpplus_prn;
    if (key_leg(stream, index, side, journal, &leg->local, &media->crypto[chosen], leg->srtpplus,
                error, error_size) != 0)
        return -1;
    leg->terminated = leg->keyed = true;
    return 0;
}

/* The plain party offered, the other gets SRTP: fresh keys for each
 * allowed suite, tags 1..n. */
static int offer_party(moat_call_sdes_leg *leg, moat_call_journal *journal,
                       const moat_sdes_policy *policy, char *error, size_t error_size)
{
    moat_srtp_profile suites[MOAT_CALL_SDES_MAX_OFFERED];
    size_t n = moat_sdp_crypto_offer_suites(policy, suites, MOAT_CALL_SDES_MAX_OFFERED);
    if (n == 0) {
        snprintf(error, error_size, "SDES: SRTP transport requested but SDES allows no suite");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (moat_sdes_generate(suites[i], (uint32_t)i + 1, &leg->offered[i], error, error_size))
            return -1;
        journal_key(journal, &leg->offered[i]);
    }
    leg->n_offered = n;
    leg->terminated = true;
    return 0;
}

int moat_call_sdes_offer(moat_call_sdes *sdes, int side, const moat_call_sdp *sdp,
                         const moat_ng_request *request, moat_call_stream *const *streams,
                         moat_call_sdp_rewrite *how, char *error, size_t error_size)
{
    moat_sdes_policy policy = policy_of(request);
    int other = 1 - side;
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_call_sdp_media *media = &sdp->media[i];
        const char *proto = party_proto(sdes, side, media->proto);
        moat_call_sdes_leg *own = &sdes->legs[side][i], *far = &sdes->legs[other][i];
        bool was_keyed[2] = {own->keyed, far->keyed};
        /* A re-offer without transport-protocol (Kamailio's in-dialog
         * rtpengine_manage()) keeps the other party's transport. */
        char far_proto[sizeof far->proto];
        g_strlcpy(far_proto, far->proto, sizeof far_proto);
        const char *wanted = sdes->webrtc[other] ? "RTP/AVP" : request->transport_protocol;
        if (!wanted && far_proto[0] && is_srtp(far_proto) != is_srtp(proto)) {
            wanted = far_proto;
            how->media_transport[i] = far_proto; /* copied into the rewrite below */
        }
        leg_reset(own);
        leg_reset(far);
        g_strlcpy(own->proto, proto, sizeof own->proto);
        g_strlcpy(far->proto, wanted ? wanted : proto, sizeof far->proto);
        if (how->media_transport[i])
            how->media_transport[i] = far->proto; /* far_proto dies with this iteration */
        if (media->port == 0)
            continue;
        bool party_srtp = is_srtp(proto);
        bool other_srtp = wanted ? is_srtp(wanted) : party_srtp;
        int status = 0;
        if (party_srtp && !other_srtp) {
            status = answer_party(own, sdes->journal, media, &policy, streams[i], i, side, error,
                                  error_size);
            how->replace_crypto[i] = true; /* the plain party gets none */
        } else if (!party_srtp && other_srtp) {
            status = offer_party(far, sdes->journal, &policy, error, error_size);
            how->replace_crypto[i] = true;
            how->crypto[i] = far->offered;
            how->n_crypto[i] = far->n_offered;
            how->srtpplus[i] = true; /* offered; used if the party's answer takes it */
        }
        if (status != 0)
            return -1;
        /* A leg that no longer terminates goes back to plain relaying. */
        char ignored[8];
        if (was_keyed[0] && !own->keyed)
            moat_call_stream_set_srtp(streams[i], side, NULL, false, NULL, ignored, sizeof ignored);
        if (was_keyed[1] && !far->terminated)
            moat_call_stream_set_srtp(streams[i], other, NULL, false, NULL, ignored,
                                      sizeof ignored);
    }
    return 0;
}

/* The line of the party's answer that picks one Moat offered (same tag and
 * suite); -1 if none. */
static int picked_line(const moat_call_sdes_leg *leg, const moat_call_sdp_media *media,
                       size_t *offered_index)
{
    for (size_t k = 0; k < media->n_crypto; k++) {
        for (size_t j = 0; j < leg->n_offered; j++) {
            if (media->crypto[k].tag == leg->offered[j].tag &&
                media->crypto[k].suite == leg->offered[j].suite &&
                moat_sdp_crypto_usable(&media->crypto[k])) {
                *offered_index = j;
                return (int)k;
            }
        }
    }
    return -1;
}

int moat_call_sdes_answer(moat_call_sdes *sdes, int answerer, const moat_call_sdp *sdp,
                          moat_call_stream *const *streams, moat_call_sdp_rewrite *how, char *error,
                          size_t error_size)
{
    int offerer = 1 - answerer;
    for (size_t i = 0; i < sdp->n_media; i++) {
        moat_call_sdes_leg *own = &sdes->legs[answerer][i], *far = &sdes->legs[offerer][i];
        const moat_call_sdp_media *media = &sdp->media[i];
        g_strlcpy(own->proto, party_proto(sdes, answerer, media->proto), sizeof own->proto);
        if (own->terminated && !own->keyed && media->port != 0) {
            size_t j = 0;
            int k = picked_line(own, media, &j);
            if (k < 0) {
                snprintf(error, error_size,
                         "SDES: the answer's %s m-line picks none of Moat's a=crypto lines",
                         media->kind);
                return -1;
            }
            own->local = own->offered[j];
            own->srtpplus = media->srtpplus_prn;
            if (key_leg(streams[i], i, answerer, sdes->journal, &own->local, &media->crypto[k],
                        own->srtpplus, error, error_size) != 0)
                return -1;
            own->keyed = true;
            for (size_t o = 0; o < own->n_offered; o++)
                moat_sdp_crypto_clear(&own->offered[o]);
            own->n_offered = 0;
            how->media_transport[i] = far->proto; /* the plain offerer gets its own */
            how->replace_crypto[i] = true;
        }
        if (far->terminated && far->keyed) {
            how->media_transport[i] = far->proto; /* back to the offerer's SRTP profile */
            how->replace_crypto[i] = true;
            how->crypto[i] = &far->local;
            how->n_crypto[i] = 1;
            how->srtpplus[i] = far->srtpplus; /* accepted when the party offered it */
        }
    }
    return 0;
}

void moat_call_sdes_clear(moat_call_sdes *sdes)
{
    explicit_bzero(sdes, sizeof *sdes);
}
