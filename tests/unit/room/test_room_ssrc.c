/* Unit tests for the room's SSRC claims (plugins/room/room_ssrc.c): the
 * first publisher to send an SSRC keeps it; another publisher of the same
 * room sending it (as its audio, its video or a simulcast layer) is refused
 * and counted; another room's publisher, the same publisher's other stream
 * and a publisher after the first left may take it. */
#include <glib.h>

#include "room.h"

static room room_a, room_b;
static room_peer first, second, elsewhere;

static void join(room *r, room_peer *p)
{
    *p = (room_peer){.room = r, .publisher = true, .n_layers = 3};
    r->publishers[r->n_publishers++] = p;
}

static void setup(void)
{
    room_a = (room){0};
    room_b = (room){0};
    pthread_mutex_init(&room_a.lock, NULL);
    pthread_mutex_init(&room_b.lock, NULL);
    join(&room_a, &first);
    join(&room_a, &second);
    join(&room_b, &elsewhere);
}

static void test_a_second_publisher_cannot_take_an_ssrc(void)
{
    setup();
    g_assert_true(room_ssrc_claim(&first, &first.ssrcs[1], 0x1234));
    g_assert_cmpuint(atomic_load(&first.ssrcs[1]), ==, 0x1234);
    /* The same SSRC as audio, as video, as a layer: refused, counted. */
    g_assert_false(room_ssrc_claim(&second, &second.ssrcs[0], 0x1234));
    g_assert_false(room_ssrc_claim(&second, &second.ssrcs[1], 0x1234));
    g_assert_false(room_ssrc_claim(&second, &second.layers[2].ssrc, 0x1234));
    g_assert_cmpuint(atomic_load(&second.ssrcs[0]), ==, 0);
    g_assert_cmpuint(atomic_load(&second.ssrcs[1]), ==, 0);
    g_assert_cmpuint(atomic_load(&second.layers[2].ssrc), ==, 0);
    g_assert_cmpuint(atomic_load(&second.ssrc_refused), ==, 3);
    g_assert_cmpuint(atomic_load(&first.ssrc_refused), ==, 0);
    /* A layer's SSRC is the first's too once claimed. */
    g_assert_true(room_ssrc_claim(&first, &first.layers[0].ssrc, 0x5678));
    g_assert_false(room_ssrc_claim(&second, &second.ssrcs[1], 0x5678));
    /* Its own other stream, another SSRC, another room: accepted. */
    g_assert_true(room_ssrc_claim(&first, &first.layers[1].ssrc, 0x1234));
    g_assert_true(room_ssrc_claim(&second, &second.ssrcs[1], 0x9abc));
    g_assert_true(room_ssrc_claim(&elsewhere, &elsewhere.ssrcs[1], 0x1234));
    g_assert_false(room_ssrc_claim(&first, &first.ssrcs[0], 0x9abc));
}

static void test_the_ssrc_is_free_once_its_publisher_left(void)
{
    setup();
    g_assert_true(room_ssrc_claim(&first, &first.ssrcs[0], 0x42));
    g_assert_false(room_ssrc_claim(&second, &second.ssrcs[0], 0x42));
    room_a.publishers[0] = room_a.publishers[--room_a.n_publishers]; /* first left */
    g_assert_true(room_ssrc_claim(&second, &second.ssrcs[0], 0x42));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/ssrc/second-publisher-refused",
                    test_a_second_publisher_cannot_take_an_ssrc);
    g_test_add_func("/room/ssrc/free-after-leave", test_the_ssrc_is_free_once_its_publisher_left);
    return g_test_run();
}
