/* The recording endpoints and the all-sessions switch. The control thread
 * remembers which sessions record (session id -> file and the recording's
 * outcome: a recording that failed is over, and its DELETE says why); the
 * recorder itself is handed to the session's worker as its media tap. */
#include "record/record_api.h"

#include "base/log.h"
#include "session/media_tap.h"
#include "record/record_ring.h"
#include "record/recorder.h"

#include <string.h>

/* Session id -> its recording; and session id -> recordings it has
 * started, for [record] max_files_per_session. Control thread only. */
static GHashTable *recordings;
static GHashTable *started;

typedef struct {
    char *file;                   /* relative to [record] dir */
    moat_record_outcome *outcome; /* one reference */
} recording;

static void recording_free(gpointer data)
{
    recording *entry = data;
    g_free(entry->file);
    moat_record_outcome_unref(entry->outcome);
    g_free(entry);
}

/* Why the session's recording ended early, if it did. */
static moat_record_failure failure_of(const recording *entry)
{
    return moat_record_outcome_failure(entry->outcome);
}

typedef struct {
    char id[40];
    moat_media_tap tap; /* ops NULL: stop recording */
} tap_request;

static void tap_task(moat_worker *worker, void *data)
{
    tap_request *request = data;
    moat_session *session = moat_worker_find_session(worker, request->id);
    if (session && request->tap.ops)
        moat_session_set_tap(session, request->tap);
    else if (session)
        moat_session_clear_tap(session);
    else if (request->tap.ops)
        request->tap.ops->on_detach(request->tap.user); /* the session ended meanwhile */
    g_free(request);
}

static void tap_release(void *data)
{
    tap_request *request = data;
    if (request->tap.ops)
        request->tap.ops->on_detach(request->tap.user);
    g_free(request);
}

static void forget_ended_in(moat_gateway *gateway, GHashTable *table)
{
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, table);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        if (!moat_session_registry_find(gateway->sessions, key))
            g_hash_table_iter_remove(&it);
    }
}

/* Forgets recordings of sessions that have ended (their files are closed). */
static void forget_ended(moat_gateway *gateway)
{
    if (!recordings) {
        recordings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, recording_free);
        started = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
    forget_ended_in(gateway, recordings);
    forget_ended_in(gateway, started);
}

static unsigned started_by(const moat_session_record *record)
{
    return started ? GPOINTER_TO_UINT(g_hash_table_lookup(started, record->id)) : 0;
}

/* Remembers the new recording of the session (its file, taken, and its
 * outcome, a new reference; a failed one it replaces is forgotten), one more
 * start. */
static void note_started(const moat_session_record *record, char *file, moat_recorder *recorder)
{
    recording *entry = g_new0(recording, 1);
    entry->file = file;
    entry->outcome = moat_recorder_outcome(recorder);
    g_hash_table_replace(recordings, g_strdup(record->id), entry);
    g_hash_table_replace(started, g_strdup(record->id), GUINT_TO_POINTER(started_by(record) + 1));
}

/* Files are named by the session's public label, never by its id: the id is
 * the WHIP resource's capability, and a file name is no place for it. */
static moat_recorder *new_recorder(moat_gateway *gateway, const moat_session_record *record,
                                   const char *prefix, char **path, char *error, size_t error_size,
                                   moat_record_failure *failure)
{
    forget_ended(gateway);
    char name[160];
    if (prefix)
        g_strlcpy(name, prefix, sizeof name);
    else
        g_snprintf(name, sizeof name, "session-%" G_GUINT64_FORMAT, record->serial);
    moat_recorder_limits limits = {
        .max_file_bytes = (uint64_t)gateway->config.record_max_file_mib << 20,
        .min_free_bytes = (uint64_t)gateway->config.record_min_free_mib << 20,
    };
    return moat_recorder_new(gateway->config.record_dir, name, &limits, path, error, error_size,
                             failure);
}

static void fail(moat_record_api_result *result, unsigned status, const char *error,
                 const char *detail)
{
    result->status = status;
    result->error = error;
    g_strlcpy(result->detail, detail, sizeof result->detail);
}

/* A recording that failed is over: a POST starts the next one (its tap
 * replaces the failed one's, which detaches it). */
static void start(moat_gateway *gateway, moat_session_record *record, const char *prefix,
                  moat_record_api_result *result)
{
    const recording *current = recordings ? g_hash_table_lookup(recordings, record->id) : NULL;
    if (current && failure_of(current) == MOAT_RECORD_FAILURE_NONE) {
        fail(result, 409, "already_recording", "the session is recording already");
        return;
    }
    char error[256] = "";
    int max_files = gateway->config.record_max_files_per_session;
    if (max_files > 0 && started_by(record) >= (unsigned)max_files) {
        g_snprintf(error, sizeof error,
                   "the session has started its %d recordings ([record] max_files_per_session)",
                   max_files);
        fail(result, 409, "too_many_recordings", error);
        return;
    }
    char *file = NULL;
    moat_record_failure failure = MOAT_RECORD_FAILURE_NONE;
    moat_recorder *recorder =
        new_recorder(gateway, record, prefix, &file, error, sizeof error, &failure);
    if (!recorder && failure == MOAT_RECORD_FAILURE_SPACE) {
        fail(result, 507, "insufficient_storage", error);
        return;
    }
    if (!recorder && failure != MOAT_RECORD_FAILURE_NONE) {
        fail(result, 500, "recording_failed", error);
        return;
    }
    if (!recorder) {
        fail(result, 409, "recording_unavailable", error);
        return;
    }
    /* The outcome first: once the worker has the tap, the recorder may be
     * freed at any time. */
    note_started(record, g_strdup(file), recorder);
    tap_request *request = g_new0(tap_request, 1);
    g_strlcpy(request->id, record->id, sizeof request->id);
    request->tap = moat_recorder_tap(recorder);
    moat_worker_post(record->worker, tap_task, request, tap_release);
    result->status = 201;
    result->file = file;
}

/* A DELETE's reply on a recording that ended early: 200 still (the
 * recording is stopped and its file closed), with why it failed. */
static void note_failure(moat_record_failure failure, moat_record_api_result *result)
{
    result->failed = moat_record_failure_name(failure);
    g_strlcpy(result->detail,
              failure == MOAT_RECORD_FAILURE_SPACE
                  ? "the recording folder's file system filled up: the recording ended there"
                  : "the file could not be written: the recording ended there",
              sizeof result->detail);
}

static void stop(moat_session_record *record, moat_record_api_result *result)
{
    const recording *current = recordings ? g_hash_table_lookup(recordings, record->id) : NULL;
    if (!current) {
        fail(result, 404, "not_recording", "the session is not recording");
        return;
    }
    tap_request *request = g_new0(tap_request, 1);
    g_strlcpy(request->id, record->id, sizeof request->id);
    moat_worker_post(record->worker, tap_task, request, tap_release);
    result->status = 200;
    result->file = g_strdup(current->file);
    if (failure_of(current) != MOAT_RECORD_FAILURE_NONE)
        note_failure(failure_of(current), result);
    g_hash_table_remove(recordings, record->id);
}

void moat_record_api_request(moat_gateway *gateway, const char *method, moat_session_record *record,
                             moat_record_api_result *result)
{
    moat_record_api_request_named(gateway, method, record, NULL, result);
}

void moat_record_api_request_named(moat_gateway *gateway, const char *method,
                                   moat_session_record *record, const char *prefix,
                                   moat_record_api_result *result)
{
    memset(result, 0, sizeof *result);
    if (strcmp(method, "POST") == 0)
        start(gateway, record, prefix, result);
    else if (strcmp(method, "DELETE") == 0)
        stop(record, result);
    else
        fail(result, 405, "method_not_allowed", "POST starts a recording, DELETE stops it");
}

void moat_record_api_session_created(moat_gateway *gateway, moat_session *session,
                                     const moat_session_record *record)
{
    if (!gateway->config.record_all_sessions)
        return;
    char error[256] = "";
    char *file = NULL;
    moat_record_failure failure = MOAT_RECORD_FAILURE_NONE;
    moat_recorder *recorder =
        new_recorder(gateway, record, NULL, &file, error, sizeof error, &failure);
    if (!recorder) {
        moat_log_warn("record", "session #%" G_GUINT64_FORMAT ": not recorded: %s", record->serial,
                      error);
        return;
    }
    note_started(record, file, recorder);
    moat_session_set_tap(session, moat_recorder_tap(recorder));
}

void moat_record_api_metrics(GString *out)
{
    g_string_append_printf(out,
                           "# HELP moat_recordings_active Recordings whose file is still open\n"
                           "# TYPE moat_recordings_active gauge\nmoat_recordings_active %u\n",
                           moat_recorder_active());
    g_string_append_printf(out,
                           "# HELP moat_record_dropped_packets_total Packets a recorder dropped, "
                           "by reason: queue_full (its queue was full), too_big (longer than a "
                           "queue slot, %d bytes)\n"
                           "# TYPE moat_record_dropped_packets_total counter\n"
                           "moat_record_dropped_packets_total{reason=\"queue_full\"} "
                           "%" G_GUINT64_FORMAT "\n"
                           "moat_record_dropped_packets_total{reason=\"too_big\"} "
                           "%" G_GUINT64_FORMAT "\n",
                           MOAT_RECORD_RING_PACKET_MAX,
                           moat_recorder_dropped_total(MOAT_RECORD_DROP_QUEUE_FULL),
                           moat_recorder_dropped_total(MOAT_RECORD_DROP_TOO_BIG));
    g_string_append_printf(out,
                           "# HELP moat_record_failures_total Recordings that could not be "
                           "written, by reason: create (the file), write (the pipeline failed), "
                           "no_space (less than [record] min_free_mib free at start, or the "
                           "disk filled up while writing)\n"
                           "# TYPE moat_record_failures_total counter\n"
                           "moat_record_failures_total{reason=\"create\"} %" G_GUINT64_FORMAT "\n"
                           "moat_record_failures_total{reason=\"write\"} %" G_GUINT64_FORMAT "\n"
                           "moat_record_failures_total{reason=\"no_space\"} %" G_GUINT64_FORMAT "\n"
                           "# HELP moat_record_files_at_size_limit_total Recordings whose file "
                           "was finished at [record] max_file_mib\n"
                           "# TYPE moat_record_files_at_size_limit_total counter\n"
                           "moat_record_files_at_size_limit_total %" G_GUINT64_FORMAT "\n",
                           moat_recorder_failures(MOAT_RECORD_FAILURE_CREATE),
                           moat_recorder_failures(MOAT_RECORD_FAILURE_WRITE),
                           moat_recorder_failures(MOAT_RECORD_FAILURE_SPACE),
                           moat_recorder_files_at_size_limit());
}

void moat_record_api_stop(void)
{
    moat_recorder_wait_idle(MOAT_RECORDER_FINISH_MAX_MS);
    if (recordings) {
        g_hash_table_destroy(recordings);
        g_hash_table_destroy(started);
    }
    recordings = NULL;
    started = NULL;
}
