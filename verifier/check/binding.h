/* binding.h - the reference binding written by `exactav bind`.
 *
 * A binding ties reference files to a channel, program version, rendition,
 * interval and decode boundary under one profile, with each file's SHA-256
 * and a reference_version digest over all of it.  `verify` checks every
 * digest before the reference is used.
 */
#ifndef BINDING_H
#define BINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define BINDING_MAX_FILES 256

struct binding {
    json_t *doc;                 /* owned */
    const char *channel, *program_version, *rendition, *profile_id;
    int64_t start, end;
    bool interval_declared;      /* false: the default interval, derived again from the files */
    bool have_media_sequence;
    int64_t media_sequence_first, media_sequence_last;
    size_t nfiles;
    char *paths[BINDING_MAX_FILES];          /* resolved, owned */
    const char *sha256[BINDING_MAX_FILES];
    const char *reference_version;
};

/* True when the file starts (after white space) with '{'. */
bool binding_looks_like(const char *path);

/* Loads and validates a binding; relative file paths are resolved against
 * the binding's directory.  0, or -1 with a message. */
int binding_load(const char *path, struct binding *b, char *err, size_t errlen);
void binding_free(struct binding *b);

/* The reference_version digest: SHA-256 of the canonical binding without
 * its reference_version member. */
void binding_digest(const json_t *doc, char out[65]);

/* What a binding document says (see docs/cli.md, exactav bind). */
struct binding_spec {
    const char *channel, *program_version, *rendition, *profile_id;
    int64_t start, end;          /* the interval */
    bool declared;               /* given by the user, not derived */
    int64_t video_boundary;
    bool has_audio;
    int64_t audio_boundary;
    bool have_media_sequence;
    int64_t seq_first, seq_last;
};

/* The binding document with its reference_version member.  files is an
 * array of {path, sha256, bytes} whose reference is taken.  NULL when out
 * of memory.  `exactav bind` writes it; the canary derives a reference
 * segment's reference_version from it (docs/canary.md). */
json_t *binding_document(const struct binding_spec *s, json_t *files);

#endif
