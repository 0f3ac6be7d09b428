/* binding.c - reference bindings (see binding.h). */
#include "binding.h"

#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool binding_looks_like(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    int c;
    while ((c = fgetc(f)) != EOF && isspace(c))
        ;
    fclose(f);
    return c == '{';
}

void binding_digest(const json_t *doc, char out[65])
{
    json_t *copy = json_deep_copy(doc);
    json_object_del(copy, "reference_version");
    char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
    util_sha256_hex(text ? text : "", text ? strlen(text) : 0, out);
    free(text);
    json_decref(copy);
}

json_t *binding_document(const struct binding_spec *s, json_t *files)
{
    json_t *doc = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:b}, s:{s:I, s:o}, s:o, s:o}",
                            "binding_version", 1, "kind", "exact-av-reference-binding",
                            "channel", s->channel, "program_version", s->program_version,
                            "rendition", s->rendition, "profile_id", s->profile_id,
                            "interval", "start", (json_int_t)s->start, "end", (json_int_t)s->end,
                            "declared", s->declared,
                            "decode_boundary", "video_pts", (json_int_t)s->video_boundary,
                            "audio_pts", s->has_audio ? json_integer(s->audio_boundary) : json_null(),
                            "media_sequence", s->have_media_sequence
                                                  ? json_pack("{s:I, s:I}", "first", (json_int_t)s->seq_first,
                                                              "last", (json_int_t)s->seq_last)
                                                  : json_null(),
                            "files", files);
    if (!doc)
        return NULL;
    char digest[65];
    binding_digest(doc, digest);
    json_object_set_new(doc, "reference_version", json_string(digest));
    return doc;
}

static char *resolve_path(const char *binding_path, const char *file)
{
    if (file[0] == '/')
        return strdup(file);
    char *copy = strdup(binding_path);
    if (!copy)
        return NULL;
    const char *dir = dirname(copy);
    size_t n = strlen(dir) + strlen(file) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", dir, file);
    free(copy);
    return out;
}

static int fail(char *err, size_t errlen, const char *field)
{
    snprintf(err, errlen, "binding: field %s is missing or invalid", field);
    return -1;
}

static int load_files(const char *path, struct binding *b, char *err, size_t errlen)
{
    json_t *files = json_object_get(b->doc, "files");
    if (!json_is_array(files) || json_array_size(files) == 0 || json_array_size(files) > BINDING_MAX_FILES)
        return fail(err, errlen, "files");
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *p = json_string_value(json_object_get(f, "path"));
        const char *sha = json_string_value(json_object_get(f, "sha256"));
        if (!p || !sha || strlen(sha) != 64)
            return fail(err, errlen, "files[].path/sha256");
        b->paths[i] = resolve_path(path, p);
        b->sha256[i] = sha;
        b->nfiles = i + 1;
        if (!b->paths[i])
            return fail(err, errlen, "files[].path");
    }
    return 0;
}

int binding_load(const char *path, struct binding *b, char *err, size_t errlen)
{
    json_error_t jerr;
    memset(b, 0, sizeof *b);
    b->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!b->doc) {
        snprintf(err, errlen, "binding %s: %s (line %d)", path, jerr.text, jerr.line);
        return -1;
    }
    json_t *d = b->doc;
    b->channel = json_string_value(json_object_get(d, "channel"));
    b->program_version = json_string_value(json_object_get(d, "program_version"));
    b->rendition = json_string_value(json_object_get(d, "rendition"));
    b->profile_id = json_string_value(json_object_get(d, "profile_id"));
    b->reference_version = json_string_value(json_object_get(d, "reference_version"));
    json_t *iv = json_object_get(d, "interval");
    json_t *ms = json_object_get(d, "media_sequence");
    int rc = 0;
    if (json_integer_value(json_object_get(d, "binding_version")) != 1)
        rc = fail(err, errlen, "binding_version");
    else if (!b->channel || !b->program_version || !b->rendition)
        rc = fail(err, errlen, "channel/program_version/rendition");
    else if (!b->profile_id)
        rc = fail(err, errlen, "profile_id");
    else if (!json_is_integer(json_object_get(iv, "start")) || !json_is_integer(json_object_get(iv, "end")))
        rc = fail(err, errlen, "interval");
    else if (!b->reference_version)
        rc = fail(err, errlen, "reference_version");
    else
        rc = load_files(path, b, err, errlen);
    if (rc == 0) {
        b->start = json_integer_value(json_object_get(iv, "start"));
        b->end = json_integer_value(json_object_get(iv, "end"));
        b->interval_declared = !json_is_false(json_object_get(iv, "declared"));
        if (json_is_object(ms)) {
            b->have_media_sequence = true;
            b->media_sequence_first = json_integer_value(json_object_get(ms, "first"));
            b->media_sequence_last = json_integer_value(json_object_get(ms, "last"));
        }
        char digest[65];
        binding_digest(d, digest);
        if (strcmp(digest, b->reference_version)) {
            snprintf(err, errlen, "binding %s: reference_version does not match its content (edited?)", path);
            rc = -1;
        }
    }
    if (rc)
        binding_free(b);
    return rc;
}

void binding_free(struct binding *b)
{
    for (size_t i = 0; i < b->nfiles; i++)
        free(b->paths[i]);
    b->nfiles = 0;
    json_decref(b->doc);
    b->doc = NULL;
}
