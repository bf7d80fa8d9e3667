/* Whether the recording folder ([record] dir) can take a recording now.
 *
 * moat_record_dir_enough_space (the start's free-space check, [record]
 * min_free_mib) and moat_record_dir_health_space (/healthz's: the same, and
 * a file system with nothing free fails it whatever min_free_mib): one
 * statvfs(2), space as an unprivileged writer sees it (f_bavail). A failed
 * statvfs passes (creating the file says what is wrong), and so does a file
 * system that keeps no count (no blocks: /proc). Any thread; no state.
 *
 * moat_record_dir_writable (the start): it exists or can be created (with
 * its parents, mode 0750, as the recorder creates it), is a folder, and a
 * file can be created in it by this process (checked by creating and
 * removing one, so ownership, modes, read-only mounts and a full inode table
 * all count). Any thread; no state.
 *
 * moat_record_dir_health_check (/healthz, unauthenticated): creates
 * nothing but its probe file, and that at most once per
 * MOAT_RECORD_DIR_PROBE_INTERVAL_US. Every call: a stat and an access(2)
 * (a folder replaced by a file, modes, a read-only mount count at once); a
 * missing folder is writable when its nearest existing parent is a folder
 * this process may write into (the recorder creates it at the first
 * recording); between probes the last probe's answer stands for what only
 * creating a file tells (a full inode table, an ACL). One caller's thread. */
#ifndef MOAT_RECORD_DIR_H
#define MOAT_RECORD_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true when `dir` is writable; otherwise false and why in `why` (without
 * the folder's path: the caller names it, or not, as its audience allows). */
bool moat_record_dir_writable(const char *dir, char *why, size_t why_size);

/* true when `dir`'s file system has `min_free` bytes free (0: no check);
 * otherwise false and how much it has in `why` (naming [record]
 * min_free_mib, not the path). */
bool moat_record_dir_enough_space(const char *dir, uint64_t min_free, char *why, size_t why_size);
/* As moat_record_dir_enough_space, and false when nothing at all is free
 * (also with `min_free` 0): a recording there fails at its first write. */
bool moat_record_dir_health_space(const char *dir, uint64_t min_free, char *why, size_t why_size);

/* How often /healthz may create and remove a file in the folder. */
#define MOAT_RECORD_DIR_PROBE_INTERVAL_US 5000000

typedef struct moat_record_dir_health moat_record_dir_health;

moat_record_dir_health *moat_record_dir_health_new(void);
void moat_record_dir_health_free(moat_record_dir_health *health);
/* As moat_record_dir_writable, without creating the folder and probing at
 * most once per interval; `now_us` is monotonic (g_get_monotonic_time). */
bool moat_record_dir_health_check(moat_record_dir_health *health, const char *dir, int64_t now_us,
                                  char *why, size_t why_size);
/* Probe files created so far (tests). */
unsigned moat_record_dir_health_probes(const moat_record_dir_health *health);

#endif
