/* Recording sessions from the API and the configuration:
 * POST /api/sessions/<id>/recording starts one, DELETE stops it; with
 * [record] all_sessions every new session records from its start. Control
 * thread only. */
#ifndef MOAT_RECORD_API_H
#define MOAT_RECORD_API_H

#include "session/gateway_state.h"

#include <glib.h>

/* What the API answers, independent of the HTTP layer: on success `error` is
 * NULL and `file` the recording's file name, relative to [record] dir, never
 * a server path (g_free it); otherwise `error` is the
 * error code and `detail` says why. A DELETE of a recording that failed
 * (the disk filled up, the pipeline failed) succeeds and sets `failed` to
 * the failure's name ("no_space", "write": moat_record_failures_total's
 * reasons) and `detail` to what it means. */
typedef struct {
    unsigned status;
    const char *error;
    char detail[512];
    char *file;
    const char *failed;
} moat_record_api_result;

/* POST (start) or DELETE (stop) the recording of the session `record`. A
 * recording that failed is over: a POST starts the next one (409
 * already_recording only while one goes on). */
void moat_record_api_request(moat_gateway *gateway, const char *method, moat_session_record *record,
                             moat_record_api_result *result);
/* The same, naming the file <prefix>-<UTC start>.mkv instead of by the
 * session's label (a room publisher: "room-<room>-<publisher>"); `prefix`
 * is safe in a file name. */
void moat_record_api_request_named(moat_gateway *gateway, const char *method,
                                   moat_session_record *record, const char *prefix,
                                   moat_record_api_result *result);
/* A new session, before moat_session_start: records it when configured to. */
void moat_record_api_session_created(moat_gateway *gateway, moat_session *session,
                                     const moat_session_record *record);
/* Prometheus lines: moat_recordings_active, moat_record_dropped_packets_total{reason},
 * moat_record_failures_total{reason}, moat_record_files_at_size_limit_total. */
void moat_record_api_metrics(GString *out);
/* Shutdown, after the workers are gone: lets the open files finish. */
void moat_record_api_stop(void);

#endif
