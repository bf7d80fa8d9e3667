/* Unit tests for the recording's SSRC choice (record/record_ssrc.h): one
 * SSRC alone is taken at once; of simulcast layers the one that brought the
 * most bytes in the window; the others stay skipped; a taken SSRC that
 * falls silent gives way to a new one (a sender restart). */
#include <glib.h>

#include "record/record_ssrc.h"

#define MS 1000u

static void test_single_ssrc_at_once(void)
{
    moat_record_ssrc c = {0};
    g_assert_cmpint(moat_record_ssrc_choose(&c, 7, 100, 1000 * MS, 0), ==,
                    MOAT_RECORD_SSRC_RECORD_FIRST);
    g_assert_cmpint(moat_record_ssrc_choose(&c, 7, 100, 1020 * MS, 0), ==, MOAT_RECORD_SSRC_RECORD);
    /* Another SSRC while it speaks: skipped. */
    g_assert_cmpint(moat_record_ssrc_choose(&c, 8, 100, 1030 * MS, 0), ==, MOAT_RECORD_SSRC_SKIP);
}

static void test_largest_layer_of_simulcast(void)
{
    moat_record_ssrc c = {0};
    uint64_t t = 5000 * MS;
    int recorded[3] = {0};
    for (int i = 0; i < 300; i++, t += 5 * MS) {
        /* Three layers: 1000, 400 and 150 bytes a packet, interleaved. */
        static const uint32_t ssrcs[3] = {11, 22, 33};
        static const size_t sizes[3] = {150, 1000, 400};
        for (int l = 0; l < 3; l++) {
            moat_record_ssrc_verdict v =
                moat_record_ssrc_choose(&c, ssrcs[l], sizes[l], t, 500 * MS);
            if (v != MOAT_RECORD_SSRC_SKIP)
                recorded[l]++;
            if (v == MOAT_RECORD_SSRC_RECORD_FIRST)
                g_assert_cmpuint(ssrcs[l], ==, 22);
        }
    }
    g_assert_cmpint(recorded[0], ==, 0);
    g_assert_cmpint(recorded[2], ==, 0);
    /* Everything of the largest after the 500 ms window. */
    g_assert_cmpint(recorded[1], >=, 198);
    g_assert_cmpint(recorded[1], <=, 201);
}

static void test_silent_ssrc_gives_way(void)
{
    moat_record_ssrc c = {0};
    g_assert_cmpint(moat_record_ssrc_choose(&c, 1, 100, 0, 0), ==, MOAT_RECORD_SSRC_RECORD_FIRST);
    g_assert_cmpint(moat_record_ssrc_choose(&c, 2, 100, 500 * MS, 0), ==, MOAT_RECORD_SSRC_SKIP);
    /* Ssrc 1 silent for a second: 2 is taken, and counts as new. */
    g_assert_cmpint(moat_record_ssrc_choose(&c, 2, 100, 1001 * MS, 0), ==,
                    MOAT_RECORD_SSRC_RECORD_FIRST);
    g_assert_cmpint(moat_record_ssrc_choose(&c, 1, 100, 1002 * MS, 0), ==, MOAT_RECORD_SSRC_SKIP);
    /* Video: the window starts again after a silence. */
    moat_record_ssrc v = {0};
    g_assert_cmpint(moat_record_ssrc_choose(&v, 5, 100, 0, 500 * MS), ==, MOAT_RECORD_SSRC_SKIP);
    g_assert_cmpint(moat_record_ssrc_choose(&v, 5, 100, 500 * MS, 500 * MS), ==,
                    MOAT_RECORD_SSRC_RECORD_FIRST);
    g_assert_cmpint(moat_record_ssrc_choose(&v, 6, 100, 2000 * MS, 500 * MS), ==,
                    MOAT_RECORD_SSRC_SKIP);
    g_assert_cmpint(moat_record_ssrc_choose(&v, 6, 100, 2500 * MS, 500 * MS), ==,
                    MOAT_RECORD_SSRC_RECORD_FIRST);
}

static void test_more_ssrcs_than_candidates(void)
{
    moat_record_ssrc c = {0};
    /* Eight SSRCs in the window: the first four are compared. */
    for (uint32_t s = 1; s <= 8; s++)
        g_assert_cmpint(moat_record_ssrc_choose(&c, s, s * 10, s * MS, 100 * MS), ==,
                        MOAT_RECORD_SSRC_SKIP);
    g_assert_cmpint(moat_record_ssrc_choose(&c, 4, 10, 200 * MS, 100 * MS), ==,
                    MOAT_RECORD_SSRC_RECORD_FIRST);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/record/ssrc/single", test_single_ssrc_at_once);
    g_test_add_func("/record/ssrc/largest-layer", test_largest_layer_of_simulcast);
    g_test_add_func("/record/ssrc/silent-gives-way", test_silent_ssrc_gives_way);
    g_test_add_func("/record/ssrc/more-than-candidates", test_more_ssrcs_than_candidates);
    return g_test_run();
}
