/* SDES-SRTP keys in SDP (RFC 4568): the a=crypto attribute parsed into a
 * struct, written back, and the choice of one offered line under the ng
 * request's SDES policy (off, only some suites, never some). Suites are the
 * ones Moat's SRTP layer runs: AES_CM_128_HMAC_SHA1_80 / _32 and
 * AEAD_AES_128_GCM (RFC 7714). Key material is secret: clear it with
 * moat_sdp_crypto_clear. Stateless; any thread. Keys are generated and turned
 * into libsrtp keying by srtp/sdes_keys.h. */
#ifndef MOAT_SDP_CRYPTO_H
#define MOAT_SDP_CRYPTO_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdp_lex.h"
#include "srtp/srtp_keying.h"

/* Master key || master salt: 30 bytes for AES-CM, 28 for AES-GCM. */
#define MOAT_SDP_CRYPTO_MAX_KEY_SALT 30
#define MOAT_SDP_CRYPTO_MAX_TAG      999999999u

typedef struct {
    uint32_t tag;
    moat_srtp_profile suite; /* the SRTP profile of the suite */
    uint8_t key_salt[MOAT_SDP_CRYPTO_MAX_KEY_SALT];
    size_t key_salt_length;
    uint64_t lifetime;   /* packets ("2^20" or decimal); 0: not given */
    uint32_t mki;        /* MKI value when mki_length > 0 */
    uint8_t mki_length;  /* bytes, 1..128; 0: no MKI */
    bool more_keys;      /* further ";inline:" key parameters follow */
    bool session_params; /* session parameters follow (KDR=, UNENCRYPTED_SRTP, ...) */
} moat_sdp_crypto;

/* The value of one a=crypto line ("1 AES_CM_128_HMAC_SHA1_80 inline:...").
 * 0 when stored; 1 when well-formed enough but of a suite Moat does not run
 * (ignored, as the RFC asks); -1 with *why when malformed (bad tag, key not
 * base64 or of the wrong length, bad lifetime or MKI). */
int moat_sdp_crypto_parse(moat_sdp_span value, moat_sdp_crypto *out, const char **why);

/* Whether Moat can key SRTP from this line: no MKI, a single key, no
 * session parameters (libsrtp is run with defaults). */
bool moat_sdp_crypto_usable(const moat_sdp_crypto *crypto);

/* Appends "a=crypto:<tag> <suite> inline:<base64 key||salt>\r\n". */
void moat_sdp_crypto_write(GString *out, const moat_sdp_crypto *crypto);

/* RFC 4568 suite names; NULL / 0 for the unknown. */
const char *moat_sdp_crypto_suite_name(moat_srtp_profile suite);
moat_srtp_profile moat_sdp_crypto_suite_from_name(const char *name, size_t length);
size_t moat_sdp_crypto_key_salt_length(moat_srtp_profile suite);

/* The ng request's SDES policy (moat_ng_request: sdes_off, sdes_only,
 * sdes_no). An empty `only` allows every suite. */
typedef struct {
    bool off;
    const char *const *only;
    size_t n_only;
    const char *const *no;
    size_t n_no;
} moat_sdes_policy;

bool moat_sdes_policy_allows(const moat_sdes_policy *policy, moat_srtp_profile suite);

/* Index of the first offered line that is usable and allowed (the offer's
 * order is its preference), or -1. */
int moat_sdp_crypto_choose(const moat_sdp_crypto *offered, size_t n,
                           const moat_sdes_policy *policy);

/* Suites Moat offers, best first, that the policy allows: writes up to
 * `capacity` and returns how many. */
size_t moat_sdp_crypto_offer_suites(const moat_sdes_policy *policy, moat_srtp_profile *out,
                                    size_t capacity);

/* Wipes the key material. */
void moat_sdp_crypto_clear(moat_sdp_crypto *crypto);

#endif
