/* verify.h - one Exact-AV v1 check, from bytes to a report.
 *
 * The pipeline: runtime check -> reference scan -> two decoding sides in
 * their own threads -> the comparer on this thread -> verdict -> report
 * (a jansson object; writers in report.h format it).
 */
#ifndef VERIFY_H
#define VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "bsrc.h"
#include "profile.h"
#include "side.h"

/* --compare: full decodes both sides; auto first compares the decoder
 * input (indigest.h) and decodes the candidate only when it differs or
 * anything is damaged (docs/exact-av-v1.md, "The fast path").  The zero
 * value is the full decode. */
enum verify_compare {
    VERIFY_COMPARE_FULL = 0,
    VERIFY_COMPARE_AUTO,
};

/* The reference's clean decode, remembered across checks of the same
 * reference (the canary keeps one per reference_version): valid only for
 * the same decoder input, profile fingerprint and interval, which
 * verify_run checks before using it. */
struct verify_refmemo {
    bool clean;                  /* set by verify_run after a clean decode */
    uint8_t digest[INDIGEST_LEN];
    char fingerprint[65];
    int64_t start, end;
    struct side_result res;      /* the reference side of that decode */
    int64_t frames, samples;     /* what it handed on in the interval */
};

/* The reference's clean decode kept across processes: `exactav verify
 * --evidence` and the canary keep it in the evidence store (table
 * reference_decodes, docs/evidence.md).  The key is the memo's: the
 * reference's decoder-input digest, the profile fingerprint (profile and
 * runtime) and the interval. */
struct verify_decode_key {
    char digest[2 * INDIGEST_LEN + 1];   /* lowercase hex */
    const char *fingerprint;
    int64_t start, end;
};
struct verify_decode_store {
    void *ctx;
    /* True when a clean decode of k is stored: *frames and *samples of the
     * interval and *reference (a new JSON object: the report's reference
     * side of that decode) are set. */
    bool (*load)(void *ctx, const struct verify_decode_key *k, int64_t *frames, int64_t *samples,
                 json_t **reference);
    /* Stores a clean decode; a failure only means the next check decodes again. */
    void (*save)(void *ctx, const struct verify_decode_key *k, int64_t frames, int64_t samples,
                 const json_t *reference, const char *evidence_id);
};

struct verify_request {
    const struct profile *profile;
    struct bsrc_segment *ref_segs;
    size_t n_ref;
    struct bsrc_segment *cand_segs;
    size_t n_cand;
    bool have_interval;
    int64_t start, end;
    int64_t offset;              /* --time-offset */
    int program;                 /* --program: the candidate's program_number, 0: by track set */
    const char *reference_object;   /* what the reference is (binding or file) */
    const char *candidate_object;   /* redacted */
    const char *reference_version;  /* binding digest, or NULL */
    json_t *context;             /* {path_id, channel, rendition, program_version} or NULL */
    json_t *fetches;             /* HTTP fetch records, or NULL for local files */
    int64_t observed_at_ms;      /* when the candidate bytes were fetched; 0: now */
    int64_t observed_end_ms;
    const char *candidate_failure;  /* delivery already known broken (stable code) */
    const char *evidence_id;     /* this check's id (evidence_new_id), or NULL */
    int64_t deadline_ms;         /* wall clock UTC ms the check must end by (deadline_exceeded); 0: none */
    bool candidate_length_unproven;  /* a candidate body had no declared end: missing frames or
                                      * samples are UNKNOWN length_unproven, never MISMATCH */
    bool progress;               /* progress on stderr */
    enum verify_compare compare;
    struct verify_refmemo *refmemo;  /* in/out, or NULL; the caller serialises its use */
    const struct verify_decode_store *decode_store;  /* or NULL: asked after the memo */
    const char *diff_dir;        /* --diff-dir: pictures of a MISMATCH go here (diffpic.h), and
                                  * the report's "diff_images" names them; NULL: none */
};

/* Runs the check.  Returns the exit code (0/1/2 with *report set, or 65,
 * 66, 70 with a message in err and possibly no report). */
int verify_run(const struct verify_request *rq, json_t **report, char *err, size_t errlen);

#endif
