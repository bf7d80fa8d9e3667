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

static void write_escaped(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', out);
        if (*p == '\n') {
            fputs("\\n", out);
            continue;
        }
        fputc(*p, out);
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
