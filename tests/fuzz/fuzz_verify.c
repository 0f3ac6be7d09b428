/* fuzz_verify.c - the whole candidate path on arbitrary bytes: TS integrity
 * scan, libavformat, both decoding threads, the comparer and the verdict,
 * against the fixed reference fixtures/ref_tiny.ts.
 * Invariants: no crash, no hang, no leak; a verdict is always produced
 * (exit 0, 1 or 2, never an internal error), with the decoder-input fast
 * path on; a MATCH has compared every
 * reference frame and sample. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/log.h>

#include "avlog.h"
#include "profile.h"
#include "verify.h"

struct fixture {
    struct profile profile;
    uint8_t *ref;
    size_t ref_len;
};

static struct fixture *fixture(void)
{
    /* Loaded once per fuzzing process; read-only afterwards. */
    static struct fixture fx;
    static int loaded;
    if (loaded)
        return &fx;
    char err[256];
    avlog_install(AV_LOG_QUIET);
    if (profile_load(NULL, &fx.profile, err, sizeof err))
        abort();
    FILE *f = fopen(FIXTURES_DIR "/ref_tiny.ts", "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    fx.ref_len = (size_t)ftell(f);
    rewind(f);
    fx.ref = malloc(fx.ref_len);
    if (!fx.ref || fread(fx.ref, 1, fx.ref_len, f) != fx.ref_len)
        abort();
    fclose(f);
    loaded = 1;
    return &fx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fixture *fx = fixture();
    struct bsrc_segment ref = {.data = fx->ref, .len = fx->ref_len};
    struct bsrc_segment cand = {.data = data, .len = size};
    struct verify_request rq = {.profile = &fx->profile, .ref_segs = &ref, .n_ref = 1,
                                .cand_segs = &cand, .n_cand = 1, .reference_object = "ref_tiny.ts",
                                .candidate_object = "fuzz",
                                .compare = VERIFY_COMPARE_AUTO};   /* the fast path too */
    json_t *report = NULL;
    char err[512];
    int rc = verify_run(&rq, &report, err, sizeof err);
    assert(rc == 0 || rc == 1 || rc == 2);
    assert(report);
    if (rc == 0) {
        const json_t *v = json_object_get(report, "video"), *a = json_object_get(report, "audio");
        json_int_t frames = json_integer_value(json_object_get(v, "reference_frames"));
        assert(frames > 0 && json_integer_value(json_object_get(v, "compared_frames")) == frames);
        assert(json_integer_value(json_object_get(a, "candidate_samples")) ==
               json_integer_value(json_object_get(a, "reference_samples")));
    }
    json_decref(report);
    return 0;
}
