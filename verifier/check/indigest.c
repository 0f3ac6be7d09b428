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
    put64(h, au->track);
    put64(h + 8, codec);
    put64(h + 16, (int64_t)au->size);
    put64(h + 24, to_ref(d, au->pts));
    put64(h + 32, to_ref(d, au->dts));
    put64(h + 40, units);
    put64(h + 48, au->samples);
    put64(h + 56, au->sample_rate);
    if (!EVP_DigestUpdate(md, h, sizeof h) || !EVP_DigestUpdate(md, au->data, au->size))
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
