/* Test helper: two SCTP associations wired back to back in memory, with every
 * callback recorded, an optionally lossy wire (seeded), and pumping that
 * advances the SCTP clock in 10 ms ticks. */
#include "sctp_test_link.h"

#include <errno.h>
#include <string.h>

#include "sctp/sctp_stack.h"

static void check_thread(const sctp_test_end *end)
{
    if (end->owner_thread != NULL)
        g_assert_true(g_thread_self() == end->owner_thread);
}

static void on_send_packet(void *user, const uint8_t *packet, size_t length)
{
    sctp_test_end *end = user;
    check_thread(end);
    end->packets_sent++;
    if (length > end->largest_packet)
        end->largest_packet = length;
    if (end->tap != NULL)
        end->tap(end, packet, length, end->tap_user);
    if (!end->wire_enabled)
        return;
    if ((end->max_wire_packet > 0 && length > end->max_wire_packet) ||
        (end->drop_rate > 0 && g_rand_double(end->rand) < end->drop_rate)) {
        end->packets_dropped++;
        return;
    }
    g_queue_push_tail(&end->peer->inbox, g_bytes_new(packet, length));
}

static void on_channel_open(void *user, const moat_data_channel_info *info)
{
    sctp_test_end *end = user;
    check_thread(end);
    g_array_append_val(end->opened, *info);
}

static void on_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                       size_t length)
{
    sctp_test_end *end = user;
    check_thread(end);
    if (length > 0)
        g_assert_nonnull(data);
    sctp_test_message *m = g_new0(sctp_test_message, 1);
    m->stream_id = stream_id;
    m->ppid = ppid;
    m->data = g_bytes_new(data, length);
    g_ptr_array_add(end->messages, m);
    if (end->pause_after != 0 && end->messages->len == end->pause_after)
        moat_sctp_association_pause_receive(end->assoc, true);
    if (end->free_on_message) {
        moat_sctp_association_free(end->assoc);
        end->assoc = NULL;
    }
}

static void on_channel_closed(void *user, uint16_t stream_id)
{
    sctp_test_end *end = user;
    check_thread(end);
    g_array_append_val(end->closed, stream_id);
}

static void on_association_state(void *user, bool up)
{
    sctp_test_end *end = user;
    check_thread(end);
    if (up) {
        end->up_events++;
        return;
    }
    end->down_events++;
    end->messages_when_down = end->messages->len;
    if (end->free_on_down) {
        moat_sctp_association_free(end->assoc);
        end->assoc = NULL;
    }
}

static void on_sender_dry(void *user)
{
    sctp_test_end *end = user;
    check_thread(end);
    end->dry_events++;
}

static void on_writable(void *user)
{
    sctp_test_end *end = user;
    check_thread(end);
    end->writable_events++;
    if (end->writable_hook)
        end->writable_hook(end);
}

static const moat_sctp_callbacks callbacks = {
    .send_packet = on_send_packet,
    .channel_open = on_channel_open,
    .message = on_message,
    .channel_closed = on_channel_closed,
    .association_state = on_association_state,
    .sender_dry = on_sender_dry,
    .writable = on_writable,
};

static void message_free(gpointer p)
{
    sctp_test_message *m = p;
    g_bytes_unref(m->data);
    g_free(m);
}

static void end_init(sctp_test_end *end, sctp_test_end *peer, GRand *rand, bool client,
                     uint32_t max_message_size)
{
    memset(end, 0, sizeof *end);
    end->peer = peer;
    end->rand = rand;
    end->wire_enabled = true;
    g_queue_init(&end->inbox);
    end->opened = g_array_new(FALSE, FALSE, sizeof(moat_data_channel_info));
    end->closed = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    end->messages = g_ptr_array_new_with_free_func(message_free);
    char error[256] = "";
    end->assoc = moat_sctp_association_new(client, 5000, 5000, max_message_size, &callbacks, end,
                                           error, sizeof error);
    if (end->assoc == NULL)
        g_error("moat_sctp_association_new: %s", error);
}

static void end_clear(sctp_test_end *end)
{
    moat_sctp_association_free(end->assoc);
    end->assoc = NULL;
    g_queue_clear_full(&end->inbox, (GDestroyNotify)g_bytes_unref);
    g_array_unref(end->opened);
    g_array_unref(end->closed);
    g_ptr_array_unref(end->messages);
}

void sctp_test_link_init(sctp_test_link *link, uint32_t max_message_size)
{
    g_assert_cmpint(moat_sctp_stack_init(), ==, 0);
    memset(link, 0, sizeof *link);
    link->rand = g_rand_new_with_seed(20240601);
    end_init(&link->client, &link->server, link->rand, true, max_message_size);
    end_init(&link->server, &link->client, link->rand, false, max_message_size);
}

void sctp_test_link_clear(sctp_test_link *link)
{
    end_clear(&link->client);
    end_clear(&link->server);
    g_rand_free(link->rand);
}

/* Feeds one queued packet to an end; false when its inbox is empty. */
static bool feed_one(sctp_test_end *end)
{
    GBytes *packet = g_queue_pop_head(&end->inbox);
    if (packet == NULL)
        return false;
    if (end->assoc != NULL) {
        gsize length;
        const uint8_t *data = g_bytes_get_data(packet, &length);
        moat_sctp_association_receive(end->assoc, data, length);
    }
    g_bytes_unref(packet);
    return true;
}

static void feed_all(sctp_test_link *link)
{
    bool more = true;
    while (more) {
        bool a = feed_one(&link->client);
        bool b = feed_one(&link->server);
        more = a || b;
    }
}

static void tick(sctp_test_link *link)
{
    moat_sctp_stack_handle_timers(MOAT_SCTP_TIMER_INTERVAL_MS);
    link->ticks++;
    if (link->tick_sleep_us > 0)
        g_usleep(link->tick_sleep_us);
}

void sctp_test_link_pump(sctp_test_link *link, unsigned ticks)
{
    for (unsigned i = 0; i < ticks; i++) {
        feed_all(link);
        tick(link);
    }
    feed_all(link);
}

bool sctp_test_link_pump_until(sctp_test_link *link, bool (*done)(sctp_test_link *, void *),
                               void *arg, unsigned max_ticks)
{
    for (unsigned i = 0;; i++) {
        feed_all(link);
        if (done(link, arg))
            return true;
        if (i == max_ticks)
            return false;
        tick(link);
    }
}

static bool both_up(sctp_test_link *link, void *arg)
{
    return link->client.up_events > 0 && link->server.up_events > 0;
}

void sctp_test_link_connect(sctp_test_link *link)
{
    g_assert_cmpint(moat_sctp_association_connect(link->client.assoc), ==, 0);
    g_assert_cmpint(moat_sctp_association_connect(link->server.assoc), ==, 0);
    g_assert_true(sctp_test_link_pump_until(link, both_up, NULL, 1000));
    g_assert_cmpint(link->client.up_events, ==, 1);
    g_assert_cmpint(link->server.up_events, ==, 1);
}

int sctp_test_link_send(sctp_test_link *link, sctp_test_end *from, uint16_t stream_id,
                        uint32_t ppid, const uint8_t *data, size_t length)
{
    for (unsigned attempt = 0; attempt < 100000; attempt++) {
        int rc = moat_sctp_association_send(from->assoc, stream_id, ppid, data, length);
        if (rc != -EAGAIN)
            return rc;
        /* Let acknowledgements free the send buffer; a tick now and then
         * covers what waits for a timer (delayed SACK, retransmission). */
        feed_all(link);
        if (attempt % 8 == 7)
            tick(link);
    }
    return -EAGAIN;
}

moat_data_channel_info sctp_test_channel_info(const char *label, const char *protocol, bool ordered,
                                              int32_t max_retransmits, int32_t max_lifetime_ms)
{
    moat_data_channel_info info;
    memset(&info, 0, sizeof info);
    g_strlcpy(info.label, label, sizeof info.label);
    g_strlcpy(info.protocol, protocol, sizeof info.protocol);
    info.ordered = ordered;
    info.max_retransmits = max_retransmits;
    info.max_lifetime_ms = max_lifetime_ms;
    return info;
}

typedef struct {
    sctp_test_end *end;
    guint count;
} open_wait;

static bool opened_reached(sctp_test_link *link, void *arg)
{
    open_wait *w = arg;
    return w->end->opened->len >= w->count;
}

uint16_t sctp_test_link_open(sctp_test_link *link, sctp_test_end *from, const char *label,
                             const char *protocol, bool ordered, int32_t max_retransmits,
                             int32_t max_lifetime_ms)
{
    moat_data_channel_info info =
        sctp_test_channel_info(label, protocol, ordered, max_retransmits, max_lifetime_ms);
    uint16_t id = 0;
    g_assert_cmpint(moat_sctp_association_open_channel(from->assoc, &info, &id), ==, 0);
    open_wait w = {.end = from->peer, .count = from->peer->opened->len + 1};
    g_assert_true(sctp_test_link_pump_until(link, opened_reached, &w, 1000));
    const moat_data_channel_info *got =
        &g_array_index(from->peer->opened, moat_data_channel_info, w.count - 1);
    g_assert_cmpuint(got->stream_id, ==, id);
    return id;
}

const sctp_test_message *sctp_test_end_message(const sctp_test_end *end, guint i)
{
    g_assert_cmpuint(i, <, end->messages->len);
    return g_ptr_array_index(end->messages, i);
}
