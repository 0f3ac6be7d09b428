/* test_tsdemux.c - PSI, program selection, PES reassembly and access units on synthetic packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libavutil/bswap.h>
#include <libavutil/crc.h>

#include "au.h"
#include "bsrc.h"
#include "tsdemux.h"

#define MAXP 64

struct stream {
    uint8_t buf[MAXP * TS_PACKET_SIZE];
    size_t n;                    /* packets */
    int cc[8192];
};

struct got {
    int n;
    enum tsd_track track[16];
    bool damaged[16];
    size_t len[16];
    int64_t pts[16];
};

static uint8_t *packet(struct stream *s, int pid, bool pusi)
{
    uint8_t *p = s->buf + s->n++ * TS_PACKET_SIZE;
    memset(p, 0xFF, TS_PACKET_SIZE);
    p[0] = 0x47;
    p[1] = (uint8_t)((pusi ? 0x40 : 0) | pid >> 8);
    p[2] = (uint8_t)pid;
    p[3] = (uint8_t)(0x10 | (s->cc[pid]++ & 15));
    return p;
}

/* A PSI section (PAT or PMT) with its CRC, in one packet. */
static void section(struct stream *s, int pid, const uint8_t *body, size_t len)
{
    uint8_t *p = packet(s, pid, true);
    p[4] = 0;                    /* pointer_field */
    memcpy(p + 5, body, len);
    /* as the mpegts muxer writes it: FFmpeg's table gives the CRC byte-swapped */
    uint32_t crc = av_bswap32(av_crc(av_crc_get_table(AV_CRC_32_IEEE), UINT32_MAX, body, len));
    for (int i = 0; i < 4; i++)
        p[5 + len + (size_t)i] = (uint8_t)(crc >> (24 - 8 * i));
}

/* A PSI section of any length (<= 1021), with its CRC, split over as many
 * packets as it needs. */
static void long_section(struct stream *s, int pid, const uint8_t *body, size_t len)
{
    uint8_t sec[1024];
    memcpy(sec, body, len);
    uint32_t crc = av_bswap32(av_crc(av_crc_get_table(AV_CRC_32_IEEE), UINT32_MAX, body, len));
    for (int i = 0; i < 4; i++)
        sec[len + (size_t)i] = (uint8_t)(crc >> (24 - 8 * i));
    size_t total = len + 4;
    for (size_t pos = 0; pos < total;) {
        uint8_t *p = packet(s, pid, pos == 0);
        size_t at = pos == 0 ? 5 : 4;
        if (pos == 0)
            p[4] = 0;            /* pointer_field */
        size_t k = total - pos < TS_PACKET_SIZE - at ? total - pos : TS_PACKET_SIZE - at;
        memcpy(p + at, sec + pos, k);
        pos += k;
    }
}

static void pat(struct stream *s, int n, const int *programs, const int *pmt_pids)
{
    uint8_t b[64] = {0x00, 0xB0, (uint8_t)(9 + 4 * n), 0, 1, 0xC1, 0, 0};
    for (int i = 0; i < n; i++) {
        b[8 + 4 * i] = (uint8_t)(programs[i] >> 8), b[9 + 4 * i] = (uint8_t)programs[i];
        b[10 + 4 * i] = (uint8_t)(0xE0 | pmt_pids[i] >> 8), b[11 + 4 * i] = (uint8_t)pmt_pids[i];
    }
    section(s, 0, b, 8 + 4 * (size_t)n);
}

/* A PMT of (stream_type, pid) pairs. */
static void pmt(struct stream *s, int pid, int program, int n, const int *types, const int *pids)
{
    uint8_t b[64] = {0x02, 0xB0, (uint8_t)(13 + 5 * n), (uint8_t)(program >> 8), (uint8_t)program, 0xC1, 0, 0,
                     0xE1, 0x00, 0xF0, 0x00};
    for (int i = 0; i < n; i++) {
        uint8_t *e = b + 12 + 5 * i;
        e[0] = (uint8_t)types[i], e[1] = (uint8_t)(0xE0 | pids[i] >> 8), e[2] = (uint8_t)pids[i];
        e[3] = 0xF0, e[4] = 0;
    }
    section(s, pid, b, 12 + 5 * (size_t)n);
}

/* One bounded audio PES of len (<= 160) payload bytes, with a PTS unless
 * pts < 0, in one packet. */
static void pes_bytes(struct stream *s, int pid, int64_t pts, const uint8_t *data, size_t len)
{
    uint8_t *p = packet(s, pid, true);
    size_t hl = pts < 0 ? 9 : 14;
    uint8_t h[14] = {0, 0, 1, 0xC0, 0, (uint8_t)(hl - 6 + len), 0x80, 0, 0};
    if (pts >= 0) {
        uint8_t t[] = {0x80, 5, (uint8_t)(0x21 | (pts >> 29 & 0x0E)), (uint8_t)(pts >> 22),
                       (uint8_t)(pts >> 14 | 1), (uint8_t)(pts >> 7), (uint8_t)(pts << 1 | 1)};
        memcpy(h + 7, t, sizeof t);
    }
    /* adaptation-field stuffing so that header + payload end the packet */
    size_t fill = TS_PACKET_SIZE - 4 - hl - len;
    p[3] |= 0x20;
    p[4] = (uint8_t)(fill - 1);
    p[5] = 0;
    memcpy(p + 4 + fill, h, hl);
    memcpy(p + 4 + fill + hl, data, len);
}

/* One bounded PES of 100 payload bytes with a PTS, in one packet. */
static void pes(struct stream *s, int pid, int64_t pts)
{
    uint8_t data[100];
    memset(data, 0xAB, sizeof data);
    pes_bytes(s, pid, pts, data, sizeof data);
}

static void on_pes(void *opaque, const struct tsd_pes *pes_)
{
    struct got *g = opaque;
    assert_true(g->n < 16);
    g->track[g->n] = pes_->track;
    g->damaged[g->n] = pes_->damaged;
    g->len[g->n] = pes_->len;
    g->pts[g->n] = pes_->pts;
    g->n++;
}

static void run(struct stream *s, const struct tsd_select *sel, struct got *g, struct tsdemux *d)
{
    struct tscheck *ts = tscheck_new();
    memset(g, 0, sizeof *g);
    assert_int_equal(tsdemux_init(d, sel, on_pes, g), 0);
    tscheck_feed_packets(ts, s->buf, s->n * TS_PACKET_SIZE, tsdemux_packet, d);
    tscheck_finish(ts);
    tsdemux_finish(d, false);
    tscheck_free(ts);
}

/* The PAT lists a metadata-only program first; the program with the wanted
 * track set announces its PMT only after some of its PES: they are held,
 * not lost, and that program is selected.  With an audio-only program first
 * instead, a player would play that one: nothing is compared. */
static void t01_a_program_announced_first_does_not_hide_a_later_one(void **state)
{
    (void)state;
    static struct stream s;
    for (int audio_first = 0; audio_first < 2; audio_first++) {
        memset(&s, 0, sizeof s);
        pat(&s, 2, (int[]){1, 2}, (int[]){0x100, 0x200});
        pmt(&s, 0x100, 1, 1, (int[]){audio_first ? 0x0F : 0x15}, (int[]){0x300});
        pmt(&s, 0x200, 2, 2, (int[]){0x1B, 0x0F}, (int[]){0x202, 0x201});
        struct tsd_select sel = {.want_video = 1, .want_audio = 1};
        struct tsdemux d;
        struct got g;
        run(&s, &sel, &g, &d);
        assert_int_equal(d.selection, audio_first ? TSD_SEL_NOT_PLAYED : TSD_SEL_OK);
        assert_string_equal(tsd_selection_code(d.selection), audio_first ? "program_not_played" : "ok");
        assert_int_equal(d.played, audio_first ? 0 : 1);
        tsdemux_free(&d);
    }
    memset(&s, 0, sizeof s);
    pat(&s, 2, (int[]){1, 2}, (int[]){0x100, 0x200});
    pmt(&s, 0x100, 1, 1, (int[]){0x15}, (int[]){0x300});
    pes(&s, 0x201, 90000);      /* program 2's audio before its PMT */
    pes(&s, 0x300, 90000);
    pmt(&s, 0x200, 2, 2, (int[]){0x1B, 0x0F}, (int[]){0x202, 0x201});
    pes(&s, 0x201, 91920);
    struct tsd_select sel = {.want_video = 1, .want_audio = 1};
    struct tsdemux d;
    struct got g;
    run(&s, &sel, &g, &d);
    assert_int_equal(d.selection, TSD_SEL_OK);
    assert_int_equal(tsdemux_program(&d)->number, 2);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.pts[0], 90000);
    assert_int_equal(g.pts[1], 91920);
    assert_int_equal(g.track[0], TSD_AUDIO);
    assert_int_equal(g.len[0], 100);
    tsdemux_free(&d);
    /* forced to program 1: another track set */
    sel.program = 1;
    run(&s, &sel, &g, &d);
    assert_int_equal(d.selection, TSD_SEL_TRACK_SET);
    tsdemux_free(&d);
}

static void t02_equal_programs_are_ambiguous(void **state)
{
    (void)state;
    static struct stream s;
    memset(&s, 0, sizeof s);
    pat(&s, 2, (int[]){1, 2}, (int[]){0x100, 0x200});
    pmt(&s, 0x100, 1, 2, (int[]){0x1B, 0x0F}, (int[]){0x101, 0x102});
    pmt(&s, 0x200, 2, 2, (int[]){0x1B, 0x11}, (int[]){0x201, 0x202});
    struct tsd_select sel = {.want_video = 1, .want_audio = 1};
    struct tsdemux d;
    struct got g;
    run(&s, &sel, &g, &d);
    assert_int_equal(d.selection, TSD_SEL_AMBIGUOUS);
    assert_null(tsdemux_program(&d));
    tsdemux_free(&d);
    sel.program = 7;
    run(&s, &sel, &g, &d);
    assert_int_equal(d.selection, TSD_SEL_NOT_FOUND);
    tsdemux_free(&d);
}

/* The PES of s's audio-only program, in g. */
static void run_audio_only(struct stream *s, struct got *g)
{
    struct tsd_select sel = {.want_audio = 1};
    struct tsdemux d;
    run(s, &sel, g, &d);
    tsdemux_free(&d);
}

/* PAT, PMT (program 1: AAC on PID 0x101) and three one-packet PES at
 * 90000, 91920 and 93840: packets 2, 3 and 4. */
static void three_audio_pes(struct stream *s)
{
    memset(s, 0, sizeof *s);
    pat(s, 1, (int[]){1}, (int[]){0x100});
    pmt(s, 0x100, 1, 1, (int[]){0x0F}, (int[]){0x101});
    pes(s, 0x101, 90000);
    pes(s, 0x101, 91920);
    pes(s, 0x101, 93840);
}

/* A lost packet that held the start of a PES: that PES is gone, and the
 * next one, decoded after a hole, is damaged. */
static void t03_a_lost_pes_start_damages_what_follows(void **state)
{
    (void)state;
    static struct stream s;
    three_audio_pes(&s);
    memmove(s.buf + 3 * TS_PACKET_SIZE, s.buf + 4 * TS_PACKET_SIZE, TS_PACKET_SIZE);   /* drop the 2nd */
    s.n--;
    struct got g;
    run_audio_only(&s, &g);
    assert_int_equal(g.n, 2);
    assert_false(g.damaged[0]);
    assert_int_equal(g.pts[1], 93840);
    assert_true(g.damaged[1]);
}

/* A PTS field whose prefix or marker bits are wrong (a bit flipped on the
 * way: the CI mutation run's seed 1796091475, mutant 2, moved a picture out
 * of the interval that way) is damage, and no time is read from it. */
static void t06_an_unsound_pts_field_is_damage_without_a_time(void **state)
{
    (void)state;
    static struct stream s;
    three_audio_pes(&s);
    /* 188 - 4 - 14 - 100 = 70 bytes of stuffing, then the 9-byte header: the PTS at 83 */
    const size_t pts_at = 4 + 70 + 9;
    assert_int_equal(s.buf[2 * TS_PACKET_SIZE + pts_at] >> 4, 2);
    s.buf[3 * TS_PACKET_SIZE + pts_at] ^= 0x10;       /* prefix '0011' without a DTS */
    s.buf[4 * TS_PACKET_SIZE + pts_at + 2] &= 0xFE;   /* the second marker bit cleared */
    struct got g;
    run_audio_only(&s, &g);
    assert_int_equal(g.n, 3);
    assert_false(g.damaged[0]);
    assert_int_equal(g.pts[0], 90000);
    for (int i = 1; i < 3; i++) {
        assert_true(g.damaged[i]);
        assert_int_equal(g.pts[i], TSD_NO_TS);
        assert_int_equal(g.len[i], 100);   /* the payload is still handed on */
    }
}

/* Payload past a declared PES_packet_length belongs to no PES: damage, not
 * cut unseen (FFmpeg decodes it as a packet of its own).  Three cases on
 * the second of three one-packet PES: its length declared 10 bytes short
 * (other bytes follow), the same 10 bytes 0xFF (a one-packet PES padded,
 * which FFmpeg tolerates too), and a whole packet of the PID after it. */
static void t07_bytes_past_the_declared_length_are_damage(void **state)
{
    (void)state;
    static struct stream s;
    const size_t len_at = 4 + 70 + 5;     /* PES_packet_length's low byte */
    for (int variant = 0; variant < 3; variant++) {
        three_audio_pes(&s);
        uint8_t *p2 = s.buf + 3 * TS_PACKET_SIZE;
        if (variant < 2) {
            p2[len_at] -= 10;
            if (variant == 1)
                memset(p2 + TS_PACKET_SIZE - 10, 0xFF, 10);
        } else {
            /* a continuation packet of PID 0x101 between PES 2 and 3 */
            memmove(p2 + 2 * TS_PACKET_SIZE, p2 + TS_PACKET_SIZE, TS_PACKET_SIZE);
            uint8_t *extra = p2 + TS_PACKET_SIZE;
            memset(extra, 0x5A, TS_PACKET_SIZE);
            extra[0] = 0x47, extra[1] = 0x01, extra[2] = 0x01, extra[3] = 0x10 | ((p2[3] + 1) & 15);
            uint8_t *p3 = p2 + 2 * TS_PACKET_SIZE;
            p3[3] = (uint8_t)((p3[3] & 0xF0) | ((p2[3] + 2) & 15));
            s.n++;
        }
        struct got g;
        run_audio_only(&s, &g);
        assert_int_equal(g.n, 3);
        assert_false(g.damaged[0]);
        assert_int_equal(g.damaged[1], variant != 1);
        assert_int_equal(g.len[1], variant < 2 ? 90 : 100);   /* the PES itself is its declared bytes */
        assert_int_equal(g.pts[1], 91920);
        assert_false(g.damaged[2]);
    }
}

/* A lost packet right after a PES that had all its declared bytes leaves
 * it whole; the packet after the loss continues a PES whose start is gone,
 * and is not counted against the whole one. */
static void t08_a_loss_after_a_whole_pes_does_not_damage_it(void **state)
{
    (void)state;
    static struct stream s;
    three_audio_pes(&s);
    /* the 3rd PES's start lost, a continuation of it kept */
    uint8_t *p3 = s.buf + 4 * TS_PACKET_SIZE;
    p3[1] &= (uint8_t)~0x40;
    p3[3] = (uint8_t)((p3[3] & 0xF0) | ((p3[3] + 1) & 15));
    struct got g;
    run_audio_only(&s, &g);
    assert_int_equal(g.n, 2);
    assert_false(g.damaged[0]);
    assert_false(g.damaged[1]);
    assert_int_equal(g.len[1], 100);
}

/* An ADTS frame header (AAC-LC, 48 kHz, stereo) for a frame of len bytes,
 * followed by filler up to len. */
static void adts_frame(uint8_t *f, size_t len)
{
    memset(f, 0x11, len);
    uint8_t h[7] = {0xFF, 0xF1, 0x4C, (uint8_t)(0x80 | (len >> 11 & 3)), (uint8_t)(len >> 3),
                    (uint8_t)((len & 7) << 5 | 0x1F), 0xFC};
    memcpy(f, h, sizeof h);
}

struct units {
    int n;
    bool damaged[8];
    int64_t pts[8];
};

static bool on_au(void *opaque, const struct au *au)
{
    struct units *u = opaque;
    assert_true(u->n < 8);
    u->damaged[u->n] = au->damaged;
    u->pts[u->n] = au->pts;
    u->n++;
    return true;
}

/* Frame 1 (250 bytes) spans three PES; frames 2 and 3 (50 bytes) follow.
 * The middle PES begins no frame: declaring a time there means a frame
 * start went missing (a broken start code or sync word swallowed a whole
 * unit), so frame 1 is damaged; without a time it is plain packing. */
static void audio_units(bool middle_has_time, struct units *u)
{
    static struct stream s;
    memset(&s, 0, sizeof s);
    uint8_t f1[250], f23[100];
    adts_frame(f1, sizeof f1);
    adts_frame(f23, 50);
    adts_frame(f23 + 50, 50);
    uint8_t c[100];
    memcpy(c, f1 + 200, 50);
    memcpy(c + 50, f23, 50);
    pat(&s, 1, (int[]){1}, (int[]){0x100});
    pmt(&s, 0x100, 1, 1, (int[]){0x0F}, (int[]){0x101});
    pes_bytes(&s, 0x101, 90000, f1, 100);
    pes_bytes(&s, 0x101, middle_has_time ? 91920 : -1, f1 + 100, 100);
    pes_bytes(&s, 0x101, 93840, c, 100);
    pes_bytes(&s, 0x101, 95760, f23 + 50, 50);
    struct bsrc_segment seg = {.data = s.buf, .len = s.n * TS_PACKET_SIZE};
    struct bsrc src;
    assert_int_equal(bsrc_init(&src, &seg, 1), 0);
    struct tsd_select sel = {.want_audio = 1};
    struct au_demux a;
    memset(u, 0, sizeof *u);
    assert_int_equal(au_demux_init(&a, &sel, on_au, u, &src), 0);
    assert_int_equal(au_demux_run(&a), 0);
    au_demux_free(&a);
    bsrc_close(&src);
}

static void t04_an_access_unit_swallowing_a_timed_pes_is_damaged(void **state)
{
    (void)state;
    struct units u;
    audio_units(true, &u);
    assert_int_equal(u.n, 3);
    assert_int_equal(u.pts[0], 90000);
    assert_true(u.damaged[0]);
    assert_int_equal(u.pts[1], 93840);
    assert_false(u.damaged[1]);
    assert_false(u.damaged[2]);
    audio_units(false, &u);
    assert_int_equal(u.n, 3);
    assert_false(u.damaged[0]);
    assert_false(u.damaged[1]);
    assert_false(u.damaged[2]);
}

/* A PMT longer than a packet is assembled across packets (its video is the
 * last stream); one listing more streams than the demuxer holds is never
 * read as if the rest did not exist. */
static void pmt_of(struct stream *s, int n, size_t es_info)
{
    uint8_t b[1021] = {0x02, 0, 0, 0, 1, 0xC1, 0, 0, 0xE1, 0x00, 0xF0, 0x00};
    size_t len = 12;
    for (int i = 0; i < n; i++) {
        int pid = 0x200 + i;
        uint8_t *e = b + len;
        e[0] = i == n - 1 ? 0x1B : 0x06, e[1] = (uint8_t)(0xE0 | pid >> 8), e[2] = (uint8_t)pid;
        e[3] = 0xF0, e[4] = (uint8_t)es_info;
        if (es_info)             /* one user-private descriptor */
            e[5] = 0x80, e[6] = (uint8_t)(es_info - 2), memset(e + 7, 0x55, es_info - 2);
        len += 5 + es_info;
    }
    b[1] = (uint8_t)(0xB0 | (len + 4 - 3) >> 8), b[2] = (uint8_t)(len + 4 - 3);
    long_section(s, 0x100, b, len);
}

static void t05_long_pmt_sections_and_too_many_streams(void **state)
{
    (void)state;
    static struct stream s;
    struct tsd_select sel = {.want_video = 1};
    struct tsdemux d;
    struct got g;
    memset(&s, 0, sizeof s);
    pat(&s, 1, (int[]){1}, (int[]){0x100});
    pmt_of(&s, 20, 12);          /* 352 bytes: three packets */
    pes(&s, 0x200 + 19, 90000);
    run(&s, &sel, &g, &d);
    assert_false(d.too_many);
    assert_int_equal(d.selection, TSD_SEL_OK);
    assert_int_equal(tsdemux_program(&d)->nstreams, 20);
    assert_int_equal(g.n, 1);
    tsdemux_free(&d);
    memset(&s, 0, sizeof s);
    pat(&s, 1, (int[]){1}, (int[]){0x100});
    pmt_of(&s, TSD_MAX_STREAMS + 1, 0);
    pes(&s, 0x200 + TSD_MAX_STREAMS, 90000);
    run(&s, &sel, &g, &d);
    assert_true(d.too_many);
    tsdemux_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_a_program_announced_first_does_not_hide_a_later_one),
        cmocka_unit_test(t02_equal_programs_are_ambiguous),
        cmocka_unit_test(t03_a_lost_pes_start_damages_what_follows),
        cmocka_unit_test(t04_an_access_unit_swallowing_a_timed_pes_is_damaged),
        cmocka_unit_test(t05_long_pmt_sections_and_too_many_streams),
        cmocka_unit_test(t06_an_unsound_pts_field_is_damage_without_a_time),
        cmocka_unit_test(t07_bytes_past_the_declared_length_are_damage),
        cmocka_unit_test(t08_a_loss_after_a_whole_pes_does_not_damage_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
