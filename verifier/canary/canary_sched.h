/* canary_sched.h - the canary's scheduling decisions, as plain functions.
 *
 * No I/O, no clock, no threads: the caller passes what it observed and the
 * time, and gets back what to do.  Tested without the network
 * (tests/canary/test_canary_sched.c).
 *
 *  - canary_observe: how a live playlist's newest media sequence number
 *    moved since the last look (advancing, stalled for 3 target durations,
 *    regressed, re-based after a lasting regression, ended);
 *  - canary_select: which media sequence numbers to check in this cycle
 *    (declared correspondence by number; the newest present in both
 *    playlists minus lag_segments, oldest first when behind, bounded);
 *  - canary_backoff_ms: the wait after failed cycles (bounded);
 *  - canary_shard_*: which worker of N checks a target.
 */
#ifndef CANARY_SCHED_H
#define CANARY_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "hls.h"

/* How many target durations without a new segment make a stall, and
 * without a return to the former numbering make a re-base. */
#define CANARY_STALL_TARGET_DURATIONS 3

/* What one playlist has shown so far (zero value: nothing yet). */
struct canary_seen {
    bool have;
    uint64_t newest;             /* highest newest media sequence seen */
    uint64_t last;               /* the newest media sequence of the last look */
    int64_t advanced_at_ms;      /* when the playlist last moved forward (last grew) */
    bool stall_reported;         /* this stall episode is on record */
    bool regressed;              /* the playlist is below newest now */
    int64_t regressed_since_ms;
};

/* The zero value is the failing one. */
enum canary_pl {
    CANARY_PL_UNSET = 0,
    CANARY_PL_ADVANCING,         /* first look, or a new segment */
    CANARY_PL_SAME,              /* no new segment yet (or an episode already on record) */
    CANARY_PL_ENDED,             /* EXT-X-ENDLIST and nothing new: not a stall */
    CANARY_PL_STALLED,           /* record UNKNOWN playlist_stalled now (once per episode) */
    CANARY_PL_REGRESSED,         /* record UNKNOWN playlist_regressed now (once per episode) */
    CANARY_PL_REBASED,           /* the lower numbering lasted: start again from its newest */
};

/* newest: the media sequence number of the playlist's last segment. */
enum canary_pl canary_observe(struct canary_seen *s, uint64_t newest, bool endlist, int64_t target_duration_s,
                              int64_t now_ms);
const char *canary_pl_name(enum canary_pl p);

/* A playlist's media sequence numbers [first, last]; have = false when the
 * playlist could not be read. */
struct canary_range {
    bool have;
    uint64_t first, last;
};

/* Where the numbers of a pick come from. */
enum canary_source {
    CANARY_SOURCE_NONE = 0,      /* nothing to check */
    CANARY_SOURCE_BOTH,          /* present in both playlists: check them */
    CANARY_SOURCE_CANDIDATE,     /* only the candidate could be read: the reference is unavailable */
    CANARY_SOURCE_REFERENCE,     /* only the reference could be read: the candidate failed */
    CANARY_SOURCE_DISJOINT,      /* both read, no number in common: the reference lacks the candidate's */
};

struct canary_pick {
    enum canary_source source;
    uint64_t first, last;        /* oldest first; valid when count > 0 */
    uint64_t count;
    uint64_t skipped;            /* due numbers given up: out of the window, or over the catch-up limit */
    uint64_t skip_first;         /* they are skip_first .. skip_first + skipped - 1 (contiguous) */
    uint64_t window_skipped;     /* how many of them left the window (the rest: over the catch-up limit) */
};

/* have_next/next: the lowest number not yet on record (none before the
 * first cycle: then only the newest is due).  Numbers are due up to the
 * newest present in both playlists minus lag (or, when one playlist is
 * missing or they share nothing, the other's newest minus lag), at most
 * catchup of them, oldest first.  After recording them, next = last + 1. */
struct canary_pick canary_select(bool have_next, uint64_t next, struct canary_range cand, struct canary_range ref,
                                 unsigned lag, unsigned catchup);

/* How far the candidate's newest segment (media sequence cand_last) is
 * behind the reference's live edge: the sum of the durations of the
 * reference's segments numbered above cand_last, in ms (0 when the
 * candidate is level or ahead).  When cand_last is below the reference's
 * whole window it is the window's duration: a lower bound, as are all
 * figures read off one window. */
uint64_t canary_behind_ms(const struct hls_playlist *ref, uint64_t cand_last);

/* The wait before the next cycle after `failures` failed cycles in a row:
 * period, doubling per failure, never more than max (nor less than period). */
int64_t canary_backoff_ms(int64_t period_ms, int64_t max_ms, unsigned failures);

/* Shards: a target belongs to worker K of N when the first 8 bytes of
 * SHA-256("path_id/channel/rendition"), big-endian, are K mod N. */
uint64_t canary_shard_hash(const char *key);
bool canary_in_shard(const char *key, unsigned k, unsigned n);
/* Parses "K/N" with 0 <= K < N <= 1024; 0 on success. */
int canary_shard_parse(const char *s, unsigned *k, unsigned *n);

#endif
