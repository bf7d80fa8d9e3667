/* Outside text made printable and quotable (tool_text.h). */
#include "tool_text.h"

static int printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

void tool_text_printable(char *text)
{
    for (unsigned char *p = (unsigned char *)text; *p; p++)
        if (!printable(*p))
            *p = '?';
}

void tool_text_quoted(const char *text, char *out, size_t size)
{
    if (size == 0)
        return;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        unsigned char c = printable(*p) ? *p : '?';
        size_t need = c == '"' || c == '\\' ? 2 : 1;
        if (n + need >= size)
            break;
        if (need == 2)
            out[n++] = '\\';
        out[n++] = (char)c;
    }
    out[n] = '\0';
}
