/* a=crypto (RFC 4568 §9.1): parsing with every length checked before a read,
 * strict base64 for the key, writing, and the choice of a suite. */
#include "sdp_crypto.h"

#include <string.h>

typedef struct {
    moat_srtp_profile suite;
    const char *name;
    size_t key_salt_length;
} suite_entry;

/* Preference order for offers: the 80-bit tag first (what SIP phones expect
 * by default), then GCM, then the 32-bit tag. */
static const suite_entry suites[] = {
    {MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, "AES_CM_128_HMAC_SHA1_80", 30},
    {MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, "AEAD_AES_128_GCM", 28},
    {MOAT_SRTP_PROFILE_AES128_CM_SHA1_32, "AES_CM_128_HMAC_SHA1_32", 30},
};

static const suite_entry *find_suite(moat_srtp_profile suite)
{
    for (size_t i = 0; i < G_N_ELEMENTS(suites); i++) {
        if (suites[i].suite == suite)
            return &suites[i];
    }
    return NULL;
}

const char *moat_sdp_crypto_suite_name(moat_srtp_profile suite)
{
    const suite_entry *e = find_suite(suite);
    return e ? e->name : NULL;
}

moat_srtp_profile moat_sdp_crypto_suite_from_name(const char *name, size_t length)
{
    moat_sdp_span span = {name, length};
    for (size_t i = 0; i < G_N_ELEMENTS(suites); i++) {
        if (moat_sdp_span_eq(span, suites[i].name))
            return suites[i].suite;
    }
    return 0;
}

size_t moat_sdp_crypto_key_salt_length(moat_srtp_profile suite)
{
    const suite_entry *e = find_suite(suite);
    return e ? e->key_salt_length : 0;
}

/* ---- strict base64 (RFC 4648 alphabet, '=' padding optional) ---- */

static int base64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decodes span into out (capacity bytes); -1 on a character outside the
 * alphabet, misplaced padding, a dangling character or too much data. */
static int base64_decode(moat_sdp_span span, uint8_t *out, size_t capacity, size_t *length)
{
    size_t n = span.len;
    if (n > 0 && span.p[n - 1] == '=')
        n--;
    if (n > 0 && span.p[n - 1] == '=')
        n--;
    if (n != span.len && span.len % 4 != 0)
        return -1; /* padding only completes a quantum */
    if (n % 4 == 1 || (n * 3) / 4 > capacity)
        return -1;
    uint32_t bits = 0;
    size_t have = 0, written = 0;
    for (size_t i = 0; i < n; i++) {
        int v = base64_value(span.p[i]);
        if (v < 0)
            return -1;
        bits = (bits << 6) | (uint32_t)v;
        have += 6;
        if (have >= 8) {
            have -= 8;
            out[written++] = (uint8_t)(bits >> have);
        }
    }
    if ((bits & ((1u << have) - 1u)) != 0)
        return -1; /* non-zero bits left over: not canonical */
    *length = written;
    return 0;
}

/* ---- key parameters ---- */

/* "2^N" or a decimal count of packets, at most 2^48 (RFC 3711 §9.2). */
static int parse_lifetime(moat_sdp_span span, uint64_t *out)
{
    uint32_t exponent = 0;
    if (moat_sdp_span_has_prefix(span, "2^")) {
        moat_sdp_span rest = {span.p + 2, span.len - 2};
        if (!moat_sdp_span_u32(rest, 48, &exponent) || exponent == 0)
            return -1;
        *out = (uint64_t)1 << exponent;
        return 0;
    }
    uint64_t value = 0;
    if (!moat_sdp_span_u64(span, &value) || value == 0 || value > ((uint64_t)1 << 48))
        return -1;
    *out = value;
    return 0;
}

/* "<value>:<length>", length 1..128 bytes. */
static int parse_mki(moat_sdp_span span, moat_sdp_crypto *out)
{
    moat_sdp_span value, length;
    uint32_t mki_length = 0;
    if (!moat_sdp_span_split(span, ':', &value, &length) ||
        !moat_sdp_span_u32(value, UINT32_MAX, &out->mki) ||
        !moat_sdp_span_u32(length, 128, &mki_length) || mki_length == 0)
        return -1;
    out->mki_length = (uint8_t)mki_length;
    return 0;
}

/* "inline:<key||salt>[|lifetime][|MKI:length]" */
static int parse_key_info(moat_sdp_span key_params, moat_sdp_crypto *out, const char **why)
{
    if (!moat_sdp_span_has_prefix(key_params, "inline:")) {
        *why = "key method is not inline";
        return -1;
    }
    moat_sdp_span info = {key_params.p + 7, key_params.len - 7}, key, rest, part;
    bool more = moat_sdp_span_split(info, '|', &key, &rest);
    size_t expected = moat_sdp_crypto_key_salt_length(out->suite);
    if (base64_decode(key, out->key_salt, sizeof out->key_salt, &out->key_salt_length) != 0 ||
        out->key_salt_length != expected) {
        *why = "key is not base64 of the suite's key and salt length";
        return -1;
    }
    /* At most a lifetime, then at most an MKI, in that order. */
    while (more) {
        more = moat_sdp_span_split(rest, '|', &part, &rest);
        bool is_mki = memchr(part.p, ':', part.len) != NULL;
        if (is_mki && out->mki_length == 0 && parse_mki(part, out) == 0)
            continue;
        if (!is_mki && out->lifetime == 0 && out->mki_length == 0 &&
            parse_lifetime(part, &out->lifetime) == 0)
            continue;
        *why = is_mki ? "bad MKI" : "bad key lifetime";
        return -1;
    }
    return 0;
}

int moat_sdp_crypto_parse(moat_sdp_span value, moat_sdp_crypto *out, const char **why)
{
    memset(out, 0, sizeof *out);
    moat_sdp_span rest = value, tag, suite, key_params, first_key, more;
    if (!moat_sdp_span_next_token(&rest, &tag) ||
        !moat_sdp_span_u32(tag, MOAT_SDP_CRYPTO_MAX_TAG, &out->tag)) {
        *why = "bad tag";
        return -1;
    }
    if (!moat_sdp_span_next_token(&rest, &suite)) {
        *why = "missing crypto-suite";
        return -1;
    }
    out->suite = moat_sdp_crypto_suite_from_name(suite.p, suite.len);
    if (!out->suite)
        return 1; /* a suite Moat does not run: ignored */
    if (!moat_sdp_span_next_token(&rest, &key_params)) {
        *why = "missing key parameters";
        return -1;
    }
    out->more_keys = moat_sdp_span_split(key_params, ';', &first_key, &more);
    if (parse_key_info(first_key, out, why) != 0) {
        moat_sdp_crypto_clear(out);
        return -1;
    }
    moat_sdp_span param;
    out->session_params = moat_sdp_span_next_token(&rest, &param);
    return 0;
}

bool moat_sdp_crypto_usable(const moat_sdp_crypto *crypto)
{
    return find_suite(crypto->suite) && crypto->mki_length == 0 && !crypto->more_keys &&
           !crypto->session_params;
}

void moat_sdp_crypto_write(GString *out, const moat_sdp_crypto *crypto)
{
    const char *name = moat_sdp_crypto_suite_name(crypto->suite);
    if (!name)
        return;
    char *key = g_base64_encode(crypto->key_salt, crypto->key_salt_length);
    g_string_append_printf(out, "a=crypto:%u %s inline:%s\r\n", crypto->tag, name, key);
    memset(key, 0, strlen(key));
    g_free(key);
}

/* ---- choice ---- */

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (names[i] && g_ascii_strcasecmp(names[i], name) == 0)
            return true;
    }
    return false;
}

bool moat_sdes_policy_allows(const moat_sdes_policy *policy, moat_srtp_profile suite)
{
    const char *name = moat_sdp_crypto_suite_name(suite);
    if (!name)
        return false;
    if (!policy)
        return true;
    if (policy->off || listed(policy->no, policy->n_no, name))
        return false;
    return policy->n_only == 0 || listed(policy->only, policy->n_only, name);
}

int moat_sdp_crypto_choose(const moat_sdp_crypto *offered, size_t n, const moat_sdes_policy *policy)
{
    for (size_t i = 0; i < n; i++) {
        if (moat_sdp_crypto_usable(&offered[i]) &&
            moat_sdes_policy_allows(policy, offered[i].suite))
            return (int)i;
    }
    return -1;
}

size_t moat_sdp_crypto_offer_suites(const moat_sdes_policy *policy, moat_srtp_profile *out,
                                    size_t capacity)
{
    size_t n = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(suites) && n < capacity; i++) {
        if (moat_sdes_policy_allows(policy, suites[i].suite))
            out[n++] = suites[i].suite;
    }
    return n;
}

void moat_sdp_crypto_clear(moat_sdp_crypto *crypto)
{
    explicit_bzero(crypto->key_salt, sizeof crypto->key_salt);
    crypto->key_salt_length = 0;
}
