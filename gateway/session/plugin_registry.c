/* Loads plugin modules and finds them by name (plugin_registry.h). */
#include "session/plugin_registry.h"

#include "base/log.h"

#include <glib.h>
#include <stddef.h>
#include <gmodule.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    GModule *module;
    /* The module's table copied into the current layout: a version-1
     * plugin's table ends before the v2 fields, which stay NULL here. */
    moat_plugin *plugin;
} loaded_plugin;

struct moat_plugin_registry {
    GArray *plugins; /* loaded_plugin */
};

static int load_one(moat_plugin_registry *registry, const char *path,
                    const moat_gateway_calls *calls, char *error, size_t error_size)
{
    GModule *module = g_module_open(path, G_MODULE_BIND_LOCAL);
    if (!module) {
        snprintf(error, error_size, "cannot load plugin %s: %s", path, g_module_error());
        return -1;
    }
    gpointer symbol = NULL;
    if (!g_module_symbol(module, MOAT_PLUGIN_ENTRY_SYMBOL, &symbol) || !symbol) {
        snprintf(error, error_size, "plugin %s has no %s symbol", path, MOAT_PLUGIN_ENTRY_SYMBOL);
        g_module_close(module);
        return -1;
    }
    const moat_plugin *table = ((moat_plugin_entry_fn)symbol)();
    if (!table || table->api_version < MOAT_PLUGIN_API_MIN_VERSION ||
        table->api_version > MOAT_PLUGIN_API_VERSION || !table->name || !table->attach) {
        snprintf(error, error_size, "plugin %s: API version mismatch (want %d..%d)", path,
                 MOAT_PLUGIN_API_MIN_VERSION, MOAT_PLUGIN_API_VERSION);
        g_module_close(module);
        return -1;
    }
    moat_plugin *plugin = g_new0(moat_plugin, 1);
    memcpy(plugin, table,
           table->api_version == 1 ? offsetof(moat_plugin, on_media) : sizeof *plugin);
    if (plugin->init && plugin->init(calls) != 0) {
        snprintf(error, error_size, "plugin %s failed to initialise", plugin->name);
        g_free(plugin);
        g_module_close(module);
        return -1;
    }
    loaded_plugin entry = {module, plugin};
    g_array_append_val(registry->plugins, entry);
    moat_log_info("plugins", "loaded plugin %s (%s)", plugin->name,
                  plugin->description ? plugin->description : "");
    return 0;
}

/* Calls `visit` with the path of each plugin module in `folder` until one
 * fails. Plugins live one folder deep in the build tree
 * (plugins/echo/moat-echo.so) and flat in an install; both count. -1 with
 * a message when the folder cannot be read. */
typedef int (*module_visit)(const char *path, void *user, char *error, size_t error_size);

static int each_module(const char *folder, module_visit visit, void *user, char *error,
                       size_t error_size)
{
    GError *gerror = NULL;
    GDir *dir = g_dir_open(folder, 0, &gerror);
    if (!dir) {
        snprintf(error, error_size, "cannot open plugin folder %s: %s", folder, gerror->message);
        g_error_free(gerror);
        return -1;
    }
    const char *name;
    int status = 0;
    while ((name = g_dir_read_name(dir)) && status == 0) {
        char *path = g_build_filename(folder, name, NULL);
        if (g_str_has_prefix(name, "moat-") && g_str_has_suffix(name, ".so")) {
            status = visit(path, user, error, error_size);
        } else if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            char *inner = g_strdup_printf("%s/moat-%s.so", path, name);
            if (g_file_test(inner, G_FILE_TEST_EXISTS))
                status = visit(inner, user, error, error_size);
            g_free(inner);
        }
        g_free(path);
    }
    g_dir_close(dir);
    return status;
}

typedef struct {
    moat_plugin_registry *registry;
    const moat_gateway_calls *calls;
} load_job;

static int load_module(const char *path, void *user, char *error, size_t error_size)
{
    load_job *job = user;
    return load_one(job->registry, path, job->calls, error, error_size);
}

static int count_module(const char *path, void *user, char *error, size_t error_size)
{
    (*(size_t *)user)++;
    return 0;
}

moat_plugin_registry *moat_plugin_registry_load(const char *folder, const moat_gateway_calls *calls,
                                                char *error, size_t error_size)
{
    moat_plugin_registry *registry = g_new0(moat_plugin_registry, 1);
    registry->plugins = g_array_new(FALSE, TRUE, sizeof(loaded_plugin));
    load_job job = {registry, calls};
    int status = each_module(folder, load_module, &job, error, error_size);
    if (status == 0 && registry->plugins->len == 0) {
        snprintf(error, error_size, "no plugin found in %s", folder);
        status = -1;
    }
    if (status != 0) {
        moat_plugin_registry_free(registry);
        return NULL;
    }
    return registry;
}

int moat_plugin_registry_check(const char *folder, char *error, size_t error_size)
{
    size_t found = 0;
    if (each_module(folder, count_module, &found, error, error_size) != 0)
        return -1;
    if (found == 0) {
        snprintf(error, error_size, "no plugin found in %s", folder);
        return -1;
    }
    return 0;
}

const moat_plugin *moat_plugin_registry_find(const moat_plugin_registry *registry, const char *name)
{
    for (guint i = 0; i < registry->plugins->len; i++) {
        const loaded_plugin *entry = &g_array_index(registry->plugins, loaded_plugin, i);
        if (strcmp(entry->plugin->name, name) == 0)
            return entry->plugin;
    }
    return NULL;
}

size_t moat_plugin_registry_count(const moat_plugin_registry *registry)
{
    return registry->plugins->len;
}

const moat_plugin *moat_plugin_registry_at(const moat_plugin_registry *registry, size_t index)
{
    return g_array_index(registry->plugins, loaded_plugin, index).plugin;
}

void moat_plugin_registry_free(moat_plugin_registry *registry)
{
    if (!registry)
        return;
    for (guint i = 0; i < registry->plugins->len; i++) {
        loaded_plugin *entry = &g_array_index(registry->plugins, loaded_plugin, i);
        if (entry->plugin->destroy)
            entry->plugin->destroy();
        g_module_close(entry->module);
        g_free(entry->plugin);
    }
    g_array_free(registry->plugins, TRUE);
    g_free(registry);
}
