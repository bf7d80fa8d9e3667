/* Simulcast attributes of an m-line: a=rid (RFC 8851) and a=simulcast
 * (RFC 8853). Only what the gateway answers is kept: each rid's id and
 * direction, and the first alternative of each stream the peer sends. */
#include "sdp_attr.h"

#include <string.h>

/* rid-id = 1*(alpha-numeric / "-" / "_"); longer than the gateway's
 * buffer counts as not usable. */
static bool rid_id_valid(moat_sdp_span id)
{
    if (id.len == 0 || id.len >= MOAT_PLUGIN_RID_SIZE)
        return false;
    for (size_t i = 0; i < id.len; i++) {
        char c = id.p[i];
        if (!g_ascii_isalnum(c) && c != '-' && c != '_')
            return false;
    }
    return true;
}

static bool has_rid(const moat_sdp_media *m, moat_sdp_span id)
{
    for (size_t i = 0; i < m->n_rids; i++) {
        if (moat_sdp_span_eq(id, m->rids[i].id))
            return true;
    }
    return false;
}

int moat_sdp_attr_rid(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, id, direction;
    if (!moat_sdp_span_next_token(&rest, &id) || !moat_sdp_span_next_token(&rest, &direction)) {
        *why = "expected <rid-id> send|recv";
        return -1;
    }
    bool send = moat_sdp_span_eq(direction, "send");
    if (!send && !moat_sdp_span_eq(direction, "recv")) {
        *why = "bad direction";
        return -1;
    }
    if (!rid_id_valid(id) || m->n_rids >= MOAT_SDP_MAX_RIDS)
        return 1; /* legal but not one the gateway can name */
    if (has_rid(m, id)) {
        *why = "duplicate rid";
        return -1;
    }
    moat_sdp_rid *rid = &m->rids[m->n_rids++];
    moat_sdp_span_copy(id, rid->id, sizeof rid->id);
    rid->send = send;
    return 0;
}

static bool in_send_list(const moat_sdp_media *m, moat_sdp_span id)
{
    for (size_t i = 0; i < m->n_simulcast_send; i++)
        if (moat_sdp_span_eq(id, m->simulcast_send[i]))
            return true;
    return false;
}

/* Keeps the first alternative of each ';'-separated stream of a send list. */
static int take_send_list(moat_sdp_media *m, moat_sdp_span list, const char **why)
{
    moat_sdp_span rest = list, stream, first, alternatives;
    while (rest.len > 0) {
        moat_sdp_span_split(rest, ';', &stream, &rest);
        moat_sdp_span_split(stream, ',', &first, &alternatives);
        if (first.len > 0 && first.p[0] == '~') {
            first.p++;
            first.len--;
        }
        if (first.len == 0) {
            *why = "empty stream in list";
            return -1;
        }
        if (!rid_id_valid(first) || m->n_simulcast_send >= MOAT_SDP_MAX_RIDS)
            continue;
        if (in_send_list(m, first)) {
            *why = "rid twice in simulcast list"; /* RFC 8853 §5.1 */
            return -1;
        }
        moat_sdp_span_copy(first, m->simulcast_send[m->n_simulcast_send],
                           sizeof m->simulcast_send[0]);
        m->n_simulcast_send++;
    }
    return 0;
}

int moat_sdp_attr_simulcast(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, direction, list;
    bool any = false, seen_send = false;
    if (m->n_simulcast_send > 0)
        return 1; /* one a=simulcast per m-line; later ones are ignored */
    while (moat_sdp_span_next_token(&rest, &direction)) {
        if (!moat_sdp_span_next_token(&rest, &list)) {
            *why = "direction without a list";
            return -1;
        }
        bool send = moat_sdp_span_eq(direction, "send");
        if (!send && !moat_sdp_span_eq(direction, "recv")) {
            *why = "bad direction";
            return -1;
        }
        any = true;
        if (send && seen_send) {
            *why = "two send lists";
            return -1;
        }
        seen_send = seen_send || send;
        if (send && take_send_list(m, list, why) < 0)
            return -1;
    }
    if (!any) {
        *why = "missing direction";
        return -1;
    }
    return 0;
}
