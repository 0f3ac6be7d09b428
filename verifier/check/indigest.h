/* indigest.h - the digest of a side's decoder input.
 *
 * The profile pins a deterministic decoder: identical decoder input gives
 * identical output.  This digest is taken over every access unit the
 * access-unit layer (au.h) hands on for the selected program, in stream
 * order, whatever the transport packing: per unit its track, the codec the
 * data was identified as, its bytes (H.264 access units carry their own
 * SPS/PPS, ADTS frames their own AAC configuration, which is all the
 * configuration the profile's decoders get), and its times mapped onto the
 * reference timeline with the declared offset (PTS, DTS; audio: whether
 * timed, its first sample in 1/720000 s, its sample count and rate).  Two
 * sides with equal digests feed their decoders the same bytes at the same
 * times, so whichever units a side's decode boundary selects, it selects
 * the same ones on both.  A unit marked damaged makes the digest unusable
 * (damaged), never equal by accident.
 */
#ifndef INDIGEST_H
#define INDIGEST_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "au.h"

#define INDIGEST_LEN 32

struct indigest {
    EVP_MD_CTX *md[TSD_TRACKS];  /* one per track: how the packager interleaves them is packaging */
    int64_t offset;              /* side_pts = reference_pts + offset (mod 2^33) */
    uint64_t units[TSD_TRACKS];  /* access units digested */
    bool damaged;                /* a damaged unit was seen */
    bool failed;                 /* a digest failed (never equal) */
};

/* 0, or -1 without memory. */
int indigest_init(struct indigest *d, int64_t offset);
/* One access unit, with the codec its track was identified as. */
void indigest_add(struct indigest *d, const struct au *au, enum au_codec codec);
/* Writes the digest; false when it is unusable (damaged, or a failure). */
bool indigest_final(struct indigest *d, uint8_t out[INDIGEST_LEN]);
void indigest_free(struct indigest *d);

#endif
