/* Owns keeping calls over a restart: each restorable call's record put to
 * the registry's sink after every command that changed it and withdrawn
 * when it ends, a record restored by replaying its ng commands on its
 * recorded ports and keys, and when a restored call whose parties never
 * came back ends (call_timeout.c's sweep ends it). Control thread. */
#include "call/call_registry.h"
#include "call/call_registry_private.h"

#include <stdio.h>
#include <string.h>

static gboolean snapshot_srtp(void *data);

void moat_call_registry_set_journal(moat_call_registry *registry,
                                    const moat_call_journal_sink *sink, int restore_idle_s)
{
    registry->sink = sink ? *sink : (moat_call_journal_sink){0};
    registry->restore_idle_s = restore_idle_s;
    moat_call_timeout_arm(registry); /* the sweep ends restored calls left idle */
    if (registry->srtp_timer && !registry->sink.put) {
        g_source_remove(registry->srtp_timer);
        registry->srtp_timer = 0;
    }
    if (!registry->srtp_timer && registry->sink.put)
        registry->srtp_timer =
            g_timeout_add_seconds(MOAT_CALL_SRTP_SNAPSHOT_S, snapshot_srtp, registry);
}

moat_call_journal *moat_call_restore_journal_for_new(moat_call_registry *registry)
{
    moat_call_journal *journal = registry->restoring;
    registry->restoring = NULL;
    return journal ? journal : moat_call_journal_new();
}

static bool has_webrtc(const moat_call *call)
{
    return call->webrtc[0] || call->webrtc[1] || call->offered[0] || call->offered[1];
}

static void put(moat_call *call)
{
    moat_call_registry *registry = call->registry;
    if (!registry->sink.put || !moat_call_journal_restorable(call->journal))
        return;
    GByteArray *record = g_byte_array_new();
    if (moat_call_journal_encode(call->journal, call->id, call->created_s, record)) {
        registry->sink.put(registry->sink.user, call->id, record->data, record->len);
        call->journaled = true;
    } else {
        moat_call_restore_withdraw(call); /* grown past the limits: no stale copy */
    }
    explicit_bzero(record->data, record->len);
    g_byte_array_free(record, TRUE);
}

void moat_call_restore_note(moat_call *call, const moat_ng_request *request)
{
    moat_call_journal_add_step(call->journal, request->dictionary);
    if (!call->registry->replaying)
        moat_call_journal_forget_srtp(call->journal); /* the command re-keyed the legs */
    if (has_webrtc(call)) {
        /* Its DTLS keys are not in the commands: it cannot be rebuilt. */
        moat_call_journal_set_unrestorable(call->journal);
        moat_call_restore_withdraw(call);
        return;
    }
    if (!call->registry->replaying)
        put(call);
}

void moat_call_restore_withdraw(moat_call *call)
{
    moat_call_registry *registry = call->registry;
    if (call->journaled && registry->sink.remove)
        registry->sink.remove(registry->sink.user, call->id);
    call->journaled = false;
}

void moat_call_offer(moat_call_registry *registry, const moat_ng_request *request,
                     moat_call_reply *reply)
{
    moat_call *call =
        request->call_id ? g_hash_table_lookup(registry->calls, request->call_id) : NULL;
    size_t mark = call ? moat_call_journal_key_mark(call->journal) : 0;
    moat_call_offer_run(registry, request, reply);
    if (call && reply->error[0] && g_hash_table_lookup(registry->calls, request->call_id) == call)
        moat_call_journal_rollback_keys(call->journal, mark);
}

void moat_call_registry_journal_all(moat_call_registry *registry)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, registry->calls);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        moat_call *call = value;
        if (!call->delete_timer)
            put(call);
    }
}

/* Every MOAT_CALL_SRTP_SNAPSHOT_S: where each SDES leg's streams stand (the
 * workers publish it per packet), written when it moved enough
 * (call_journal.h): a restart then resumes them at the right rollover. */
static gboolean snapshot_srtp(void *data)
{
    moat_call_registry *registry = data;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, registry->calls);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        moat_call *call = value;
        if (!call->journaled || call->delete_timer)
            continue;
        bool moved = false;
        for (size_t i = 0; i < call->n_streams; i++) {
            for (int side = 0; side < 2; side++) {
                if (!call->sdes.legs[side][i].keyed)
                    continue;
                moat_call_leg_counters counters;
                moat_call_stream_read(call->streams[i], side, &counters);
                moat_call_journal_srtp at = {counters.srtp_sent, counters.srtp_received};
                moved |= moat_call_journal_note_srtp(call->journal, i, side, &at);
            }
        }
        if (moved)
            put(call);
    }
    return G_SOURCE_CONTINUE;
}

/* ---- restoring ------------------------------------------------------------------- */

/* One recorded command, which must be an offer or answer for the record's
 * own call (a step naming another call would make a call nobody journals). */
static bool replay_step(moat_call_registry *registry, const char *call_id, const moat_bencode *step,
                        size_t index, char *error, size_t error_size)
{
    moat_ng_request request;
    char why[160] = "";
    bool ok = false;
    if (moat_ng_request_parse(step, &request, why, sizeof why) != 0) {
        snprintf(error, error_size, "step %zu: %s", index, why);
    } else if (request.command != MOAT_NG_OFFER && request.command != MOAT_NG_ANSWER) {
        snprintf(error, error_size, "step %zu is not an offer or answer", index);
    } else if (!request.call_id || strcmp(request.call_id, call_id) != 0) {
        snprintf(error, error_size, "step %zu names another call", index);
    } else {
        moat_call_reply reply = {0};
        if (request.command == MOAT_NG_OFFER)
            moat_call_offer(registry, &request, &reply);
        else
            moat_call_answer(registry, &request, &reply);
        ok = reply.error[0] == '\0';
        if (!ok)
            snprintf(error, error_size, "step %zu (%s): %s", index, request.command_name,
                     reply.error);
        moat_call_reply_clear(&reply);
    }
    moat_ng_request_clear(&request);
    return ok;
}

static moat_call_restore_outcome restore_failed(moat_call_registry *registry, const char *call_id)
{
    registry->restoring = NULL;
    if (call_id)
        g_hash_table_remove(registry->calls, call_id); /* half-built: its ports go back */
    registry->restored[MOAT_CALL_RESTORE_FAILED]++;
    return MOAT_CALL_RESTORE_FAILED;
}

moat_call_restore_outcome moat_call_registry_restore(moat_call_registry *registry,
                                                     const uint8_t *record, size_t length,
                                                     char *error, size_t error_size)
{
    moat_call_journal_header header;
    moat_call_journal *journal =
        moat_call_journal_decode(record, length, &header, error, error_size);
    if (!journal)
        return restore_failed(registry, NULL);
    if (g_hash_table_contains(registry->calls, header.call_id)) {
        moat_call_journal_free(journal);
        registry->restored[MOAT_CALL_RESTORE_SKIPPED]++;
        return MOAT_CALL_RESTORE_SKIPPED;
    }
    GPtrArray *steps = moat_call_journal_take_steps(journal);
    /* The first offer's new call takes the journal (call_new); nothing is
     * put to the sink while the steps replay (the record is the one read). */
    registry->restoring = journal;
    registry->replaying = true;
    bool ok = true;
    for (guint i = 0; ok && i < steps->len; i++) {
        ok = replay_step(registry, header.call_id, g_ptr_array_index(steps, i), i, error,
                         error_size);
        moat_call *call = g_hash_table_lookup(registry->calls, header.call_id);
        if (ok && (!call || call->journal != journal)) {
            snprintf(error, error_size, "step %u did not make the call %s", i, header.call_id);
            ok = false;
        }
    }
    g_ptr_array_unref(steps);
    registry->replaying = false;
    moat_call *call = g_hash_table_lookup(registry->calls, header.call_id);
    if (registry->restoring == journal) {
        moat_call_journal_free(journal); /* no step made the call */
        return restore_failed(registry, NULL);
    }
    if (ok && !moat_call_journal_replayed_all(journal)) {
        snprintf(error, error_size, "the replay did not use every recorded port and key");
        ok = false;
    }
    if (!ok)
        return restore_failed(registry, call ? header.call_id : NULL);
    call->created_s = header.created_s;
    call->journaled = true;                /* its record is the one just read */
    moat_call_journal_end_resume(journal); /* later re-keyings start fresh streams */
    /* restore_idle_s from now: a call none of whose parties sent since is
     * over (they hung up while the node was down; the proxy's delete went
     * nowhere). The media timeout's sweep ends it (call_timeout.c). */
    if (registry->restore_idle_s > 0)
        call->restore_deadline_us =
            g_get_monotonic_time() + (int64_t)registry->restore_idle_s * G_USEC_PER_SEC;
    registry->restored[MOAT_CALL_RESTORED]++;
    return MOAT_CALL_RESTORED;
}
