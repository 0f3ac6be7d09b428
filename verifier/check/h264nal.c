/* h264nal.c - NAL headers, recovery point SEI, parameter sets (see h264nal.h). */
#include "h264nal.h"

#include <stdlib.h>
#include <string.h>

/* ---- RBSP bit reader: drops emulation prevention bytes (7.4.1) ---- */

struct rbsp {
    const uint8_t *p;
    size_t len, pos;             /* bytes of the NAL payload */
    int zeros;                   /* consecutive zero bytes read */
    uint8_t cur;
    int bits;                    /* bits left in cur */
    bool error;                  /* read past the end */
};

static void rbsp_init(struct rbsp *r, const uint8_t *p, size_t len)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->len = len;
}

static int rbsp_bit(struct rbsp *r)
{
    if (r->bits == 0) {
        if (r->pos < r->len && r->zeros >= 2 && r->p[r->pos] == 3) {
            r->pos++;            /* emulation_prevention_three_byte */
            r->zeros = 0;
        }
        if (r->pos >= r->len) {
            r->error = true;
            return 0;
        }
        r->cur = r->p[r->pos++];
        r->zeros = r->cur ? 0 : r->zeros + 1;
        r->bits = 8;
    }
    return r->cur >> --r->bits & 1;
}

static uint32_t rbsp_bits(struct rbsp *r, int n)
{
    uint32_t v = 0;
    while (n-- > 0)
        v = v << 1 | (uint32_t)rbsp_bit(r);
    return v;
}

/* ue(v), 9.1; values beyond 2^31 are an error. */
static uint32_t rbsp_ue(struct rbsp *r)
{
    int lz = 0;
    while (!rbsp_bit(r) && !r->error)
        if (++lz > 31) {
            r->error = true;
            return 0;
        }
    return r->error ? 0 : (uint32_t)((1ull << lz) - 1 + rbsp_bits(r, lz));
}

/* ---- NAL units ---- */

static void keep_ps(uint8_t **slot, size_t *slot_len, const uint8_t *nal, size_t len)
{
    if (len > H264_MAX_PS_BYTES)
        return;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    memcpy(copy, nal, len);
    free(*slot);
    *slot = copy;
    *slot_len = len;
}

/* Recovery point SEI (D.1.8) among the messages of one SEI NAL unit. */
static int sei_recovery_cnt(const uint8_t *nal, size_t len)
{
    struct rbsp r;
    rbsp_init(&r, nal + 1, len - 1);
    while (!r.error && r.pos < r.len) {
        uint32_t type = 0, size = 0, b;
        do {
            b = rbsp_bits(&r, 8);
            type += b;
        } while (b == 0xFF && !r.error);
        do {
            b = rbsp_bits(&r, 8);
            size += b;
        } while (b == 0xFF && !r.error);
        if (r.error || type == 0x80)  /* rbsp_trailing_bits read as a type */
            break;
        if (type == 6) {
            uint32_t cnt = rbsp_ue(&r);
            return r.error || cnt > 65535 ? -1 : (int)cnt;
        }
        if (size > r.len)
            break;
        for (uint32_t i = 0; i < size && !r.error; i++)
            rbsp_bits(&r, 8);
    }
    return -1;
}

static void scan_nal(const uint8_t *nal, size_t len, struct h264_au_info *info, struct h264_ps *ps)
{
    if (len < 1 || (nal[0] & 0x80))
        return;                  /* forbidden_zero_bit */
    int type = nal[0] & 0x1F, ref_idc = nal[0] >> 5 & 3;
    struct rbsp r;
    rbsp_init(&r, nal + 1, len - 1);
    switch (type) {
    case 1: case 5:
        if (type == 5)
            info->idr = true;
        if (!info->has_slice) {
            info->has_slice = true;
            info->ref_idc = ref_idc;
            rbsp_ue(&r);        /* first_mb_in_slice */
            uint32_t st = rbsp_ue(&r);
            info->slice_type = r.error || st > 9 ? -1 : (int)(st % 5);
        }
        break;
    case 6:
        if (info->recovery_cnt < 0)
            info->recovery_cnt = sei_recovery_cnt(nal, len);
        break;
    case 7: {
        info->has_sps = true;
        rbsp_bits(&r, 24);      /* profile_idc, constraint flags, level_idc */
        uint32_t id = rbsp_ue(&r);
        if (ps && !r.error && id < H264_MAX_SPS)
            keep_ps(&ps->sps[id], &ps->sps_len[id], nal, len);
        break;
    }
    case 8: {
        info->has_pps = true;
        uint32_t id = rbsp_ue(&r);
        if (ps && !r.error && id < H264_MAX_PPS)
            keep_ps(&ps->pps[id], &ps->pps_len[id], nal, len);
        break;
    }
    }
}

/* Offset of the first byte after the next 00 00 01 at or after i, or len. */
static size_t next_start(const uint8_t *p, size_t len, size_t i)
{
    for (; i + 2 < len; i++) {
        if (p[i + 2] > 1) {
            i += 2;
            continue;
        }
        if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1)
            return i + 3;
    }
    return len;
}

void h264_au_scan(const uint8_t *au, size_t len, struct h264_au_info *info, struct h264_ps *ps)
{
    memset(info, 0, sizeof *info);
    info->ref_idc = info->slice_type = info->recovery_cnt = -1;
    size_t start = next_start(au, len, 0);
    while (start < len) {
        size_t next = next_start(au, len, start);
        size_t end = next < len ? next - 3 : len;
        while (end > start && au[end - 1] == 0)
            end--;              /* trailing_zero_8bits / a 4-byte start code */
        scan_nal(au + start, end - start, info, ps);
        start = next;
    }
}

size_t h264_first_vcl(const uint8_t *au, size_t len)
{
    for (size_t start = next_start(au, len, 0); start < len; start = next_start(au, len, start)) {
        int type = au[start] & 0x1F;
        if (type >= 1 && type <= 5)
            return start - 3;
    }
    return len;
}

bool h264_au_intra(const struct h264_au_info *info)
{
    return info->slice_type == 2 || info->slice_type == 4;
}

size_t h264_ps_size(const struct h264_ps *ps)
{
    size_t n = 0;
    for (int i = 0; i < H264_MAX_SPS; i++)
        n += ps->sps[i] ? 4 + ps->sps_len[i] : 0;
    for (int i = 0; i < H264_MAX_PPS; i++)
        n += ps->pps[i] ? 4 + ps->pps_len[i] : 0;
    return n;
}

static size_t put(uint8_t *out, const uint8_t *nal, size_t len)
{
    static const uint8_t sc[4] = {0, 0, 0, 1};
    memcpy(out, sc, 4);
    memcpy(out + 4, nal, len);
    return 4 + len;
}

size_t h264_ps_write(const struct h264_ps *ps, uint8_t *out)
{
    size_t n = 0;
    for (int i = 0; i < H264_MAX_SPS; i++)
        if (ps->sps[i])
            n += put(out + n, ps->sps[i], ps->sps_len[i]);
    for (int i = 0; i < H264_MAX_PPS; i++)
        if (ps->pps[i])
            n += put(out + n, ps->pps[i], ps->pps_len[i]);
    return n;
}

void h264_ps_free(struct h264_ps *ps)
{
    for (int i = 0; i < H264_MAX_SPS; i++)
        free(ps->sps[i]);
    for (int i = 0; i < H264_MAX_PPS; i++)
        free(ps->pps[i]);
    memset(ps, 0, sizeof *ps);
}
