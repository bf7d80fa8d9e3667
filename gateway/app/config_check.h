/* What --check-config (and every start, before anything is bound) checks:
 * the values' types and ranges (moat_config_validate), then what the start
 * would refuse further on: the files the configuration names load, the bind
 * addresses parse as their sockets parse them, [call] denied_networks, the
 * plugin folder holds plugin modules, the [cluster] settings. Nothing is
 * bound, connected or loaded. Control thread, at start-up. */
#ifndef MOAT_APP_CONFIG_CHECK_H
#define MOAT_APP_CONFIG_CHECK_H

#include "base/config.h"

#include <stddef.h>

/* 0, or -1 with one line in `error`. */
int moat_app_config_check(const moat_config *config, char *error, size_t error_size);

#endif
