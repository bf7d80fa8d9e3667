/* Test helper: text surgery on sample SDP offers (replace, drop lines, count),
 * so each test states the one change it makes to a real offer. */
#include "sdp_test_text.h"

#include <glib.h>
#include <string.h>

char *moat_test_replace(const char *text, const char *from, const char *to)
{
    char **parts = g_strsplit(text, from, -1);
    char *joined = g_strjoinv(to, parts);
    g_strfreev(parts);
    return joined;
}

char *moat_test_drop_lines(const char *text, const char *prefix)
{
    GString *out = g_string_new(NULL);
    const char *line = text;
    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, prefix, strlen(prefix)) != 0)
            g_string_append_len(out, line, (gssize)len);
        line += len;
    }
    return g_string_free(out, FALSE);
}

size_t moat_test_count(const char *text, const char *needle)
{
    size_t n = 0, step = strlen(needle);
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + step, needle))
        n++;
    return n;
}
