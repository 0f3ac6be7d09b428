/* fuzz_plan_json.c - the planner's input parser on arbitrary JSON.
 * Invariant: no crash, no leak; a refused instance says why. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "plan_json.h"
#include "plan_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!root)
        return 0;
    plan_instance in;
    char err[512] = "";
    memset(&in, 0, sizeof in);
    plan_load_status st = plan_json_parse(root, &in, err, sizeof err);
    if (st == PLAN_LOAD_INVALID)
        assert(err[0] != '\0');
    plan_instance_free(&in);
    json_decref(root);
    return 0;
}
