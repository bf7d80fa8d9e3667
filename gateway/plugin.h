/* The plugin boundary. A plugin sees the gateway only through
 * moat_gateway_calls; the core never includes a plugin's header. Media
 * callbacks (on_rtp, on_rtcp, on_data) run on the media worker that owns the
 * session, so a plugin's per-session state needs no lock as long as it is only
 * touched from those callbacks. handle_message runs on the control thread. */
#ifndef MOAT_PLUGIN_H
#define MOAT_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_PLUGIN_API_VERSION 1
#define MOAT_PLUGIN_MAX_MEDIA   16

typedef enum {
    MOAT_MEDIA_KIND_AUDIO = 0,
    MOAT_MEDIA_KIND_VIDEO = 1,
    MOAT_MEDIA_KIND_APPLICATION = 2,
} moat_media_kind;

/* One negotiated m-line as the plugin needs it. SSRCs are those of RTP
 * packets: remote_ssrc is what the peer declared in its SDP (0 when it did not
 * declare any, as with some WHIP clients: then the first authenticated SSRC on
 * this mid is the one); local_ssrc is what the gateway announced in its answer
 * and must use when it sends on this m-line. */
typedef struct {
    moat_media_kind kind;
    char mid[32];
    bool peer_sends;    /* the peer sends on this m-line (its sendrecv/sendonly) */
    bool peer_receives; /* the peer receives on this m-line (its sendrecv/recvonly) */
    uint32_t remote_ssrc;
    uint32_t remote_rtx_ssrc;
    uint32_t local_ssrc;
    uint8_t payload_types[16]; /* negotiated payload types, in answer order */
    size_t n_payload_types;
    uint8_t mid_extension_id; /* urn:ietf:params:rtp-hdrext:sdes:mid, 0 if none */
} moat_media_info;

typedef struct {
    const char *session_id;
    const moat_media_info *media;
    size_t n_media;
    bool has_data_channel;
} moat_session_info;

/* Opaque handle of a session, valid from attach until detach returns. */
typedef struct moat_plugin_session moat_plugin_session;

typedef struct {
    /* Send a plaintext RTP packet to the peer; the gateway protects it with
     * SRTP, keeps it for NACK retransmission and batches the send. */
    int (*send_rtp)(moat_plugin_session *session, const uint8_t *packet, size_t length);
    /* Send a plaintext RTCP compound packet to the peer. */
    int (*send_rtcp)(moat_plugin_session *session, const uint8_t *packet, size_t length);
    /* Send a data channel message on stream `stream_id` with PPID `ppid`. */
    int (*send_data)(moat_plugin_session *session, uint16_t stream_id, uint32_t ppid,
                     const uint8_t *data, size_t length);
    /* Queue a JSON event (a complete JSON object) for the session's listeners. */
    void (*push_event)(moat_plugin_session *session, const char *json);
    /* Ask the gateway to end the session (the plugin's detach follows). */
    void (*close_session)(moat_plugin_session *session);
    /* Monotonic clock, microseconds. */
    uint64_t (*now_us)(void);
} moat_gateway_calls;

typedef struct {
    int api_version; /* MOAT_PLUGIN_API_VERSION */
    const char *name;
    const char *description;

    /* Called once after loading. Returns 0 on success. */
    int (*init)(const moat_gateway_calls *gateway);
    void (*destroy)(void);

    /* A session joins this plugin; returns the plugin's per-session state or
     * NULL with *error set to a static string. */
    void *(*attach)(moat_plugin_session *session, const moat_session_info *info,
                    const char **error);
    /* The session is gone; free the state. Nothing is called after this. */
    void (*detach)(void *state);
    /* A JSON control message from the API; returns a newly allocated JSON
     * reply (g_malloc'd) or NULL. Control thread. */
    char *(*handle_message)(void *state, const char *json);

    /* Authenticated, decrypted RTP. `packet` may be modified in place (its
     * buffer has `capacity` bytes) and is only valid during the call. */
    void (*on_rtp)(void *state, uint8_t *packet, size_t length, size_t capacity);
    /* Authenticated RTCP compound, after the gateway handled NACK and reports. */
    void (*on_rtcp)(void *state, const uint8_t *packet, size_t length);
    /* One data channel message. */
    void (*on_data)(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                    size_t length);
    /* The peer hung up or the transport failed; detach follows. */
    void (*hangup)(void *state);
} moat_plugin;

/* Every plugin module exports this symbol. */
typedef const moat_plugin *(*moat_plugin_entry_fn)(void);
#define MOAT_PLUGIN_ENTRY_SYMBOL "moat_plugin_entry"

#endif
