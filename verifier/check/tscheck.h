/* tscheck.h - integrity of an MPEG-TS byte stream, checked as it passes.
 *
 * libavformat is tolerant: it resynchronises, skips lost packets and hands
 * out short PES payloads without complaint.  For an exact check that is the
 * wrong default, so every byte a decoding side reads goes through this
 * scanner first.  It never changes the bytes; it only says whether the
 * observation of the transport stream was complete:
 *   - every packet starts with the sync byte and the stream ends on a packet
 *     boundary (a file ending inside a TS packet is incomplete);
 *   - continuity counters advance on every PID (ISO/IEC 13818-1 2.4.3.3: one
 *     duplicate allowed, a discontinuity_indicator allows a jump); a duplicate
 *     is a byte-for-byte copy of the packet before it (its PCR aside), anything
 *     else repeating the counter is damage, never dropped unseen;
 *   - no packet carries transport_error_indicator;
 *   - every PES with a declared PES_packet_length is complete.
 * Segment boundaries (HLS, or several files of a binding) reset the
 * continuity counters, because separately muxed segments restart them; a
 * PES is complete when it ends, whichever segment holds its end.  A byte
 * range that continues the previous one is no boundary at all (bsrc.h).
 *
 * The demuxer (tsdemux.h) reads the same packets through
 * tscheck_feed_packets(), with what the scanner found about each one.
 */
#ifndef TSCHECK_H
#define TSCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TS_PACKET_SIZE 188
#define TS_PID_COUNT 8192
#define TS_PID_NULL 0x1FFF

/* What made the observation incomplete, first one wins.  TS_ISSUE_NONE
 * means "nothing found so far"; only tscheck_complete() says "complete". */
enum ts_issue {
    TS_ISSUE_NONE = 0,
    TS_ISSUE_EMPTY,              /* no TS packet at all */
    TS_ISSUE_SYNC_LOST,          /* a packet did not start with 0x47 */
    TS_ISSUE_MALFORMED,          /* adaptation field longer than the packet */
    TS_ISSUE_TRANSPORT_ERROR,    /* transport_error_indicator set */
    TS_ISSUE_CONTINUITY_GAP,     /* lost packets: CC did not advance by one */
    TS_ISSUE_TRUNCATED_PES,      /* PES shorter than its PES_packet_length */
    TS_ISSUE_TRUNCATED_PACKET,   /* stream ended inside a TS packet */
    TS_ISSUE_DUPLICATE_DIFFERS,  /* a packet repeats the counter with other bytes */
    /* the same observation of an fMP4/CMAF source (mp4box.h, mp4src.h) */
    TS_ISSUE_MP4_TRUNCATED_BOX,  /* a box runs past its parent or the file, or is shorter than its header */
    TS_ISSUE_MP4_TRUN_OVERRUN,   /* a trun's sample data lies outside the fragment's mdat */
    TS_ISSUE_MP4_SAMPLE_TABLE,   /* a sample table that does not add up (no size, entries past the box) */
    TS_ISSUE_MP4_MISSING_INIT,   /* a fragment with no init segment (moov) before it */
    TS_ISSUE_MP4_INIT_MISMATCH,  /* a fragment's track is not in the init segment before it */
    TS_ISSUE_MP4_ENCRYPTED,      /* encv/enca sample entries or senc: encrypted (CENC) */
    TS_ISSUE_MP4_UNREADABLE,     /* the mov demuxer could not read what the box scan passed */
    TS_ISSUE_MP4_NOT_FRAGMENTED, /* media data (mdat) outside fragments: a plain MP4 is not read */
    TS_ISSUE_MP4_FALSE_SYNC,     /* a sample flagged sync (trun/trex flags) that is no random access point */
};

struct ts_pid_state {
    bool seen;                   /* listed in tscheck.seen_pids */
    int8_t last_cc;              /* -1: nothing seen since the last reset */
    bool dup_used;               /* the one allowed duplicate was used */
    uint32_t pes_expected;       /* 0: unknown (unbounded video PES) */
    uint32_t pes_got;
    uint32_t gaps;               /* continuity gaps on this PID */
    uint16_t slot;               /* its row in tscheck.last_pkt (its place in seen_pids) */
    uint8_t issue;               /* enum ts_issue: the first one on this PID */
    uint64_t issue_offset;
};

struct tscheck {
    uint8_t partial[TS_PACKET_SIZE];
    size_t partial_len;
    uint64_t bytes;              /* bytes fed so far */
    uint64_t packets;
    bool lost_sync;              /* after a sync loss nothing more is checked */
    bool finished;
    bool end_cut;                /* finished inside a TS packet or after a sync loss: the
                                  * stream's last bytes are not whole (set by tscheck_finish) */
    enum ts_issue issue;         /* the first issue */
    uint64_t issue_offset;       /* byte offset of the first issue */
    int issue_pid;               /* -1 when not tied to a PID */
    uint64_t issue_count;
    enum ts_issue global_issue;  /* the first one not tied to a PID (sync, cut packet, empty) */
    uint64_t global_issue_offset;
    struct ts_pid_state pid[TS_PID_COUNT];
    uint16_t seen_pids[TS_PID_COUNT];   /* PIDs with state, so resets touch only them */
    unsigned n_seen;
    /* the last packet with payload of each seen PID, by slot: a duplicate
     * must equal it; grown as PIDs appear (NULL rows beyond last_cap) */
    uint8_t (*last_pkt)[TS_PACKET_SIZE];
    unsigned last_cap;
};

/* One TS packet's header (ISO/IEC 13818-1 2.4.3.2), read the same way by
 * the scanner and the demuxer.  p must hold TS_PACKET_SIZE bytes starting
 * with the sync byte. */
struct ts_header {
    int pid;
    int cc;
    bool tei, pusi, discontinuity;
    bool malformed;              /* adaptation field longer than the packet */
    bool has_payload;
    size_t payload;              /* offset of the payload in the packet */
};
void ts_header_parse(const uint8_t *p, struct ts_header *h);

/* What the scanner found about one packet it hands on. */
enum {
    TSPKT_GAP = 1,               /* packets of this PID were lost before it, or it repeats
                                    the counter with other bytes (which copy is right?) */
    TSPKT_DUP = 2,               /* the allowed duplicate (identical): carries nothing new */
    TSPKT_TEI = 4,               /* transport_error_indicator set */
};
typedef void (*tscheck_packet_fn)(void *opaque, const uint8_t *pkt, const struct ts_header *h,
                                  unsigned flags);

/* The scanner is large (about 100 KiB): allocate it. */
struct tscheck *tscheck_new(void);
void tscheck_free(struct tscheck *ts);

void tscheck_feed(struct tscheck *ts, const uint8_t *data, size_t len);

/* The same, handing every whole packet with a sync byte and a readable
 * header to fn (NULL: none) in stream order.  After a sync loss nothing is
 * handed on until the next segment. */
void tscheck_feed_packets(struct tscheck *ts, const uint8_t *data, size_t len, tscheck_packet_fn fn,
                          void *opaque);

/* A segment ends here: a partial packet is an issue; the next segment may
 * restart the continuity counters.  PES continue across it. */
void tscheck_segment_boundary(struct tscheck *ts);

/* End of the stream: a partial packet or an incomplete PES is an issue. */
void tscheck_finish(struct tscheck *ts);

/* True only after tscheck_finish() with no issue at all. */
bool tscheck_complete(const struct tscheck *ts);

/* The first issue that matters for what is decoded: one not tied to a PID,
 * or one on a PID of pids[0..n) (issue 18, class 13: damage on a PID no
 * decoder reads, an SDT with a stuck counter say, is recorded, not
 * decisive).  TS_ISSUE_NONE when there is none; *offset, *pid where it is. */
enum ts_issue tscheck_issue_among(const struct tscheck *ts, const int *pids, size_t n, uint64_t *offset,
                                  int *pid);

/* An issue found by another container's scanner (fMP4): not tied to a
 * PID, so it always decides. */
void tscheck_note_container_issue(struct tscheck *ts, enum ts_issue issue, uint64_t offset);

/* Stable reason code for an issue ("continuity_gap", ...). */
const char *tscheck_issue_code(enum ts_issue issue);

#endif
