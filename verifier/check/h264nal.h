/* h264nal.h - what the verifier needs to know about an H.264 access unit.
 *
 * FFmpeg's h264 parser splits the byte stream into access units but does
 * not tell whether an access unit is an IDR, what a recovery point SEI
 * says, whether the picture is a reference, nor hand out the parameter
 * sets it saw.  Random access (start at a real random access point, feed
 * the latest SPS/PPS seen) and damage propagation need exactly that, so
 * this module reads NAL unit headers, the recovery point SEI (H.264
 * D.1.8), the first slice header's first two fields and the parameter set
 * ids, and keeps the latest SPS/PPS per id.  Nothing else is parsed.  All
 * reads are bounded by the buffer; fuzzed by fuzz_tsdemux.
 */
#ifndef H264NAL_H
#define H264NAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H264_MAX_SPS 32
#define H264_MAX_PPS 256
#define H264_MAX_PS_BYTES 4096   /* a larger parameter set is not kept */

struct h264_au_info {
    bool idr;                    /* holds an IDR slice (nal_unit_type 5) */
    bool has_slice;
    int ref_idc;                 /* nal_ref_idc of the first slice, -1 without slice */
    int slice_type;              /* of the first slice, 0..4 (P B I SP SI), -1 unknown */
    int recovery_cnt;            /* recovery point SEI: recovery_frame_cnt, -1 none */
    bool has_sps, has_pps;
};

/* The latest parameter sets per id (owned copies, NAL bytes without start code). */
struct h264_ps {
    uint8_t *sps[H264_MAX_SPS];
    size_t sps_len[H264_MAX_SPS];
    uint8_t *pps[H264_MAX_PPS];
    size_t pps_len[H264_MAX_PPS];
};

/* Scans one access unit (Annex B); stores its SPS/PPS in ps when not NULL. */
void h264_au_scan(const uint8_t *au, size_t len, struct h264_au_info *info, struct h264_ps *ps);

/* Offset of the start code (its first byte, 00 00 01) of the first VCL NAL
 * unit (nal_unit_type 1..5) in Annex B data; len when there is none. */
size_t h264_first_vcl(const uint8_t *au, size_t len);

/* An I or SI picture: intra slices only, as far as the first slice says. */
bool h264_au_intra(const struct h264_au_info *info);

/* Bytes needed for every stored parameter set in Annex B form (4-byte
 * start codes, SPS before PPS); h264_ps_write writes them and returns
 * that count. */
size_t h264_ps_size(const struct h264_ps *ps);
size_t h264_ps_write(const struct h264_ps *ps, uint8_t *out);
void h264_ps_free(struct h264_ps *ps);

#endif
