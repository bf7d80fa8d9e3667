/* The option table (config.c reads it): each option's section, key,
 * command-line name, type, field, default, range and help. Private to
 * gateway/base. */
#ifndef MOAT_CONFIG_OPTIONS_H
#define MOAT_CONFIG_OPTIONS_H

#include "base/config.h"

#include <stddef.h>

typedef enum { OPTION_STRING, OPTION_INT, OPTION_BOOL, OPTION_DOUBLE } option_type;

typedef struct {
    const char *section;
    const char *key;
    const char *cli_name;
    option_type type;
    size_t offset;
    const char *default_value;
    long min, max; /* integers: the range; decimals: max bounds (min: above 0) */
    const char *help;
} option_spec;

extern const option_spec moat_config_options[];
extern const size_t moat_config_option_count;

#endif
