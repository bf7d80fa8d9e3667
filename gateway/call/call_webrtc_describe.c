/* Owns the text of a WebRTC party's description on renegotiation: its
 * identity and the redescription with the other party's directions
 * (call_webrtc_describe.h). */
#include "call/call_webrtc_describe.h"

#include "call/call_sdp.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const DIRECTIONS[] = {"sendrecv", "sendonly", "recvonly", "inactive"};

/* The direction an "a=..." line names (index into DIRECTIONS), or -1. */
static int direction_of(const char *line)
{
    if (strncmp(line, "a=", 2) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(line + 2, DIRECTIONS[i]) == 0)
            return i;
    return -1;
}

/* Lines without their "\r". */
static char **lines_of(const char *text, size_t length)
{
    char *copy = g_strndup(text, length);
    char **lines = g_strsplit(copy, "\n", -1);
    g_free(copy);
    for (char **l = lines; *l; l++)
        g_strchomp(*l);
    return lines;
}

static bool value_after(char **lines, const char *prefix, GString *out)
{
    size_t n = strlen(prefix);
    for (char **l = lines; *l; l++) {
        if (strncmp(*l, prefix, n) == 0 && (*l)[n]) {
            g_string_append(out, *l + n);
            return true;
        }
    }
    return false;
}

bool moat_call_webrtc_identity(const char *text, size_t length,
                               char out[MOAT_CALL_WEBRTC_IDENTITY_SIZE])
{
    char **lines = lines_of(text, length);
    GString *id = g_string_new(NULL);
    static const char *const parts[] = {"a=ice-ufrag:", "a=ice-pwd:", "a=fingerprint:"};
    bool found = true;
    for (size_t i = 0; i < 3 && found; i++) {
        if (i > 0)
            g_string_append_c(id, ' ');
        found = value_after(lines, parts[i], id);
    }
    found = found && id->len < MOAT_CALL_WEBRTC_IDENTITY_SIZE;
    if (found)
        memcpy(out, id->str, id->len + 1);
    g_string_free(id, TRUE);
    g_strfreev(lines);
    return found;
}

/* Each m-section's direction in `other` (session level where it has none). */
static size_t directions_of(const char *other, size_t length, int *out)
{
    char **lines = lines_of(other, length);
    int session = 0;
    size_t n = 0;
    for (char **l = lines; *l; l++) {
        if (strncmp(*l, "m=", 2) == 0) {
            if (n == MOAT_CALL_SDP_MAX_MEDIA)
                break;
            out[n++] = -1;
            continue;
        }
        int d = direction_of(*l);
        if (d >= 0 && n == 0)
            session = d;
        else if (d >= 0)
            out[n - 1] = d;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = out[i] < 0 ? session : out[i];
    g_strfreev(lines);
    return n;
}

/* "o=<user> <id> <version> <rest>" with version + 1; false if malformed. */
static bool bump_origin(const char *line, GString *out)
{
    char user[128], id[64], rest[256];
    unsigned long long version;
    if (strlen(line) > 400 ||
        sscanf(line, "o=%127s %63s %llu %255[^\n]", user, id, &version, rest) != 4)
        return false;
    g_string_append_printf(out, "o=%s %s %llu %s\r\n", user, id, version + 1, rest);
    return true;
}

/* The section's direction line, if it had none and one is wanted. */
static void close_section(GString *out, int section, bool had, const int *wanted, size_t n)
{
    if (section >= 0 && (size_t)section < n && !had && wanted[section] != 0)
        g_string_append_printf(out, "a=%s\r\n", DIRECTIONS[wanted[section]]);
}

static char *with_directions(char **lines, const int *wanted, size_t n)
{
    GString *out = g_string_new(NULL);
    int section = -1;
    bool had = false;
    for (char **l = lines; *l; l++) {
        if (!**l)
            continue;
        if (strncmp(*l, "m=", 2) == 0) {
            close_section(out, section, had, wanted, n);
            section++;
            had = false;
        }
        int d = direction_of(*l);
        if (d >= 0 && (section < 0 || (size_t)section < n)) {
            if (section < 0)
                continue; /* each m-section says its own */
            d = wanted[section];
            had = true;
        }
        if (d >= 0)
            g_string_append_printf(out, "a=%s\r\n", DIRECTIONS[d]);
        else
            g_string_append_printf(out, "%s\r\n", *l);
    }
    close_section(out, section, had, wanted, n);
    return g_string_free(out, FALSE);
}

/* `text` (Moat's own, its lines) with its o= version one higher; NULL if
 * it has none. */
static char *bumped(char **lines)
{
    GString *out = g_string_new(NULL);
    bool done = false;
    for (char **l = lines; *l; l++) {
        if (!**l)
            continue;
        if (!done && strncmp(*l, "o=", 2) == 0 && bump_origin(*l, out)) {
            done = true;
            continue;
        }
        g_string_append_printf(out, "%s\r\n", *l);
    }
    if (!done) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

char *moat_call_webrtc_new_credentials(const char *described, const char *ufrag, const char *pwd)
{
    char **lines = lines_of(described, strlen(described));
    for (char **l = lines; *l; l++) {
        bool is_ufrag = strncmp(*l, "a=ice-ufrag:", 12) == 0;
        if (is_ufrag || strncmp(*l, "a=ice-pwd:", 10) == 0) {
            g_free(*l);
            *l = g_strdup_printf("a=ice-%s:%s", is_ufrag ? "ufrag" : "pwd", is_ufrag ? ufrag : pwd);
        }
    }
    char *out = bumped(lines);
    g_strfreev(lines);
    return out;
}

char *moat_call_webrtc_redescribe(const char *described, const char *other, size_t other_length)
{
    int wanted[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n = directions_of(other, other_length, wanted);
    char **lines = lines_of(described, strlen(described));
    char *text = with_directions(lines, wanted, n);
    g_strfreev(lines);
    if (strcmp(text, described) == 0)
        return text;
    lines = lines_of(text, strlen(text));
    char *out = bumped(lines);
    g_strfreev(lines);
    g_free(text);
    return out;
}
