/* test_diffpic.c - the pictures of a MISMATCH (verify_request.diff_dir,
 * diffpic.h) over the real fixtures: a video MISMATCH writes three PNGs
 * that FFmpeg decodes back at the frame's size, with a difference map that
 * is non-zero where the frames differ and zero where they do not; an audio
 * MISMATCH writes a gnuplot plot; a MATCH writes nothing; an existing file
 * is never replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>

#include "avlog.h"
#include "profile.h"
#include "test_file.h"
#include "verify.h"

#define FX FIXTURES_DIR "/"
#define ID "00000000-0000-4000-8000-0000000000d1"
/* cand_pixels.ts: a red box at x 200..359, y 120..215 from frame 60 on (fixtures/README.md) */
#define BOX_X 200
#define BOX_Y 120

/* verify_run of two fixtures (full decode) with --diff-dir dir. */
static json_t *check(const struct profile *p, const char *ref, const char *cand, const char *dir)
{
    char err[512];
    struct file r = load(ref), c = load(cand);
    struct bsrc_segment rs = {.data = r.data, .len = r.len}, cs = {.data = c.data, .len = c.len};
    struct verify_request rq = {.profile = p, .ref_segs = &rs, .n_ref = 1, .cand_segs = &cs, .n_cand = 1,
                                .reference_object = "ref", .candidate_object = "cand",
                                .compare = VERIFY_COMPARE_FULL, .evidence_id = ID, .diff_dir = dir};
    json_t *report = NULL;
    int rc = verify_run(&rq, &report, err, sizeof err);
    assert_true(rc >= 0 && rc <= 2);
    assert_non_null(report);
    free(r.data);
    free(c.data);
    return report;
}

/* Decodes a PNG file with libavformat/libavcodec into an RGB24 frame. */
static AVFrame *decode_png(const char *path)
{
    AVFormatContext *fmt = NULL;
    assert_int_equal(avformat_open_input(&fmt, path, NULL, NULL), 0);
    assert_int_equal(avformat_find_stream_info(fmt, NULL) >= 0, 1);
    const AVCodecParameters *par = fmt->streams[0]->codecpar;
    assert_int_equal(par->codec_id, AV_CODEC_ID_PNG);
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    AVCodecContext *c = avcodec_alloc_context3(codec);
    assert_int_equal(avcodec_parameters_to_context(c, par), 0);
    assert_int_equal(avcodec_open2(c, codec, NULL), 0);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    assert_int_equal(av_read_frame(fmt, pkt), 0);
    assert_int_equal(avcodec_send_packet(c, pkt), 0);
    assert_int_equal(avcodec_receive_frame(c, f), 0);
    assert_int_equal(f->format, AV_PIX_FMT_RGB24);
    av_packet_free(&pkt);
    avcodec_free_context(&c);
    avformat_close_input(&fmt);
    return f;
}

static const uint8_t *px(const AVFrame *f, int x, int y)
{
    return f->data[0] + (ptrdiff_t)y * f->linesize[0] + x * 3;
}

static const char *file_of(const json_t *rep, const char *key)
{
    return json_string_value(json_object_get(json_object_get(rep, "diff_images"), key));
}

static void make_tmp(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/test_diffpic-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void t01_video_mismatch_writes_three_pngs(void **state)
{
    const struct profile *p = *state;
    char tmp[512], dir[600];
    make_tmp(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/made/here", tmp);   /* the directory and its parent are made */
    json_t *rep = check(p, FX "ref.ts", FX "cand_pixels.ts", dir);
    assert_string_equal(json_string_value(json_object_get(rep, "reason")), "video_pixels");
    assert_null(json_object_get(json_object_get(rep, "diff_images"), "error"));
    char want[700];
    snprintf(want, sizeof want, "%s/" ID "-video-reference.png", dir);
    assert_string_equal(file_of(rep, "video_reference"), want);
    assert_null(file_of(rep, "audio_plot"));
    AVFrame *ref = decode_png(file_of(rep, "video_reference"));
    AVFrame *cand = decode_png(file_of(rep, "video_candidate"));
    AVFrame *diff = decode_png(file_of(rep, "video_difference"));
    for (const AVFrame **f = (const AVFrame *[]){ref, cand, diff, NULL}; *f; f++) {
        assert_int_equal((*f)->width, 640);
        assert_int_equal((*f)->height, 360);
    }
    /* the first differing pixel and the box's centre: different, and marked */
    assert_true(px(diff, BOX_X, BOX_Y)[0] > 0);
    assert_true(px(diff, BOX_X + 80, BOX_Y + 48)[0] > 0);
    assert_memory_not_equal(px(ref, BOX_X + 80, BOX_Y + 48), px(cand, BOX_X + 80, BOX_Y + 48), 3);
    /* the candidate shows the red box (RGB near 255, 0, 0) */
    assert_true(px(cand, BOX_X + 80, BOX_Y + 48)[0] > 200 && px(cand, BOX_X + 80, BOX_Y + 48)[1] < 60);
    /* where the map is black the two pictures are the same */
    long zero = 0;
    for (int y = 0; y < 360; y++)
        for (int x = 0; x < 640; x++)
            if (!px(diff, x, y)[0]) {
                assert_memory_equal(px(ref, x, y), px(cand, x, y), 3);
                zero++;
            }
    assert_true(zero > 640 * 360 / 2);   /* most of the picture is unchanged */
    av_frame_free(&ref);
    av_frame_free(&cand);
    av_frame_free(&diff);
    json_decref(rep);
    remove_tree(tmp);
}

static void t02_audio_mismatch_writes_a_plot(void **state)
{
    const struct profile *p = *state;
    char dir[512];
    make_tmp(dir, sizeof dir);
    json_t *rep = check(p, FX "ref.ts", FX "cand_audio.ts", dir);
    assert_string_equal(json_string_value(json_object_get(rep, "reason")), "audio_samples");
    assert_null(json_object_get(json_object_get(rep, "diff_images"), "error"));
    assert_null(file_of(rep, "video_reference"));
    AVFrame *plot = decode_png(file_of(rep, "audio_plot"));
    assert_int_equal(plot->width, 800);
    assert_int_equal(plot->height, 480);
    av_frame_free(&plot);
    json_decref(rep);
    remove_tree(dir);
}

static void t03_match_writes_nothing(void **state)
{
    const struct profile *p = *state;
    char tmp[512], dir[600];
    make_tmp(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/never", tmp);
    json_t *rep = check(p, FX "ref.ts", FX "cand_copy.ts", dir);
    assert_string_equal(json_string_value(json_object_get(rep, "verdict")), "MATCH");
    assert_int_equal(json_object_size(json_object_get(rep, "diff_images")), 0);
    struct stat st;
    assert_int_not_equal(stat(dir, &st), 0);   /* not even the directory */
    json_decref(rep);
    remove_tree(tmp);
}

/* The same evidence id twice: the second run takes numbered names and the
 * first run's files keep their bytes. */
static void t04_existing_files_are_never_replaced(void **state)
{
    const struct profile *p = *state;
    char dir[512], planted[700];
    make_tmp(dir, sizeof dir);
    snprintf(planted, sizeof planted, "%s/" ID "-video-reference.png", dir);
    FILE *f = fopen(planted, "w");
    assert_non_null(f);
    fputs("the user's own file\n", f);
    fclose(f);
    json_t *rep = check(p, FX "ref.ts", FX "cand_pixels.ts", dir);
    char want[700];
    snprintf(want, sizeof want, "%s/" ID "-video-reference-2.png", dir);
    assert_string_equal(file_of(rep, "video_reference"), want);
    struct file kept = load(planted);
    assert_int_equal(kept.len, strlen("the user's own file\n"));
    free(kept.data);
    json_decref(rep);
    remove_tree(dir);
}

/* The embedded profile, loaded once for the group. */
static int load_profile(void **state)
{
    static struct profile p;
    char err[512];
    avlog_install(AV_LOG_QUIET);
    if (profile_load(NULL, &p, err, sizeof err))
        return -1;
    *state = &p;
    return 0;
}

/* A picture that cannot be written says why and changes no verdict. */
static void t05_unwritable_dir_is_an_error_not_a_verdict(void **state)
{
    const struct profile *p = *state;
    char dir[512], file[600];
    make_tmp(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/a-file", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    json_t *rep = check(p, FX "ref.ts", FX "cand_pixels.ts", file);   /* DIR is a regular file */
    assert_string_equal(json_string_value(json_object_get(rep, "verdict")), "MISMATCH");
    assert_string_equal(json_string_value(json_object_get(rep, "reason")), "video_pixels");
    const char *why = json_string_value(json_object_get(json_object_get(rep, "diff_images"), "error"));
    assert_non_null(why);
    assert_non_null(strstr(why, "not a directory"));
    assert_null(file_of(rep, "video_reference"));
    json_decref(rep);
    remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_video_mismatch_writes_three_pngs),
        cmocka_unit_test(t02_audio_mismatch_writes_a_plot),
        cmocka_unit_test(t03_match_writes_nothing),
        cmocka_unit_test(t04_existing_files_are_never_replaced),
        cmocka_unit_test(t05_unwritable_dir_is_an_error_not_a_verdict),
    };
    return cmocka_run_group_tests(tests, load_profile, NULL);
}
