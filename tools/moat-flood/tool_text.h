/* Text that came from outside (a server's answer body, its headers, a
 * Janus reason) made safe for where the tools print it: a terminal, the
 * summary's key="value" fields and JSON. Every byte that is not printable
 * ASCII (control bytes such as ESC and BEL, DEL, and every byte from 0x80:
 * escape sequences, UTF-8 whole, cut or invalid) becomes '?', so nothing
 * reaches the terminal but plain text and any JSON encoder takes it. Pure;
 * any thread. */
#ifndef TOOL_TEXT_H
#define TOOL_TEXT_H

#include <stddef.h>

/* Replaces, in place, each byte of text that is not printable ASCII. */
void tool_text_printable(char *text);

/* text as the inside of a double-quoted summary field: printable as above,
 * '"' and '\\' escaped with a backslash; cut to fit size (never inside an
 * escape). */
void tool_text_quoted(const char *text, char *out, size_t size);

#endif
