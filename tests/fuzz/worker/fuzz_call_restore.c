/* libFuzzer target for call records read back from Redis after a restart
 * ([cluster] keep_calls): the input is one record as moat:calls:<node>
 * holds it, restored into a call registry on a real worker
 * (moat_call_registry_restore: call_journal.c's bounded decoding, then the
 * replay of its ng steps through offer/answer on the recorded ports and
 * SDES keys, with a sink that records what the registry puts). After each
 * input every call is deleted, so each starts from an empty registry.
 * Seeds (tests/fuzz/seeds/fuzz_call_restore) are records of a plain call
 * and of a plain-to-SDES call with a re-offer, as Moat wrote them. */
#include "call_test_support.h"

#include "call/call_registry.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

/* A replayed answer asks the transcoder for its codecs: GStreamer's
 * one-time start-up then grows GLib's quark table, which abandons the
 * 16 KiB block GLib's library constructor made (as in the transcode unit
 * tests: tests/unit/transcode/lsan.supp). Only allocations under _dl_init
 * are ignored, which needs full stacks from the start. A transcoding step
 * starts GStreamer's threads, and the sanitizer's own start-up of a thread
 * (its stack bounds, through glibc's pthread_getattr_np) leaves glibc's
 * affinity buffer behind: ignored too. */
const char *__lsan_default_suppressions(void)
{
    return "leak:_dl_init\nleak:__sanitizer::GetThreadStackTopAndBottom\n";
}

const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}

#define PORT_MIN 43100
#define PORT_MAX 43199

static call_fixture fixture;
static bool ready;
static size_t puts_seen;

static void sink_put(void *user, const char *call_id, const uint8_t *record, size_t length)
{
    puts_seen += length > 0;
}

static void sink_remove(void *user, const char *call_id) {}

static void delete_all(void)
{
    const char *ids[64];
    char *copies[64];
    size_t n = moat_call_list(fixture.registry, ids, 64);
    for (size_t i = 0; i < n; i++)
        copies[i] = g_strdup(ids[i]); /* the list is valid until the next command */
    for (size_t i = 0; i < n; i++) {
        moat_ng_request request = call_request(copies[i], NULL, NULL, NULL); /* any tags */
        request.delete_delay_s = 0;
        moat_call_reply reply = {0};
        moat_call_delete(fixture.registry, &request, &reply);
        moat_call_reply_clear(&reply);
        g_free(copies[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        call_fixture_setup(&fixture, PORT_MIN, PORT_MAX);
        moat_call_journal_sink sink = {sink_put, sink_remove, NULL};
        moat_call_registry_set_journal(fixture.registry, &sink, 0);
        ready = true;
    }
    char error[192] = "";
    moat_call_restore_outcome outcome =
        moat_call_registry_restore(fixture.registry, data, size, error, sizeof error);
    if (getenv("FUZZ_VERBOSE")) /* seeds: say whether they restore */
        fprintf(stderr, "outcome %d %s\n", (int)outcome, error);
    moat_call_registry_journal_all(fixture.registry); /* re-encodes what was rebuilt */
    delete_all();
    while (g_main_context_iteration(NULL, FALSE))
        ; /* what the control thread's loop would run (deferred frees: a
           * transcoder's threads and sockets) */
    return 0;
}
