/* plan_json.h - the PLAN.json input and the JSON result of `stepctl plan`.
 *
 * Schema: docs/lua.md.  Loading validates every field and names the first
 * bad one in err (exit 65); an unreadable file is PLAN_LOAD_NOFILE (66).
 */
#ifndef PLAN_JSON_H
#define PLAN_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "plan_algo.h"
#include "plan_model.h"

#define PLAN_INPUT_MAX_BYTES (64u * 1024u * 1024u)

/* Zero value = invalid, so an unset result never reads as loaded. */
typedef enum {
    PLAN_LOAD_INVALID = 0,
    PLAN_LOAD_OK,
    PLAN_LOAD_NOFILE,
    PLAN_LOAD_NOMEM
} plan_load_status;

plan_load_status plan_json_load_file(const char *path, plan_instance *in,
                                     char *err, size_t err_len);
plan_load_status plan_json_parse(json_t *root, plan_instance *in,
                                 char *err, size_t err_len);
/* The instance in the input schema (for --write-input). */
json_t *plan_json_instance(const plan_instance *in);
/* The result: per-viewer decisions, per-server load, aggregate metrics. */
json_t *plan_json_result(const plan_instance *in, plan_algo algo,
                         const plan_choice *ch, double elapsed_ms);

#endif
