/* libFuzzer target for the room plugin's JSON API (handle_api under
 * /api/rooms), the layer API included: the input is a method selector
 * byte, a path up to the first newline and the body. A room "sim" holds a
 * simulcast publisher (layers h, m, l) and a subscriber "s2" so layer
 * requests reach the subscriber. Invariants: a status in 200..599, and a
 * body that is JSON (or none). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "room.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static room_peer *peer(bool publisher)
{
    room_peer *p = calloc(1, sizeof *p);
    p->publisher = publisher;
    room_layers_init(&p->layer);
    atomic_init(&p->layer_request, ROOM_LAYER_REQUEST_NONE);
    atomic_init(&p->layer_current, -1);
    atomic_init(&p->layer_target, -1);
    return p;
}

/* Once: the room and its two peers, kept (and reachable) for the whole
 * run even when an input deletes the room. */
static room *r;
static room_peer *pub, *sub;

static void setup(void)
{
    if (r)
        return;
    room_registry_init();
    r = room_acquire("sim", true);
    pub = peer(true);
    sub = peer(false);
    pub->room = sub->room = r;
    const char *rids[3] = {"h", "m", "l"};
    for (int l = 0; l < 3; l++)
        strcpy(pub->layers[l].rid, rids[l]);
    pub->n_layers = 3;
    CHECK(room_join_listed(r, pub, "") == NULL);
    CHECK(room_join_listed(r, sub, "") == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "POST", "DELETE", "PUT"};
    setup();
    if (size < 1)
        return 0;
    const char *method = methods[data[0] % 4];
    const uint8_t *newline = memchr(data + 1, '\n', size - 1);
    size_t path_length = newline ? (size_t)(newline - data - 1) : size - 1;
    char *path = malloc(sizeof "/api/rooms" + path_length);
    memcpy(path, "/api/rooms", sizeof "/api/rooms" - 1);
    memcpy(path + sizeof "/api/rooms" - 1, data + 1, path_length);
    path[sizeof "/api/rooms" - 1 + path_length] = '\0';
    size_t body_length = newline ? size - path_length - 2 : 0;
    /* An exact-size copy so ASan sees any overread. */
    char *body = malloc(body_length ? body_length : 1);
    if (body_length)
        memcpy(body, newline + 1, body_length);
    int status = 0;
    char *reply = room_handle_api(method, path, body, body_length, &status);
    CHECK(status >= 200 && status <= 599);
    if (reply) {
        json_t *json = json_loads(reply, 0, NULL);
        CHECK(json != NULL);
        json_decref(json);
    }
    g_free(reply);
    free(body);
    free(path);
    return 0;
}
