/* mp4box.c - box-level integrity of fMP4 segments (see mp4box.h). */
#include "mp4box.h"

#include <string.h>

#define MAX_DEPTH 12

#define FOURCC(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

struct box {
    uint32_t type;
    size_t start, header, size;  /* offsets in the segment; size includes the header */
};

struct run_range {
    uint64_t start, len;
};

struct scan {
    const uint8_t *p;
    size_t n;
    struct mp4box_init *init;
    struct mp4box_init fresh;    /* the moov of this segment, applied at its end */
    struct mp4box_segment *seg;
    enum ts_issue issue;
    uint64_t where;
    struct run_range runs[MP4BOX_MAX_RUNS];
    int nruns;
    size_t moof_start;
    struct mp4box_track *trak;   /* the track of the trak being walked (its tkhd), or NULL */
};

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static void fail(struct scan *s, enum ts_issue issue, size_t at)
{
    if (s->issue == TS_ISSUE_NONE) {
        s->issue = issue;
        s->where = at;
    }
}

/* The box at off inside [off, end); false (and the issue) when it does not fit. */
static bool read_box(struct scan *s, size_t off, size_t end, struct box *b)
{
    if (end - off < 8)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, off), false;
    uint64_t size = rd32(s->p + off);
    b->type = rd32(s->p + off + 4);
    b->start = off;
    b->header = 8;
    if (size == 1) {
        if (end - off < 16)
            return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, off), false;
        size = rd64(s->p + off + 8);
        b->header = 16;
    } else if (size == 0) {
        size = end - off;        /* to the end of its container */
    }
    if (size < b->header || size > end - off)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, off), false;
    b->size = (size_t)size;
    return true;
}

static void walk(struct scan *s, size_t off, size_t end, uint32_t parent, int depth);

static bool is_container(uint32_t t)
{
    static const uint32_t c[] = {FOURCC('m', 'o', 'o', 'v'), FOURCC('t', 'r', 'a', 'k'), FOURCC('m', 'd', 'i', 'a'),
                                 FOURCC('m', 'i', 'n', 'f'), FOURCC('s', 't', 'b', 'l'), FOURCC('m', 'v', 'e', 'x'),
                                 FOURCC('m', 'o', 'o', 'f'), FOURCC('t', 'r', 'a', 'f'), FOURCC('e', 'd', 't', 's'),
                                 FOURCC('d', 'i', 'n', 'f')};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i] == t)
            return true;
    return false;
}

static struct mp4box_track *find_track(struct mp4box_init *in, uint32_t id)
{
    for (int i = 0; i < in->ntracks; i++)
        if (in->tracks[i].id == id)
            return &in->tracks[i];
    return NULL;
}

static struct mp4box_track *add_track(struct scan *s, uint32_t id, size_t at)
{
    struct mp4box_track *t = find_track(&s->fresh, id);
    if (t)
        return t;
    if (s->fresh.ntracks == MP4BOX_MAX_TRACKS)
        return fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, at), NULL;
    t = &s->fresh.tracks[s->fresh.ntracks++];
    memset(t, 0, sizeof *t);
    t->id = id;
    return t;
}

/* tkhd: the track's ID (version 0: two 32-bit times before it, 1: 64-bit). */
static void on_tkhd(struct scan *s, const struct box *b)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header, at = len && q[0] == 1 ? 20 : 12;
    if (len < at + 4)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    s->trak = add_track(s, rd32(q + at), b->start);
}

/* mvhd: the movie timescale (version 0: two 32-bit times before it, 1:
 * 64-bit), the unit of every edit list's durations. */
static void on_mvhd(struct scan *s, const struct box *b)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header, at = len && q[0] == 1 ? 20 : 12;
    if (len < at + 4)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    s->fresh.movie_timescale = rd32(q + at);
}

/* elst of the current trak: a first entry that is an empty edit (media
 * time -1) of a non-zero duration shifts the track's start by a duration in
 * the movie timescale; the mov demuxer applies it, rounded to that unit. */
static void on_elst(struct scan *s, const struct box *b)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header, entry = len && q[0] == 1 ? 16 : 8;
    if (len < 8 || (rd32(q + 4) > 0 && len < 8 + entry))
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    if (!s->trak || rd32(q + 4) == 0)
        return;
    bool empty = q[0] == 1 ? rd64(q + 16) == UINT64_MAX : rd32(q + 12) == UINT32_MAX;
    uint64_t duration = q[0] == 1 ? rd64(q + 8) : rd32(q + 8);
    if (empty && duration > 0)
        s->trak->edit_timescale = s->fresh.movie_timescale;
}

/* trex: the defaults fragments of a track fall back on. */
static void on_trex(struct scan *s, const struct box *b)
{
    const uint8_t *q = s->p + b->start + b->header;
    if (b->size - b->header < 24)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    struct mp4box_track *t = add_track(s, rd32(q + 4), b->start);
    if (t) {
        t->default_size = rd32(q + 16);
        t->has_default_size = true;
        t->default_flags = rd32(q + 20);
        t->has_default_flags = true;
    }
}

/* The NAL length size of an avc1/avc3 sample entry e (its avcC's
 * lengthSizeMinusOne + 1), 0 without a readable avcC.  A visual sample
 * entry has 78 bytes of fields before its child boxes. */
static uint8_t avc_length_size(struct scan *s, const struct box *e)
{
    size_t off = e->start + e->header + 78, end = e->start + e->size;
    while (off + 8 <= end) {
        uint32_t size = rd32(s->p + off), type = rd32(s->p + off + 4);
        if (size < 8 || size > end - off)
            return 0;
        if (type == FOURCC('a', 'v', 'c', 'C'))
            return size >= 13 ? (uint8_t)((s->p[off + 12] & 3) + 1) : 0;
        off += size;
    }
    return 0;
}

/* stsd: its sample entries; encv/enca are CENC-encrypted. */
static void on_stsd(struct scan *s, const struct box *b)
{
    size_t off = b->start + b->header + 8, end = b->start + b->size;
    if (b->size - b->header < 8)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    while (off < end && s->issue == TS_ISSUE_NONE) {
        struct box e;
        if (!read_box(s, off, end, &e))
            return;
        if (e.type == FOURCC('e', 'n', 'c', 'v') || e.type == FOURCC('e', 'n', 'c', 'a'))
            fail(s, TS_ISSUE_MP4_ENCRYPTED, e.start);
        if (s->trak && (e.type == FOURCC('a', 'v', 'c', '1') || e.type == FOURCC('a', 'v', 'c', '3')))
            s->trak->nal_length_size = avc_length_size(s, &e);
        off += e.size;
    }
}

/* What a traf's tfhd says: its track and where its data is based. */
struct traf_state {
    struct mp4box_track *track;
    bool has_default_size;
    uint32_t default_size;
    bool has_default_flags;
    uint32_t default_flags;
    uint64_t base;
    uint64_t next;               /* where a trun without data_offset starts */
};

static void on_tfhd(struct scan *s, const struct box *b, struct traf_state *ts)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header;
    if (len < 8)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    uint32_t flags = rd32(q) & 0xFFFFFF, id = rd32(q + 4);
    size_t need = 8 + (flags & 1 ? 8 : 0) + (flags & 2 ? 4 : 0) + (flags & 8 ? 4 : 0) + (flags & 0x10 ? 4 : 0) +
                  (flags & 0x20 ? 4 : 0);
    if (len < need)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    if (!s->init->have)
        return fail(s, TS_ISSUE_MP4_MISSING_INIT, b->start);
    ts->track = find_track(s->init, id);
    if (!ts->track)
        return fail(s, TS_ISSUE_MP4_INIT_MISMATCH, b->start);
    size_t at = 8;
    ts->base = s->moof_start;    /* default-base-is-moof, or the first traf of a moof */
    if (flags & 1) {
        ts->base = rd64(q + at);
        at += 8;
    }
    at += (flags & 2 ? 4 : 0) + (flags & 8 ? 4 : 0);
    ts->has_default_size = flags & 0x10;
    if (flags & 0x10)
        ts->default_size = rd32(q + at);
    at += flags & 0x10 ? 4 : 0;
    ts->has_default_flags = flags & 0x20;
    if (flags & 0x20)
        ts->default_flags = rd32(q + at);
    ts->next = ts->base;
}

/* A recovery point SEI (payload type 6) among the messages of SEI NAL
 * unit n (its header byte first); the payload sizes are read as written
 * (emulation prevention inside a payload only moves later messages). */
static bool sei_recovery_point(const uint8_t *n, size_t len)
{
    size_t i = 1;
    while (i < len && n[i] != 0x80) { /* rbsp_trailing_bits */
        uint32_t type = 0, size = 0;
        while (i < len && n[i] == 0xFF)
            type += n[i++];
        if (i >= len)
            return false;
        type += n[i++];
        while (i < len && n[i] == 0xFF)
            size += n[i++];
        if (i >= len)
            return false;
        size += n[i++];
        if (type == 6)
            return true;
        i += size;
    }
    return false;
}

/* Sample bytes (AVCC: NAL units, each after its ls-byte length) hold an
 * IDR slice or a recovery point SEI, or cannot be read as NAL units (then
 * damage is for the decoder to show, not a false flag). */
static bool avcc_random_access(const uint8_t *p, size_t len, uint8_t ls)
{
    size_t i = 0;
    while (i + ls <= len) {
        size_t n = 0;
        for (uint8_t k = 0; k < ls; k++)
            n = n << 8 | p[i + k];
        i += ls;
        if (n == 0 || n > len - i)
            return true;
        uint8_t type = p[i] & 0x1F;
        if (type == 5 || (type == 6 && sei_recovery_point(p + i, n)))
            return true;
        i += n;
    }
    return i != len;
}

/* Whether AVCC sample bytes are exactly NAL units, each after its ls-byte
 * length (ISO/IEC 14496-15 5.3.2): a sample whose lengths overrun it or
 * leave bytes over was cut or resized (a trun sample size changed), and
 * h264_mp4toannexb drops it whole ("Invalid NAL unit size"): damage, not a
 * picture absent from a clean stream. */
static bool avcc_fills(const uint8_t *p, size_t len, uint8_t ls)
{
    size_t i = 0;
    while (i < len) {
        if (ls > len - i)
            return false;
        size_t n = 0;
        for (uint8_t k = 0; k < ls; k++)
            n = n << 8 | p[i + k];
        i += ls;
        if (n > len - i)
            return false;
        i += n;
    }
    return true;
}

/* Every sample of an H.264 trun is whole NAL units (avcc_fills), and its
 * sync samples are random access points (mp4box.h): sample i's flags are
 * the trun's first_sample_flags (i = 0), its own, the tfhd's default or the
 * trex's; none at any level claims nothing.  A sample outside the file is
 * the run checks' to name (check_runs). */
static void check_samples(struct scan *s, const struct box *b, const struct traf_state *ts, uint32_t flags,
                          uint32_t count, size_t at, size_t per, uint64_t start)
{
    const uint8_t *q = s->p + b->start + b->header;
    const struct mp4box_track *t = ts->track;
    bool first = flags & 4, own_flags = flags & 0x400, own_size = flags & 0x200;
    if (!t->nal_length_size)
        return;
    bool claims = first || own_flags || ts->has_default_flags || t->has_default_flags;
    uint32_t dflags = ts->has_default_flags ? ts->default_flags : t->has_default_flags ? t->default_flags : 0;
    uint32_t dsize = ts->has_default_size ? ts->default_size : t->default_size;
    size_t size_at = at + (flags & 0x100 ? 4 : 0), flags_at = size_at + (own_size ? 4 : 0);
    uint64_t off = start;
    /* Bounded by the file: without per-sample fields (per 0) count is not
     * bounded by the box, and samples past the file's end are not read. */
    for (uint32_t i = 0; i < count && s->issue == TS_ISSUE_NONE && off < s->n; i++) {
        uint32_t size = own_size ? rd32(q + size_at + (size_t)i * per) : dsize;
        uint32_t sf = own_flags ? rd32(q + flags_at + (size_t)i * per) : i == 0 && first ? rd32(q + at - 4) : dflags;
        bool sync = claims && !(sf & 0x01010000); /* is_non_sync, sample_depends_on = 1 */
        if (size == 0 && !own_size && i > 0)
            break; /* every other sample is this empty one again */
        if (off <= s->n && size <= s->n - off) {
            if (!avcc_fills(s->p + off, size, t->nal_length_size))
                fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, b->start);
            else if (sync && !avcc_random_access(s->p + off, size, t->nal_length_size))
                fail(s, TS_ISSUE_MP4_FALSE_SYNC, b->start);
        }
        off += size;
    }
}

static void on_trun(struct scan *s, const struct box *b, struct traf_state *ts)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header;
    if (len < 8)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
    if (!ts->track)
        return fail(s, s->init->have ? TS_ISSUE_MP4_SAMPLE_TABLE : TS_ISSUE_MP4_MISSING_INIT, b->start);
    uint32_t flags = rd32(q) & 0xFFFFFF, count = rd32(q + 4);
    size_t at = 8;
    uint64_t start = ts->next;
    if (flags & 1) {
        if (len < at + 4)
            return fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, b->start);
        start = ts->base + (uint64_t)(int64_t)(int32_t)rd32(q + at);
        at += 4;
    }
    at += flags & 4 ? 4 : 0;
    size_t per = (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0) + (flags & 0x800 ? 4 : 0);
    if (at > len || (per && count > (len - at) / per))
        return fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, b->start);
    bool own = flags & 0x200;
    if (!own && !ts->has_default_size && !ts->track->has_default_size)
        return fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, b->start);
    uint64_t total = 0;
    if (own) {
        size_t size_at = at + (flags & 0x100 ? 4 : 0);
        for (uint32_t i = 0; i < count; i++)
            total += rd32(q + size_at + (size_t)i * per);
    } else {
        total = (uint64_t)count * (ts->has_default_size ? ts->default_size : ts->track->default_size);
    }
    if (s->nruns == MP4BOX_MAX_RUNS)
        return fail(s, TS_ISSUE_MP4_SAMPLE_TABLE, b->start);
    check_samples(s, b, ts, flags, count, at, per, start);
    s->runs[s->nruns++] = (struct run_range){start, total};
    ts->next = start + total;
}

/* tfdt (ISO/IEC 14496-12 8.8.12): a version 1 box holds a 64-bit time, a
 * version 0 one 32 bits.  Shorter, FFmpeg reads the time anyway from the
 * bytes after the box ("overread end of atom"): the fragment's times are
 * garbage. */
static void on_tfdt(struct scan *s, const struct box *b)
{
    const uint8_t *q = s->p + b->start + b->header;
    size_t len = b->size - b->header;
    if (len < 4 || len < 4 + (q[0] == 1 ? 8u : 4u))
        fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, b->start);
}

static void walk_traf(struct scan *s, const struct box *traf, int depth)
{
    struct traf_state ts = {0};
    size_t off = traf->start + traf->header, end = traf->start + traf->size;
    (void)depth;
    while (off < end && s->issue == TS_ISSUE_NONE) {
        struct box b;
        if (!read_box(s, off, end, &b))
            return;
        if (b.type == FOURCC('t', 'f', 'h', 'd'))
            on_tfhd(s, &b, &ts);
        else if (b.type == FOURCC('t', 'r', 'u', 'n'))
            on_trun(s, &b, &ts);
        else if (b.type == FOURCC('t', 'f', 'd', 't'))
            on_tfdt(s, &b);
        else if (b.type == FOURCC('s', 'e', 'n', 'c'))
            fail(s, TS_ISSUE_MP4_ENCRYPTED, b.start);
        off += b.size;
    }
}

static void on_box(struct scan *s, const struct box *b, int depth)
{
    switch (b->type) {
    case FOURCC('m', 'o', 'o', 'v'):
        s->seg->has_moov = true;
        s->seg->moov_offset = b->start;
        s->seg->moov_len = b->size;
        break;
    case FOURCC('m', 'o', 'o', 'f'):
        s->seg->has_moof = true;
        s->moof_start = b->start;
        break;
    case FOURCC('t', 'k', 'h', 'd'): on_tkhd(s, b); return;
    case FOURCC('m', 'v', 'h', 'd'): on_mvhd(s, b); return;
    case FOURCC('e', 'l', 's', 't'): on_elst(s, b); return;
    case FOURCC('t', 'r', 'a', 'k'): s->trak = NULL; break;
    case FOURCC('t', 'r', 'e', 'x'): on_trex(s, b); return;
    case FOURCC('s', 't', 's', 'd'): on_stsd(s, b); return;
    case FOURCC('t', 'r', 'a', 'f'): walk_traf(s, b, depth); return;
    default: break;
    }
    if (is_container(b->type))
        walk(s, b->start + b->header, b->start + b->size, b->type, depth + 1);
    if (b->type == FOURCC('m', 'o', 'o', 'v') && s->issue == TS_ISSUE_NONE) {
        s->fresh.have = true;    /* fragments after it read its tracks */
        *s->init = s->fresh;
    }
}

static void walk(struct scan *s, size_t off, size_t end, uint32_t parent, int depth)
{
    (void)parent;
    if (depth > MAX_DEPTH)
        return fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, off);
    while (off < end && s->issue == TS_ISSUE_NONE) {
        struct box b;
        if (!read_box(s, off, end, &b))
            return;
        on_box(s, &b, depth);
        off += b.size;
    }
}

/* Every trun's data inside one mdat payload of the segment. */
static void check_runs(struct scan *s)
{
    struct { uint64_t start, end; } mdat[64];
    int nm = 0;
    bool moof_before = false;
    for (size_t off = 0; off < s->n && nm < 64;) {
        struct box b;
        if (!read_box(s, off, s->n, &b))
            return;
        moof_before |= b.type == FOURCC('m', 'o', 'o', 'f');
        if (b.type == FOURCC('m', 'd', 'a', 't') && !moof_before && b.size > b.header)
            return fail(s, TS_ISSUE_MP4_NOT_FRAGMENTED, b.start);   /* samples the moov indexes */
        if (b.type == FOURCC('m', 'd', 'a', 't'))
            mdat[nm].start = b.start + b.header, mdat[nm++].end = b.start + b.size;
        off += b.size;
    }
    for (int i = 0; i < s->nruns && s->issue == TS_ISSUE_NONE; i++) {
        bool inside = false;
        for (int m = 0; m < nm && !inside; m++)
            inside = s->runs[i].start >= mdat[m].start && s->runs[i].len <= mdat[m].end - s->runs[i].start &&
                     s->runs[i].start <= mdat[m].end;
        if (!inside)
            fail(s, TS_ISSUE_MP4_TRUN_OVERRUN, s->runs[i].start < s->n ? s->runs[i].start : s->n);
    }
}

enum ts_issue mp4box_scan(const uint8_t *p, size_t n, struct mp4box_init *init, struct mp4box_segment *seg,
                          uint64_t *where)
{
    struct scan st = {0}, *s = &st;
    s->p = p;
    s->n = n;
    s->init = init;
    s->seg = seg;
    memset(seg, 0, sizeof *seg);
    if (n == 0)
        fail(s, TS_ISSUE_MP4_TRUNCATED_BOX, 0);
    walk(s, 0, n, 0, 0);
    if (s->issue == TS_ISSUE_NONE)
        check_runs(s);
    *where = s->where;
    return s->issue;
}

bool mp4box_looks_like_mp4(const uint8_t *p, size_t n)
{
    static const uint32_t first[] = {FOURCC('f', 't', 'y', 'p'), FOURCC('s', 't', 'y', 'p'), FOURCC('m', 'o', 'o', 'v'),
                                     FOURCC('m', 'o', 'o', 'f'), FOURCC('s', 'i', 'd', 'x'), FOURCC('e', 'm', 's', 'g'),
                                     FOURCC('p', 'r', 'f', 't'), FOURCC('f', 'r', 'e', 'e'), FOURCC('s', 'k', 'i', 'p')};
    if (n < 8 || p[0] == 0x47)   /* a TS sync byte: never a box of sane size */
        return false;
    uint32_t type = rd32(p + 4);
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (first[i] == type)
            return true;
    return false;
}
