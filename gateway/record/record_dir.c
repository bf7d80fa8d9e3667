/* Owns the recording folder's writability probe (record_dir.h). */
#include "record/record_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
