/* Test helper: bencode written as JSON (objects keep their key order,
 * strings may hold \u0000), so test inputs stay readable. */
#ifndef NG_TEST_JSON_H
#define NG_TEST_JSON_H

#include <glib.h>

/* The bencoding of the JSON text; aborts the test on invalid JSON. */
GByteArray *ng_test_bencode(const char *json);

#endif
