/* indigest.c - the digest of a side's decoder input (see indigest.h). */
#include "indigest.h"

#include <string.h>

#include "ts33.h"

int indigest_init(struct indigest *d, int64_t offset)
{
    memset(d, 0, sizeof *d);
    d->offset = ts33_norm(offset);
    for (int t = 0; t < TSD_TRACKS; t++) {
        d->md[t] = EVP_MD_CTX_new();
        if (!d->md[t] || !EVP_DigestInit_ex(d->md[t], EVP_sha256(), NULL)) {
            indigest_free(d);
            return -1;
        }
    }
    return 0;
}

/* A 33-bit time of this side on the reference timeline; untimed stays so. */
static int64_t to_ref(const struct indigest *d, int64_t t)
{
    return t == AU_NO_TS ? AU_NO_TS : ts33_sub(t, d->offset);
}

static void put64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* An H.264 access unit as its NAL units, each as a 4-byte length and its
 * bytes without trailing zero bytes: the start code's length (3 or 4
 * bytes, trailing_zero_8bits) is how a muxer or h264_mp4toannexb writes
 * Annex B, not decoder input, so the same units from MPEG-TS and from fMP4
 * give the same digest. */
static bool start_code(const uint8_t *p, size_t n, size_t i)
{
    return i + 3 <= n && p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1;
}

/* With md NULL, only counts the canonical form's bytes into *total. */
static bool digest_nals(EVP_MD_CTX *md, const uint8_t *p, size_t n, size_t *total)
{
    size_t i = 0;
    bool ok = true;
    *total = 0;
    while (i + 3 <= n && !start_code(p, n, i))
        i++;
    bool junk = false;           /* bytes before the first start code other than leading zeros */
    for (size_t k = 0; k < i && !junk; k++)
        junk = p[k] != 0;
    if (i + 3 > n || junk) {     /* not plain Annex B: the bytes as they are */
        *total = n;
        return !md || EVP_DigestUpdate(md, p, n);
    }
    while (ok && i + 3 <= n) {
        size_t start = i + 3, end = start;
        while (end + 3 <= n && !start_code(p, n, end))
            end++;
        size_t next = end + 3 <= n ? end : n;
        size_t last = next;
        while (last > start && p[last - 1] == 0)
            last--;
        uint8_t len[4] = {(uint8_t)((last - start) >> 24), (uint8_t)((last - start) >> 16),
                          (uint8_t)((last - start) >> 8), (uint8_t)(last - start)};
        *total += sizeof len + (last - start);
        ok = !md || (EVP_DigestUpdate(md, len, sizeof len) && EVP_DigestUpdate(md, p + start, last - start));
        i = next;
    }
    return ok;
}

void indigest_add(struct indigest *d, const struct au *au, enum au_codec codec)
{
    if (au->damaged)
        d->damaged = true;
    EVP_MD_CTX *md = d->md[au->track];
    if (!md)
        return;
    /* a fixed-size header, then the bytes: the size in the header keeps
     * the unit boundaries in the digest */
    uint8_t h[8 * 8];
    int64_t units = -1;      /* untimed */
    if (au->timed) {
        units = (au->units - (int64_t)AU_UNITS_PER_TICK * d->offset) % AU_UNITS_MOD;
        units += units < 0 ? AU_UNITS_MOD : 0;
    }
    /* audio is timed by its units alone: whether a frame's PTS was written
     * (the first frame of a PES, every fMP4 sample) is packing */
    bool audio = au->track == TSD_AUDIO;
    put64(h, au->track);
    put64(h + 8, codec);
    size_t size = au->size;
    if (codec == AU_CODEC_H264)
        digest_nals(NULL, au->data, au->size, &size);
    put64(h + 16, (int64_t)size);
    put64(h + 24, audio ? AU_NO_TS : to_ref(d, au->pts));
    put64(h + 32, audio ? AU_NO_TS : to_ref(d, au->dts));
    put64(h + 40, units);
    put64(h + 48, au->samples);
    put64(h + 56, au->sample_rate);
    if (!EVP_DigestUpdate(md, h, sizeof h) ||
        !(codec == AU_CODEC_H264 ? digest_nals(md, au->data, au->size, &size)
                                 : EVP_DigestUpdate(md, au->data, au->size)))
        d->failed = true;
    d->units[au->track]++;
}

/* The digest of the tracks' digests and unit counts, in track order. */
bool indigest_final(struct indigest *d, uint8_t out[INDIGEST_LEN])
{
    uint8_t all[TSD_TRACKS][INDIGEST_LEN + 8];
    unsigned n = 0;
    bool ok = !d->damaged && !d->failed;
    for (int t = 0; ok && t < TSD_TRACKS; t++) {
        ok = d->md[t] && EVP_DigestFinal_ex(d->md[t], all[t], &n) && n == INDIGEST_LEN;
        put64(all[t] + INDIGEST_LEN, (int64_t)d->units[t]);
    }
    indigest_free(d);
    return ok && EVP_Digest(all, sizeof all, out, &n, EVP_sha256(), NULL) && n == INDIGEST_LEN;
}

void indigest_free(struct indigest *d)
{
    for (int t = 0; t < TSD_TRACKS; t++) {
        EVP_MD_CTX_free(d->md[t]);
        d->md[t] = NULL;
    }
}
