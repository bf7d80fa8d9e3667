/* SRTP+ in SDP (SRTPPLUS.md §6): parses a=srtpplus with its chain parameters,
 * chooses the first offered scheme the gateway supports, and writes it into
 * the answer. */
#include "sdp_attr.h"
#include "sdp_srtpplus.h"

#include <string.h>

/* Reads "depth=D;copies=R" (any order, spaces allowed around ';'). Unknown
 * keys are skipped so that a later version can add parameters. */
static int parse_chain_parameters(moat_sdp_span parameters, moat_sdp_srtpplus *out,
                                  const char **why)
{
    uint32_t depth = MOAT_SDP_SRTPPLUS_DEFAULT_DEPTH, copies = 0;
    bool has_copies = false;
    moat_sdp_span rest = parameters, item, key, value;
    while (rest.len > 0) {
        moat_sdp_span_split(rest, ';', &item, &rest);
        item = moat_sdp_span_trim(item);
        if (item.len == 0)
            continue;
        if (!moat_sdp_span_split(item, '=', &key, &value)) {
            *why = "malformed parameter";
            return -1;
        }
        key = moat_sdp_span_trim(key);
        value = moat_sdp_span_trim(value);
        if (moat_sdp_span_eq(key, "depth")) {
            if (!moat_sdp_span_u32(value, 255, &depth) || depth == 0) {
                *why = "depth must be 1..255";
                return -1;
            }
        } else if (moat_sdp_span_eq(key, "copies")) {
            if (!moat_sdp_span_u32(value, 4, &copies) || copies == 0) {
                *why = "copies must be 1..4";
                return -1;
            }
            has_copies = true;
        }
    }
    /* The default of 2 copies cannot exceed an explicit depth of 1. */
    if (!has_copies)
        copies =
            depth < MOAT_SDP_SRTPPLUS_DEFAULT_COPIES ? depth : MOAT_SDP_SRTPPLUS_DEFAULT_COPIES;
    if (copies > depth) {
        *why = "copies larger than depth";
        return -1;
    }
    out->depth = (uint8_t)depth;
    out->copies = (uint8_t)copies;
    return 0;
}

int moat_sdp_attr_srtpplus(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, scheme_name;
    if (!moat_sdp_span_next_token(&rest, &scheme_name)) {
        *why = "missing scheme";
        return -1;
    }
    moat_sdp_srtpplus scheme;
    memset(&scheme, 0, sizeof scheme);
    if (moat_sdp_span_eq_nocase(scheme_name, "prn")) {
        g_strlcpy(scheme.scheme, "prn", sizeof scheme.scheme);
    } else if (moat_sdp_span_eq_nocase(scheme_name, "chain")) {
        g_strlcpy(scheme.scheme, "chain", sizeof scheme.scheme);
        if (parse_chain_parameters(moat_sdp_span_trim(rest), &scheme, why) < 0)
            return -1;
    } else {
        return 1; /* a scheme from a later version: not ours to refuse */
    }
    for (size_t i = 0; i < m->n_srtpplus; i++)
        if (strcmp(m->srtpplus[i].scheme, scheme.scheme) == 0)
            return 1; /* the first listing states the preference */
    if (m->n_srtpplus >= MOAT_SDP_MAX_SRTPPLUS) {
        *why = "too many schemes";
        return -1;
    }
    m->srtpplus[m->n_srtpplus++] = scheme;
    return 0;
}

bool moat_sdp_srtpplus_choose(const moat_sdp_srtpplus *offered, size_t n, bool prn_supported,
                              bool chain_supported, moat_sdp_srtpplus *chosen)
{
    for (size_t i = 0; i < n; i++) {
        bool is_prn = strcmp(offered[i].scheme, "prn") == 0;
        bool is_chain = strcmp(offered[i].scheme, "chain") == 0;
        if ((is_prn && prn_supported) || (is_chain && chain_supported)) {
            *chosen = offered[i];
            return true;
        }
    }
    return false;
}

void moat_sdp_srtpplus_write(GString *out, const moat_sdp_srtpplus *scheme)
{
    if (strcmp(scheme->scheme, "chain") == 0)
        g_string_append_printf(out, "a=srtpplus:chain depth=%u;copies=%u\r\n",
                               (unsigned)scheme->depth, (unsigned)scheme->copies);
    else
        g_string_append(out, "a=srtpplus:prn\r\n");
}
