/* evidence_scope.c - the evidence rows one decision reads (see the header). */
#include "evidence_scope.h"

#include <assert.h>
#include <string.h>

enum evidence_rc evs_read(const char *path, const struct sit_situation *s,
                          struct evidence_rows *out, char *err, size_t errlen)
{
    assert(path && s && out && s->n_candidates <= SIT_MAX_CANDIDATES);
    memset(out, 0, sizeof *out);
    struct evidence_scope scopes[SIT_MAX_CANDIDATES];
    for (size_t i = 0; i < s->n_candidates; i++)
        scopes[i] = (struct evidence_scope){s->candidates[i].path_id, s->action.cohort.channel,
                                            s->action.cohort.rendition,
                                            s->action.program_version};
    struct evidence_db *db = NULL;
    enum evidence_rc rc = evidence_open(path, EVIDENCE_OPEN_RO, &db, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = evidence_newest(db, scopes, s->n_candidates, out, err, errlen);
    evidence_close(db);
    return rc;
}
