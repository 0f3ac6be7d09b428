/* tscheck.c - MPEG-TS integrity scanner (see tscheck.h). */
#include "tscheck.h"

#include <stdlib.h>
#include <string.h>

struct tscheck *tscheck_new(void)
{
    struct tscheck *ts = calloc(1, sizeof *ts);
    if (!ts)
        return NULL;
    ts->issue_pid = -1;
    return ts;
}

void tscheck_free(struct tscheck *ts)
{
    if (ts)
        free(ts->last_pkt);
    free(ts);
}

static void note_issue(struct tscheck *ts, enum ts_issue issue, uint64_t offset, int pid)
{
    ts->issue_count++;
    if (pid >= 0 && ts->pid[pid].issue == TS_ISSUE_NONE) {
        ts->pid[pid].issue = (uint8_t)issue;
        ts->pid[pid].issue_offset = offset;
    } else if (pid < 0 && ts->global_issue == TS_ISSUE_NONE) {
        ts->global_issue = issue;
        ts->global_issue_offset = offset;
    }
    if (ts->issue != TS_ISSUE_NONE)
        return;
    ts->issue = issue;
    ts->issue_offset = offset;
    ts->issue_pid = pid;
}

static void check_pes_complete(struct tscheck *ts, int pid, uint64_t offset)
{
    struct ts_pid_state *st = &ts->pid[pid];
    if (st->pes_expected && st->pes_got < st->pes_expected)
        note_issue(ts, TS_ISSUE_TRUNCATED_PES, offset, pid);
    st->pes_expected = 0;
    st->pes_got = 0;
}

/* A duplicate (13818-1 2.4.3.3) repeats "each byte of the original packet,
 * with the exception that in the program clock reference fields, if present,
 * a valid value shall be encoded": equal but for the PCR's six bytes. */
static bool same_packet(const uint8_t *a, const uint8_t *b)
{
    bool pcr = ((a[3] >> 4) & 2) && a[4] >= 7 && (a[5] & 0x10);
    if (!pcr)
        return memcmp(a, b, TS_PACKET_SIZE) == 0;
    return memcmp(a, b, 6) == 0 && memcmp(a + 12, b + 12, TS_PACKET_SIZE - 12) == 0;
}

/* Keeps p as the last packet with payload of its PID; false without memory
 * (then no duplicate of it can be told from damage). */
static bool keep_last(struct tscheck *ts, const struct ts_pid_state *st, const uint8_t *p)
{
    if (st->slot >= ts->last_cap) {
        unsigned cap = ts->last_cap ? ts->last_cap * 2 : 16;
        while (cap <= st->slot)
            cap *= 2;
        uint8_t (*rows)[TS_PACKET_SIZE] = realloc(ts->last_pkt, (size_t)cap * TS_PACKET_SIZE);
        if (rows == NULL)
            return false;
        ts->last_pkt = rows;
        ts->last_cap = cap;
    }
    memcpy(ts->last_pkt[st->slot], p, TS_PACKET_SIZE);
    return true;
}

/* Continuity (13818-1 2.4.3.3): counts only packets with payload; one
 * duplicate of identical content is allowed; a discontinuity_indicator
 * allows any value.  Returns the TSPKT_ flags of the packet p. */
static unsigned check_continuity(struct tscheck *ts, const struct ts_header *h, const uint8_t *p,
                                 uint64_t offset)
{
    struct ts_pid_state *st = &ts->pid[h->pid];
    if (st->last_cc < 0 || h->discontinuity) {
        st->last_cc = keep_last(ts, st, p) ? (int8_t)h->cc : -1;
        st->dup_used = false;
        return 0;
    }
    if (h->cc == st->last_cc && !st->dup_used) {
        st->dup_used = true;
        if (same_packet(ts->last_pkt[st->slot], p))
            return TSPKT_DUP;
        /* the counter says "again", the bytes say otherwise: one of the two
         * is damaged, and nothing tells which */
        note_issue(ts, TS_ISSUE_DUPLICATE_DIFFERS, offset, h->pid);
        return TSPKT_GAP;
    }
    unsigned flags = 0;
    if (h->cc != ((st->last_cc + 1) & 15)) {
        st->gaps++;
        note_issue(ts, TS_ISSUE_CONTINUITY_GAP, offset, h->pid);
        flags = TSPKT_GAP;
    }
    st->last_cc = (int8_t)h->cc;
    st->dup_used = false;
    if (!keep_last(ts, st, p)) {
        st->last_cc = -1;        /* the next packet cannot be compared: a fresh start, */
        flags |= TSPKT_GAP;      /* and this one is not vouched for either */
        note_issue(ts, TS_ISSUE_CONTINUITY_GAP, offset, h->pid);
    }
    return flags;
}

static void track_pes(struct tscheck *ts, int pid, bool unit_start, const uint8_t *payload,
                      size_t len, uint64_t offset)
{
    struct ts_pid_state *st = &ts->pid[pid];
    if (!unit_start) {
        st->pes_got += (uint32_t)len;
        return;
    }
    check_pes_complete(ts, pid, offset);
    /* Only PES (start code 00 00 01) are tracked; PSI sections begin with a
     * pointer_field and carry their own lengths, which the demuxer checks. */
    if (len >= 6 && payload[0] == 0 && payload[1] == 0 && payload[2] == 1) {
        uint32_t declared = (uint32_t)payload[4] << 8 | payload[5];
        st->pes_expected = declared ? declared + 6 : 0;
        st->pes_got = (uint32_t)len;
    }
}

void ts_header_parse(const uint8_t *p, struct ts_header *h)
{
    memset(h, 0, sizeof *h);
    h->pid = (p[1] & 0x1F) << 8 | p[2];
    h->tei = p[1] & 0x80;
    h->pusi = p[1] & 0x40;
    h->cc = p[3] & 15;
    int afc = (p[3] >> 4) & 3;
    h->payload = 4;
    if (afc & 2) {
        size_t af_len = p[4];
        if (af_len > TS_PACKET_SIZE - 5) {
            h->malformed = true;
            return;
        }
        h->discontinuity = af_len > 0 && (p[5] & 0x80);
        h->payload = 5 + af_len;
    }
    h->has_payload = (afc & 1) && h->payload < TS_PACKET_SIZE;
}

static void check_packet(struct tscheck *ts, const uint8_t *p, uint64_t offset, tscheck_packet_fn fn,
                         void *opaque)
{
    if (p[0] != 0x47) {
        note_issue(ts, TS_ISSUE_SYNC_LOST, offset, -1);
        ts->lost_sync = true;
        return;
    }
    struct ts_header h;
    ts_header_parse(p, &h);
    unsigned flags = h.tei ? TSPKT_TEI : 0;
    if (h.tei)
        note_issue(ts, TS_ISSUE_TRANSPORT_ERROR, offset, h.pid);
    if (h.pid == TS_PID_NULL)
        return;
    if (h.malformed) {
        note_issue(ts, TS_ISSUE_MALFORMED, offset, h.pid);
        return;
    }
    if ((p[3] >> 4) & 1) {     /* payload: the counter advances */
        if (!ts->pid[h.pid].seen) {
            ts->pid[h.pid].seen = true;
            ts->pid[h.pid].last_cc = -1;
            ts->pid[h.pid].slot = (uint16_t)ts->n_seen;
            ts->seen_pids[ts->n_seen++] = (uint16_t)h.pid;
        }
        flags |= check_continuity(ts, &h, p, offset);
        if (!(flags & TSPKT_DUP))
            track_pes(ts, h.pid, h.pusi, p + h.payload, TS_PACKET_SIZE - h.payload, offset);
    }
    if (fn)
        fn(opaque, p, &h, flags);
}

void tscheck_feed_packets(struct tscheck *ts, const uint8_t *data, size_t len, tscheck_packet_fn fn,
                          void *opaque)
{
    while (len > 0) {
        if (ts->lost_sync) {
            ts->bytes += len;
            return;
        }
        if (ts->partial_len > 0 || len < TS_PACKET_SIZE) {
            size_t take = TS_PACKET_SIZE - ts->partial_len;
            if (take > len)
                take = len;
            memcpy(ts->partial + ts->partial_len, data, take);
            ts->partial_len += take;
            data += take;
            len -= take;
            ts->bytes += take;
            if (ts->partial_len == TS_PACKET_SIZE) {
                ts->partial_len = 0;
                ts->packets++;
                check_packet(ts, ts->partial, ts->bytes - TS_PACKET_SIZE, fn, opaque);
            }
            continue;
        }
        ts->packets++;
        ts->bytes += TS_PACKET_SIZE;
        check_packet(ts, data, ts->bytes - TS_PACKET_SIZE, fn, opaque);
        data += TS_PACKET_SIZE;
        len -= TS_PACKET_SIZE;
    }
}

void tscheck_feed(struct tscheck *ts, const uint8_t *data, size_t len)
{
    tscheck_feed_packets(ts, data, len, NULL, NULL);
}

void tscheck_segment_boundary(struct tscheck *ts)
{
    if (ts->partial_len) {
        note_issue(ts, TS_ISSUE_TRUNCATED_PACKET, ts->bytes, -1);
        ts->partial_len = 0;
    }
    for (unsigned i = 0; i < ts->n_seen; i++) {
        int pid = ts->seen_pids[i];
        ts->pid[pid].last_cc = -1;
        ts->pid[pid].dup_used = false;
    }
    ts->lost_sync = false;
}

void tscheck_finish(struct tscheck *ts)
{
    if (ts->finished)
        return;
    ts->end_cut = ts->partial_len > 0 || ts->lost_sync;
    tscheck_segment_boundary(ts);
    for (unsigned i = 0; i < ts->n_seen; i++)
        check_pes_complete(ts, ts->seen_pids[i], ts->bytes);
    if (ts->packets == 0)
        note_issue(ts, TS_ISSUE_EMPTY, 0, -1);
    ts->finished = true;
}

bool tscheck_complete(const struct tscheck *ts)
{
    return ts->finished && ts->issue == TS_ISSUE_NONE;
}

enum ts_issue tscheck_issue_among(const struct tscheck *ts, const int *pids, size_t n, uint64_t *offset,
                                  int *pid)
{
    enum ts_issue first = ts->global_issue;
    *offset = ts->global_issue_offset;
    *pid = -1;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] < 0 || pids[i] >= TS_PID_COUNT)
            continue;
        const struct ts_pid_state *st = &ts->pid[pids[i]];
        if (st->issue != TS_ISSUE_NONE && (first == TS_ISSUE_NONE || st->issue_offset < *offset)) {
            first = (enum ts_issue)st->issue;
            *offset = st->issue_offset;
            *pid = pids[i];
        }
    }
    return first;
}

void tscheck_note_container_issue(struct tscheck *ts, enum ts_issue issue, uint64_t offset)
{
    note_issue(ts, issue, offset, -1);
}

const char *tscheck_issue_code(enum ts_issue issue)
{
    switch (issue) {
    case TS_ISSUE_NONE: return "none";
    case TS_ISSUE_EMPTY: return "empty_stream";
    case TS_ISSUE_SYNC_LOST: return "ts_sync_lost";
    case TS_ISSUE_MALFORMED: return "ts_malformed";
    case TS_ISSUE_TRANSPORT_ERROR: return "transport_error";
    case TS_ISSUE_CONTINUITY_GAP: return "continuity_gap";
    case TS_ISSUE_TRUNCATED_PES: return "truncated_pes";
    case TS_ISSUE_TRUNCATED_PACKET: return "truncated_ts_packet";
    case TS_ISSUE_DUPLICATE_DIFFERS: return "duplicate_packet_differs";
    case TS_ISSUE_MP4_TRUNCATED_BOX: return "mp4_truncated_box";
    case TS_ISSUE_MP4_TRUN_OVERRUN: return "mp4_trun_overrun";
    case TS_ISSUE_MP4_SAMPLE_TABLE: return "mp4_sample_table";
    case TS_ISSUE_MP4_MISSING_INIT: return "mp4_missing_init";
    case TS_ISSUE_MP4_INIT_MISMATCH: return "mp4_init_mismatch";
    case TS_ISSUE_MP4_ENCRYPTED: return "mp4_encrypted";
    case TS_ISSUE_MP4_UNREADABLE: return "mp4_unreadable";
    case TS_ISSUE_MP4_NOT_FRAGMENTED: return "mp4_not_fragmented";
    case TS_ISSUE_MP4_FALSE_SYNC: return "mp4_false_sync_sample";
    }
    return "unknown_ts_issue";
}
