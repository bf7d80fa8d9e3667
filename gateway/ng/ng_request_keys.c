/* One setter per ng key (call-id, flags, replace, ICE, DTLS, SDES, codec,
 * ...) and the plain words of the "flags" list. Values are checked for
 * shape here; whether they make sense for the call is the handler's. */
#include "ng/ng_request_private.h"

#include <stdio.h>
#include <string.h>

/* ---- strings ---- */

/* Identifiers and addresses: a string without NUL bytes. */
static int set_text(moat_ng_request *request, const ng_value *value, const char **field)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(request, value, &text, &length) != 0 || strlen(text) != length)
        return 1;
    *field = text;
    return 0;
}

static int set_call_id(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return set_text(r, v, &r->call_id);
}

static int set_from_tag(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return set_text(r, v, &r->from_tag);
}

static int set_to_tag(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return set_text(r, v, &r->to_tag);
}

static int set_via_branch(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return set_text(r, v, &r->via_branch);
}

static int set_media_address(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return set_text(r, v, &r->media_address);
}

static int set_sdp(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    /* The SDP parser takes a length; NUL bytes are its to refuse. */
    return ng_value_text(r, v, &r->sdp, &r->sdp_length) == 0 ? 0 : 1;
}

/* ---- enumerations ---- */

static int set_ice(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(r, v, &text, &length) != 0)
        return 1;
    if (ng_name_equal(text, length, "force") || ng_name_equal(text, length, "force-relay"))
        r->ice = MOAT_NG_ICE_FORCE;
    else if (ng_name_equal(text, length, "remove"))
        r->ice = MOAT_NG_ICE_REMOVE;
    else if (ng_name_equal(text, length, "default"))
        r->ice = MOAT_NG_ICE_DEFAULT;
    return 0; /* other values (optional, ...) keep the default */
}

static int set_dtls(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(r, v, &text, &length) != 0)
        return 1;
    if (ng_name_equal(text, length, "passive"))
        r->dtls = MOAT_NG_DTLS_PASSIVE;
    else if (ng_name_equal(text, length, "active"))
        r->dtls = MOAT_NG_DTLS_ACTIVE;
    else if (ng_name_equal(text, length, "off") || ng_name_equal(text, length, "no") ||
             ng_name_equal(text, length, "disable"))
        r->dtls = MOAT_NG_DTLS_OFF;
    return 0;
}

static const char *const transports[] = {
    "RTP/AVP", "RTP/SAVP", "RTP/AVPF", "RTP/SAVPF", "UDP/TLS/RTP/SAVP", "UDP/TLS/RTP/SAVPF",
};

static const char *transport_from_name(const char *text, size_t length)
{
    for (size_t i = 0; i < G_N_ELEMENTS(transports); i++) {
        if (ng_name_equal(text, length, transports[i]))
            return transports[i];
    }
    return NULL;
}

static int set_transport(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(r, v, &text, &length) != 0)
        return 1;
    r->transport_protocol = transport_from_name(text, length);
    if (r->transport_protocol)
        return 0;
    snprintf(e, n, "unsupported transport-protocol");
    return -1;
}

static int set_address_family(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(r, v, &text, &length) != 0)
        return 1;
    if (ng_name_equal(text, length, "IP4"))
        r->address_family = "IP4";
    else if (ng_name_equal(text, length, "IP6"))
        r->address_family = "IP6";
    else
        return 1;
    return 0;
}

static int set_record_call(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *text = NULL;
    size_t length = 0;
    if (ng_value_text(r, v, &text, &length) != 0)
        return 1;
    r->record_call = ng_name_equal(text, length, "yes") || ng_name_equal(text, length, "on");
    return 0;
}

/* ---- lists ---- */

static int replace_one(moat_ng_request *r, const char *text, size_t length, char *e, size_t n)
{
    if (ng_name_equal(text, length, "origin"))
        r->replace_origin = true;
    else if (ng_name_equal(text, length, "session-connection"))
        r->replace_session_connection = true;
    return 0;
}

static int rtcp_mux_one(moat_ng_request *r, const char *text, size_t length, char *e, size_t n)
{
    static const struct {
        const char *name;
        unsigned bit;
    } words[] = {
        {"offer", MOAT_NG_RTCP_MUX_OFFER},   {"accept", MOAT_NG_RTCP_MUX_ACCEPT},
        {"demux", MOAT_NG_RTCP_MUX_DEMUX},   {"require", MOAT_NG_RTCP_MUX_REQUIRE},
        {"reject", MOAT_NG_RTCP_MUX_REJECT},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(words); i++) {
        if (ng_name_equal(text, length, words[i].name))
            r->rtcp_mux |= words[i].bit;
    }
    return 0;
}

/* A suite name as RFC 4568 spells them: upper case, digits, '_'. */
static bool looks_like_suite(const char *text, size_t length)
{
    if (length == 0 || memchr(text, '_', length) == NULL)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (!(g_ascii_isupper(c) || g_ascii_isdigit(c) || c == '_'))
            return false;
    }
    return true;
}

static void add_suite(moat_ng_request *r, const char **suites, size_t *count, const char *text,
                      size_t length)
{
    if (*count < MOAT_NG_MAX_SUITES && looks_like_suite(text, length))
        suites[(*count)++] = ng_request_own(r, text, length);
}

static int sdes_one(moat_ng_request *r, const char *text, size_t length, char *e, size_t n)
{
    size_t rest = 0;
    if (ng_name_equal(text, length, "off") || ng_name_equal(text, length, "no") ||
        ng_name_equal(text, length, "disable"))
        r->sdes_off = true;
    else if (ng_name_prefix(text, length, "only-", &rest))
        add_suite(r, r->sdes_only, &r->n_sdes_only, text + rest, length - rest);
    else if (ng_name_prefix(text, length, "no-", &rest))
        add_suite(r, r->sdes_no, &r->n_sdes_no, text + rest, length - rest);
    else
        add_suite(r, r->sdes_only, &r->n_sdes_only, text, length);
    /* The RFC 4568 session parameters (unencrypted_srtp, ...) are ignored. */
    return 0;
}

static int direction_one(moat_ng_request *r, const char *text, size_t length, char *e, size_t n)
{
    if (strlen(text) != length)
        return 1;
    if (r->direction[0] == NULL)
        r->direction[0] = text;
    else if (r->direction[1] == NULL)
        r->direction[1] = text;
    return 0;
}

static int codec_add(moat_ng_codec_list *list, moat_ng_request *r, const char *text, size_t length)
{
    /* "PCMU,PCMA" as one string is a list too. */
    while (length > 0) {
        const char *comma = memchr(text, ',', length);
        size_t part = comma ? (size_t)(comma - text) : length;
        if (part > 0 && list->count < MOAT_NG_MAX_CODECS && memchr(text, '\0', part) == NULL)
            list->names[list->count++] = ng_request_own(r, text, part);
        size_t step = comma ? part + 1 : part;
        text += step;
        length -= step;
    }
    return 0;
}

#define CODEC_LIST_SETTER(field)                                                                   \
    static int field##_one(moat_ng_request *r, const char *t, size_t l, char *e, size_t n)         \
    {                                                                                              \
        return codec_add(&r->field, r, t, l);                                                      \
    }                                                                                              \
    static int set_##field(moat_ng_request *r, const ng_value *v, char *e, size_t n)               \
    {                                                                                              \
        return ng_value_each(r, v, field##_one, e, n);                                             \
    }
CODEC_LIST_SETTER(codec_strip)
CODEC_LIST_SETTER(codec_offer)
CODEC_LIST_SETTER(codec_transcode)
CODEC_LIST_SETTER(codec_mask)

static int set_replace(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return ng_value_each(r, v, replace_one, e, n);
}

static int set_rtcp_mux(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return ng_value_each(r, v, rtcp_mux_one, e, n);
}

static int set_sdes(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return ng_value_each(r, v, sdes_one, e, n);
}

static int set_direction(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return ng_value_each(r, v, direction_one, e, n);
}

/* "flags" only from the dictionary: a "flags=..." flag string is ignored
 * (no recursion through flag strings). */
static int set_flags(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    return v->item ? ng_value_each(r, v, ng_flag_apply, e, n) : 0;
}

/* "codec": {"strip": [...], "offer": [...], "transcode": [...], "mask": [...]} */
static int set_codec(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    if (!v->item || moat_bencode_type_of(v->item) != MOAT_BENCODE_DICTIONARY)
        return 1;
    static const struct {
        const char *name;
        ng_setter_fn set;
    } parts[] = {
        {"strip", set_codec_strip},
        {"offer", set_codec_offer},
        {"transcode", set_codec_transcode},
        {"mask", set_codec_mask},
    };
    for (size_t i = 0; i < moat_bencode_count(v->item); i++) {
        const char *key = NULL;
        size_t key_length = 0;
        ng_value part = {.item = moat_bencode_item(v->item, i, &key, &key_length)};
        for (size_t p = 0; p < G_N_ELEMENTS(parts); p++) {
            if (ng_name_equal(key, key_length, parts[p].name) && parts[p].set(r, &part, e, n) != 0)
                return 1;
        }
    }
    return 0;
}

/* "received from": ["IP4", "192.0.2.1"], or one string "IP4 192.0.2.1". */
static int set_received_from(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    const char *parts[2] = {NULL, NULL};
    if (v->item && moat_bencode_type_of(v->item) == MOAT_BENCODE_LIST) {
        if (moat_bencode_count(v->item) != 2)
            return 1;
        for (size_t i = 0; i < 2; i++) {
            size_t length = 0;
            parts[i] = moat_bencode_string(moat_bencode_item(v->item, i, NULL, NULL), &length);
            if (!parts[i] || strlen(parts[i]) != length)
                return 1;
        }
    } else {
        const char *text = NULL;
        size_t length = 0;
        if (ng_value_text(r, v, &text, &length) != 0 || strlen(text) != length)
            return 1;
        const char *space = strchr(text, ' ');
        if (!space)
            return 1;
        parts[0] = ng_request_own(r, text, (size_t)(space - text));
        parts[1] = space + 1;
    }
    r->received_from_family = parts[0];
    r->received_from_address = parts[1];
    return 0;
}

/* Seconds, as an integer or a decimal string; 0 stops relaying at once. */
static int set_delete_delay(moat_ng_request *r, const ng_value *v, char *e, size_t n)
{
    int64_t seconds = 0;
    if (!v->item || !moat_bencode_integer(v->item, &seconds)) {
        const char *text = NULL;
        size_t length = 0;
        if (ng_value_text(r, v, &text, &length) != 0 || length == 0 || length > 9)
            return 1;
        for (size_t i = 0; i < length; i++) {
            if (!g_ascii_isdigit(text[i]))
                return 1;
        }
        seconds = g_ascii_strtoll(text, NULL, 10);
    }
    if (seconds < 0 || seconds > 86400)
        return 1;
    r->delete_delay_s = (int)seconds;
    return 0;
}

static const ng_key_setter setters[] = {
    {"call-id", set_call_id},
    {"from-tag", set_from_tag},
    {"to-tag", set_to_tag},
    {"via-branch", set_via_branch},
    {"sdp", set_sdp},
    {"flags", set_flags},
    {"replace", set_replace},
    {"ice", set_ice},
    {"dtls", set_dtls},
    {"transport-protocol", set_transport},
    {"rtcp-mux", set_rtcp_mux},
    {"sdes", set_sdes},
    {"direction", set_direction},
    {"media-address", set_media_address},
    {"address-family", set_address_family},
    {"received-from", set_received_from},
    {"codec", set_codec},
    {"codec-strip", set_codec_strip},
    {"codec-offer", set_codec_offer},
    {"codec-transcode", set_codec_transcode},
    {"codec-mask", set_codec_mask},
    {"delete-delay", set_delete_delay},
    {"record-call", set_record_call},
};

const ng_key_setter *ng_key_setter_find(const char *key, size_t length)
{
    for (size_t i = 0; i < G_N_ELEMENTS(setters); i++) {
        if (ng_name_equal(key, length, setters[i].name))
            return &setters[i];
    }
    return NULL;
}

/* ---- plain words of the "flags" list ---- */

static bool *boolean_flag(moat_ng_request *r, const char *flag, size_t length)
{
    const struct {
        const char *name;
        bool *field;
    } flags[] = {
        {"trust-address", &r->trust_address},
        {"symmetric", &r->symmetric},
        {"asymmetric", &r->asymmetric},
        {"strict-source", &r->strict_source},
        {"fatal", &r->fatal},
        {"port-latching", &r->port_latching},
        {"record-call", &r->record_call},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(flags); i++) {
        if (ng_name_equal(flag, length, flags[i].name))
            return flags[i].field;
    }
    return NULL;
}

/* "<prefix><value>" words: the rest goes to that list's setter. */
static const struct {
    const char *prefix;
    ng_text_fn one;
} prefixed[] = {
    {"replace-", replace_one},
    {"rtcp-mux-", rtcp_mux_one},
    {"sdes-", sdes_one},
    {"codec-strip-", codec_strip_one},
    {"codec-offer-", codec_offer_one},
    {"codec-transcode-", codec_transcode_one},
    {"codec-mask-", codec_mask_one},
};

int ng_flag_word(moat_ng_request *r, const char *flag, size_t length, char *e, size_t n)
{
    bool *field = boolean_flag(r, flag, length);
    if (field) {
        *field = true;
        return 0;
    }
    if (ng_name_equal(flag, length, "SIP-source-address")) {
        r->trust_address = false;
        return 0;
    }
    if (ng_name_equal(flag, length, "internal") || ng_name_equal(flag, length, "external"))
        return direction_one(r, ng_request_own(r, flag, length), length, e, n);
    const char *transport = transport_from_name(flag, length);
    if (transport) {
        r->transport_protocol = transport;
        return 0;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(prefixed); i++) {
        size_t rest = 0;
        if (ng_name_prefix(flag, length, prefixed[i].prefix, &rest))
            return prefixed[i].one(r, flag + rest, length - rest, e, n);
    }
    return 0; /* unknown flags are ignored */
}
