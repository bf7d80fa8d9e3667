/* Reads the configuration: defaults, file, environment, options (config.h);
 * config_validate.c checks the whole of it. */
#include "base/config.h"
#include "base/config_options.h"
#include "base/config_paths.h" /* generated: gateway/meson.build */

#include "base/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_value(moat_config *config, const option_spec *spec, const char *value,
                     const char *origin, char *error, size_t error_size)
{
    void *field = (char *)config + spec->offset;
    switch (spec->type) {
    case OPTION_STRING: {
        char **slot = field;
        g_free(*slot);
        *slot = g_strdup(value);
        return 0;
    }
    case OPTION_INT: {
        char *end = NULL;
        errno = 0;
        long parsed = strtol(value, &end, 10);
        if (errno || end == value || *end != '\0' || parsed < spec->min || parsed > spec->max) {
            snprintf(error, error_size, "%s: [%s] %s = \"%s\": expected an integer from %ld to %ld",
                     origin, spec->section, spec->key, value, spec->min, spec->max);
            return -1;
        }
        *(int *)field = (int)parsed;
        return 0;
    }
    case OPTION_DOUBLE: {
        char *end = NULL;
        errno = 0;
        double parsed = g_ascii_strtod(value, &end);
        /* inf, nan and 1e999 are not settings: refused, as is anything past
         * the option's bound (its users cast products of it to integers). */
        if (errno || end == value || *end != '\0' || !isfinite(parsed) || !(parsed > 0) ||
            parsed > (double)spec->max) {
            snprintf(error, error_size,
                     "%s: [%s] %s = \"%s\": expected a positive number, at most %ld", origin,
                     spec->section, spec->key, value, spec->max);
            return -1;
        }
        *(double *)field = parsed;
        return 0;
    }
    case OPTION_BOOL:
        if (g_ascii_strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
            g_ascii_strcasecmp(value, "yes") == 0) {
            *(bool *)field = true;
        } else if (g_ascii_strcasecmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
                   g_ascii_strcasecmp(value, "no") == 0) {
            *(bool *)field = false;
        } else {
            snprintf(error, error_size, "%s: [%s] %s = \"%s\": expected true or false", origin,
                     spec->section, spec->key, value);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* `relative` from the folder of the running binary, when that folder
 * exists; NULL otherwise. */
static char *next_to_binary(const char *relative)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!exe)
        return NULL;
    char *bindir = g_path_get_dirname(exe);
    char *path = g_canonicalize_filename(relative, bindir);
    g_free(bindir);
    g_free(exe);
    if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_free(path);
        return NULL;
    }
    return path;
}

/* An installed binary (bin/moat beside lib/.../moat/plugins) uses its
 * install's plugins and pages, wherever the install was moved; otherwise
 * the build tree's defaults stay. */
static void use_installed_layout(moat_config *config)
{
    char *plugins = next_to_binary(MOAT_INSTALLED_PLUGIN_DIR);
    if (plugins) {
        g_free(config->plugin_dir);
        config->plugin_dir = plugins;
    }
    char *web = next_to_binary(MOAT_INSTALLED_WEB_ROOT);
    if (web) {
        g_free(config->web_root);
        config->web_root = web;
    }
}

void moat_config_init(moat_config *config)
{
    memset(config, 0, sizeof *config);
    char ignored[512];
    for (size_t i = 0; i < moat_config_option_count; i++)
        set_value(config, &moat_config_options[i], moat_config_options[i].default_value, "default",
                  ignored, sizeof ignored);
    use_installed_layout(config);
}

void moat_config_clear(moat_config *config)
{
    for (size_t i = 0; i < moat_config_option_count; i++) {
        if (moat_config_options[i].type == OPTION_STRING) {
            char **slot = (char **)((char *)config + moat_config_options[i].offset);
            g_free(*slot);
            *slot = NULL;
        }
    }
}

/* One key of the file: a value GLib cannot read (not UTF-8) is an error
 * naming the key, never an empty value. GLib's text for it quotes the value
 * (a token, a password): not repeated. A value with an unknown escape (a\qb)
 * GLib still returns as written: kept, as before. */
static int set_file_value(moat_config *config, const option_spec *spec, GKeyFile *file,
                          const char *path, char *error, size_t error_size)
{
    GError *gerror = NULL;
    char *value = g_key_file_get_string(file, spec->section, spec->key, &gerror);
    bool encoding = g_error_matches(gerror, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_UNKNOWN_ENCODING);
    if (!value) {
        snprintf(error, error_size, "%s: [%s] %s: %s", path, spec->section, spec->key,
                 encoding ? "the value is not UTF-8 (the file must be UTF-8)"
                 : gerror ? gerror->message
                          : "cannot read the value");
        g_clear_error(&gerror);
        return -1;
    }
    g_clear_error(&gerror);
    int status = set_value(config, spec, g_strstrip(value), path, error, error_size);
    g_free(value);
    return status;
}

/* The name of a "[group]" line (as GKeyFile reads one: '[', no ']' in the
 * name, then only blanks), newly allocated; NULL for any other line. */
static char *group_line(const char *line)
{
    if (line[0] != '[')
        return NULL;
    const char *end = strchr(line, ']');
    if (!end || end[1 + strspn(end + 1, " \t")] != '\0')
        return NULL;
    return g_strndup(line + 1, (gsize)(end - line - 1));
}

/* The key of a "key = value" line (before the first '=', trailing blanks
 * dropped, as GKeyFile reads it), newly allocated; NULL for any other line. */
static char *key_line(const char *line)
{
    const char *equals = strchr(line, '=');
    if (!equals || equals == line)
        return NULL;
    const char *end = equals;
    while (end > line && g_ascii_isspace(end[-1]))
        end--;
    return g_strndup(line, (gsize)(end - line));
}

/* Line `number` of a file as GKeyFile reads it (leading blanks and a CR
 * before the newline dropped; a '#' comment is no line). Returns -1 (and
 * says so in `error`) when it sets a key `seen` holds for `*group`. */
static int scan_line(const char *path, char *line, guint number, char **group, GHashTable *seen,
                     char *error, size_t error_size)
{
    size_t length = strlen(line);
    if (length && line[length - 1] == '\r')
        line[length - 1] = '\0';
    while (g_ascii_isspace(*line))
        line++;
    char *name = *line == '#' ? NULL : group_line(line);
    if (name) {
        g_free(*group);
        *group = name;
        return 0;
    }
    /* A key before any group: GKeyFile refuses the file. */
    char *key = *line == '#' || !*group ? NULL : key_line(line);
    if (!key)
        return 0;
    /* No group name holds ']': "group]key" names one pair. */
    char *pair = g_strdup_printf("%s]%s", *group, key);
    guint first = GPOINTER_TO_UINT(g_hash_table_lookup(seen, pair));
    if (first) {
        snprintf(error, error_size, "%s: [%s] %s is set twice: on line %u and on line %u", path,
                 *group, key, first, number);
        g_free(pair);
    } else {
        g_hash_table_insert(seen, pair, GUINT_TO_POINTER(number));
    }
    g_free(key);
    return first ? -1 : 0;
}

/* GKeyFile merges a repeated [group] and keeps the last value of a repeated
 * key: a second [http] with "metrics_token =" emptied the token set further
 * up and --check-config said ok. A repeated group is fine; a key set twice
 * in one group (in one block or in two) is refused, naming both lines. What
 * GKeyFile refuses anyway (a key before any group, a line that is neither)
 * is left to it. */
static int refuse_repeated_keys(const char *path, const char *text, char *error, size_t error_size)
{
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char *group = NULL;
    int status = 0;
    char **lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] && status == 0; i++)
        status = scan_line(path, lines[i], i + 1, &group, seen, error, error_size);
    g_strfreev(lines);
    g_free(group);
    g_hash_table_destroy(seen);
    return status;
}

/* The file as a key file. A NUL byte is refused: GLib keeps it inside the
 * value and every reader stops there, so "token=ab\0c0ffee" was the token
 * "ab" and "port=10\0 00" the port 10, each passing every check. So is a
 * key set twice in one group (refuse_repeated_keys). NULL with one line in
 * `error`. */
static GKeyFile *read_key_file(const char *path, char *error, size_t error_size)
{
    char *text = NULL;
    gsize length = 0;
    GError *gerror = NULL;
    if (!g_file_get_contents(path, &text, &length, &gerror)) {
        snprintf(error, error_size, "cannot read config file %s: %s", path, gerror->message);
        g_error_free(gerror);
        return NULL;
    }
    const char *nul = memchr(text, '\0', length);
    if (nul) {
        snprintf(error, error_size, "%s: NUL byte at offset %zu (a config file is text)", path,
                 (size_t)(nul - text));
        g_free(text);
        return NULL;
    }
    if (refuse_repeated_keys(path, text, error, error_size) != 0) {
        g_free(text);
        return NULL;
    }
    GKeyFile *file = g_key_file_new();
    if (!g_key_file_load_from_data(file, text, length, G_KEY_FILE_NONE, &gerror)) {
        snprintf(error, error_size, "cannot read config file %s: %s", path, gerror->message);
        g_error_free(gerror);
        g_key_file_free(file);
        file = NULL;
    }
    g_free(text);
    return file;
}

int moat_config_load_file(moat_config *config, const char *path, char *error, size_t error_size)
{
    GKeyFile *file = read_key_file(path, error, error_size);
    if (!file)
        return -1;
    int status = 0;
    gsize n_groups = 0;
    char **groups = g_key_file_get_groups(file, &n_groups);
    for (gsize g = 0; g < n_groups && status == 0; g++) {
        gsize n_keys = 0;
        char **keys = g_key_file_get_keys(file, groups[g], &n_keys, NULL);
        for (gsize k = 0; k < n_keys && status == 0; k++) {
            const option_spec *spec = NULL;
            for (size_t i = 0; i < moat_config_option_count; i++) {
                if (strcmp(moat_config_options[i].section, groups[g]) == 0 &&
                    strcmp(moat_config_options[i].key, keys[k]) == 0)
                    spec = &moat_config_options[i];
            }
            if (!spec) {
                snprintf(error, error_size, "%s: unknown option [%s] %s", path, groups[g], keys[k]);
                status = -1;
                break;
            }
            status = set_file_value(config, spec, file, path, error, error_size);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    g_key_file_free(file);
    return status;
}

/* MOAT_<SECTION>_<KEY> of an option, in capitals. */
static char *variable_name(const option_spec *spec)
{
    char *name = g_strdup_printf("MOAT_%s_%s", spec->section, spec->key);
    char *upper = g_ascii_strup(name, -1);
    g_free(name);
    return upper;
}

static bool variable_is_option(const char *name)
{
    bool found = false;
    for (size_t i = 0; i < moat_config_option_count && !found; i++) {
        char *option = variable_name(&moat_config_options[i]);
        found = strcmp(option, name) == 0;
        g_free(option);
    }
    return found;
}

/* Names of the form MOAT_<SECTION>_... that are no option of Moat:
 * docker-compose.yml's settings of its coturn service, which compose reads
 * (from .env) and Moat never does. */
static const char *const foreign_variables[] = {
    "MOAT_TURN_PORT",  "MOAT_TURN_MIN_PORT",        "MOAT_TURN_MAX_PORT",
    "MOAT_TURN_REALM", "MOAT_TURN_ALLOWED_PEER_IP",
};

static bool variable_is_foreign(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(foreign_variables); i++)
        if (strcmp(foreign_variables[i], name) == 0)
            return true;
    return false;
}

/* Kubernetes' service links (enableServiceLinks, on by default): for a
 * Service "moat-turn" every pod gets MOAT_TURN_SERVICE_HOST,
 * MOAT_TURN_SERVICE_PORT[_<name>], MOAT_TURN_PORT=tcp://...,
 * MOAT_TURN_PORT_3478_UDP[_PROTO|_PORT|_ADDR]. Not Moat's, left alone. */
static bool variable_is_service_link(const char *name, const char *value)
{
    if (g_regex_match_simple("_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$", name, 0, 0) ||
        g_regex_match_simple("_PORT_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$", name, 0, 0))
        return true;
    return g_str_has_suffix(name, "_PORT") && value &&
           g_regex_match_simple("^(tcp|udp|sctp)://", value, 0, 0);
}

/* The section a name MOAT_<S>_... names (<S> in any case, as the option
 * names are built from it), or NULL: MOAT_CONFIG, MOAT_GATEWAY_BINARY and
 * every other MOAT_ name of no section are not configuration variables. */
static const char *variable_section(const char *name)
{
    if (!g_str_has_prefix(name, "MOAT_"))
        return NULL;
    const char *start = name + strlen("MOAT_");
    const char *end = strchr(start, '_');
    for (size_t i = 0; end && i < moat_config_option_count; i++) {
        const char *section = moat_config_options[i].section;
        if (strlen(section) == (size_t)(end - start) &&
            g_ascii_strncasecmp(section, start, (gsize)(end - start)) == 0)
            return section;
    }
    return NULL;
}

/* A variable of a section that names none of its options (a misspelt
 * MOAT_HTTP_METRIC_TOKEN left /metrics open without a word) is the error
 * an unknown key of the file is. Its value is not repeated. */
static int check_variable(const char *name, char *error, size_t error_size)
{
    const char *section = variable_section(name);
    if (!section || variable_is_option(name) || variable_is_foreign(name) ||
        variable_is_service_link(name, g_getenv(name)))
        return 0;
    char *upper = g_ascii_strup(name, -1);
    if (variable_is_option(upper)) {
        snprintf(error, error_size,
                 "environment variable %s: not read (configuration variables are in capitals: "
                 "%s)",
                 name, upper);
    } else {
        char *key = g_ascii_strdown(name + strlen("MOAT_") + strlen(section) + 1, -1);
        snprintf(error, error_size, "environment variable %s: unknown option [%s] %s", name,
                 section, key);
        g_free(key);
    }
    g_free(upper);
    return -1;
}

static int check_variables(char *error, size_t error_size)
{
    char **names = g_listenv();
    int status = 0;
    for (char **name = names; *name && status == 0; name++)
        status = check_variable(*name, error, error_size);
    g_strfreev(names);
    return status;
}

int moat_config_apply_environment(moat_config *config, char *error, size_t error_size)
{
    if (check_variables(error, error_size) != 0)
        return -1;
    for (size_t i = 0; i < moat_config_option_count; i++) {
        char *name = variable_name(&moat_config_options[i]);
        const char *value = getenv(name);
        int status =
            value ? set_value(config, &moat_config_options[i], value, name, error, error_size) : 0;
        g_free(name);
        if (status)
            return status;
    }
    return 0;
}

static const option_spec *find_option(const char *cli_name)
{
    for (size_t i = 0; i < moat_config_option_count; i++)
        if (strcmp(moat_config_options[i].cli_name, cli_name) == 0)
            return &moat_config_options[i];
    return NULL;
}

int moat_config_set_by_option(moat_config *config, const char *option, const char *value,
                              char *error, size_t error_size)
{
    const option_spec *spec = find_option(option);
    if (spec == NULL)
        return 1;
    char origin[80];
    snprintf(origin, sizeof origin, "--%s", option);
    return set_value(config, spec, value, origin, error, error_size);
}

unsigned moat_config_worker_count(const moat_config *config)
{
    return config->workers > 0 ? (unsigned)config->workers : g_get_num_processors();
}

bool moat_config_cluster_enabled(const moat_config *config)
{
    return config->cluster_redis && *config->cluster_redis;
}

bool moat_config_option_known(const char *option)
{
    return find_option(option) != NULL;
}

bool moat_config_option_is_bool(const char *option)
{
    return find_option(option) && find_option(option)->type == OPTION_BOOL;
}

void moat_config_print_options(void)
{
    for (size_t i = 0; i < moat_config_option_count; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s=%s", moat_config_options[i].cli_name,
                 moat_config_options[i].type == OPTION_STRING ? "STR"
                 : moat_config_options[i].type == OPTION_BOOL ? "BOOL"
                 : moat_config_options[i].type == OPTION_INT  ? "N"
                                                              : "X");
        printf("  %-30s %s [%s] %s (default \"%s\")\n", left, moat_config_options[i].help,
               moat_config_options[i].section, moat_config_options[i].key,
               moat_config_options[i].default_value);
    }
}

moat_prefilter_mode moat_config_prefilter_mode(const moat_config *config)
{
    if (strcmp(config->prefilter_mode, "off") == 0)
        return MOAT_PREFILTER_OFF;
    if (strcmp(config->prefilter_mode, "always") == 0)
        return MOAT_PREFILTER_ALWAYS;
    return MOAT_PREFILTER_AUTO;
}

bool moat_config_get_int(const moat_config *config, const char *section, const char *key,
                         int *value)
{
    for (size_t i = 0; config && section && key && i < moat_config_option_count; i++) {
        if (strcmp(moat_config_options[i].section, section) != 0 ||
            strcmp(moat_config_options[i].key, key) != 0)
            continue;
        const char *field = (const char *)config + moat_config_options[i].offset;
        if (moat_config_options[i].type == OPTION_INT) {
            *value = *(const int *)field;
            return true;
        }
        if (moat_config_options[i].type == OPTION_BOOL) {
            *value = *(const bool *)field ? 1 : 0;
            return true;
        }
    }
    return false;
}
