/* The attack classes' command-line names, one-line descriptions, and which
 * classes need a live WHIP session's 5-tuple. */
#include "attack_kind.h"

#include <string.h>

static const struct {
    const char *name;
    bool needs_session;
    const char *description;
} kinds[ATTACK_KIND_COUNT] = {
    [ATTACK_FORGED_OWN] = {"forged-own", true, "forged SRTP, live SSRC, from the session's socket"},
    [ATTACK_FORGED_SPOOFED] = {"forged-spoofed", true,
                               "the same from a raw socket spoofing it (IPv4, root)"},
    [ATTACK_RANDOM_SSRC] = {"random-ssrc", true, "forged SRTP, random SSRCs, session's 5-tuple"},
    [ATTACK_REPLAY] = {"replay", true, "captured legitimate SRTP packets sent again"},
    [ATTACK_FORGED_RTCP] = {"forged-rtcp", true, "forged SRTCP on the session's 5-tuple"},
    [ATTACK_STUN_FLOOD] = {"stun-flood", false, "Binding requests for ufrags that do not exist"},
    [ATTACK_DTLS_HELLO_FLOOD] = {"dtls-hello-flood", false,
                                 "ClientHellos from fresh, never-checked ports"},
    [ATTACK_MALFORMED] = {"malformed", false, "datagrams no RFC 7983 demultiplexer accepts"},
};

const char *attack_kind_name(attack_kind kind)
{
    return kind < ATTACK_KIND_COUNT ? kinds[kind].name : "unknown";
}

bool attack_kind_from_name(const char *name, attack_kind *out)
{
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        if (strcmp(kinds[k].name, name) == 0) {
            *out = (attack_kind)k;
            return true;
        }
    }
    return false;
}

bool attack_kind_needs_session(attack_kind kind)
{
    return kind < ATTACK_KIND_COUNT && kinds[kind].needs_session;
}

const char *attack_kind_description(attack_kind kind)
{
    return kind < ATTACK_KIND_COUNT ? kinds[kind].description : "";
}
