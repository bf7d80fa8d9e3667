/* Structured log lines and the per-caller rate limiter (log.h). */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Written once before any thread starts, read-only afterwards. */
static moat_log_level configured_level = MOAT_LOG_INFO;

void moat_log_set_level(moat_log_level level)
{
    configured_level = level;
}

moat_log_level moat_log_get_level(void)
{
    return configured_level;
}

int moat_log_level_parse(const char *name)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++) {
        if (name && strcmp(name, names[i]) == 0)
            return i;
    }
    return -1;
}

/* The length of the valid UTF-8 sequence of two to four bytes at `p`
 * (shortest form, no surrogate, at most U+10FFFF), or 0. */
static size_t utf8_sequence_length(const unsigned char *p)
{
    unsigned char lead = p[0];
    size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                    : lead >= 0xe0 && lead <= 0xef ? 3
                    : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                   : 0;
    for (size_t i = 1; i < length; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    }
    if ((lead == 0xe0 && p[1] < 0xa0) || (lead == 0xed && p[1] > 0x9f) ||
        (lead == 0xf0 && p[1] < 0x90) || (lead == 0xf4 && p[1] > 0x8f))
        return 0;
    return length;
}

/* U+0080..U+009F: C1 controls, which some terminals obey (0xc2 0x9b is CSI). */
static bool is_c1_control(const unsigned char *p, size_t length)
{
    return length == 2 && p[0] == 0xc2 && p[1] <= 0x9f;
}

/* The message between the quotes of msg="...": '"' and '\' escaped, \n \r
 * \t named, every other control byte (< 0x20, 0x7f, a C1 control) and every
 * byte of invalid UTF-8 written as \xHH, so that text from a peer (a data
 * channel's label) can neither end the line nor drive a terminal. Valid
 * UTF-8 is kept as it is. */
static void write_escaped(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p, out);
        } else if (*p == '\n') {
            fputs("\\n", out);
        } else if (*p == '\r') {
            fputs("\\r", out);
        } else if (*p == '\t') {
            fputs("\\t", out);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\x%02x", *p);
        } else if (*p < 0x80) {
            fputc(*p, out);
        } else {
            size_t length = utf8_sequence_length(p);
            if (length == 0 || is_c1_control(p, length)) {
                fprintf(out, "\\x%02x", *p);
                continue;
            }
            fwrite(p, 1, length, out);
            p += length - 1;
        }
    }
}

void moat_log_write(moat_log_level level, const char *component, const char *fields,
                    const char *format, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (level > configured_level)
        return;
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);

    /* One fprintf per line under the stdio lock keeps lines whole across threads. */
    flockfile(stderr);
    fprintf(stderr, "ts=%s.%03ldZ level=%s component=%s msg=\"", stamp, now.tv_nsec / 1000000,
            names[level], component);
    write_escaped(stderr, message);
    fputc('"', stderr);
    if (fields && *fields)
        fprintf(stderr, " %s", fields);
    fputc('\n', stderr);
    funlockfile(stderr);
}

void moat_log_limiter_init(moat_log_limiter *limiter, uint32_t burst, uint64_t interval_us)
{
    memset(limiter, 0, sizeof *limiter);
    limiter->burst = burst;
    limiter->interval_us = interval_us;
}

bool moat_log_limiter_allow(moat_log_limiter *limiter, uint64_t now_us, uint64_t *suppressed_out)
{
    if (now_us - limiter->window_start_us >= limiter->interval_us) {
        limiter->window_start_us = now_us;
        limiter->emitted = 0;
    }
    if (limiter->emitted >= limiter->burst) {
        limiter->suppressed++;
        return false;
    }
    limiter->emitted++;
    if (suppressed_out)
        *suppressed_out = limiter->suppressed;
    limiter->suppressed = 0;
    return true;
}
