/* Data-channel memory limits: the gateway-wide total is never exceeded, even
 * with every worker charging at once, and the configuration refuses a
 * per-session limit below what one association holds. */
#include "base/config.h"
#include "engine/data_limits.h"

#include <glib.h>
#include <string.h>

static void test_charge_and_release(void)
{
    moat_data_limits limits;
    moat_data_limits_init(&limits, MOAT_DATA_SESSION_DEFAULT_BYTES, 10000);
    g_assert_true(moat_data_limits_charge(&limits, 6000));
    g_assert_false(moat_data_limits_charge(&limits, 4001));
    g_assert_true(moat_data_limits_charge(&limits, 4000));
    g_assert_false(moat_data_limits_charge(&limits, 1));
    g_assert_false(moat_data_limits_charge(&limits, SIZE_MAX));
    moat_data_limits_release(&limits, 6000);
    g_assert_cmpuint(moat_data_limits_used(&limits), ==, 4000);
    g_assert_true(moat_data_limits_charge(&limits, 6000));
}

/* Window growth stops where a quarter of the total would be left. */
static void test_charge_spare(void)
{
    moat_data_limits limits;
    moat_data_limits_init(&limits, MOAT_DATA_SESSION_DEFAULT_BYTES, 10000);
    g_assert_true(moat_data_limits_charge(&limits, 3000));
    g_assert_false(moat_data_limits_charge_spare(&limits, 4501));
    g_assert_true(moat_data_limits_charge_spare(&limits, 4500));
    g_assert_false(moat_data_limits_charge_spare(&limits, 1));
    g_assert_false(moat_data_limits_charge_spare(&limits, SIZE_MAX));
    /* What queues need still fits. */
    g_assert_true(moat_data_limits_charge(&limits, 2500));
    moat_data_limits_release(&limits, 10000);
    g_assert_cmpuint(moat_data_limits_used(&limits), ==, 0);
}

/* Messages made from acknowledged data are charged even past the total
 * (the readers stop before it is spent); what is charged is given back. */
static void test_charge_force(void)
{
    moat_data_limits limits;
    moat_data_limits_init(&limits, MOAT_DATA_SESSION_DEFAULT_BYTES, 10000);
    g_assert_true(moat_data_limits_charge(&limits, 9000));
    moat_data_limits_charge_force(&limits, 2000);
    g_assert_cmpuint(moat_data_limits_used(&limits), ==, 11000);
    g_assert_false(moat_data_limits_charge(&limits, 1));
    moat_data_limits_release(&limits, 2000);
    g_assert_true(moat_data_limits_charge(&limits, 1000));
}

typedef struct {
    moat_data_limits *limits;
    size_t granted;
} charger;

static gpointer charge_loop(gpointer data)
{
    charger *c = data;
    for (int i = 0; i < 100000; i++) {
        if (moat_data_limits_charge(c->limits, 100)) {
            c->granted += 100;
            if (i % 3 == 0) {
                moat_data_limits_release(c->limits, 100);
                c->granted -= 100;
            }
        }
    }
    return NULL;
}

static void test_total_never_exceeded_across_threads(void)
{
    moat_data_limits limits;
    moat_data_limits_init(&limits, MOAT_DATA_SESSION_DEFAULT_BYTES, 1000000);
    charger chargers[4];
    GThread *threads[4];
    for (int i = 0; i < 4; i++) {
        chargers[i] = (charger){.limits = &limits};
        threads[i] = g_thread_new("charger", charge_loop, &chargers[i]);
    }
    size_t granted = 0;
    for (int i = 0; i < 4; i++) {
        g_thread_join(threads[i]);
        granted += chargers[i].granted;
    }
    g_assert_cmpuint(granted, ==, moat_data_limits_used(&limits));
    g_assert_cmpuint(granted, <=, 1000000);
    g_assert_cmpuint(granted, ==, 1000000); /* 4 x 66667 x 100 asked: full */
}

static void test_config(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_assert_cmpint(config.datachannel_session_bytes, ==, MOAT_DATA_SESSION_DEFAULT_BYTES);
    g_assert_cmpint(config.datachannel_total_mib, ==, 1024);
    g_assert_cmpint(moat_config_set_by_option(&config, "datachannel-session-bytes", "1048576",
                                              error, sizeof error),
                    ==, -1);
    g_assert_nonnull(strstr(error, "datachannel_session_bytes"));
    g_assert_cmpint(MOAT_DATA_SESSION_MIN_BYTES, ==, 4194304);
    g_assert_cmpint(moat_config_set_by_option(&config, "datachannel-session-bytes", "4194304",
                                              error, sizeof error),
                    ==, 0);
    moat_config_clear(&config);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data-limits/charge-and-release", test_charge_and_release);
    g_test_add_func("/data-limits/charge-spare", test_charge_spare);
    g_test_add_func("/data-limits/charge-force", test_charge_force);
    g_test_add_func("/data-limits/total-across-threads", test_total_never_exceeded_across_threads);
    g_test_add_func("/data-limits/config", test_config);
    return g_test_run();
}
