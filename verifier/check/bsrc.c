/* bsrc.c - byte source of one side (see bsrc.h). */
#include "bsrc.h"

#include <errno.h>
#include <string.h>

#include <libavutil/error.h>

int bsrc_init(struct bsrc *b, struct bsrc_segment *segs, size_t nsegs)
{
    memset(b, 0, sizeof *b);
    b->segs = segs;
    b->nsegs = nsegs;
    b->ts = tscheck_new();
    b->sha = EVP_MD_CTX_new();
    if (!b->ts || !b->sha || !EVP_DigestInit_ex(b->sha, EVP_sha256(), NULL)) {
        bsrc_close(b);
        return -1;
    }
    return 0;
}

void bsrc_close(struct bsrc *b)
{
    if (b->fp)
        fclose(b->fp);
    b->fp = NULL;
    tscheck_free(b->ts);
    b->ts = NULL;
    EVP_MD_CTX_free(b->sha);
    b->sha = NULL;
}

static void set_io_error(struct bsrc *b, const char *reason, const char *detail)
{
    if (b->io_error)
        return;
    b->io_error = true;
    snprintf(b->io_reason, sizeof b->io_reason, "%s", reason);
    snprintf(b->io_detail, sizeof b->io_detail, "%s", detail);
}

static void finish_segment(struct bsrc *b)
{
    struct bsrc_segment *s = &b->segs[b->cur];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_DigestFinal_ex(b->sha, md, &mdlen) && mdlen == 32)
        for (unsigned i = 0; i < 32; i++)
            snprintf(s->sha256 + 2 * i, 3, "%02x", md[i]);
    EVP_DigestInit_ex(b->sha, EVP_sha256(), NULL);
    if (s->error)
        set_io_error(b, s->error, s->path ? s->path : "segment delivery failed");
    if (b->fp)
        fclose(b->fp);
    b->fp = NULL;
    b->mem_pos = 0;
    b->cur++;
    if (b->cur < b->nsegs)
        tscheck_segment_boundary(b->ts);
}

/* Reads up to size bytes of the current segment; 0 at its end, -1 on error. */
static long read_segment(struct bsrc *b, uint8_t *buf, size_t size)
{
    struct bsrc_segment *s = &b->segs[b->cur];
    if (!s->path) {
        size_t left = s->data ? s->len - b->mem_pos : 0;   /* a failed delivery has no body */
        size_t n = left < size ? left : size;
        if (n)
            memcpy(buf, s->data + b->mem_pos, n);
        b->mem_pos += n;
        return (long)n;
    }
    if (!b->fp && !(b->fp = fopen(s->path, "rb"))) {
        set_io_error(b, "io_error", strerror(errno));
        return -1;
    }
    size_t n = fread(buf, 1, size, b->fp);
    if (n == 0 && ferror(b->fp)) {
        set_io_error(b, "io_error", strerror(errno));
        return -1;
    }
    return (long)n;
}

int bsrc_read(void *opaque, uint8_t *buf, int size)
{
    struct bsrc *b = opaque;
    while (!b->eof && !b->io_error) {
        if (b->cur >= b->nsegs) {
            b->eof = true;
            tscheck_finish(b->ts);
            break;
        }
        long n = read_segment(b, buf, (size_t)size);
        if (n < 0)
            break;
        if (n == 0) {
            finish_segment(b);
            continue;
        }
        b->segs[b->cur].bytes_read += (uint64_t)n;
        EVP_DigestUpdate(b->sha, buf, (size_t)n);
        tscheck_feed(b->ts, buf, (size_t)n);
        b->pos += (uint64_t)n;
        return (int)n;
    }
    if (b->io_error && !b->ts->finished)
        tscheck_finish(b->ts);
    return AVERROR_EOF;
}

int bsrc_drain(struct bsrc *b)
{
    uint8_t buf[65536];
    while (bsrc_read(b, buf, sizeof buf) > 0)
        ;
    return b->io_error ? -1 : 0;
}
