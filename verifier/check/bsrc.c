/* bsrc.c - byte source of one side (see bsrc.h). */
#include "bsrc.h"

#include <errno.h>
#include <string.h>

#include "evidence_fingerprint.h"

#define BSRC_CHUNK 65536

int bsrc_init(struct bsrc *b, struct bsrc_segment *segs, size_t nsegs)
{
    memset(b, 0, sizeof *b);
    b->segs = segs;
    b->nsegs = nsegs;
    b->ts = tscheck_new();
    b->sha = EVP_MD_CTX_new();
    if (!b->ts || !b->sha) {
        bsrc_close(b);
        return -1;
    }
    return 0;
}

void bsrc_close(struct bsrc *b)
{
    tscheck_free(b->ts);
    b->ts = NULL;
    EVP_MD_CTX_free(b->sha);
    b->sha = NULL;
}

void bsrc_fail(struct bsrc *b, const char *reason, const char *detail)
{
    if (b->io_error)
        return;
    b->io_error = true;
    snprintf(b->io_reason, sizeof b->io_reason, "%s", reason);
    snprintf(b->io_detail, sizeof b->io_detail, "%s", detail);
}

/* SHA-256 of a segment's bytes costs as much as its access-unit pass:
 * taken only where somebody reads it. */
static bool hashes(const struct bsrc *b, const struct bsrc_segment *s)
{
    return !b->skip_sha256 && (s->expect_sha256 || s->want_sha256);
}

static void take(struct bsrc *b, struct bsrc_segment *s, const uint8_t *buf, size_t n, tscheck_packet_fn fn,
                 void *opaque)
{
    s->bytes_read += n;
    if (hashes(b, s))
        EVP_DigestUpdate(b->sha, buf, n);
    tscheck_feed_packets(b->ts, buf, n, fn, opaque);
}

/* One segment to its end (or until stopped); -1 on a read error. */
static int read_segment(struct bsrc *b, struct bsrc_segment *s, tscheck_packet_fn fn, void *opaque)
{
    if (hashes(b, s) && !EVP_DigestInit_ex(b->sha, EVP_sha256(), NULL)) {
        bsrc_fail(b, "internal_error", "SHA-256 unavailable");
        return -1;
    }
    if (!s->path) {
        /* a failed delivery may have no body */
        for (size_t off = 0; s->data && off < s->len && !b->stop; off += BSRC_CHUNK)
            take(b, s, s->data + off, s->len - off < BSRC_CHUNK ? s->len - off : BSRC_CHUNK, fn, opaque);
    } else {
        FILE *fp = fopen(s->path, "rb");
        if (!fp) {
            bsrc_fail(b, "io_error", strerror(errno));
            return -1;
        }
        static _Thread_local uint8_t buf[BSRC_CHUNK];
        size_t n;
        while (!b->stop && (n = fread(buf, 1, sizeof buf, fp)) > 0)
            take(b, s, buf, n, fn, opaque);
        bool bad = ferror(fp);
        fclose(fp);
        if (bad) {
            bsrc_fail(b, "io_error", strerror(errno));
            return -1;
        }
    }
    if (b->stop)
        return 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (hashes(b, s) && EVP_DigestFinal_ex(b->sha, md, &mdlen) && mdlen == 32)
        evidence_digest_hex(md, s->sha256);
    if (s->error)
        bsrc_fail(b, s->error, s->path ? s->path : "segment delivery failed");
    return 0;
}

int bsrc_run(struct bsrc *b, tscheck_packet_fn fn, void *opaque)
{
    for (size_t i = 0; i < b->nsegs && !b->stop && !b->io_error; i++) {
        if (i > 0 && !b->segs[i].joins_previous)
            tscheck_segment_boundary(b->ts);
        if (read_segment(b, &b->segs[i], fn, opaque))
            break;
    }
    tscheck_finish(b->ts);
    return b->io_error ? -1 : 0;
}
