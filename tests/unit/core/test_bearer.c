/* moat_bearer_matches: the one bearer check of the router and the events
 * WebSocket (scheme, exact secret, prefixes and extensions refused). */
#include "base/bearer.h"

#include <glib.h>

static void test_matches_only_the_secret(void)
{
    g_assert_true(moat_bearer_matches("Bearer s3cret", "s3cret"));
    g_assert_true(moat_bearer_matches("bearer s3cret", "s3cret"));
    g_assert_false(moat_bearer_matches("Bearer s3cre", "s3cret"));
    g_assert_false(moat_bearer_matches("Bearer s3cretX", "s3cret"));
    g_assert_false(moat_bearer_matches("Bearer S3cret", "s3cret"));
    g_assert_false(moat_bearer_matches("Bearer ", "s3cret"));
    g_assert_false(moat_bearer_matches("Basic s3cret", "s3cret"));
    g_assert_false(moat_bearer_matches("s3cret", "s3cret"));
    g_assert_false(moat_bearer_matches(NULL, "s3cret"));
}

static void test_no_secret_matches_nothing(void)
{
    g_assert_false(moat_bearer_matches("Bearer ", ""));
    g_assert_false(moat_bearer_matches("Bearer x", NULL));
    g_assert_false(moat_bearer_matches(NULL, NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/bearer/matches_only_the_secret", test_matches_only_the_secret);
    g_test_add_func("/bearer/no_secret_matches_nothing", test_no_secret_matches_nothing);
    return g_test_run();
}
