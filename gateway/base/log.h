/* Structured logging: one line per event, `ts=... level=... msg="..." key=value`.
 * The message is escaped (log.c write_escaped): whatever bytes a peer's text
 * in it holds, it stays inside its quotes, on its line, and cannot drive a
 * terminal; valid UTF-8 is kept. `fields` are written as given: callers
 * build them from text they checked.
 * The level is set once at start-up; the logger itself holds no per-packet
 * state. Anything that could fire per packet goes through a moat_log_limiter
 * owned by the caller (one per worker or per session), so a flood can never
 * turn into a log flood. */
#ifndef MOAT_LOG_H
#define MOAT_LOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    MOAT_LOG_ERROR = 0,
    MOAT_LOG_WARN = 1,
    MOAT_LOG_INFO = 2,
    MOAT_LOG_DEBUG = 3,
} moat_log_level;

void moat_log_set_level(moat_log_level level);
moat_log_level moat_log_get_level(void);
/* "error", "warn", "info", "debug"; returns -1 for anything else. */
int moat_log_level_parse(const char *name);

/* `fields` are preformatted key=value pairs (may be NULL). */
void moat_log_write(moat_log_level level, const char *component, const char *fields,
                    const char *format, ...) __attribute__((format(printf, 4, 5)));

#define moat_log_error(component, ...) moat_log_write(MOAT_LOG_ERROR, component, NULL, __VA_ARGS__)
#define moat_log_warn(component, ...)  moat_log_write(MOAT_LOG_WARN, component, NULL, __VA_ARGS__)
#define moat_log_info(component, ...)  moat_log_write(MOAT_LOG_INFO, component, NULL, __VA_ARGS__)
#define moat_log_debug(component, ...)                                                             \
    do {                                                                                           \
        if (moat_log_get_level() >= MOAT_LOG_DEBUG)                                                \
            moat_log_write(MOAT_LOG_DEBUG, component, NULL, __VA_ARGS__);                          \
    } while (0)

/* Allows `burst` lines per `interval_us`, then counts what it suppressed. */
typedef struct {
    uint64_t window_start_us;
    uint64_t interval_us;
    uint32_t burst;
    uint32_t emitted;
    uint64_t suppressed;
} moat_log_limiter;

void moat_log_limiter_init(moat_log_limiter *limiter, uint32_t burst, uint64_t interval_us);
/* True when the caller may log now; *suppressed_out (optional) receives the
 * number of lines dropped since the previous allowed one. */
bool moat_log_limiter_allow(moat_log_limiter *limiter, uint64_t now_us, uint64_t *suppressed_out);

#endif
