/* libFuzzer target: what the client tools make of a server's text. The
 * input is split at its first NUL: tool_text_printable leaves only printable
 * ASCII, tool_text_quoted never writes past its buffer and leaves no '"'
 * unescaped (so a summary field cannot be closed early), and
 * whip_same_origin (a Location against a WHIP URL) never reads past either
 * string and is symmetric. */
#include "tool_text.h"
#include "whip_address.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_quoted(const char *text)
{
    char out[64];
    tool_text_quoted(text, out, sizeof out);
    size_t n = strlen(out);
    if (n >= sizeof out)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (out[i] < 0x20 || out[i] >= 0x7f)
            abort();
        if (out[i] == '\\' || out[i] == '"') {
            if (out[i] == '"' || i + 1 >= n || (out[i + 1] != '"' && out[i + 1] != '\\'))
                abort();
            i++;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    const char *other = strlen(text) < size ? text + strlen(text) + 1 : "";
    check_quoted(text);
    if (whip_same_origin(text, other) != whip_same_origin(other, text))
        abort();
    tool_text_printable(text);
    for (const char *p = text; *p; p++)
        if (*p < 0x20 || *p >= 0x7f)
            abort();
    free(text);
    return 0;
}
