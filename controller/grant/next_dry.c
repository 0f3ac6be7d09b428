/* next_dry.c - `stepctl next --dry-run`: the answer, marked as unrecorded.
 *
 * The dry run runs the very review `next` runs (next.c) on a read-only
 * connection and stops before recording: the answer differs only in what
 * recording would have made true (see next.h, nxt_dry_mark). */
#include "next.h"

int nxt_dry_mark(json_t *answer)
{
    /* Ids that name no row would send an operator looking for them. */
    return json_object_set_new(answer, "next_id", json_null()) ||
                   json_object_set_new(answer, "next_decision_id", json_null()) ||
                   json_object_set_new(answer, "issuance_closed", json_false()) ||
                   json_object_set_new(answer, "dry_run", json_true())
               ? -1
               : 0;
}
