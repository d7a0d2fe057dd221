/* sweep_resume.c: see sweep_resume.h. */
#define _GNU_SOURCE
#include "sweep_resume.h"
#include "identity.h"
#include "registry_decided.h"
#include "sweep_hold.h"
#include <stdio.h>
#include <string.h>

int resume_applies(const sweep_opts *o)
{
    return !o->compile_only && !o->plan_only && !o->count_only && !o->retune && !o->check && !o->scan;
}

/* The basis of bucket b's decision on lane S (sweep_resume.h), into out. */
static int basis(sw *S, reg *R, const op_task *t, const bucket *b, int hold, char *out, size_t cap)
{
    /* The op's template sources: hashed once per op a lane meets. */
    if (strcmp(S->resume_op, t->op)) {
        if (identity_sources(S->o->root, t->op, S->resume_src)) return -1;
        snprintf(S->resume_op, sizeof S->resume_op, "%s", t->op);
    }
    char tc[256], holes[17] = "none";
    identity_toolchain(&S->dev, tc, sizeof tc);
    if (hold) {
        long long shapes[PROBES_MAX][TMPL_MAXDIMS];
        int n = hold_holes(S, R, t, b, shapes, 0, PROBES_MAX);
        if (n) {
            uint64_t h = HASH_INIT;
            for (int i = 0; i < n; i++)
                for (int d = 0; d < t->ndims; d++) {
                    char x[24];
                    snprintf(x, sizeof x, "%lld%c", shapes[i][d], d + 1 < t->ndims ? ',' : ';');
                    h = hash_str(h, x);
                }
            hash_hex(h, holes);
        }
    }
    int len = snprintf(out, cap, "spec %s|aitune %s|%s|sources %s|max_evals %d|vendor %d|holes %s", S->sp.hash,
                       AITUNE_TOOL_VERSION, tc, S->resume_src, S->o->max_evals, S->o->vendor, holes);
    return len > 0 && (size_t)len < cap ? 0 : -1;
}

int resume_decided(sw *S, reg *R, const op_task *t, const bucket *b, int hold, long long *run, int *winners)
{
    char text[512], hw[256];
    *run = 0;
    *winners = 0;
    if (basis(S, R, t, b, hold, text, sizeof text)) return 0;   /* no basis (the op's folder gone): decide it */
    identity_hw(&S->dev, hw, sizeof hw);
    return reg_decided_get(R, t->op, S->arch, t->dtype, b->key, hw, text, run, winners);
}

int resume_record(sw *S, const op_task *t, const bucket *b, int hold)
{
    char text[512], hw[256];
    if (basis(S, S->R, t, b, hold, text, sizeof text)) return 0;   /* decided again next time */
    identity_hw(&S->dev, hw, sizeof hw);
    int winners;
    if (reg_decided_put(S->R, t->op, S->arch, t->dtype, b->key, hw, text, S->run_id, &winners))
        return error("%s", reg_errmsg(S->R));
    S->decided_now++;
    return 0;
}
