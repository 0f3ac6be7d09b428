/* dt_side.c - one side of a case as FFmpeg's command-line tools see it (see
 * dt_side.h).  Everything here reads the output of ffprobe/ffmpeg runs; none
 * of it links FFmpeg or the verifier. */
#include "dt_side.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../fixtures/tools/mp4walk.h"
#include "../../fixtures/tools/tspkt.h"

#define LOG_MAX (256u << 20)
#define PCM_MAX (1024u << 20)

/* ---- small parsing helpers ------------------------------------------------------ */

/* Value of "key=" in a '|'-separated compact line, copied to out; false when absent. */
static bool kv(const char *line, const char *key, char *out, size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p != line && p[-1] != '|') || p[kl] != '=')
            continue;
        const char *v = p + kl + 1;
        size_t n = strcspn(v, "|\n");
        if (n >= size)
            n = size - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return true;
    }
    return false;
}

static int64_t kv_i64(const char *line, const char *key, int64_t dflt)
{
    char v[64];
    if (!kv(line, key, v, sizeof v) || strcmp(v, "N/A") == 0)
        return dflt;
    return strtoll(v, NULL, 0);
}

/* Token after "name:" in a showinfo line (up to a blank), copied to out. */
static bool tok(const char *line, const char *name, char *out, size_t size)
{
    const char *p = strstr(line, name);
    if (p == NULL)
        return false;
    p += strlen(name);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, " \n");
    if (n >= size)
        n = size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 256;
    void *p = realloc(*arr, c * elem);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = c;
    return true;
}

/* ---- times (README, rule 16) ------------------------------------------------------ */

/* t in units of num/den seconds, in 1/720000 s: exact where the time base
 * allows (90 kHz, 48 kHz, 3000, 15360 ... all divide 720000 or are divided
 * by it), else floored, as exactav maps an fMP4 timescale. */
static int64_t to_units(int64_t t, int64_t num, int64_t den)
{
    if (t == DT_NOPTS)
        return DT_NOPTS;
    if (num <= 0 || den <= 0)
        return t * 8; /* no time base known: MPEG-TS ticks */
    int64_t q = t / den, r = t % den;
    if (r < 0)
        q--, r += den;
    int64_t frac = r * num * 720000, fq = frac / den;
    return q * num * 720000 + fq;
}

/* The same as 90 kHz ticks (floored), the remainder below a tick in *sub. */
static int64_t to_ticks(int64_t t, int64_t num, int64_t den, int *sub)
{
    int64_t u = to_units(t, num, den);
    if (u == DT_NOPTS) {
        *sub = 0;
        return DT_NOPTS;
    }
    int64_t k = u >= 0 ? u / 8 : -((-u + 7) / 8);
    *sub = (int)(u - 8 * k);
    return k;
}

/* "1/90000" into num and den (both 0 when absent or malformed). */
static void parse_tb(const char *tb, int64_t *num, int64_t *den)
{
    long long n = 0, d = 0;
    if (tb == NULL || sscanf(tb, "%lld/%lld", &n, &d) != 2 || n <= 0 || d <= 0)
        n = d = 0;
    *num = n;
    *den = d;
}

/* -map of the selected tracks, by PID (stream id) */
static void add_track_maps(struct dt_argv *a, const struct dt_side *s, bool video, bool audio)
{
    if (video && s->vindex >= 0) {
        dt_argv_addl(a, "-map", NULL);
        dt_argv_add(a, "0:i:0x%x", s->vpid);
    }
    if (audio && s->aindex >= 0) {
        dt_argv_addl(a, "-map", NULL);
        dt_argv_add(a, "0:i:0x%x", s->apid);
    }
}

/* ---- preparing the bytes and the transport scan -------------------------------- */

/* ISO/IEC 13818-1 2.4.3.3: a duplicate repeats every byte of the packet
 * before it but for its PCR (6 bytes after the adaptation field's flags). */
static bool same_but_pcr(const uint8_t *a, const uint8_t *b)
{
    bool pcr = ((a[3] >> 4) & 2) && a[4] >= 7 && (a[5] & 0x10);
    return pcr ? memcmp(a, b, 6) == 0 && memcmp(a + 12, b + 12, TS_PACKET_SIZE - 12) == 0
               : memcmp(a, b, TS_PACKET_SIZE) == 0;
}

/* The oracle's own transport scan: sync, whole packets, continuity counters
 * (one duplicate of identical bytes allowed, discontinuity_indicator honoured), the transport
 * error indicator, and CRC-32 of the PAT and PMT sections. */
/* The stream_type of each elementary PID of a whole PMT section sec (sl
 * bytes, CRC included): what a player's demuxer reads (ffprobe's codec_tag
 * is a registration descriptor's identifier when there is one, e.g.
 * GStreamer's "HDMV"). */
static void keep_stream_types(struct dt_side *s, const uint8_t *sec, size_t sl)
{
    size_t off = 12 + ((((size_t)sec[10] & 0x0f) << 8) | sec[11]);
    while (off + 5 <= sl - 4) {
        unsigned pid = ((unsigned)(sec[off + 1] & 0x1f) << 8) | sec[off + 2];
        s->es_type[pid] = sec[off];
        off += 5 + ((((size_t)sec[off + 3] & 0x0f) << 8) | sec[off + 4]);
    }
}

/* Transport damage found on pid (-1: not tied to one PID). */
static void damage_at(struct dt_side *s, int pid)
{
    for (int i = 0; pid >= 0 && i < s->ndamaged_pids; i++)
        if (s->damaged_pid[i] == (unsigned)pid)
            return;
    if (pid < 0 || s->ndamaged_pids == (int)(sizeof s->damaged_pid / sizeof s->damaged_pid[0]))
        s->damage_unplaced = true;
    else
        s->damaged_pid[s->ndamaged_pids++] = (unsigned)pid;
}

bool dt_side_damage_on(const struct dt_side *s, unsigned pid)
{
    if (s->damage_unplaced || (s->transport_damage && s->ndamaged_pids == 0))
        return true;
    for (int i = 0; i < s->ndamaged_pids; i++)
        if (s->damaged_pid[i] == pid)
            return true;
    return false;
}

static void transport_scan(struct dt_side *s)
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(s->ts, (size_t)MAX_INPUT_BYTES, &len);
    if (d == NULL) {
        s->transport_damage = true;
        damage_at(s, -1);
        dt_fmt(s->transport_why, sizeof s->transport_why, "unreadable");
        return;
    }
    static const int no_cc = -1;
    int last_cc[TS_MAX_PID + 1];
    size_t last_off[TS_MAX_PID + 1];   /* the PID's last packet with payload */
    bool dup_used[TS_MAX_PID + 1], is_pmt[TS_MAX_PID + 1];
    for (size_t p = 0; p <= TS_MAX_PID; p++) {
        last_cc[p] = no_cc;
        dup_used[p] = is_pmt[p] = false;
    }
    char *why = s->transport_why;
    size_t wsz = sizeof s->transport_why;
    if (len % TS_PACKET_SIZE)
        dt_fmt(why, wsz, "ends %zu bytes into a TS packet", len % TS_PACKET_SIZE);
    for (size_t i = 0; i + TS_PACKET_SIZE <= len && !why[0]; i += TS_PACKET_SIZE) {
        const uint8_t *p = d + i;
        struct ts_packet_info info;
        if (ts_parse_packet(p, &info) != TSPKT_OK) {
            dt_fmt(why, wsz, "bad packet at offset %zu", i);
            break;
        }
        if (p[1] & 0x80) {
            dt_fmt(why, wsz, "transport_error_indicator at offset %zu", i);
            damage_at(s, -1);
            break;
        }
        if (info.pid == TS_NULL_PID)
            continue;
        bool disc = (info.afc & 0x2) && p[4] > 0 && (p[5] & 0x80);
        if (info.afc & 0x1) {
            int last = last_cc[info.pid];
            if (last != no_cc && !disc && (unsigned)info.cc != ((unsigned)last + 1) % 16) {
                bool dup = (unsigned)info.cc == (unsigned)last && !dup_used[info.pid];
                if (dup && same_but_pcr(d + last_off[info.pid], p)) {
                    dup_used[info.pid] = true;
                } else {
                    if (dup)
                        dt_fmt(why, wsz, "a packet repeating the counter with other bytes on PID %u at offset %zu",
                               info.pid, i);
                    else
                        dt_fmt(why, wsz, "continuity gap on PID %u at offset %zu", info.pid, i);
                    damage_at(s, is_pmt[info.pid] || info.pid == 0 ? -1 : (int)info.pid);
                }
            } else {
                dup_used[info.pid] = false;
            }
            last_cc[info.pid] = (int)info.cc;
            last_off[info.pid] = i;
        }
        if ((info.pid == 0 || is_pmt[info.pid]) && info.pusi && info.payload_len > 1) {
            const uint8_t *pl = p + info.payload_offset;
            size_t ptr = pl[0];
            if (1 + ptr + 3 > info.payload_len)
                continue;
            const uint8_t *sec = pl + 1 + ptr;
            size_t sl = 3 + ((((size_t)sec[1] & 0x0f) << 8) | sec[2]);
            if (1 + ptr + sl > info.payload_len || sl < 12)
                continue; /* sections across packets are not checked */
            if (ts_crc32(sec, sl) != 0) { /* the CRC over a whole section is 0 */
                dt_fmt(why, wsz, "PSI CRC error on PID %u at offset %zu", info.pid, i);
                damage_at(s, -1);
                break;
            }
            if (is_pmt[info.pid] && sec[0] == 2)
                keep_stream_types(s, sec, sl);
            bool first_pat = info.pid == 0 && sec[0] == 0 && s->npat == 0;
            if (info.pid == 0 && sec[0] == 0)
                for (size_t off = 8; off + 4 <= sl - 4; off += 4)
                    if ((sec[off] | sec[off + 1]) != 0) {
                        is_pmt[((sec[off + 2] & 0x1f) << 8) | sec[off + 3]] = true;
                        if (first_pat && s->npat < DT_MAX_PROGRAMS)
                            s->pat_order[s->npat++] = sec[off] << 8 | sec[off + 1];
                    }
        }
    }
    s->transport_damage = why[0] != '\0';
    if (s->transport_damage && s->ndamaged_pids == 0)
        damage_at(s, -1);
    free(d);
}

/* One PES header at pl (n bytes of the packet's payload) of a PID carrying
 * video (video true) or audio: start code, stream id of that kind, '10' marker
 * bits, a permitted PTS_DTS_flags value, timestamps with their prefix nibbles
 * and marker bits, a header that fits.  NULL when sound, else what is wrong. */
static const char *pes_header_fault(const uint8_t *pl, size_t n, bool video)
{
    if (n < 9)
        return NULL; /* a header across packets: not checked */
    if (pl[0] || pl[1] || pl[2] != 1)
        return "no PES start code";
    bool id_ok = video ? (pl[3] >= 0xe0 && pl[3] <= 0xef)
                       : ((pl[3] >= 0xc0 && pl[3] <= 0xdf) || pl[3] == 0xbd || pl[3] == 0xfa);
    if (!id_ok)
        return "stream_id of another kind";
    if ((pl[6] & 0xc0) != 0x80)
        return "PES header marker bits";
    unsigned flags = (pl[7] >> 6) & 3;
    size_t need = 9 + (flags == 3 ? 10u : flags == 2 ? 5u : 0u);
    if (flags == 1 || need > 9u + pl[8])
        return "PTS_DTS_flags";
    if (9u + pl[8] > n)
        return NULL;
    for (unsigned k = 0; k < (flags == 3 ? 2u : flags == 2 ? 1u : 0u); k++) {
        const uint8_t *t = pl + 9 + 5 * k;
        unsigned prefix = flags == 3 ? (k ? 1u : 3u) : 2u;
        if ((t[0] >> 4) != prefix || !(t[0] & 1) || !(t[2] & 1) || !(t[4] & 1))
            return "PTS/DTS prefix or marker bits";
    }
    return NULL;
}

/* The PTS a PES header at pl declares (n bytes of the packet's payload, the
 * header sound), reduced mod 2^33; DT_NOPTS when none or across packets. */
static int64_t pes_header_pts(const uint8_t *pl, size_t n)
{
    if (n < 14 || !(pl[7] & 0x80) || pl[8] < 5)
        return DT_NOPTS;
    return (int64_t)(pl[9] >> 1 & 7) << 30 | (int64_t)pl[10] << 22 | (int64_t)(pl[11] >> 1) << 15 |
           (int64_t)pl[12] << 7 | pl[13] >> 1;
}


/* The packets' PTS values reduced mod 2^33, sorted (NULL: none or no memory;
 * *n their number). */
static int64_t *sorted_pts(const struct dt_pkt *pk, size_t npk, size_t *n)
{
    int64_t *v = npk ? malloc(npk * sizeof *v) : NULL;
    *n = 0;
    for (size_t i = 0; v && i < npk; i++)
        if (pk[i].pts != DT_NOPTS)
            v[(*n)++] = dt_mod33(pk[i].pts);
    if (v)
        qsort(v, *n, sizeof *v, dt_cmp_i64);
    return v;
}

static void keep_declared(int64_t **v, size_t *n, size_t *cap, int64_t t)
{
    if (grow((void **)v, cap, *n, sizeof **v))
        (*v)[(*n)++] = t;
}

/* NAL unit starts in the video PES payload bytes d[0..n): whether the PES
 * being read ends with non-VCL NAL units after a slice (t->tail).  The
 * state carries across packets: t->zeros counts the zero bytes before. */
struct nal_tail {
    unsigned zeros;
    bool after_sc, slice, tail;
};

static void nal_tail_scan(struct nal_tail *t, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t->after_sc) {
            unsigned type = d[i] & 0x1f;
            t->after_sc = false;
            if (type >= 1 && type <= 5)
                t->slice = true, t->tail = false;
            else if (t->slice && type >= 6 && type <= 9)
                t->tail = true;   /* where FFmpeg's parser begins the next unit */
        }
        if (d[i] == 1 && t->zeros >= 2)
            t->after_sc = true;
        t->zeros = d[i] == 0 ? t->zeros + 1 : 0;
    }
}

/* Video PES declaring a PTS that none of FFmpeg's packets carries: a unit
 * swallowed by its neighbour (damage).  Unless a video PES ended with an
 * SEI, SPS, PPS or AUD after its slices (issue 18, class 12): FFmpeg's
 * parser begins the next unit there, inside the previous picture's PES,
 * and gives it that PES's time (or none), so its packet times are one
 * picture late while the pictures decode the same; the times the PES
 * headers declare are then the frames' times (retime_video). */
static void lost_video_times(struct dt_side *s, bool tail, size_t lost, size_t lost_at)
{
    if (s->transport_damage)
        return;
    if (tail) {
        s->v_retime = true;
        return;
    }
    if (lost == 0)
        return;
    s->transport_damage = true;
    damage_at(s, (int)s->vpid);
    dt_fmt(s->transport_why, sizeof s->transport_why,
           "a PES declaring a PTS no access unit carries (a unit swallowed) on PID %u at offset %zu",
           s->vpid, lost_at);
}

/* The frames of a side whose video times FFmpeg's parser lost
 * (lost_video_times): FFmpeg outputs its pictures in presentation order,
 * so the k-th frame is at the k-th declared PTS in time order (relative to
 * the first, so a wrap of 2^33 sorts right).  Frames and declared times
 * that do not pair one to one (a trimmed side) leave the frames unplaced:
 * damage, as before. */
static void retime_video(struct dt_side *s)
{
    if (!s->v_retime)
        return;
    if (s->nvf != s->nvdeclared || s->nvf == 0) {
        s->transport_damage = true;
        damage_at(s, (int)s->vpid);
        dt_fmt(s->transport_why, sizeof s->transport_why, "video times lost by FFmpeg's parser, not placed");
        return;
    }
    const int64_t base = s->vdeclared[0] - 90000, mask = (INT64_C(1) << 33) - 1;
    for (size_t i = 0; i < s->nvdeclared; i++)
        s->vdeclared[i] = (s->vdeclared[i] - base) & mask;
    qsort(s->vdeclared, s->nvdeclared, sizeof *s->vdeclared, dt_cmp_i64);
    for (size_t i = 0; i < s->nvf; i++)
        s->vf[i].pts = (s->vdeclared[i] + base) & mask;
}

/* PES-level integrity of the selected tracks (the transport scan does not
 * know which PIDs carry them): every PES header sound, a declared
 * PES_packet_length met by the bytes up to that PID's next PES start, and
 * every PTS a PES declares carried by one of FFmpeg's packets of the track
 * (dt_side_probe_packets first).  A PES with a PTS holds the start of an
 * access unit (ISO/IEC 13818-1 2.4.3.7); when FFmpeg's parser gives none
 * that time, a unit vanished into its neighbour (a broken start code or
 * sync word) and its decode may show nothing of it. */
void dt_side_scan_pes(struct dt_side *s)
{
    if (s->mp4)
        return; /* no PES: the fMP4 boxes are FFmpeg's mov demuxer's to judge (rule 16) */
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(s->ts, (size_t)MAX_INPUT_BYTES, &len);
    struct pes_state {
        unsigned pid;
        bool video, open;
        size_t declared, got;
        int64_t *pts;   /* the track's packet times, sorted */
        size_t npts;
    } st[2] = {{s->vpid, true, false, 0, 0, NULL, 0}, {s->apid, false, false, 0, 0, NULL, 0}};
    st[0].pts = sorted_pts(s->vpk, s->nvpk, &st[0].npts);
    st[1].pts = sorted_pts(s->apk, s->napk, &st[1].npts);
    char *why = s->transport_why;
    size_t lost = 0, lost_at = 0;
    struct nal_tail nt = {0};
    bool tail_seen = false;
    for (size_t i = 0; d && !s->transport_damage && i + TS_PACKET_SIZE <= len; i += TS_PACKET_SIZE) {
        struct ts_packet_info info;
        if (ts_parse_packet(d + i, &info) != TSPKT_OK || info.payload_len == 0)
            continue;
        for (int k = 0; k < 2; k++) {
            struct pes_state *p = &st[k];
            if ((k == 0 ? s->vindex : s->aindex) < 0 || info.pid != p->pid)
                continue;
            const uint8_t *pl = d + i + info.payload_offset;
            const char *fault = NULL;
            if (info.pusi) {
                if (p->open && p->declared && p->got != p->declared)
                    fault = "PES shorter or longer than its PES_packet_length";
                else
                    fault = pes_header_fault(pl, info.payload_len, p->video);
                int64_t t = fault ? DT_NOPTS : pes_header_pts(pl, info.payload_len);
                if (t != DT_NOPTS && p->video)
                    keep_declared(&s->vdeclared, &s->nvdeclared, &s->vdeclared_cap, t);
                else if (t != DT_NOPTS)
                    keep_declared(&s->adeclared, &s->nadeclared, &s->adeclared_cap, t);
                if (!p->video && !fault && info.payload_len >= 9u + pl[8] + 7 && pl[9 + pl[8]] == 0xff &&
                    (pl[9 + pl[8] + 6] & 3))
                    s->a_multiblock = true;   /* an ADTS frame of several raw data blocks */
                if (t != DT_NOPTS && !(p->pts && bsearch(&t, p->pts, p->npts, sizeof t, dt_cmp_i64))) {
                    if (p->video && !lost++)
                        lost_at = i;
                    else if (!p->video)
                        fault = "a PES declaring a PTS no access unit carries (a unit swallowed)";
                }
                p->open = true;
                p->declared = info.payload_len >= 6 ? ((size_t)pl[4] << 8 | pl[5]) : 0;
                p->got = info.payload_len >= 6 ? info.payload_len - 6 : 0;
                if (p->video) {
                    tail_seen |= nt.tail;
                    nt = (struct nal_tail){0};
                    size_t h = info.payload_len >= 9 ? 9u + pl[8] : info.payload_len;
                    if (!fault && h < info.payload_len)
                        nal_tail_scan(&nt, pl + h, info.payload_len - h);
                }
            } else {
                p->got += info.payload_len;
                if (p->video)
                    nal_tail_scan(&nt, pl, info.payload_len);
            }
            if (fault) {
                s->transport_damage = true;
                damage_at(s, (int)p->pid);
                dt_fmt(why, sizeof s->transport_why, "%s on PID %u at offset %zu", fault, p->pid, i);
            }
        }
    }
    lost_video_times(s, tail_seen || nt.tail, lost, lost_at);
    free(st[0].pts);
    free(st[1].pts);
    free(d);
}

/* The first bytes of path begin an ISO BMFF box exactav reads as fMP4. */
static bool file_is_mp4(const char *path)
{
    uint8_t head[8];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    return mp4_looks_like(head, got);
}

/* What the box scan keeps of an fMP4 side: the movie timescale and, per
 * trak, its handler and whether its first edit is an empty one (FFmpeg's
 * mp4 muxers start each track so, in the movie timescale). */
struct quantum_scan {
    const uint8_t *d;
    uint32_t movie_ts;
    char handler[5];
    bool empty_edit, audio_empty_edit, video_empty_edit;
};

static bool quantum_visit(const struct mp4_box *b, void *ctx)
{
    struct quantum_scan *q = ctx;
    const uint8_t *p = q->d + b->off + b->hdr;
    size_t n = b->size - b->hdr;
    if (b->bad)
        return true;
    if (!memcmp(b->type, "trak", 4)) {
        q->handler[0] = '\0';
        q->empty_edit = false;
    } else if (!memcmp(b->type, "mvhd", 4) && n >= 24) {
        q->movie_ts = mp4_rd32(p + (p[0] == 1 ? 20 : 12));
    } else if (!memcmp(b->type, "elst", 4) && n >= 8 && mp4_rd32(p + 4) > 0) {
        /* the first entry: segment_duration then media_time, 32 or 64 bits */
        bool v1 = p[0] == 1;
        if (n >= (v1 ? 28u : 20u))
            q->empty_edit = v1 ? mp4_rd64(p + 16) == UINT64_MAX : mp4_rd32(p + 12) == UINT32_MAX;
    } else if (!memcmp(b->type, "hdlr", 4) && n >= 12) {
        memcpy(q->handler, p + 8, 4);
        q->handler[4] = '\0';
        if (!strcmp(q->handler, "soun") && q->empty_edit)
            q->audio_empty_edit = true;
        if (!strcmp(q->handler, "vide") && q->empty_edit)
            q->video_empty_edit = true;
    }
    return true;
}

/* The container's quantum of the audio track (docs/exact-av-v1.md): its
 * start is an empty edit in the movie timescale, known to one unit of it. */
static void mp4_quantum(struct dt_side *s)
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(s->ts, (size_t)MAX_INPUT_BYTES, &len);
    struct quantum_scan q = {.d = d};
    if (d)
        mp4_walk(d, 0, len, 0, quantum_visit, &q);
    s->a_quantum = q.audio_empty_edit && q.movie_ts > 0 && q.movie_ts < 720000
                       ? (720000 + q.movie_ts - 1) / q.movie_ts : 0;
    s->v_quantum = q.video_empty_edit && q.movie_ts > 0 && q.movie_ts < 720000
                       ? (720000 + q.movie_ts - 1) / q.movie_ts : 0;
    free(d);
}

/* The oracle's own box scan of an fMP4 side (the twin of the transport
 * scan, rule 16): FFmpeg's mov demuxer clamps a box that runs past its
 * parent and reads on, so structure it passes silently is checked here
 * (ISO/IEC 14496-12 4.2, 8.8.8): every box inside its parent and at least
 * its header; every trun's entries inside the box; every trun's sample data
 * (its data_offset from the moof, default-base-is-moof or tfhd's
 * base_data_offset, plus its sample sizes) inside the mdat after the moof. */
struct integrity_scan {
    const uint8_t *d;
    char why[160];
    size_t moof;                  /* offset of the current moof */
    uint64_t base;                /* the current traf's data base */
    uint64_t lo, hi;              /* the moof's sample data so far, [lo, hi); lo > hi: none */
};

static void trun_scan(struct integrity_scan *q, const struct mp4_box *b)
{
    const uint8_t *p = q->d + b->off + b->hdr;
    size_t n = b->size - b->hdr;
    uint32_t flags = n >= 8 ? mp4_rd32(p) & 0xffffff : 0, count = n >= 8 ? mp4_rd32(p + 4) : 0;
    size_t head = 8 + (flags & 0x1 ? 4u : 0u) + (flags & 0x4 ? 4u : 0u);
    size_t entry = 4u * (size_t)(!!(flags & 0x100) + !!(flags & 0x200) + !!(flags & 0x400) + !!(flags & 0x800));
    if (n < head || (entry && (uint64_t)count > (n - head) / entry)) {
        dt_fmt(q->why, sizeof q->why, "a trun at offset %zu with more entries than it holds", b->off);
        return;
    }
    if (!(flags & 0x1) || !(flags & 0x200))
        return; /* no data offset or no sizes of its own: not checked */
    uint64_t start = q->base + (uint64_t)(int64_t)(int32_t)mp4_rd32(p + 8), end = start;
    for (uint32_t i = 0; i < count; i++)
        end += mp4_rd32(p + head + (size_t)i * entry + (flags & 0x100 ? 4 : 0));
    if (start < q->lo)
        q->lo = start;
    if (end > q->hi)
        q->hi = end;
}

static bool integrity_visit(const struct mp4_box *b, void *ctx)
{
    struct integrity_scan *q = ctx;
    if (b->bad) {
        dt_fmt(q->why, sizeof q->why, "box %s at offset %zu runs past its parent or is shorter than its header",
               b->type, b->off);
        return false;
    }
    const uint8_t *p = q->d + b->off + b->hdr;
    if (!memcmp(b->type, "moof", 4)) {
        q->moof = b->off;
        q->lo = UINT64_MAX;
        q->hi = 0;
    } else if (!memcmp(b->type, "tfhd", 4) && b->size >= b->hdr + 8) {
        uint32_t flags = mp4_rd32(p) & 0xffffff;
        q->base = (flags & 0x1) && b->size >= b->hdr + 16 ? mp4_rd64(p + 8) : q->moof;
    } else if (!memcmp(b->type, "trun", 4)) {
        trun_scan(q, b);
    } else if (!memcmp(b->type, "mdat", 4) && b->depth == 0 && q->hi > 0) {
        if (q->lo < b->off + b->hdr || q->hi > b->off + b->size)
            dt_fmt(q->why, sizeof q->why, "trun sample data [%" PRIu64 ", %" PRIu64 ") outside the mdat at offset %zu",
                   q->lo, q->hi, b->off);
        q->hi = 0;
    }
    return q->why[0] == '\0';
}

static void mp4_integrity(struct dt_side *s)
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(s->ts, (size_t)MAX_INPUT_BYTES, &len);
    struct integrity_scan q = {.d = d};
    if (d == NULL)
        dt_fmt(q.why, sizeof q.why, "unreadable");
    else
        mp4_walk(d, 0, len, 0, integrity_visit, &q);
    if (q.why[0]) {
        s->transport_damage = true;
        damage_at(s, -1);
        dt_fmt(s->transport_why, sizeof s->transport_why, "%s", q.why);
    }
    free(d);
}

/* fMP4 pieces (an init segment and media segments) as FFmpeg's HLS demuxer
 * feeds them to its mov demuxer: the plain concatenation, by `cat`. */
static int join_mp4(struct dt_env *env, struct dt_side *s, const struct dt_seg *segs, size_t n)
{
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "cat", NULL);
    for (size_t i = 0; i < n; i++)
        dt_argv_add(&a, "%s", segs[i].path);
    int rc = dt_fmt(s->ts, sizeof s->ts, "%s/joined.mp4", s->dir) ? dt_run(env, &a, s->ts, NULL) : -1;
    dt_argv_free(&a);
    return rc == 0 ? 0 : -1;
}

int dt_side_prepare(struct dt_env *env, struct dt_side *s, const struct dt_seg *segs, size_t n)
{
    if (dt_mkdirs(s->dir) != 0 || n == 0)
        return -1;
    s->mp4 = file_is_mp4(segs[0].path);
    if (s->mp4) {
        for (size_t i = 0; i < n; i++)
            if (segs[i].ranged)
                return -1; /* no recipe makes fMP4 byte ranges */
        if (n == 1 ? !dt_fmt(s->ts, sizeof s->ts, "%s", segs[0].path) : join_mp4(env, s, segs, n) != 0)
            return -1;
        mp4_quantum(s);
        mp4_integrity(s);
        return 0;
    }
    if (n == 1 && !segs[0].ranged) {
        if (!dt_fmt(s->ts, sizeof s->ts, "%s", segs[0].path))
            return -1;
        transport_scan(s);
        return 0;
    }
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_add(&a, "%s", env->tsedit);
    dt_argv_addl(&a, "join", NULL);
    if (!dt_fmt(s->ts, sizeof s->ts, "%s/joined.ts", s->dir))
        return -1;
    dt_argv_add(&a, "%s", s->ts);
    for (size_t i = 0; i < n; i++) {
        if (segs[i].ranged)
            dt_argv_add(&a, "%s@%" PRIu64 ":%" PRIu64, segs[i].path, segs[i].off, segs[i].len);
        else
            dt_argv_add(&a, "%s", segs[i].path);
    }
    int rc = dt_run(env, &a, NULL, NULL);
    dt_argv_free(&a);
    if (rc != 0) {
        /* pieces that are not whole packets: keep the raw bytes, that is damage */
        FILE *out = fopen(s->ts, "wb");
        if (out == NULL)
            return -1;
        for (size_t i = 0; i < n; i++) {
            size_t len = 0;
            char *d = dt_read_file(segs[i].path, (size_t)MAX_INPUT_BYTES, &len);
            if (d == NULL) {
                fclose(out);
                return -1;
            }
            size_t off = segs[i].ranged ? (size_t)segs[i].off : 0;
            size_t cnt = segs[i].ranged ? (size_t)segs[i].len : len;
            if (off + cnt <= len)
                fwrite(d + off, 1, cnt, out);
            free(d);
        }
        fclose(out);
        dt_note(env, "tsedit join refused the pieces: the oracle decodes their plain concatenation");
    }
    transport_scan(s);
    return 0;
}

/* ---- programs and packets ------------------------------------------------------ */

static void add_stream(struct dt_program *p, json_t *st_json)
{
    if (p->ns >= DT_MAX_PROG_STREAMS)
        return;
    struct dt_pstream *st = &p->s[p->ns++];
    memset(st, 0, sizeof *st);
    const char *type = json_string_value(json_object_get(st_json, "codec_type"));
    const char *codec = json_string_value(json_object_get(st_json, "codec_name"));
    const char *chroma = json_string_value(json_object_get(st_json, "chroma_location"));
    const char *id = json_string_value(json_object_get(st_json, "id"));
    const char *tag = json_string_value(json_object_get(st_json, "codec_tag"));
    const char *tag_string = json_string_value(json_object_get(st_json, "codec_tag_string"));
    st->tag = tag ? (unsigned)strtoul(tag, NULL, 0) : 0;
    dt_fmt(st->tag_string, sizeof st->tag_string, "%s", tag_string ? tag_string : "");
    parse_tb(json_string_value(json_object_get(st_json, "time_base")), &st->tb_num, &st->tb_den);
    json_t *index = json_object_get(st_json, "index");
    st->index = json_is_integer(index) ? (int)json_integer_value(index) : -1;
    dt_fmt(st->type, sizeof st->type, "%s", type ? type : "");
    dt_fmt(st->codec, sizeof st->codec, "%s", codec ? codec : "");
    dt_fmt(st->chroma, sizeof st->chroma, "%s", chroma ? chroma : "");
    st->pid = id ? (unsigned)strtoul(id, NULL, 0) : 0;
    if (strcmp(st->type, "video") == 0)
        p->nv++;
    else if (strcmp(st->type, "audio") == 0)
        p->na++;
}

/* fMP4 has no programs: its streams are one program (id 0) of every track;
 * FFmpeg finding none (media segments without their init segment) leaves
 * the side unreadable, damage for the oracle. */
static int probe_mp4_streams(struct dt_env *env, struct dt_side *s)
{
    char out[DT_PATH_MAX];
    if (!dt_fmt(out, sizeof out, "%s/streams.json", s->dir))
        return -1;
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffprobe", "-v", "error", "-show_entries",
                 "stream=index,codec_type,codec_name,codec_tag,codec_tag_string,id,chroma_location,time_base",
                 "-of", "json", NULL);
    dt_argv_add(&a, "%s", s->ts);
    int rc = dt_run(env, &a, out, NULL);
    dt_argv_free(&a);
    if (rc < 0 || rc >= 128)
        return -1;
    json_t *root = json_load_file(out, 0, NULL), *sj;
    size_t k;
    memset(&s->prog[0], 0, sizeof s->prog[0]);
    json_array_foreach(json_object_get(root, "streams"), k, sj)
        add_stream(&s->prog[0], sj);
    json_decref(root);
    s->nprog = s->prog[0].nv + s->prog[0].na > 0 ? 1 : 0;
    s->unreadable = s->nprog == 0;
    return 0;
}

int dt_side_probe_programs(struct dt_env *env, struct dt_side *s)
{
    if (s->mp4)
        return probe_mp4_streams(env, s);
    char out[DT_PATH_MAX];
    if (!dt_fmt(out, sizeof out, "%s/programs.json", s->dir))
        return -1;
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffprobe", "-v", "error", "-show_programs", "-show_entries",
                 "program=program_id:stream=index,codec_type,codec_name,codec_tag,id,chroma_location,time_base",
                 "-of", "json", NULL);
    dt_argv_add(&a, "%s", s->ts);
    int rc = dt_run(env, &a, out, NULL);
    dt_argv_free(&a);
    json_t *root = rc < 0 ? NULL : json_load_file(out, 0, NULL);
    if (root == NULL)
        return -1;
    s->nprog = 0;
    json_t *programs = json_object_get(root, "programs"), *pj, *sj;
    size_t i, k;
    json_array_foreach(programs, i, pj) {
        if (s->nprog >= DT_MAX_PROGRAMS)
            break;
        struct dt_program *p = &s->prog[s->nprog++];
        memset(p, 0, sizeof *p);
        json_t *id = json_object_get(pj, "program_id");
        p->id = json_is_integer(id) ? (int)json_integer_value(id) : -1;
        json_array_foreach(json_object_get(pj, "streams"), k, sj)
            add_stream(p, sj);
    }
    json_decref(root);
    return 0;
}

static const struct dt_pstream *first_of(const struct dt_program *p, const char *type)
{
    for (int i = 0; i < p->ns; i++)
        if (strcmp(p->s[i].type, type) == 0)
            return &p->s[i];
    return NULL;
}

/* The codec a player's demuxer picks for a stream, from what the PMT
 * announces (hls.js and FFmpeg choose the decoder by stream type): H.264 is
 * type 0x1B, ADTS AAC 0x0F; anything else is FFmpeg's name for what it
 * probed together with the announced type, never equal to those two. */
static void announced_codec(const struct dt_side *s, const struct dt_pstream *st, char *out, size_t n)
{
    if (s->mp4 && st) {
        /* fMP4: the sample entry says which decoder a player uses (avc1/avc3
         * H.264, mp4a AAC); encv/enca and anything else are not those */
        bool same = (!strcmp(st->codec, "h264") && (!strcmp(st->tag_string, "avc1") || !strcmp(st->tag_string, "avc3"))) ||
                    (!strcmp(st->codec, "aac") && !strcmp(st->tag_string, "mp4a"));
        if (same)
            dt_fmt(out, n, "%s", st->codec);
        else
            dt_fmt(out, n, "%s in sample entry %s", st->codec, st->tag_string);
        return;
    }
    unsigned type = st && st->pid <= 0x1fff && s->es_type[st->pid] ? s->es_type[st->pid] : st ? st->tag : 0;
    if (st == NULL)
        dt_fmt(out, n, "none");
    else if ((type == 0x1b && !strcmp(st->codec, "h264")) || (type == 0x0f && !strcmp(st->codec, "aac")))
        dt_fmt(out, n, "%s", st->codec);
    else
        dt_fmt(out, n, "%s announced as stream type 0x%02x", st->codec, type);
}

static void take_program(struct dt_side *s, const struct dt_program *p)
{
    const struct dt_pstream *v = first_of(p, "video"), *au = first_of(p, "audio");
    s->vindex = v ? v->index : -1;
    s->aindex = au ? au->index : -1;
    s->vpid = v ? v->pid : 0;
    s->apid = au ? au->pid : 0;
    dt_fmt(s->vchroma, sizeof s->vchroma, "%s", v ? v->chroma : "");
    s->vtb_num = v ? v->tb_num : 0;
    s->vtb_den = v ? v->tb_den : 0;
    s->atb_num = au ? au->tb_num : 0;
    s->atb_den = au ? au->tb_den : 0;
    announced_codec(s, v, s->vcodec, sizeof s->vcodec);
    announced_codec(s, au, s->acodec, sizeof s->acodec);
}

/* A/V PIDs of a program, for comparing two matching programs. */
static bool same_av_pids(const struct dt_program *a, const struct dt_program *b)
{
    for (int i = 0; i < a->ns; i++) {
        if (strcmp(a->s[i].type, "video") && strcmp(a->s[i].type, "audio"))
            continue;
        bool found = false;
        for (int j = 0; j < b->ns && !found; j++)
            found = b->s[j].pid == a->s[i].pid;
        if (!found)
            return false;
    }
    return true;
}

int dt_side_select(struct dt_side *s, const struct dt_side *ref)
{
    s->vindex = s->aindex = -1;
    if (ref == NULL) {
        for (int i = 0; i < s->nprog; i++)
            if (s->prog[i].nv > 0) {
                take_program(s, &s->prog[i]);
                return 0;
            }
        return 1;
    }
    const struct dt_program *rp = NULL;
    for (int i = 0; i < ref->nprog && !rp; i++)
        if (ref->prog[i].nv > 0)
            rp = &ref->prog[i];
    const struct dt_program *match = NULL;
    for (int i = 0; i < s->nprog; i++) {
        const struct dt_program *p = &s->prog[i];
        if (!rp || p->nv != rp->nv || p->na != rp->na)
            continue;
        if (match && !same_av_pids(match, p))
            return 2;
        if (!match)
            match = p;
    }
    if (!match)
        return 1;
    /* the program a player plays: the first of the PAT (in its own order,
     * which ffprobe's listing does not keep) with audio or video; hls.js
     * reads the PAT's first program only */
    const struct dt_program *played = NULL;
    for (int k = 0; k < s->npat && !played; k++)
        for (int i = 0; i < s->nprog && !played; i++)
            if (s->prog[i].id == s->pat_order[k] && s->prog[i].nv + s->prog[i].na > 0)
                played = &s->prog[i];
    if (played != match && !s->mp4) /* fMP4: no PAT, one program of its tracks */
        return 3;
    take_program(s, match);
    return 0;
}

int dt_side_probe_packets(struct dt_env *env, struct dt_side *s)
{
    char out[DT_PATH_MAX];
    if (!dt_fmt(out, sizeof out, "%s/packets.txt", s->dir))
        return -1;
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffprobe", "-v", "error", "-show_entries",
                 "packet=stream_index,pts,dts,flags", "-of", "compact", NULL);
    dt_argv_add(&a, "%s", s->ts);
    int rc = dt_run(env, &a, out, NULL);
    dt_argv_free(&a);
    char *text = rc < 0 ? NULL : dt_read_file(out, LOG_MAX, NULL);
    if (text == NULL)
        return -1;
    size_t vcap = 0, acap = 0;
    s->nvpk = s->napk = 0;
    bool ok = true;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && ok;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "packet|", 7) != 0)
            continue;
        int idx = (int)kv_i64(line, "stream_index", -2);
        char flags[16] = "";
        kv(line, "flags", flags, sizeof flags);
        bool video = idx == s->vindex;
        int64_t num = video ? s->vtb_num : s->atb_num, den = video ? s->vtb_den : s->atb_den;
        struct dt_pkt pk = {.key = flags[0] == 'K'};
        int dsub = 0;
        pk.pts = to_ticks(kv_i64(line, "pts", DT_NOPTS), num, den, &pk.sub);
        pk.dts = to_ticks(kv_i64(line, "dts", DT_NOPTS), num, den, &dsub);
        if (idx == s->vindex && (ok = grow((void **)&s->vpk, &vcap, s->nvpk, sizeof pk)))
            s->vpk[s->nvpk++] = pk;
        else if (idx == s->aindex && (ok = grow((void **)&s->apk, &acap, s->napk, sizeof pk)))
            s->apk[s->napk++] = pk;
    }
    free(text);
    return ok ? 0 : -1;
}

int dt_side_trim(struct dt_env *env, struct dt_side *s, size_t vskip, size_t askip)
{
    char out[DT_PATH_MAX], log[DT_PATH_MAX];
    if (s->mp4) {
        /* a remux would round the track's timescale (to ticks, or by the mp4
         * muxer's own shift): decoded from its own start instead, so its
         * AAC history differs from the reference's (dt_oracle.c: UNKNOWN is
         * then accepted too, rule 16) */
        dt_note(env, "%s: fMP4, its first %zu video and %zu audio packets come before the "
                     "reference's first ones; not removed", s->label, vskip, askip);
        s->untrimmed = true;
        return 0;
    }
    if (!dt_fmt(out, sizeof out, "%s/trimmed.ts", s->dir) ||
        !dt_fmt(log, sizeof log, "%s/trim.log", s->dir))
        return -1;
    dt_note(env, "%s: its first %zu video and %zu audio packets come before the reference's "
                 "first ones and are removed before decoding", s->label, vskip, askip);
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffmpeg", "-y", "-nostdin", "-hide_banner", "-nostats", "-loglevel",
                 "warning", "-copyts", "-i", NULL);
    dt_argv_add(&a, "%s", s->ts);
    add_track_maps(&a, s, true, true);
    dt_argv_addl(&a, "-c", "copy", "-copyinkf", NULL);
    if (vskip && s->vindex >= 0) {
        dt_argv_addl(&a, "-bsf:v", NULL);
        dt_argv_add(&a, "noise=drop=lt(n\\,%zu)", vskip);
    }
    if (askip && s->aindex >= 0) {
        dt_argv_addl(&a, "-bsf:a", NULL);
        dt_argv_add(&a, "noise=drop=lt(n\\,%zu)", askip);
    }
    dt_argv_addl(&a, "-fflags", "+bitexact", "-muxdelay", "0", "-muxpreload", "0",
                 "-mpegts_copyts", "1", "-avoid_negative_ts", "disabled", "-f", "mpegts", NULL);
    dt_argv_add(&a, "%s", out);
    int rc = dt_run(env, &a, NULL, log);
    dt_argv_free(&a);
    if (rc != 0)
        return -1;
    char *text = dt_read_file(log, LOG_MAX, NULL);
    if (text && strstr(text, "corrupt input packet")) {
        /* the kept packets were damaged before the cut lost that information */
        s->transport_damage = true;
        damage_at(s, -1);
        dt_fmt(s->transport_why, sizeof s->transport_why, "corrupt packets while trimming");
    }
    free(text);
    struct dt_pkt v0 = s->nvpk > vskip ? s->vpk[vskip] : (struct dt_pkt){DT_NOPTS, DT_NOPTS, 0, false};
    struct dt_pkt a0 = s->napk > askip ? s->apk[askip] : (struct dt_pkt){DT_NOPTS, DT_NOPTS, 0, false};
    if (!dt_fmt(s->ts, sizeof s->ts, "%s", out) || dt_side_probe_programs(env, s) != 0 ||
        dt_side_select(s, NULL) != 0)
        return -1;
    free(s->vpk);
    free(s->apk);
    s->vpk = s->apk = NULL;
    if (dt_side_probe_packets(env, s) != 0)
        return -1;
    bool v_ok = s->vindex < 0 || (s->nvpk && s->vpk[0].pts == v0.pts);
    bool a_ok = s->aindex < 0 || (s->napk && s->apk[0].pts == a0.pts);
    if (!v_ok || !a_ok) {
        s->inconsistent = true;
        dt_fmt(s->inconsistent_why, sizeof s->inconsistent_why,
               "trimming did not start at the intended packets");
    }
    return 0;
}

/* ---- decoding ------------------------------------------------------------------- */

struct parse_state {
    size_t vcap, acap;
    bool v_event, a_event;      /* a damage event was logged for the stream */
    bool v_refused;             /* tail_refusal: "no frame!" just seen */
    char vcodec[32], acodec[32];
};

static void parse_video_frame(struct dt_side *s, struct parse_state *ps, const char *line)
{
    if (!grow((void **)&s->vf, &ps->vcap, s->nvf, sizeof *s->vf))
        return;
    struct dt_vframe *f = &s->vf[s->nvf++];
    memset(f, 0, sizeof *f);
    char pts[32] = "", fmt[32] = "", sar[32] = "", size[32] = "", il[8] = "";
    tok(line, " pts:", pts, sizeof pts);
    tok(line, " fmt:", fmt, sizeof fmt);
    tok(line, " sar:", sar, sizeof sar);
    tok(line, " s:", size, sizeof size);
    tok(line, " i:", il, sizeof il);
    int sub = 0;
    /* showinfo prints the time in the stream's time base (the filter graph's
     * input is the demuxer's stream): ticks, or an fMP4 timescale converted */
    f->pts = pts[0] == '\0' || strcmp(pts, "NOPTS") == 0
                 ? DT_NOPTS
                 : to_ticks(strtoll(pts, NULL, 10), s->vtb_num, s->vtb_den, &sub);
    dt_fmt(f->params, sizeof f->params, "fmt=%s sar=%s size=%s fields=%s chroma=%s", fmt, sar,
           size, il, s->vchroma);
    f->clean = !ps->v_event;
}

static void parse_color_line(struct dt_side *s, const char *line)
{
    if (s->nvf == 0)
        return;
    struct dt_vframe *f = &s->vf[s->nvf - 1];
    const char *c = strstr(line, "color_range:");
    size_t used = strlen(f->params);
    if (!c || used + 2 >= sizeof f->params)
        return;
    /* by meaning (H.264 E.2.1): an absent video_full_range_flag is inferred
     * 0, so "unknown" (nothing written) is the limited range "tv" */
    static const char unknown[] = "color_range:unknown";
    int n = (int)strcspn(c, "\n");
    if (strncmp(c, unknown, sizeof unknown - 1) == 0)
        snprintf(f->params + used, sizeof f->params - used, " color_range:tv%.*s",
                 n - (int)(sizeof unknown - 1), c + sizeof unknown - 1);
    else
        snprintf(f->params + used, sizeof f->params - used, " %.*s", n, c);
}

/* Side data that changes what a player shows (issue 18, class 10): the
 * rotation of a display matrix, stereo 3D packing; a rotation of 0 and a
 * plain 2D view say what nothing says. */
static void parse_view_line(struct dt_side *s, const char *line)
{
    if (s->nvf == 0)
        return;
    struct dt_vframe *f = &s->vf[s->nvf - 1];
    const char *c = strstr(line, "side data - ");
    int n = (int)strcspn(c, "\n");
    if (strstr(c, "rotation of 0.00 degrees") || strstr(c, "rotation of -0.00 degrees") ||
        strstr(c, "type - 2D"))
        return;
    size_t used = strlen(f->params);
    if (used + 2 < sizeof f->params)
        snprintf(f->params + used, sizeof f->params - used, " [%.*s]", n, c);
}

static void parse_audio_frame(struct dt_side *s, struct parse_state *ps, const char *line)
{
    if (!grow((void **)&s->af, &ps->acap, s->naf, sizeof *s->af))
        return;
    struct dt_aframe *f = &s->af[s->naf++];
    memset(f, 0, sizeof *f);
    char v[32];
    f->pts = DT_NOPTS;
    f->spts = tok(line, " pts:", v, sizeof v) && strcmp(v, "NOPTS") ? strtoll(v, NULL, 10) : DT_NOPTS;
    f->channels = tok(line, " channels:", v, sizeof v) ? atoi(v) : 0;
    f->rate = tok(line, " rate:", v, sizeof v) ? atoi(v) : 0;
    f->nb = tok(line, " nb_samples:", v, sizeof v) ? atoi(v) : 0;
    tok(line, " fmt:", f->fmt, sizeof f->fmt);
    f->clean = !ps->a_event;
}

/* Mark a damage event on input stream idx (a CLI message names it). */
static void stream_event(const struct dt_side *s, struct parse_state *ps, int idx)
{
    if (idx == s->vindex)
        ps->v_event = true;
    else if (idx == s->aindex)
        ps->a_event = true;
}

/* A side with NAL units after the slices of its last picture (issue 18,
 * class 12): FFmpeg's parser gives them a unit of their own at the end, its
 * decoder refuses that unit ("no frame!", and the CLI's "Error while
 * decoding" for it right after), and the null muxer complains about the
 * packet times the parser shifted (lost_video_times).  None of that is a
 * picture lost or damaged; anything else in the log still is. */
static bool tail_refusal(const char *line, struct parse_state *ps)
{
    if (strstr(line, "] [error] no frame!") || strstr(line, "] no frame!")) {
        ps->v_refused = true;
        return true;
    }
    if (ps->v_refused && strstr(line, "Error while decoding stream #")) {
        ps->v_refused = false;
        return true;
    }
    return strstr(line, "missing picture in access unit") ||
           strstr(line, "non monotonically increasing dts to muxer");
}

/* -xerror failed only on what tail_refusal excuses. */
static bool xerror_only_tail(struct dt_side *s)
{
    char path[DT_PATH_MAX];
    if (!s->v_retime || !dt_fmt(path, sizeof path, "%s/xerror.log", s->dir))
        return false;
    char *text = dt_read_file(path, LOG_MAX, NULL);
    struct parse_state ps = {0};
    bool only = text != NULL;
    for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line && only;
         line = strtok_r(NULL, "\n", &save))
        only = tail_refusal(line, &ps) || strstr(line, "Conversion failed!");
    free(text);
    return only;
}

/* fMP4: FFmpeg's mov demuxer clamps and skips damaged boxes and says so in
 * a warning or an error ("trun ... overrun", "stream N, offset ...: partial
 * file", a box it cannot read): damage it does not place in a frame, like
 * what the transport scan finds in a TS (rule 16). */
static void container_line(struct dt_side *s, const char *line)
{
    static const char mov[] = "[mov,mp4,m4a,3gp,3g2,mj2 @";
    if (!s->mp4 || strncmp(line, mov, sizeof mov - 1) != 0 ||
        !(strstr(line, "] [warning]") || strstr(line, "] [error]") || strstr(line, "] [fatal]")))
        return;
    if (!s->transport_damage)
        dt_fmt(s->transport_why, sizeof s->transport_why, "the mov demuxer: %.*s",
               (int)strcspn(line + sizeof mov, "\n"), line + sizeof mov);
    s->transport_damage = true;
    damage_at(s, -1);
}

static void parse_line(struct dt_side *s, struct parse_state *ps, const char *line)
{
    const char *m;
    int idx = -1;
    container_line(s, line);
    if (strstr(line, "Parsed_showinfo_")) {
        if (strstr(line, " n:") && strstr(line, " pts:"))
            parse_video_frame(s, ps, line);
        else if (strstr(line, "color_range:"))
            parse_color_line(s, line);
        else if (strstr(line, "side data - displaymatrix:") || strstr(line, "side data - stereoscopic"))
            parse_view_line(s, line);
    } else if (strstr(line, "Parsed_ashowinfo_")) {
        if (strstr(line, " n:") && strstr(line, " nb_samples:"))
            parse_audio_frame(s, ps, line);
    } else if ((m = strstr(line, "corrupt decoded frame in stream ")) != NULL) {
        stream_event(s, ps, atoi(m + 32));
    } else if ((m = strstr(line, "corrupt input packet in stream ")) != NULL) {
        stream_event(s, ps, atoi(m + 31));
    } else if (s->v_retime && tail_refusal(line, ps)) {
        /* not damage: the unit of NAL units after the last picture's slices */
    } else if ((m = strstr(line, "Error while decoding stream #")) != NULL &&
               sscanf(m, "Error while decoding stream #%*d:%d", &idx) == 1) {
        stream_event(s, ps, idx);
    } else if (strstr(line, "] [info] concealing ")) {
        /* the decoder concealed damage; it says so only at info level */
        char ctx[40];
        if (snprintf(ctx, sizeof ctx, "[%s @", ps->vcodec) < (int)sizeof ctx &&
            strncmp(line, ctx, strlen(ctx)) == 0)
            ps->v_event = true;
    } else if (strstr(line, "] [error]") || strstr(line, "] [fatal]")) {
        /* a decoder's own error.  Before its first output frame a decoder that
         * starts mid-GOP logs errors for frames it then drops: start-up noise,
         * not damage (`-xerror` passes on it); afterwards it counts. */
        char ctx[40];
        if (snprintf(ctx, sizeof ctx, "[%s @", ps->vcodec) < (int)sizeof ctx &&
            strncmp(line, ctx, strlen(ctx)) == 0 && s->nvf > 0)
            ps->v_event = true;
        if (snprintf(ctx, sizeof ctx, "[%s @", ps->acodec) < (int)sizeof ctx &&
            strncmp(line, ctx, strlen(ctx)) == 0)
            ps->a_event = true;
    }
}

static const char *codec_of(const struct dt_side *s, int index)
{
    for (int p = 0; p < s->nprog; p++)
        for (int i = 0; i < s->prog[p].ns; i++)
            if (s->prog[p].s[i].index == index)
                return s->prog[p].s[i].codec;
    return "";
}

static int run_decodes(struct dt_env *env, struct dt_side *s, int *xerror_rc)
{
    char vmd5[DT_PATH_MAX], araw[DT_PATH_MAX], log[DT_PATH_MAX], xlog[DT_PATH_MAX];
    if (!dt_fmt(vmd5, sizeof vmd5, "%s/video.framemd5", s->dir) ||
        !dt_fmt(araw, sizeof araw, "%s/audio.f32le", s->dir) ||
        !dt_fmt(log, sizeof log, "%s/decode.log", s->dir) ||
        !dt_fmt(xlog, sizeof xlog, "%s/xerror.log", s->dir))
        return -1;
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffmpeg", "-y", "-nostdin", "-hide_banner", "-nostats", "-loglevel",
                 "level+info", "-threads", "1", "-flags", "+bitexact", "-copyts", "-i", NULL);
    dt_argv_add(&a, "%s", s->ts);
    if (s->vindex >= 0) {
        add_track_maps(&a, s, true, false);
        dt_argv_addl(&a, "-vf", "showinfo", "-fps_mode", "passthrough", "-c:v", "rawvideo",
                     "-f", "framemd5", vmd5, NULL);
    }
    if (s->aindex >= 0) {
        add_track_maps(&a, s, false, true);
        dt_argv_addl(&a, "-af", "ashowinfo", "-c:a", "pcm_f32le", "-f", "f32le", araw, NULL);
    }
    int rc = dt_run(env, &a, NULL, log);
    dt_argv_free(&a);
    if (rc < 0 || rc >= 128)
        return -1;
    dt_argv_init(&a);
    dt_argv_addl(&a, "ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", "error",
                 "-threads", "1", "-flags", "+bitexact", "-xerror", "-copyts", "-i", NULL);
    dt_argv_add(&a, "%s", s->ts);
    add_track_maps(&a, s, true, true);
    dt_argv_addl(&a, "-f", "null", "-", NULL);
    *xerror_rc = dt_run(env, &a, NULL, xlog);
    dt_argv_free(&a);
    return *xerror_rc < 0 || *xerror_rc >= 128 ? -1 : 0;
}

static void inconsistent(struct dt_side *s, const char *why)
{
    if (!s->inconsistent)
        dt_fmt(s->inconsistent_why, sizeof s->inconsistent_why, "%s", why);
    s->inconsistent = true;
}

/* The MD5 of every frame, in output order, from the framemd5 file. */
static void attach_md5(struct dt_side *s)
{
    char path[DT_PATH_MAX];
    if (s->vindex < 0 || !dt_fmt(path, sizeof path, "%s/video.framemd5", s->dir))
        return;
    char *text = dt_read_file(path, LOG_MAX, NULL);
    size_t k = 0;
    for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        const char *h = strrchr(line, ',');
        if (h && k < s->nvf)
            dt_fmt(s->vf[k].md5, sizeof s->vf[k].md5, "%s", h + 1 + strspn(h + 1, " "));
        k++;
    }
    free(text);
    if (k != s->nvf)
        inconsistent(s, "framemd5 and showinfo count different frames");
}

/* ADTS frames of several raw data blocks (issue 18, class 9): FFmpeg 5.1
 * decodes each block to a frame of its own, but its parser says 1024
 * samples per ADTS frame, so its packet and frame times after the first
 * frame of a PES are wrong.  Each frame follows the samples decoded before
 * it, from the first packet's time on, and takes the time a PES header
 * declares where one is within two ticks (the PES's first frame). */
static void place_blocks(struct dt_side *s)
{
    int64_t t = dt_mod33(s->apk[0].pts);
    for (size_t i = 0; i < s->naf; i++) {
        struct dt_aframe *f = &s->af[i];
        for (size_t k = 0; k < s->nadeclared; k++) {
            int64_t d = dt_mod33(s->adeclared[k] - t);
            if (d <= 2 || d >= ((int64_t)1 << 33) - 2)
                t = s->adeclared[k];
        }
        f->pts = t;
        t = f->rate > 0 ? dt_mod33(t + (int64_t)f->nb * 90000 / f->rate) : t;
    }
}

/* Audio: samples from the f32le file; each frame's time from its packet. */
static void attach_audio(struct dt_side *s)
{
    char path[DT_PATH_MAX];
    if (s->aindex < 0 || !dt_fmt(path, sizeof path, "%s/audio.f32le", s->dir))
        return;
    size_t len = 0;
    char *raw = dt_read_file(path, PCM_MAX, &len);
    s->pcm = (float *)(void *)raw;
    s->npcm = raw ? len / sizeof(float) : 0;
    int out_ch = s->naf ? s->af[0].channels : 2; /* the encoder keeps the first layout */
    size_t off = 0;
    for (size_t i = 0; i < s->naf; i++) {
        s->af[i].off = off;
        off += (size_t)s->af[i].nb * (size_t)out_ch;
    }
    if (off != s->npcm)
        inconsistent(s, "the f32le output does not hold the samples ashowinfo counted");
    if (s->naf == s->napk) {
        for (size_t i = 0; i < s->naf; i++) {
            s->af[i].pts = s->apk[i].pts;
            s->af[i].sub = s->apk[i].sub;
        }
        return;
    }
    if (s->a_multiblock && s->napk > 0 && s->apk[0].pts != DT_NOPTS) {
        place_blocks(s);
        return;
    }
    /* fewer frames than packets: some did not decode.  Place each frame by the
     * packet it came from: ashowinfo's time is in samples, the packet's in
     * ticks (both unwrapped by libavformat); a frame no packet explains stays
     * unplaced (pts -1) and unclean. */
    size_t j = 0;
    for (size_t i = 0; i < s->naf; i++) {
        struct dt_aframe *f = &s->af[i];
        if (f->spts == DT_NOPTS || f->rate <= 0) {
            f->clean = false;
            continue;
        }
        double ticks = (double)f->spts * 90000.0 / f->rate;
        size_t k = j;
        while (k < s->napk && (double)s->apk[k].pts < ticks - 2.0)
            k++;
        if (k < s->napk && (double)s->apk[k].pts <= ticks + 2.0) {
            f->pts = s->apk[k].pts;
            f->sub = s->apk[k].sub;
            j = k + 1;
        } else {
            f->clean = false;
        }
    }
}

int dt_side_decode(struct dt_env *env, struct dt_side *s)
{
    int xrc = 0;
    if (run_decodes(env, s, &xrc) != 0)
        return -1;
    s->xerror_failed = xrc != 0 && !xerror_only_tail(s);
    char log[DT_PATH_MAX];
    if (!dt_fmt(log, sizeof log, "%s/decode.log", s->dir))
        return -1;
    char *text = dt_read_file(log, LOG_MAX, NULL);
    if (text == NULL)
        return -1;
    struct parse_state ps = {0};
    dt_fmt(ps.vcodec, sizeof ps.vcodec, "%s", codec_of(s, s->vindex));
    dt_fmt(ps.acodec, sizeof ps.acodec, "%s", codec_of(s, s->aindex));
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        parse_line(s, &ps, line);
    free(text);
    attach_md5(s);
    attach_audio(s);
    retime_video(s);
    if (!s->xerror_failed) {
        /* -xerror decides whether there is damage at all; without it, log
         * events (such as start-up noise after the first frame) do not make a
         * frame unclean, but they are damage FFmpeg's exit status does not
         * show: a broken NAL unit the decoder skipped (dt_oracle.c) */
        s->silent_errors = ps.v_event || ps.a_event;
        for (size_t i = 0; i < s->nvf; i++)
            s->vf[i].clean = true;
        for (size_t i = 0; i < s->naf; i++)
            s->af[i].clean = true;
    } else if (ps.v_event || ps.a_event) {
        s->v_damaged = ps.v_event;
        s->a_damaged = ps.a_event;
    } else {
        s->v_damaged = s->a_damaged = true;
        /* -xerror failed on something the log does not place: nothing is clean */
        for (size_t i = 0; i < s->nvf; i++)
            s->vf[i].clean = false;
        for (size_t i = 0; i < s->naf; i++)
            s->af[i].clean = false;
    }
    return 0;
}

void dt_side_free(struct dt_side *s)
{
    free(s->vpk);
    free(s->apk);
    free(s->vf);
    free(s->af);
    free(s->pcm);
    free(s->vdeclared);
    free(s->adeclared);
    s->vdeclared = s->adeclared = NULL;
    s->nadeclared = s->adeclared_cap = 0;
    s->nvdeclared = s->vdeclared_cap = 0;
    s->vpk = s->apk = NULL;
    s->vf = NULL;
    s->af = NULL;
    s->pcm = NULL;
}
