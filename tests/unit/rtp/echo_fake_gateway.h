/* A moat_gateway_calls table that records what a plugin sends, shared by
 * the echo plugin's tests. The test owns the clock. */
#ifndef MOAT_TEST_ECHO_FAKE_GATEWAY_H
#define MOAT_TEST_ECHO_FAKE_GATEWAY_H

#include <glib.h>
#include <stdint.h>

#include "plugin.h"

typedef struct {
    uint16_t stream_id;
    uint32_t ppid;
    GBytes *bytes;
} fake_data_message;

/* The gateway's opaque session handle, completed here so the fake can find
 * its records from the handle alone. */
struct moat_plugin_session {
    GPtrArray *rtp;  /* GBytes */
    GPtrArray *rtcp; /* GBytes */
    GPtrArray *data; /* fake_data_message */
};

extern const moat_gateway_calls fake_gateway_calls;
/* Value returned by fake_gateway_calls.now_us. */
extern uint64_t fake_gateway_now_us;

void fake_session_init(moat_plugin_session *s);
void fake_session_clear(moat_plugin_session *s);
/* Forgets what was sent so far. */
void fake_session_reset(moat_plugin_session *s);

#endif
