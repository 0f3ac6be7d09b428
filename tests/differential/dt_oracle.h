/* dt_oracle.h - the expected verdict of a case, computed from FFmpeg's own
 * decode of each side (the ffmpeg/ffprobe command-line programs, never the
 * verifier's code).  The rules are in tests/differential/README.md, "The
 * oracle"; in short:
 *   - each side is decoded with `ffmpeg -threads 1 -flags +bitexact` into
 *     per-frame MD5s of raw video and raw f32le audio, and once more with
 *     `-xerror`, which decides whether the side is damaged;
 *   - frames and samples whose (mapped) presentation time lies in the
 *     interval are compared per track;
 *   - identical and clean: MATCH; a difference in clean data: MISMATCH;
 *     damage or an unobserved part of the interval: UNKNOWN.
 * Where two answers are both honest (a difference before later damage may be
 * MISMATCH or UNKNOWN; transport damage FFmpeg ignores may be UNKNOWN) the
 * expectation is a set with a preferred member. */
#ifndef DT_ORACLE_H
#define DT_ORACLE_H

#include "dt_case.h"

struct dt_expect {
    enum dt_verdict primary;   /* the answer an ideal verifier gives */
    unsigned allowed;          /* DT_VSET() bits: answers that are not wrong */
    enum dt_verdict video, audio; /* per track (primary) */
    char why[1024];            /* what the oracle saw, for the report */
};

/* What the oracle observed of a reference, kept for the next case with the
 * same single reference file (the mutation run judges many candidates
 * against one reference). */
struct dt_oracle_cache;
struct dt_oracle_cache *dt_oracle_cache_new(void);
void dt_oracle_cache_free(struct dt_oracle_cache *cache);

/*
 * Judge case c.  Scratch files go to c->dir/oracle/.  cache may be NULL.
 * Returns 0 when the oracle reached a verdict, -1 when it could not (an
 * FFmpeg run failed to start or its output could not be read: an oracle
 * error, never a verdict).
 */
int dt_oracle_judge(struct dt_env *env, const struct dt_case *c, struct dt_oracle_cache *cache,
                    struct dt_expect *out);

#endif
