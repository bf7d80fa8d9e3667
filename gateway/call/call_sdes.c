/* Owns the SDES decisions of a call: which legs terminate SRTP, the
 * a=crypto lines Moat offers and answers, and the keying of those legs. */
#include "call/call_sdes.h"

#include "sdp/sdp_lex.h"
#include "srtp/sdes_keys.h"

#include <string.h>

static bool is_srtp(const char *proto)
{
    return proto && strstr(proto, "SAVP") != NULL;
}

static moat_sdes_policy policy_of(const moat_ng_request *request)
{
    return (moat_sdes_policy){request->sdes_off, request->sdes_only, request->n_sdes_only,
                              request->sdes_no, request->n_sdes_no};
}

static int key_leg(moat_call_stream *stream, int side, const moat_sdp_crypto *local,
                   const moat_sdp_crypto *remote, char *error, size_t error_size)
{
    moat_srtp_keying keying;
    int result = moat_sdes_keying(local, remote, &keying, error, error_size);
    if (result == 0)
        result = moat_call_stream_set_srtp(stream, side, &keying, error, error_size);
    moat_sdes_keying_clear(&keying);
    return result;
}

static char *crypto_lines(const moat_sdp_crypto *lines, size_t n)
{
    GString *out = g_string_new(NULL);
    for (size_t k = 0; k < n; k++)
        moat_sdp_crypto_write(out, &lines[k]);
    return g_string_free(out, FALSE);
}

/* The SRTP offerer's leg answers its offer with our key. */
static int answer_offerer(moat_call_sdes_side *side, size_t i, const moat_call_sdp_media *media,
                          const moat_ng_request *request, moat_call_stream *stream, int offerer,
                          char *error, size_t error_size)
{
    moat_sdes_policy policy = policy_of(request);
    int chosen = moat_sdp_crypto_choose(media->crypto, media->n_crypto, &policy);
    if (chosen < 0) {
        moat_sdp_errorf(error, error_size, "no usable a=crypto on m=%s", media->kind);
        return -1;
    }
    if (moat_sdes_answer(&media->crypto[chosen], &side->answer[i], error, error_size) != 0)
        return -1;
    side->has_answer[i] = true;
    return key_leg(stream, offerer, &side->answer[i], &media->crypto[chosen], error, error_size);
}

/* A plain offer sent on as SAVP: our lines, best suite first. */
static int offer_to_answerer(moat_call_sdes_side *side, size_t i, const moat_ng_request *request,
                             char *error, size_t error_size)
{
    moat_sdes_policy policy = policy_of(request);
    moat_srtp_profile suites[MOAT_CALL_SDES_OFFERS];
    size_t n = moat_sdp_crypto_offer_suites(&policy, suites, MOAT_CALL_SDES_OFFERS);
    if (n == 0) {
        moat_sdp_errorf(error, error_size, "SDES allows no suite for an SRTP transport");
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        if (moat_sdes_generate(suites[k], (uint32_t)k + 1, &side->offered[i][k], error,
                               error_size) != 0)
            return -1;
    }
    side->n_offered[i] = n;
    return 0;
}

int moat_call_sdes_offer(moat_call_sdes_side sides[2], int offerer, const moat_call_sdp *offer,
                         const moat_ng_request *request, moat_call_stream *const *streams,
                         moat_call_sdp_rewrite *how, char **extra, char *error, size_t error_size)
{
    int other = 1 - offerer;
    for (size_t i = 0; i < offer->n_media; i++) {
        const moat_call_sdp_media *media = &offer->media[i];
        const char *wanted =
            request->transport_protocol ? request->transport_protocol : media->proto;
        sides[offerer].has_answer[i] = false;
        sides[other].n_offered[i] = 0;
        if (media->port == 0 || is_srtp(media->proto) == is_srtp(wanted))
            continue; /* plain, or SRTP end to end */
        how->drop_crypto[i] = true;
        if (is_srtp(media->proto)) {
            if (answer_offerer(&sides[offerer], i, media, request, streams[i], offerer, error,
                               error_size) != 0)
                return -1;
            continue;
        }
        if (offer_to_answerer(&sides[other], i, request, error, error_size) != 0)
            return -1;
        extra[i] = crypto_lines(sides[other].offered[i], sides[other].n_offered[i]);
    }
    return 0;
}

/* The answerer's line that matches one we offered (same tag and suite). */
static int key_answerer(moat_call_sdes_side *side, size_t i, const moat_call_sdp_media *media,
                        moat_call_stream *stream, int answerer, char *error, size_t error_size)
{
    for (size_t r = 0; r < media->n_crypto; r++) {
        for (size_t k = 0; k < side->n_offered[i]; k++) {
            const moat_sdp_crypto *ours = &side->offered[i][k];
            if (media->crypto[r].tag == ours->tag && media->crypto[r].suite == ours->suite)
                return key_leg(stream, answerer, ours, &media->crypto[r], error, error_size);
        }
    }
    moat_sdp_errorf(error, error_size, "the answer's a=crypto matches none offered on m=%s",
                    media->kind);
    return -1;
}

int moat_call_sdes_answer(moat_call_sdes_side sides[2], int answerer, const moat_call_sdp *answer,
                          const moat_call_sdp *offer, moat_call_stream *const *streams,
                          moat_call_sdp_rewrite *how, char **extra, char *error, size_t error_size)
{
    int offerer = 1 - answerer;
    for (size_t i = 0; i < answer->n_media && i < offer->n_media; i++) {
        if (answer->media[i].port == 0)
            continue;
        how->protocols[i] = offer->media[i].proto; /* the offerer gets its own profile back */
        if (sides[answerer].n_offered[i]) {
            how->drop_crypto[i] = true;
            if (key_answerer(&sides[answerer], i, &answer->media[i], streams[i], answerer, error,
                             error_size) != 0)
                return -1;
        }
        if (sides[offerer].has_answer[i]) {
            how->drop_crypto[i] = true;
            extra[i] = crypto_lines(&sides[offerer].answer[i], 1);
        }
    }
    return 0;
}

void moat_call_sdes_clear(moat_call_sdes_side *side)
{
    for (size_t i = 0; i < MOAT_CALL_SDP_MAX_MEDIA; i++) {
        for (size_t k = 0; k < MOAT_CALL_SDES_OFFERS; k++)
            moat_sdp_crypto_clear(&side->offered[i][k]);
        moat_sdp_crypto_clear(&side->answer[i]);
    }
}
