/* Whether the recording folder ([record] dir) can take a recording now: it
 * exists or can be created (with its parents, mode 0750, as the recorder
 * creates it), is a folder, and a file can be created in it by this process
 * (checked by creating and removing one, so ownership, modes, read-only
 * mounts and a full inode table all count). Any thread; no state. */
#ifndef MOAT_RECORD_DIR_H
#define MOAT_RECORD_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* true when `dir` is writable; otherwise false and why in `why` (without
 * the folder's path: the caller names it, or not, as its audience allows). */
bool moat_record_dir_writable(const char *dir, char *why, size_t why_size);

#endif
