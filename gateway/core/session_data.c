/* The session's data channels: SCTP packets ride in DTLS application data;
 * messages go to the plugin's on_data and come back through send_data. */
#include "core/session_internal.h"

#include "sctp/sctp_association.h"

#include <glib.h>

#define SCTP_PORT 5000

static void sctp_send_packet(void *user, const uint8_t *packet, size_t length)
{
    moat_session *session = user;
    if (session->dtls && session->dtls_connected)
        moat_dtls_transport_send(session->dtls, packet, length);
}

static void sctp_channel_open(void *user, const moat_data_channel_info *info)
{
    moat_session *session = user;
    moat_log_debug("datachannel", "session %s: channel %u \"%s\" open", session->id,
                   info->stream_id, info->label);
}

static void sctp_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    moat_session *session = user;
    if (session->plugin && session->plugin->on_data)
        session->plugin->on_data(session->plugin_state, stream_id, ppid, data, length);
}

static void sctp_channel_closed(void *user, uint16_t stream_id)
{
    moat_session *session = user;
    moat_log_debug("datachannel", "session %s: channel %u closed", session->id, stream_id);
}

static void sctp_association_state(void *user, bool up)
{
    moat_session *session = user;
    moat_log_info("datachannel", "session %s: SCTP association %s", session->id,
                  up ? "up" : "down");
}

static void sctp_sender_dry(void *user)
{
}

static const moat_sctp_callbacks sctp_callbacks = {
    .send_packet = sctp_send_packet,
    .channel_open = sctp_channel_open,
    .message = sctp_message,
    .channel_closed = sctp_channel_closed,
    .association_state = sctp_association_state,
    .sender_dry = sctp_sender_dry,
};

void moat_session_data_start(moat_session *session)
{
    if (session->sctp)
        return;
    char error[256];
    uint16_t remote_port = session->negotiation.remote_sctp_port ? session->negotiation.remote_sctp_port
                                                                 : SCTP_PORT;
    session->sctp = moat_sctp_association_new(session->dtls_role == MOAT_DTLS_ROLE_CLIENT,
                                              SCTP_PORT, remote_port, 262144, &sctp_callbacks,
                                              session, error, sizeof error);
    if (!session->sctp) {
        moat_log_warn("datachannel", "session %s: %s", session->id, error);
        return;
    }
    moat_sctp_association_connect(session->sctp);
}

void moat_session_data_receive(moat_session *session, const uint8_t *data, size_t length)
{
    if (session->sctp)
        moat_sctp_association_receive(session->sctp, data, length);
}

int moat_session_data_send(moat_session *session, uint16_t stream_id, uint32_t ppid,
                           const uint8_t *data, size_t length)
{
    if (!session->sctp)
        return -1;
    return moat_sctp_association_send(session->sctp, stream_id, ppid, data, length);
}

void moat_session_data_clear(moat_session *session)
{
    moat_sctp_association_free(session->sctp);
    session->sctp = NULL;
}
