/* The 400 detail for a request body that must be a JSON object (the API's
 * routes, plugins' routes and session messages): jansson's own words for a
 * body it could not parse (invalid UTF-8, trailing bytes, a duplicate key:
 * what and where), else "the body must be a JSON object". Header-only, so
 * that plugins, which do not link libmoat, use it too. Any thread. */
#ifndef MOAT_JSON_BODY_H
#define MOAT_JSON_BODY_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* `parsed`: what json_loadb returned; `error`: its error, or NULL when
 * nothing was parsed (no body). Writes printable ASCII only: jansson quotes
 * the bytes near the error, which may be anything. */
static inline void moat_json_body_detail(const json_t *parsed, const json_error_t *error, char *out,
                                         size_t size)
{
    if (parsed || !error || !error->text[0])
        snprintf(out, size, "the body must be a JSON object");
    else
        snprintf(out, size, "the body is not valid JSON: %s (at byte %d)", error->text,
                 error->position);
    for (char *p = out; *p; p++) {
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    }
}

#endif
