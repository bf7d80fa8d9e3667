/* The WebSocket event path parser (core/events.h moat_events_resource_topic)
 * on arbitrary paths under "/api/rooms" and arbitrary prefixes. Checked: an
 * accepted path gives "<prefix without /api/>/<resource>", NUL-terminated
 * within the buffer, with no '/' in the resource and only printable ASCII in
 * it (the prefix is the plugin's own).
 * Input: <prefix>\n<path>. */
#include "session/events.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *prefix, const char *path)
{
    char topic[64];
    memset(topic, 'x', sizeof topic);
    if (!moat_events_resource_topic(prefix, path, topic, sizeof topic))
        return;
    size_t length = strnlen(topic, sizeof topic);
    size_t name = strlen(prefix) - strlen("/api/");
    if (length == sizeof topic || length <= name + 1 || strncmp(topic, prefix + 5, name) != 0 ||
        topic[name] != '/' || strchr(topic + name + 1, '/'))
        abort();
    for (size_t i = name + 1; i < length; i++) {
        if (topic[i] <= ' ' || topic[i] > '~')
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *newline = strchr(text, '\n');
    if (newline) {
        *newline = '\0';
        check(text, newline + 1);
    }
    check("/api/rooms", text);
    free(text);
    return 0;
}
