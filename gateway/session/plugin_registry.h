/* Loads plugin modules (GModule) from the plugin folder and finds them by
 * name. Control thread only. */
#ifndef MOAT_PLUGIN_REGISTRY_H
#define MOAT_PLUGIN_REGISTRY_H

#include "plugin.h"

#include <stddef.h>

typedef struct moat_plugin_registry moat_plugin_registry;

/* Loads every `moat-*.so` in `folder` and initialises it with `calls`. Returns
 * NULL with a message when the folder cannot be read or no plugin loads. */
moat_plugin_registry *moat_plugin_registry_load(const char *folder, const moat_gateway_calls *calls,
                                                char *error, size_t error_size);
/* What moat_plugin_registry_load refuses before loading anything: the
 * folder cannot be read, or holds no plugin module. 0, or -1 with a
 * message. Nothing is loaded (--check-config). */
int moat_plugin_registry_check(const char *folder, char *error, size_t error_size);
const moat_plugin *moat_plugin_registry_find(const moat_plugin_registry *registry,
                                             const char *name);
size_t moat_plugin_registry_count(const moat_plugin_registry *registry);
const moat_plugin *moat_plugin_registry_at(const moat_plugin_registry *registry, size_t index);
void moat_plugin_registry_free(moat_plugin_registry *registry);

#endif
