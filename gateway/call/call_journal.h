/* What a restarted node needs to rebuild one call exactly: the ng commands
 * that made it (offer and answer dictionaries as received, re-offers
 * included) and every choice Moat made at random while running them, in
 * order: each stream's two leg ports and each SDES key it wrote. Replaying
 * the commands with the recorded choices rebuilds the same ports and keys,
 * so phones that keep sending to the old ports reach the new process.
 *
 * One cursor model serves recording and replay: a `take` returns the next
 * recorded choice while there is one (replay), else false and the caller
 * makes a fresh choice and `add`s it (recording). The record is a bencode
 * dictionary (binary-safe, the ng code's own encoder and bounded parser):
 *   {"v": 1, "call-id": s, "created": i, "steps": [s...], "ports": [i...],
 *    "keys": [s...], "srtp": [[stream, side, sent ssrc, roc, seq,
 *    received ssrc, roc, seq, valid bits]...]}
 * where each step is an encoded ng dictionary. It holds secrets (the SDES
 * keys, and the a=crypto lines inside the steps' SDPs): callers keep it on
 * a private Redis only. Not thread-safe; one owner (the call). */
#ifndef MOAT_CALL_JOURNAL_H
#define MOAT_CALL_JOURNAL_H

#include "ng/bencode.h"
#include "srtp/srtp_session.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_CALL_JOURNAL_VERSION     1
#define MOAT_CALL_JOURNAL_MAX_STEPS   32           /* offers and answers; past it: not restorable */
#define MOAT_CALL_JOURNAL_MAX_PORTS   32           /* leg ports (two per stream) */
#define MOAT_CALL_JOURNAL_MAX_KEYS    256          /* SDES key||salt strings */
#define MOAT_CALL_JOURNAL_MAX_KEY     64           /* octets of one */
#define MOAT_CALL_JOURNAL_MAX_BYTES   (512 * 1024) /* an encoded record */
#define MOAT_CALL_JOURNAL_MAX_STREAMS 16           /* SDES positions: one per stream and side */
/* A live position is written again once its sequence number moved this far
 * (or its SSRC or rollover changed): what a restart finds is then never
 * half the sequence space behind, so the first packet after it tells a
 * wrap since (srtp_session.h). */
#define MOAT_CALL_JOURNAL_SEQ_STEP 16384

typedef struct moat_call_journal moat_call_journal;

moat_call_journal *moat_call_journal_new(void);
void moat_call_journal_free(moat_call_journal *journal); /* wipes the keys */

/* Appends an ng command (its dictionary is encoded and copied); without a
 * dictionary or past MOAT_CALL_JOURNAL_MAX_STEPS the journal becomes
 * unrestorable. */
void moat_call_journal_add_step(moat_call_journal *journal, const moat_bencode *dictionary);
/* A call Moat cannot rebuild from its commands (a WebRTC leg: its DTLS
 * keys are not in them; too many steps): stays so. */
void moat_call_journal_set_unrestorable(moat_call_journal *journal);
bool moat_call_journal_restorable(const moat_call_journal *journal);

/* Leg ports: the next recorded pair (true), or false: record a fresh one. */
bool moat_call_journal_take_ports(moat_call_journal *journal, uint16_t out[2]);
void moat_call_journal_add_ports(moat_call_journal *journal, const uint16_t ports[2]);
/* SDES keys: the next recorded key of exactly `length` octets into `out`
 * (true), or false: record a fresh one. A recorded key of another length
 * makes the journal unrestorable (and answers false). */
bool moat_call_journal_take_key(moat_call_journal *journal, uint8_t *out, size_t length);
void moat_call_journal_add_key(moat_call_journal *journal, const uint8_t *key, size_t length);

/* The keys recorded so far, and a return to that point: what an offer
 * that failed wrote (nobody was given it) is forgotten, so a replay of the
 * commands that succeeded takes the keys they wrote. */
size_t moat_call_journal_key_mark(const moat_call_journal *journal);
void moat_call_journal_rollback_keys(moat_call_journal *journal, size_t mark);

/* An SDES leg's SRTP streams (stream `index`, `side`): sent to the party
 * and received from it. */
typedef struct {
    moat_srtp_position sent, received;
} moat_call_journal_srtp;

/* Live: where the leg's streams stand now; true when that differs enough
 * from what the journal holds to be written (SEQ_STEP above). */
bool moat_call_journal_note_srtp(moat_call_journal *journal, size_t index, int side,
                                 const moat_call_journal_srtp *at);
/* New keys (a command re-keyed the legs): the positions held no longer
 * apply. */
void moat_call_journal_forget_srtp(moat_call_journal *journal);
/* A record read back: the positions it held, for the replay to resume the
 * legs' streams at (true when there is one for that leg), until
 * moat_call_journal_end_resume. */
bool moat_call_journal_resume_srtp(const moat_call_journal *journal, size_t index, int side,
                                   moat_call_journal_srtp *out);
void moat_call_journal_end_resume(moat_call_journal *journal);

/* The record (appended to `out`); false when unrestorable or over
 * MOAT_CALL_JOURNAL_MAX_BYTES. */
bool moat_call_journal_encode(const moat_call_journal *journal, const char *call_id,
                              int64_t created_s, GByteArray *out);

/* A record read back: its call-id and creation time, and a journal whose
 * ports and keys replay from the start (cursors at 0) and whose steps wait
 * for moat_call_journal_take_steps. NULL with `error` for anything
 * malformed or over a limit. */
typedef struct {
    char call_id[256];
    int64_t created_s;
} moat_call_journal_header;

moat_call_journal *moat_call_journal_decode(const uint8_t *data, size_t length,
                                            moat_call_journal_header *header, char *error,
                                            size_t error_size);
/* The steps read back (moat_bencode dictionaries; the caller unrefs the
 * array, which frees them), leaving the journal without: replaying them
 * records them again. NULL when there are none. */
GPtrArray *moat_call_journal_take_steps(moat_call_journal *journal);
/* Whether every recorded key was taken (a replay that rebuilt the call as
 * it was; port pairs may be left: a command that failed after adding a
 * stream left the stream, whose ports a later command then takes). */
bool moat_call_journal_replayed_all(const moat_call_journal *journal);

#endif
