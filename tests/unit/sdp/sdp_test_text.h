/* Text surgery on sample offers, so that each test states the one change it
 * makes to a real offer. All results are g_malloc'd. */
#ifndef MOAT_TEST_SDP_TEXT_H
#define MOAT_TEST_SDP_TEXT_H

#include <stddef.h>

/* Replaces every occurrence of `from` with `to`. */
char *moat_test_replace(const char *text, const char *from, const char *to);
/* Removes every line (with its line end) that starts with `prefix`. */
char *moat_test_drop_lines(const char *text, const char *prefix);
/* Number of non-overlapping occurrences of `needle`. */
size_t moat_test_count(const char *text, const char *needle);

#endif
