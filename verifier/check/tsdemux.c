/* tsdemux.c - PSI, program selection and PES reassembly (see tsdemux.h).
 *
 * Hand-written because libavformat's demuxer cannot be told that a
 * segment join restarts continuity counters (it flags the open PES
 * corrupt), picks tracks before later PMTs arrive, and names a codec only
 * after probing.  Everything here is bounded and fuzzed (fuzz_tsdemux).
 */
#include "tsdemux.h"

#include <stdlib.h>
#include <string.h>

#include <libavutil/crc.h>

struct held_packet {
    uint8_t pkt[TS_PACKET_SIZE];
    uint8_t flags;
    bool done;
};

int tsdemux_init(struct tsdemux *d, const struct tsd_select *sel, tsd_pes_fn fn, void *opaque)
{
    memset(d, 0, sizeof *d);
    d->sel = *sel;
    d->fn = fn;
    d->opaque = opaque;
    d->selected = -1;
    d->played = -1;
    d->pat_version = -1;
    for (int t = 0; t < TSD_TRACKS; t++)
        d->pes[t].pid = -1;
    return 0;
}

void tsdemux_free(struct tsdemux *d)
{
    for (int t = 0; t < TSD_TRACKS; t++)
        free(d->pes[t].buf);
    free(d->held);
    memset(d, 0, sizeof *d);
}

size_t tsdemux_decisive_pids(const struct tsdemux *d, int pids[TSD_MAX_DECISIVE])
{
    size_t n = 0;
    pids[n++] = 0;
    for (int i = 0; i < d->nprograms; i++)
        pids[n++] = d->programs[i].pmt_pid;
    for (int t = 0; t < TSD_TRACKS; t++)
        if (d->pes[t].pid >= 0)
            pids[n++] = d->pes[t].pid;
    return n;
}

const struct tsd_program *tsdemux_program(const struct tsdemux *d)
{
    return d->selected >= 0 ? &d->programs[d->selected] : NULL;
}

const char *tsd_selection_code(enum tsd_selection s)
{
    switch (s) {
    case TSD_SEL_OK: return "ok";
    case TSD_SEL_TRACK_SET: return "track_set";
    case TSD_SEL_AMBIGUOUS: return "ambiguous_program";
    case TSD_SEL_NOT_FOUND: return "program_not_found";
    case TSD_SEL_NOT_PLAYED: return "program_not_played";
    case TSD_SEL_NONE: break;
    }
    return "no_program";
}

const char *tsd_kind_name(enum tsd_kind k)
{
    switch (k) {
    case TSD_KIND_VIDEO: return "video";
    case TSD_KIND_AUDIO: return "audio";
    case TSD_KIND_METADATA: return "metadata";
    case TSD_KIND_OTHER: break;
    }
    return "other";
}

/* ---- stream types ---- */

static enum tsd_kind classify_private(const uint8_t *desc, size_t len, const char **codec)
{
    static const struct { const char *reg; enum tsd_kind kind; const char *codec; } regs[] = {
        {"AC-3", TSD_KIND_AUDIO, "ac3"}, {"EAC3", TSD_KIND_AUDIO, "eac3"}, {"DTS1", TSD_KIND_AUDIO, "dts"},
        {"DTS2", TSD_KIND_AUDIO, "dts"}, {"DTS3", TSD_KIND_AUDIO, "dts"}, {"Opus", TSD_KIND_AUDIO, "opus"},
        {"BSSD", TSD_KIND_AUDIO, "s302m"}, {"ID3 ", TSD_KIND_METADATA, "id3"}, {"KLVA", TSD_KIND_METADATA, "klv"},
    };
    for (size_t i = 0; i + 2 <= len && i + 2 + desc[i + 1] <= len; i += 2 + desc[i + 1]) {
        int tag = desc[i], dlen = desc[i + 1];
        const uint8_t *p = desc + i + 2;
        switch (tag) {
        case 0x6A: *codec = "ac3"; return TSD_KIND_AUDIO;
        case 0x7A: *codec = "eac3"; return TSD_KIND_AUDIO;
        case 0x7B: *codec = "dts"; return TSD_KIND_AUDIO;
        case 0x7C: *codec = "aac"; return TSD_KIND_AUDIO;
        case 0x56: case 0x59: *codec = "subtitles"; return TSD_KIND_METADATA;
        case 0x05:
            for (size_t r = 0; dlen >= 4 && r < sizeof regs / sizeof regs[0]; r++)
                if (!memcmp(p, regs[r].reg, 4)) {
                    *codec = regs[r].codec;
                    return regs[r].kind;
                }
            break;
        }
    }
    *codec = "private";
    return TSD_KIND_METADATA;
}

enum tsd_kind tsd_classify(int stream_type, const uint8_t *desc, size_t desc_len, const char **codec)
{
    static const struct { int type; enum tsd_kind kind; const char *codec; } table[] = {
        {0x01, TSD_KIND_VIDEO, "mpeg1video"}, {0x02, TSD_KIND_VIDEO, "mpeg2video"},
        {0x10, TSD_KIND_VIDEO, "mpeg4"}, {0x1B, TSD_KIND_VIDEO, "h264"}, {0x20, TSD_KIND_VIDEO, "h264_mvc"},
        {0x24, TSD_KIND_VIDEO, "hevc"}, {0x33, TSD_KIND_VIDEO, "vvc"}, {0x42, TSD_KIND_VIDEO, "cavs"},
        {0xD1, TSD_KIND_VIDEO, "dirac"}, {0xEA, TSD_KIND_VIDEO, "vc1"},
        {0x03, TSD_KIND_AUDIO, "mp2"}, {0x04, TSD_KIND_AUDIO, "mp3"}, {0x0F, TSD_KIND_AUDIO, "aac"},
        {0x11, TSD_KIND_AUDIO, "aac_latm"}, {0x1C, TSD_KIND_AUDIO, "aac_raw"}, {0x81, TSD_KIND_AUDIO, "ac3"},
        {0x82, TSD_KIND_AUDIO, "dts"}, {0x83, TSD_KIND_AUDIO, "truehd"}, {0x84, TSD_KIND_AUDIO, "eac3"},
        {0x85, TSD_KIND_AUDIO, "dts"}, {0x87, TSD_KIND_AUDIO, "eac3"}, {0x8A, TSD_KIND_AUDIO, "dts"},
        {0x05, TSD_KIND_METADATA, "private_sections"}, {0x0B, TSD_KIND_METADATA, "dsmcc"},
        {0x0C, TSD_KIND_METADATA, "dsmcc"}, {0x0D, TSD_KIND_METADATA, "dsmcc"},
        {0x86, TSD_KIND_METADATA, "scte35"},
    };
    if (stream_type == 0x06)
        return classify_private(desc, desc_len, codec);
    if (stream_type == 0x15) {   /* metadata in PES: ID3 unless registered otherwise */
        const char *c = "id3";
        enum tsd_kind k = classify_private(desc, desc_len, &c);
        *codec = k == TSD_KIND_METADATA && strcmp(c, "private") ? c : "id3";
        return TSD_KIND_METADATA;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].type == stream_type) {
            *codec = table[i].codec;
            return table[i].kind;
        }
    *codec = "unknown";
    return TSD_KIND_OTHER;
}

/* ---- PES ---- */

/* A PTS or DTS field is sound (ISO/IEC 13818-1, 2.4.3.7): its 4-bit prefix
 * is '0010' for a PTS alone, '0011' for a PTS followed by a DTS and '0001'
 * for that DTS, and its three marker bits are set.  Anything else is a
 * damaged header (a bit flipped on the way): no time is read from it. */
static bool ts_field_sound(const uint8_t *p, unsigned prefix)
{
    return (p[0] >> 4) == prefix && (p[0] & 1) && (p[2] & 1) && (p[4] & 1);
}

static int64_t read_ts(const uint8_t *p)
{
    return (int64_t)(p[0] >> 1 & 7) << 30 | (int64_t)p[1] << 22 | (int64_t)(p[2] >> 1) << 15 |
           (int64_t)p[3] << 7 | (p[4] >> 1);
}

static bool all_ff(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xFF)
            return false;
    return true;
}

/* Parses the PES header of b and hands the packet on. */
static void emit_pes(struct tsdemux *d, enum tsd_track t)
{
    struct tsd_pesbuf *b = &d->pes[t];
    struct tsd_pes out = {.track = t, .stream_type = b->stream_type, .codec = b->codec, .pts = TSD_NO_TS, .dts = TSD_NO_TS,
                          .damaged = b->damaged};
    b->active = false;
    const uint8_t *p = b->buf;
    size_t len = b->len;
    if (b->declared && len > b->declared) {
        /* bytes past PES_packet_length up to the next PES of the PID belong
         * to no PES: damage, never cut unseen (FFmpeg decodes them as a
         * packet of their own).  The one exception FFmpeg makes too: a PES
         * within one TS packet padded with 0xFF (ffmpeg ticket 2392). */
        out.damaged |= !(b->packets == 1 && all_ff(p + b->declared, len - b->declared));
        len = b->declared;
    }
    if (b->declared && len < b->declared)
        out.damaged = true;      /* cut short */
    if (len < 6 || p[0] || p[1] || p[2] != 1) {
        out.damaged = true;
        out.payload = p, out.len = 0;
    } else {
        int sid = p[3];
        bool plain = sid == 0xBC || sid == 0xBE || sid == 0xBF || sid == 0xF0 || sid == 0xF1 ||
                     sid == 0xF2 || sid == 0xF8 || sid == 0xFF;
        size_t hdr = 6;
        if (!plain) {
            if (len < 9 || (p[6] & 0xC0) != 0x80 || 9 + (size_t)p[8] > len) {
                out.damaged = true;
                hdr = len;
            } else {
                int flags = p[7] >> 6;
                hdr = 9 + p[8];
                /* an unsound field gives no time at all: a damaged unit
                 * must not be placed (e.g. before the interval) by it */
                bool pts_ok = (flags & 2) && p[8] >= 5 && ts_field_sound(p + 9, flags == 3 ? 3u : 2u);
                bool dts_ok = flags == 3 && p[8] >= 10 && ts_field_sound(p + 14, 1u);
                if (pts_ok)
                    out.pts = read_ts(p + 9);
                if (dts_ok)
                    out.dts = read_ts(p + 14);
                out.damaged |= ((flags & 2) && p[8] >= 5 && !pts_ok) || (flags == 3 && p[8] >= 10 && !dts_ok);
            }
        }
        out.payload = p + hdr;
        out.len = len - hdr;
    }
    d->pes_count[t]++;
    b->len = 0;
    b->damaged = false;
    if (d->fn)
        d->fn(d->opaque, &out);
}

/* A PES with a declared length that has all of it: what it lacks can only be
 * bytes that no PES may hold. */
static bool pes_full(const struct tsd_pesbuf *b)
{
    return b->declared && b->len >= b->declared;
}

static void pes_append(struct tsd_pesbuf *b, const uint8_t *p, size_t n)
{
    if (b->len + n > TSD_MAX_PES) {
        b->damaged = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *nb = realloc(b->buf, cap);
        if (!nb) {
            b->damaged = true;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

static void pes_packet(struct tsdemux *d, enum tsd_track t, const uint8_t *pkt, const struct ts_header *h,
                       unsigned flags)
{
    struct tsd_pesbuf *b = &d->pes[t];
    if (flags & TSPKT_DUP)
        return;
    /* transport_scrambling_control is not trusted either way: a payload
     * that really is scrambled fails to decode, or decodes to other content */
    bool bad = flags & TSPKT_TEI;
    if (flags & TSPKT_GAP) {
        /* packets were lost: the tail of this PES, or whole PES between it
         * and the next; whatever is read next follows a hole */
        if (b->active && pes_full(b) && !h->pusi)
            emit_pes(d, t);      /* it was whole; this packet continues a PES whose start was lost */
        b->damaged |= b->active && !pes_full(b);
        b->after_gap = true;
    }
    if (h->pusi) {
        if (b->active)
            emit_pes(d, t);
        b->active = true;
        b->len = 0;
        b->packets = 0;
        b->declared = 0;
        b->damaged = b->after_gap;
        b->after_gap = false;
    } else if (!b->active) {
        return;                  /* the tail of a PES that started before we could see it */
    }
    if (bad)
        b->damaged = true;
    if (h->has_payload) {
        pes_append(b, pkt + h->payload, TS_PACKET_SIZE - h->payload);
        b->packets++;
    }
    if (!b->declared && b->len >= 6) {
        size_t declared = (size_t)b->buf[4] << 8 | b->buf[5];
        b->declared = declared ? declared + 6 : 0;
    }
    /* a PES with a declared length is handed on at the next PES of its PID
     * (or the end), not when it is full: what follows before then is no
     * part of any PES and must be seen (emit_pes) */
}

/* ---- programs and selection ---- */

static struct tsd_program *program_by_number(struct tsdemux *d, int number)
{
    for (int i = 0; i < d->nprograms; i++)
        if (d->programs[i].number == number)
            return &d->programs[i];
    return NULL;
}

static void map_tracks(struct tsdemux *d)
{
    const struct tsd_program *p = tsdemux_program(d);
    int pid[TSD_TRACKS] = {-1, -1}, type[TSD_TRACKS] = {0, 0};
    const char *codec[TSD_TRACKS] = {"none", "none"};
    for (int i = 0; p && i < p->nstreams; i++) {
        enum tsd_track t = p->streams[i].kind == TSD_KIND_VIDEO ? TSD_VIDEO : TSD_AUDIO;
        if ((p->streams[i].kind == TSD_KIND_VIDEO || p->streams[i].kind == TSD_KIND_AUDIO) && pid[t] < 0) {
            pid[t] = p->streams[i].pid;
            type[t] = p->streams[i].stream_type;
            codec[t] = p->streams[i].codec;
        }
    }
    for (int t = 0; t < TSD_TRACKS; t++) {
        struct tsd_pesbuf *b = &d->pes[t];
        if (b->pid != pid[t] && b->active)
            emit_pes(d, t);      /* the track moves: what was open ends here */
        b->pid = pid[t];
        b->stream_type = type[t];
        b->codec = codec[t];
    }
}

static bool set_matches(const struct tsdemux *d, const struct tsd_program *p)
{
    return p->nvideo == d->sel.want_video && p->naudio == d->sel.want_audio;
}

/* The program a player plays: the first in PAT order with audio or video.
 * A program before it whose PMT was never seen may be that one: unknown (-1). */
static int played_program(const struct tsdemux *d)
{
    for (int i = 0; i < d->nprograms; i++) {
        const struct tsd_program *p = &d->programs[i];
        if (!p->have_pmt)
            return -1;
        if (p->nvideo + p->naudio > 0)
            return i;
    }
    return -1;
}

static void select_program(struct tsdemux *d)
{
    int exact = -1, nexact = 0, av = -1, nav = 0;
    d->played = played_program(d);
    for (int i = 0; i < d->nprograms; i++) {
        const struct tsd_program *p = &d->programs[i];
        if (!p->have_pmt)
            continue;
        if (d->sel.program > 0 && p->number == d->sel.program) {
            d->selected = i;
            d->selection = d->sel.reference || set_matches(d, p) ? TSD_SEL_OK : TSD_SEL_TRACK_SET;
            return;
        }
        if (p->nvideo + p->naudio > 0)
            av = i, nav++;
        if (set_matches(d, p))
            exact = i, nexact++;
    }
    if (d->sel.program > 0) {
        d->selection = TSD_SEL_NOT_FOUND;
    } else if (d->sel.reference) {
        d->selection = nav == 1 ? TSD_SEL_OK : nav > 1 ? TSD_SEL_AMBIGUOUS : TSD_SEL_NONE;
        d->selected = nav == 1 ? av : -1;
    } else if (nexact == 1) {
        d->selection = exact == d->played ? TSD_SEL_OK : TSD_SEL_NOT_PLAYED;
        d->selected = exact == d->played ? exact : -1;
    } else if (nexact > 1) {
        d->selection = TSD_SEL_AMBIGUOUS;
    } else {
        bool any_pmt = false;
        for (int i = 0; i < d->nprograms; i++)
            any_pmt |= d->programs[i].have_pmt;
        /* no program carries the wanted set: with one audio/video program
         * that one is what a player plays; with none or several, no track
         * set equal to the wanted one exists in the stream either way */
        d->selection = any_pmt ? TSD_SEL_TRACK_SET : TSD_SEL_NONE;
        d->selected = nav == 1 ? av : -1;
    }
}

static void es_packet(struct tsdemux *d, const uint8_t *pkt, const struct ts_header *h, unsigned flags)
{
    for (int t = 0; t < TSD_TRACKS; t++)
        if (d->pes[t].pid == h->pid)
            pes_packet(d, t, pkt, h, flags);
}

static void decide(struct tsdemux *d)
{
    d->decided = true;
    select_program(d);
    map_tracks(d);
    struct held_packet *held = (struct held_packet *)d->held;
    for (size_t i = 0; i < d->nheld; i++) {
        if (held[i].done)
            continue;
        struct ts_header h;
        ts_header_parse(held[i].pkt, &h);
        es_packet(d, held[i].pkt, &h, held[i].flags);
    }
    free(d->held);
    d->held = NULL;
    d->nheld = 0;
}

static bool all_pmts_seen(const struct tsdemux *d)
{
    if (!d->have_pat || d->nprograms == 0)
        return false;
    for (int i = 0; i < d->nprograms; i++)
        if (!d->programs[i].have_pmt)
            return false;
    return true;
}

/* ---- PSI sections ---- */

static void parse_pmt(struct tsdemux *d, int pid, const uint8_t *s, size_t n)
{
    struct tsd_program *p = program_by_number(d, s[3] << 8 | s[4]);
    if (!p || p->pmt_pid != pid || n < 16)
        return;
    int version = s[5] >> 1 & 31;
    if (p->have_pmt && p->version == version)
        return;
    struct tsd_program np = {.number = p->number, .pmt_pid = pid, .have_pmt = true, .version = version};
    size_t pil = (size_t)(s[10] & 0x0F) << 8 | s[11];
    size_t end = n - 4;          /* CRC */
    for (size_t i = 12 + pil; i + 5 <= end;) {
        size_t esl = (size_t)(s[i + 3] & 0x0F) << 8 | s[i + 4];
        if (i + 5 + esl > end)
            break;
        if (np.nstreams == TSD_MAX_STREAMS) {
            d->too_many = true;
            break;
        }
        struct tsd_stream *st = &np.streams[np.nstreams++];
        st->stream_type = s[i];
        st->pid = (s[i + 1] & 0x1F) << 8 | s[i + 2];
        st->kind = tsd_classify(st->stream_type, s + i + 5, esl, &st->codec);
        np.nvideo += st->kind == TSD_KIND_VIDEO;
        np.naudio += st->kind == TSD_KIND_AUDIO;
        i += 5 + esl;
    }
    bool selected = d->decided && p == tsdemux_program(d);
    int old_v = p->nvideo, old_a = p->naudio;
    *p = np;
    if (selected) {
        if (np.nvideo != old_v || np.naudio != old_a)
            d->track_set_changed = true;
        map_tracks(d);
    }
}

static void consume_held_psi(struct tsdemux *d, int pid);

static void parse_pat(struct tsdemux *d, const uint8_t *s, size_t n)
{
    d->have_pat = true;
    d->pat_version = s[5] >> 1 & 31;
    for (size_t i = 8; i + 4 <= n - 4; i += 4) {
        int number = s[i] << 8 | s[i + 1], pid = (s[i + 2] & 0x1F) << 8 | s[i + 3];
        if (number == 0)
            continue;            /* the network PID */
        struct tsd_program *p = program_by_number(d, number);
        if (!p) {
            if (d->nprograms == TSD_MAX_PROGRAMS) {
                d->too_many = true;
                continue;
            }
            p = &d->programs[d->nprograms++];
            memset(p, 0, sizeof *p);
            p->number = number;
        }
        if (p->pmt_pid != pid || (!p->have_pmt && !p->pmt_pid)) {
            p->pmt_pid = pid;
            p->have_pmt = false;
            consume_held_psi(d, pid);   /* its PMT may have come before the PAT */
        }
    }
}

static void parse_section(struct tsdemux *d, int pid, const uint8_t *s, size_t n)
{
    if (n < 12 || av_crc(av_crc_get_table(AV_CRC_32_IEEE), UINT32_MAX, s, n) != 0 || !(s[5] & 1))
        return;                  /* damaged, or not yet applicable */
    if (pid == 0 && s[0] == 0x00)
        parse_pat(d, s, n);
    else if (s[0] == 0x02)
        parse_pmt(d, pid, s, n);
}

static struct tsd_section *section_of(struct tsdemux *d, int pid)
{
    for (int i = 0; i < d->npsi; i++)
        if (d->psi[i].pid == pid)
            return &d->psi[i];
    if (d->npsi == TSD_MAX_PROGRAMS + 1) {
        d->too_many = true;      /* PMTs moved to other PIDs too often */
        return NULL;
    }
    struct tsd_section *s = &d->psi[d->npsi++];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    return s;
}

/* Parses every whole section in the buffer; keeps an incomplete one. */
static void take_sections(struct tsdemux *d, struct tsd_section *s)
{
    while (s->len >= 3) {
        if (s->buf[0] == 0xFF) {     /* stuffing: nothing more in this packet */
            s->len = 0;
            break;
        }
        size_t need = 3 + ((size_t)(s->buf[1] & 0x0F) << 8 | s->buf[2]);
        if (need > 1024) {
            s->len = 0;
            break;
        }
        if (s->len < need)
            break;               /* continues in the next packet */
        uint8_t sec[1024];
        memcpy(sec, s->buf, need);
        memmove(s->buf, s->buf + need, s->len - need);
        s->len -= need;
        parse_section(d, s->pid, sec, need);
    }
    s->active = s->len > 0;
}

static void psi_packet(struct tsdemux *d, const uint8_t *pkt, const struct ts_header *h, unsigned flags)
{
    struct tsd_section *s = section_of(d, h->pid);
    if (!s || !h->has_payload || (flags & TSPKT_DUP))
        return;
    if (flags & (TSPKT_GAP | TSPKT_TEI))
        s->active = false, s->len = 0;
    const uint8_t *p = pkt + h->payload;
    size_t n = TS_PACKET_SIZE - h->payload;
    if (h->pusi) {
        size_t ptr = p[0];
        if (1 + ptr > n)
            return;
        if (s->active && s->len + ptr <= sizeof s->buf) {
            memcpy(s->buf + s->len, p + 1, ptr);
            s->len += ptr;
            take_sections(d, s);
        }
        s->len = 0;              /* a section still open here was cut */
        memcpy(s->buf, p + 1 + ptr, n - 1 - ptr);
        s->len = n - 1 - ptr;
        take_sections(d, s);
    } else if (s->active && s->len + n <= sizeof s->buf) {
        memcpy(s->buf + s->len, p, n);
        s->len += n;
        take_sections(d, s);
    }
}

static bool is_psi_pid(const struct tsdemux *d, int pid)
{
    if (pid == 0)
        return true;
    for (int i = 0; i < d->nprograms; i++)
        if (d->programs[i].pmt_pid == pid)
            return true;
    return false;
}

/* Held packets of a PID that the PAT now names as a PMT: they are PSI. */
static void consume_held_psi(struct tsdemux *d, int pid)
{
    struct held_packet *held = (struct held_packet *)d->held;
    for (size_t i = 0; i < d->nheld; i++) {
        struct ts_header h;
        ts_header_parse(held[i].pkt, &h);
        if (held[i].done || h.pid != pid)
            continue;
        held[i].done = true;
        psi_packet(d, held[i].pkt, &h, held[i].flags);
    }
}

static bool hold(struct tsdemux *d, const uint8_t *pkt, unsigned flags)
{
    if (!d->held)
        d->held = malloc(TSD_HOLD_PACKETS * sizeof(struct held_packet));
    if (!d->held || d->nheld == TSD_HOLD_PACKETS) {
        d->held_overflow = true;
        return false;
    }
    struct held_packet *hp = &((struct held_packet *)d->held)[d->nheld++];
    memcpy(hp->pkt, pkt, TS_PACKET_SIZE);
    hp->flags = (uint8_t)flags;
    hp->done = false;
    return true;
}

void tsdemux_packet(void *opaque, const uint8_t *pkt, const struct ts_header *h, unsigned flags)
{
    struct tsdemux *d = opaque;
    if (is_psi_pid(d, h->pid)) {
        psi_packet(d, pkt, h, flags);
        if (!d->decided && all_pmts_seen(d))
            decide(d);
        return;
    }
    if (!d->decided) {
        if (hold(d, pkt, flags))
            return;
        decide(d);               /* waited long enough: decide on what was seen */
    }
    es_packet(d, pkt, h, flags);
}

void tsdemux_finish(struct tsdemux *d, bool cut)
{
    if (!d->decided)
        decide(d);
    for (int t = 0; t < TSD_TRACKS; t++) {
        struct tsd_pesbuf *b = &d->pes[t];
        if (b->active) {
            /* a cut stream may have lost the end of an open PES; one that
             * reached its declared length is whole either way */
            b->damaged |= cut && !pes_full(b);
            emit_pes(d, t);
        }
    }
}
