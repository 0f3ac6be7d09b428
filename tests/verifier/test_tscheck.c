/* test_tscheck.c - MPEG-TS integrity scanning on synthetic packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tscheck.h"

/* A packet with payload on pid, counter cc; pes_len > 0 starts a PES with
 * that PES_packet_length. */
static void make_packet(uint8_t *p, int pid, int cc, bool unit_start, int pes_len)
{
    memset(p, 0xFF, TS_PACKET_SIZE);
    p[0] = 0x47;
    p[1] = (uint8_t)((unit_start ? 0x40 : 0) | (pid >> 8));
    p[2] = (uint8_t)(pid & 0xFF);
    p[3] = (uint8_t)(0x10 | (cc & 15));
    if (unit_start) {
        p[4] = 0, p[5] = 0, p[6] = 1, p[7] = 0xE0;
        p[8] = (uint8_t)(pes_len >> 8), p[9] = (uint8_t)(pes_len & 0xFF);
    }
}

static struct tscheck *feed_all(const uint8_t *buf, size_t len, size_t chunk)
{
    struct tscheck *ts = tscheck_new();
    assert_non_null(ts);
    for (size_t off = 0; off < len; off += chunk)
        tscheck_feed(ts, buf + off, len - off < chunk ? len - off : chunk);
    tscheck_finish(ts);
    return ts;
}

static void t01_clean_stream_is_complete(void **state)
{
    (void)state;
    uint8_t buf[10 * TS_PACKET_SIZE];
    for (int i = 0; i < 10; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 256, i, i == 0, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_true(tscheck_complete(ts));
    assert_int_equal(ts->packets, 10);
    tscheck_free(ts);
}

static void t02_byte_by_byte_equals_bulk(void **state)
{
    (void)state;
    uint8_t buf[6 * TS_PACKET_SIZE];
    for (int i = 0; i < 6; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 256, i == 4 ? 7 : i, false, 0);
    struct tscheck *a = feed_all(buf, sizeof buf, 1), *b = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(a->issue, TS_ISSUE_CONTINUITY_GAP);
    assert_int_equal(a->issue, b->issue);
    assert_int_equal(a->issue_offset, b->issue_offset);
    assert_int_equal(a->issue_offset, 4 * TS_PACKET_SIZE);
    tscheck_free(a);
    tscheck_free(b);
}

static void t03_lost_packet_is_a_gap_on_its_pid(void **state)
{
    (void)state;
    uint8_t buf[5 * TS_PACKET_SIZE];
    int ccs[] = {0, 1, 3, 4, 5};
    for (int i = 0; i < 5; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 0x101, ccs[i], false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, 100);
    assert_false(tscheck_complete(ts));
    assert_int_equal(ts->issue, TS_ISSUE_CONTINUITY_GAP);
    assert_int_equal(ts->issue_pid, 0x101);
    assert_int_equal(ts->pid[0x101].gaps, 1);
    assert_string_equal(tscheck_issue_code(ts->issue), "continuity_gap");
    tscheck_free(ts);
}

static void t04_one_duplicate_is_allowed_two_are_not(void **state)
{
    (void)state;
    uint8_t buf[4 * TS_PACKET_SIZE];
    int ccs[] = {0, 1, 1, 2};
    for (int i = 0; i < 4; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 256, ccs[i], false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
    int ccs2[] = {0, 1, 1, 1};
    for (int i = 0; i < 4; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 256, ccs2[i], false, 0);
    ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(ts->issue, TS_ISSUE_CONTINUITY_GAP);
    tscheck_free(ts);
}

static void t05_discontinuity_indicator_allows_a_jump(void **state)
{
    (void)state;
    uint8_t buf[3 * TS_PACKET_SIZE];
    make_packet(buf, 256, 0, false, 0);
    make_packet(buf + TS_PACKET_SIZE, 256, 9, false, 0);
    uint8_t *p = buf + TS_PACKET_SIZE;
    p[3] = 0x30 | 9;        /* adaptation field + payload */
    p[4] = 1, p[5] = 0x80;  /* discontinuity_indicator */
    make_packet(buf + 2 * TS_PACKET_SIZE, 256, 10, false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
}

static void t06_ending_inside_a_packet(void **state)
{
    (void)state;
    uint8_t buf[2 * TS_PACKET_SIZE];
    make_packet(buf, 256, 0, false, 0);
    make_packet(buf + TS_PACKET_SIZE, 256, 1, false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf - 100, 64);
    assert_int_equal(ts->issue, TS_ISSUE_TRUNCATED_PACKET);
    assert_string_equal(tscheck_issue_code(ts->issue), "truncated_ts_packet");
    tscheck_free(ts);
}

static void t07_short_pes_is_truncated(void **state)
{
    (void)state;
    uint8_t buf[2 * TS_PACKET_SIZE];
    make_packet(buf, 256, 0, true, 1000);       /* declares 1006 bytes, only 2 packets */
    make_packet(buf + TS_PACKET_SIZE, 256, 1, false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(ts->issue, TS_ISSUE_TRUNCATED_PES);
    tscheck_free(ts);
}

static void t08_complete_bounded_pes_is_fine(void **state)
{
    (void)state;
    uint8_t buf[2 * TS_PACKET_SIZE];
    /* payload 184 + 184 = 368 bytes = PES_packet_length 362 + 6 */
    make_packet(buf, 256, 0, true, 362);
    make_packet(buf + TS_PACKET_SIZE, 256, 1, false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
}

static void t09_sync_loss_and_transport_error(void **state)
{
    (void)state;
    uint8_t buf[2 * TS_PACKET_SIZE];
    make_packet(buf, 256, 0, false, 0);
    make_packet(buf + TS_PACKET_SIZE, 256, 1, false, 0);
    buf[TS_PACKET_SIZE] = 0x48;
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(ts->issue, TS_ISSUE_SYNC_LOST);
    tscheck_free(ts);
    make_packet(buf + TS_PACKET_SIZE, 256, 1, false, 0);
    buf[TS_PACKET_SIZE + 1] |= 0x80;
    ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(ts->issue, TS_ISSUE_TRANSPORT_ERROR);
    tscheck_free(ts);
}

static void t10_empty_and_segment_boundaries(void **state)
{
    (void)state;
    struct tscheck *ts = tscheck_new();
    tscheck_finish(ts);
    assert_int_equal(ts->issue, TS_ISSUE_EMPTY);
    assert_false(tscheck_complete(ts));
    tscheck_free(ts);
    /* separately muxed segments restart their counters */
    uint8_t a[TS_PACKET_SIZE], b[TS_PACKET_SIZE];
    make_packet(a, 256, 5, false, 0);
    make_packet(b, 256, 0, false, 0);
    ts = tscheck_new();
    tscheck_feed(ts, a, sizeof a);
    tscheck_segment_boundary(ts);
    tscheck_feed(ts, b, sizeof b);
    tscheck_finish(ts);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
}

static void t11_not_finished_is_not_complete(void **state)
{
    (void)state;
    uint8_t a[TS_PACKET_SIZE];
    make_packet(a, 256, 0, false, 0);
    struct tscheck *ts = tscheck_new();
    tscheck_feed(ts, a, sizeof a);
    assert_false(tscheck_complete(ts));
    tscheck_free(ts);
}

/* A PES continues across a segment boundary and is complete where it
 * ends; only the counters restart there. */
static void t12_pes_continues_across_a_segment_join(void **state)
{
    (void)state;
    uint8_t a[TS_PACKET_SIZE], b[TS_PACKET_SIZE];
    make_packet(a, 256, 7, true, 362);           /* declares 368 bytes: two packets */
    make_packet(b, 256, 0, false, 0);            /* the next segment restarts at 0 */
    struct tscheck *ts = tscheck_new();
    tscheck_feed(ts, a, sizeof a);
    tscheck_segment_boundary(ts);
    tscheck_feed(ts, b, sizeof b);
    tscheck_finish(ts);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
    /* the next segment starts a new PES instead: the first one was cut */
    make_packet(b, 256, 0, true, 0);
    ts = tscheck_new();
    tscheck_feed(ts, a, sizeof a);
    tscheck_segment_boundary(ts);
    tscheck_feed(ts, b, sizeof b);
    tscheck_finish(ts);
    assert_int_equal(ts->issue, TS_ISSUE_TRUNCATED_PES);
    tscheck_free(ts);
}

struct seen {
    int n;
    unsigned flags[8];
};

static void on_packet(void *opaque, const uint8_t *pkt, const struct ts_header *h, unsigned flags)
{
    struct seen *s = opaque;
    (void)pkt;
    assert_int_equal(h->pid, 0x101);
    s->flags[s->n++] = flags;
}

/* The demuxer learns from the scanner which packet repeats, and after
 * which packets were lost. */
static void t13_packets_are_handed_on_with_their_flags(void **state)
{
    (void)state;
    uint8_t buf[4 * TS_PACKET_SIZE];
    int ccs[] = {0, 0, 1, 5};
    for (int i = 0; i < 4; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 0x101, ccs[i], false, 0);
    struct tscheck *ts = tscheck_new();
    struct seen s = {0};
    tscheck_feed_packets(ts, buf, 100, on_packet, &s);
    tscheck_feed_packets(ts, buf + 100, sizeof buf - 100, on_packet, &s);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.flags[0], 0);
    assert_int_equal(s.flags[1], TSPKT_DUP);
    assert_int_equal(s.flags[2], 0);
    assert_int_equal(s.flags[3], TSPKT_GAP);
    tscheck_free(ts);
}

/* ISO/IEC 13818-1 2.4.3.3 allows one duplicate of identical content: a
 * packet repeating the counter with other payload bytes is damage (which of
 * the two is right?), never dropped unseen; a PCR may differ. */
static void t14_a_duplicate_must_repeat_the_bytes(void **state)
{
    (void)state;
    uint8_t buf[3 * TS_PACKET_SIZE];
    for (int i = 0; i < 3; i++)
        make_packet(buf + i * TS_PACKET_SIZE, 0x101, i == 2 ? 1 : i, false, 0);
    buf[2 * TS_PACKET_SIZE + 100] ^= 0x01;      /* the "duplicate" carries other data */
    struct tscheck *ts = tscheck_new();
    struct seen s = {0};
    tscheck_feed_packets(ts, buf, sizeof buf, on_packet, &s);
    tscheck_finish(ts);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.flags[2], TSPKT_GAP);
    assert_int_equal(ts->issue, TS_ISSUE_DUPLICATE_DIFFERS);
    assert_string_equal(tscheck_issue_code(ts->issue), "duplicate_packet_differs");
    assert_int_equal(ts->issue_offset, 2 * TS_PACKET_SIZE);
    tscheck_free(ts);

    /* the same with an adaptation field carrying a PCR: only the PCR may differ */
    for (int i = 0; i < 3; i++) {
        uint8_t *p = buf + i * TS_PACKET_SIZE;
        make_packet(p, 0x101, i == 2 ? 1 : i, false, 0);
        p[3] = (uint8_t)(0x30 | (p[3] & 15));
        p[4] = 7, p[5] = 0x10;
        memset(p + 6, i, 6);                     /* a PCR of its own in every packet */
    }
    ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_true(tscheck_complete(ts));
    tscheck_free(ts);
    buf[2 * TS_PACKET_SIZE + 5] = 0x50;          /* ... not the adaptation field's flags */
    ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_int_equal(ts->issue, TS_ISSUE_DUPLICATE_DIFFERS);
    tscheck_free(ts);
}

/* Issues are kept per PID too: what decides an observation is the damage on
 * the PIDs that are decoded, and any not tied to a PID (issue 18, class 13). */
static void t15_issues_among_the_decoded_pids(void **state)
{
    (void)state;
    uint8_t buf[4 * TS_PACKET_SIZE];
    int ccs[] = {0, 5, 0, 1};                    /* a gap on PID 0x11, none on 0x100 */
    int pids[] = {0x11, 0x11, 0x100, 0x100};
    for (int i = 0; i < 4; i++)
        make_packet(buf + i * TS_PACKET_SIZE, pids[i], ccs[i], false, 0);
    struct tscheck *ts = feed_all(buf, sizeof buf, sizeof buf);
    assert_false(tscheck_complete(ts));
    uint64_t off;
    int pid;
    const int video[] = {0, 0x100}, sdt[] = {0x11};
    assert_int_equal(tscheck_issue_among(ts, video, 2, &off, &pid), TS_ISSUE_NONE);
    assert_int_equal(tscheck_issue_among(ts, sdt, 1, &off, &pid), TS_ISSUE_CONTINUITY_GAP);
    assert_int_equal(pid, 0x11);
    assert_int_equal(off, TS_PACKET_SIZE);
    tscheck_free(ts);
    ts = feed_all(buf, sizeof buf - 1, sizeof buf);   /* a cut packet is never a PID's own */
    assert_int_equal(tscheck_issue_among(ts, video, 2, &off, &pid), TS_ISSUE_TRUNCATED_PACKET);
    assert_int_equal(pid, -1);
    tscheck_free(ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_clean_stream_is_complete),
        cmocka_unit_test(t02_byte_by_byte_equals_bulk),
        cmocka_unit_test(t03_lost_packet_is_a_gap_on_its_pid),
        cmocka_unit_test(t04_one_duplicate_is_allowed_two_are_not),
        cmocka_unit_test(t05_discontinuity_indicator_allows_a_jump),
        cmocka_unit_test(t06_ending_inside_a_packet),
        cmocka_unit_test(t07_short_pes_is_truncated),
        cmocka_unit_test(t08_complete_bounded_pes_is_fine),
        cmocka_unit_test(t09_sync_loss_and_transport_error),
        cmocka_unit_test(t10_empty_and_segment_boundaries),
        cmocka_unit_test(t11_not_finished_is_not_complete),
        cmocka_unit_test(t12_pes_continues_across_a_segment_join),
        cmocka_unit_test(t13_packets_are_handed_on_with_their_flags),
        cmocka_unit_test(t14_a_duplicate_must_repeat_the_bytes),
        cmocka_unit_test(t15_issues_among_the_decoded_pids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
