/* Owns the recording folder's writability checks: the start's, which
 * creates the folder, and /healthz's cached one, which does not; and its
 * free-space checks, the start's ([record] min_free_mib) and /healthz's
 * (record_dir.h). */
#include "record/record_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

struct moat_record_dir_health {
    bool probed;       /* a probe has run */
    bool probe_ok;     /* the last probe's answer */
    int64_t probed_us; /* when it ran */
    unsigned probes;
    char probe_why[160];
};

/* Creates and removes a file in `dir`. */
static bool probe_file(const char *dir, char *why, size_t why_size)
{
    char *probe = g_build_filename(dir, ".moat-write-probe-XXXXXX", NULL);
    int fd = g_mkstemp_full(probe, O_WRONLY, 0600);
    bool ok = fd >= 0;
    if (ok) {
        close(fd);
        g_unlink(probe);
    } else {
        snprintf(why, why_size, "cannot create a file there (uid %u): %s", (unsigned)geteuid(),
                 g_strerror(errno));
    }
    g_free(probe);
    return ok;
}

bool moat_record_dir_writable(const char *dir, char *why, size_t why_size)
{
    struct stat st;
    if (!dir || !*dir) {
        snprintf(why, why_size, "not configured");
        return false;
    }
    /* Created as the recorder would create it (recorder.c). */
    if (g_mkdir_with_parents(dir, 0750) != 0 && errno != EEXIST) {
        snprintf(why, why_size, "cannot create it: %s", g_strerror(errno));
        return false;
    }
    if (stat(dir, &st) != 0) {
        snprintf(why, why_size, "%s", g_strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "not a folder");
        return false;
    }
    return probe_file(dir, why, why_size);
}

/* Bytes free in `dir`'s file system for an unprivileged writer; false when
 * statvfs fails or the file system keeps no count. */
static bool available_bytes(const char *dir, uint64_t *available)
{
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0 || fs.f_blocks == 0)
        return false;
    *available = (uint64_t)fs.f_bavail * fs.f_frsize;
    return true;
}

static bool at_least(uint64_t available, uint64_t min_free, char *why, size_t why_size)
{
    if (available >= min_free)
        return true;
    snprintf(why, why_size,
             "the recording folder has %" G_GUINT64_FORMAT " MiB free, less than [record] "
             "min_free_mib (%" G_GUINT64_FORMAT ")",
             available >> 20, min_free >> 20);
    return false;
}

bool moat_record_dir_enough_space(const char *dir, uint64_t min_free, char *why, size_t why_size)
{
    uint64_t available;
    if (min_free == 0 || !available_bytes(dir, &available))
        return true;
    return at_least(available, min_free, why, why_size);
}

bool moat_record_dir_health_space(const char *dir, uint64_t min_free, char *why, size_t why_size)
{
    uint64_t available;
    if (!available_bytes(dir, &available))
        return true;
    if (available == 0) {
        snprintf(why, why_size, "no space is left on its file system");
        return false;
    }
    return at_least(available, min_free, why, why_size);
}

moat_record_dir_health *moat_record_dir_health_new(void)
{
    return g_new0(moat_record_dir_health, 1);
}

void moat_record_dir_health_free(moat_record_dir_health *health)
{
    g_free(health);
}

unsigned moat_record_dir_health_probes(const moat_record_dir_health *health)
{
    return health->probes;
}

/* A missing folder: its nearest existing parent must be a folder this
 * process may create entries in, as the recorder's mkdir will. */
static bool parent_allows_creation(const char *dir, char *why, size_t why_size)
{
    char *path = g_strdup(dir);
    bool ok = false;
    for (;;) {
        char *parent = g_path_get_dirname(path);
        bool top = strcmp(parent, path) == 0;
        g_free(path);
        path = parent;
        struct stat st;
        if (stat(path, &st) == 0) {
            int error = !S_ISDIR(st.st_mode) ? ENOTDIR : access(path, W_OK | X_OK) == 0 ? 0 : errno;
            ok = error == 0;
            if (!ok)
                snprintf(why, why_size, "cannot create it: %s", g_strerror(error));
            break;
        }
        if (errno != ENOENT || top) {
            snprintf(why, why_size, "cannot create it: %s", g_strerror(errno));
            break;
        }
    }
    g_free(path);
    return ok;
}

/* The probe, unless the last one is younger than the interval. */
static bool probe_at_most_every_interval(moat_record_dir_health *health, const char *dir,
                                         int64_t now_us, char *why, size_t why_size)
{
    if (!health->probed || now_us - health->probed_us >= MOAT_RECORD_DIR_PROBE_INTERVAL_US) {
        health->probe_ok = probe_file(dir, health->probe_why, sizeof health->probe_why);
        health->probed = true;
        health->probed_us = now_us;
        health->probes++;
    }
    if (!health->probe_ok)
        snprintf(why, why_size, "%s", health->probe_why);
    return health->probe_ok;
}

bool moat_record_dir_health_check(moat_record_dir_health *health, const char *dir, int64_t now_us,
                                  char *why, size_t why_size)
{
    struct stat st;
    if (!dir || !*dir) {
        snprintf(why, why_size, "not configured");
        return false;
    }
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            return parent_allows_creation(dir, why, why_size);
        snprintf(why, why_size, "cannot create it: %s", g_strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "not a folder");
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, why_size, "cannot create a file there (uid %u): %s", (unsigned)geteuid(),
                 g_strerror(errno));
        return false;
    }
    return probe_at_most_every_interval(health, dir, now_us, why, why_size);
}
