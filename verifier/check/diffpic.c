/* diffpic.c - the PNGs of the first differing video frame (see diffpic.h). */
#include "diffpic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>

/* A planar 8-bit Y'CbCr frame with three planes: the only kind converted. */
static const AVPixFmtDescriptor *planar_yuv8(const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d || d->nb_components != 3 || !(d->flags & AV_PIX_FMT_FLAG_PLANAR) || (d->flags & AV_PIX_FMT_FLAG_RGB) ||
        d->comp[0].depth != 8 || f->width <= 0 || f->height <= 0)
        return NULL;
    return d;
}

static uint8_t clamp8(double v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)(v + 0.5);
}

uint8_t *diffpic_rgb(const AVFrame *f)
{
    const AVPixFmtDescriptor *d = planar_yuv8(f);
    uint8_t *rgb = d ? malloc((size_t)f->width * (size_t)f->height * 3) : NULL;
    if (!rgb)
        return NULL;
    bool full = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P;
    /* Kr, Kb of the matrix: BT.709 when the stream says so, else BT.601 */
    bool bt709 = f->colorspace == AVCOL_SPC_BT709;
    double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1 - kr - kb;
    double ys = full ? 1.0 : 255.0 / 219.0, cs = full ? 1.0 : 255.0 / 224.0, y0 = full ? 0 : 16;
    for (int y = 0; y < f->height; y++)
        for (int x = 0; x < f->width; x++) {
            double Y = (f->data[0][(ptrdiff_t)y * f->linesize[0] + x] - y0) * ys;
            int cy = y >> d->log2_chroma_h, cx = x >> d->log2_chroma_w;
            double Cb = (f->data[1][(ptrdiff_t)cy * f->linesize[1] + cx] - 128.0) * cs;
            double Cr = (f->data[2][(ptrdiff_t)cy * f->linesize[2] + cx] - 128.0) * cs;
            uint8_t *px = rgb + ((size_t)y * (size_t)f->width + (size_t)x) * 3;
            px[0] = clamp8(Y + 2 * (1 - kr) * Cr);
            px[1] = clamp8(Y - (2 * kb * (1 - kb) * Cb + 2 * kr * (1 - kr) * Cr) / kg);
            px[2] = clamp8(Y + 2 * (1 - kb) * Cb);
        }
    return rgb;
}

static int sample_at(const AVFrame *f, const AVPixFmtDescriptor *d, int plane, int x, int y)
{
    if (plane) {
        x >>= d->log2_chroma_w;
        y >>= d->log2_chroma_h;
    }
    return f->data[plane][(ptrdiff_t)y * f->linesize[plane] + x];
}

uint8_t *diffpic_difference(const AVFrame *a, const AVFrame *b)
{
    const AVPixFmtDescriptor *d = planar_yuv8(a);
    if (!d || a->format != b->format || a->width != b->width || a->height != b->height)
        return NULL;
    uint8_t *rgb = calloc((size_t)a->width * (size_t)a->height, 3);
    if (!rgb)
        return NULL;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++) {
            int worst = 0;
            for (int p = 0; p < 3; p++) {
                int diff = abs(sample_at(a, d, p, x, y) - sample_at(b, d, p, x, y));
                worst = diff > worst ? diff : worst;
            }
            if (!worst)
                continue;
            /* the smallest difference must still be seen: 1 shows as 64 */
            int v = 64 + worst * 3;
            uint8_t *px = rgb + ((size_t)y * (size_t)a->width + (size_t)x) * 3;
            px[0] = (uint8_t)(v > 255 ? 255 : v);
            px[1] = (uint8_t)(px[0] / 4);
        }
    return rgb;
}

static AVPacket *encode_png(const uint8_t *rgb, int width, int height)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    AVCodecContext *c = codec ? avcodec_alloc_context3(codec) : NULL;
    AVFrame *f = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    bool ok = c && f && pkt;
    if (ok) {
        c->width = f->width = width;
        c->height = f->height = height;
        c->pix_fmt = AV_PIX_FMT_RGB24;
        f->format = AV_PIX_FMT_RGB24;
        c->time_base = (AVRational){1, 1};
        c->thread_count = 1;
        ok = avcodec_open2(c, codec, NULL) == 0 && av_frame_get_buffer(f, 0) == 0;
    }
    for (int y = 0; ok && y < height; y++)
        memcpy(f->data[0] + (ptrdiff_t)y * f->linesize[0], rgb + (size_t)y * (size_t)width * 3, (size_t)width * 3);
    ok = ok && avcodec_send_frame(c, f) == 0 && avcodec_receive_packet(c, pkt) == 0;
    av_frame_free(&f);
    avcodec_free_context(&c);
    if (!ok)
        av_packet_free(&pkt);
    return pkt;
}

int diffpic_png(int fd, const uint8_t *rgb, int width, int height)
{
    AVPacket *pkt = rgb ? encode_png(rgb, width, height) : NULL;
    bool ok = pkt != NULL;
    for (size_t done = 0; ok && done < (size_t)pkt->size;) {
        ssize_t n = write(fd, pkt->data + done, (size_t)pkt->size - done);
        ok = n > 0;
        done += ok ? (size_t)n : 0;
    }
    av_packet_free(&pkt);
    return close(fd) == 0 && ok ? 0 : -1;
}

/* One picture: creates its file, encodes, names it in files. */
static int write_one(const char *dir, const char *stem, const char *key, uint8_t *rgb, int w, int h,
                     json_t *files, char *err, size_t errlen)
{
    char path[4200];
    if (!rgb) {
        snprintf(err, errlen, "%s: no picture (format not planar 8-bit YUV, or out of memory)", key);
        return -1;
    }
    const char *suffix = strchr(key, '_');   /* "video_reference" -> "-video-reference" */
    char sfx[32];
    snprintf(sfx, sizeof sfx, "-video-%s", suffix ? suffix + 1 : key);
    int fd = diffpic_create(dir, stem, sfx, path, sizeof path, err, errlen);
    int rc = fd < 0 ? -1 : diffpic_png(fd, rgb, w, h);
    free(rgb);
    if (fd >= 0 && rc) {
        snprintf(err, errlen, "%s: cannot encode or write the PNG", path);
        unlink(path);
    }
    if (!rc)
        json_object_set_new(files, key, json_string(path));
    return rc;
}

int diffpic_video(const char *dir, const char *stem, const AVFrame *ref, const AVFrame *cand, json_t *files,
                  char *err, size_t errlen)
{
    int rc = write_one(dir, stem, "video_reference", diffpic_rgb(ref), ref->width, ref->height, files, err, errlen);
    if (!rc)
        rc = write_one(dir, stem, "video_candidate", diffpic_rgb(cand), cand->width, cand->height, files, err,
                       errlen);
    /* a map only where pixels correspond: same size and format */
    if (!rc && ref->format == cand->format && ref->width == cand->width && ref->height == cand->height)
        rc = write_one(dir, stem, "video_difference", diffpic_difference(ref, cand), ref->width, ref->height,
                       files, err, errlen);
    return rc;
}
