/* sweep_task.c: see sweep_task.h. */
#define _GNU_SOURCE
#include "sweep_task.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int task_at(sw *S, const op_task *t, const long long *shape, op_task *out)
{
    if (tmpl_task(S->T, t->op, t->dtype, shape, out)) return -1;
    out->stream = t->stream;
    return 0;
}

/* The op's dims must be the spec task's dims. A spec may list them in any
** order; everything stored (bucket key, edges, shape) is in the op's order,
** the order lookup and the runtime get shapes in. This is the one place a
** bucket is put in that order: ob gets the bucket with edges, sizes and key
** in op order, shape its representative sizes. */
int task_bucket(sw *S, const spec_task *st, const bucket *b, long long *shape, bucket *ob)
{
    int nd, ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(S->T, st->op, &nd, dims, &ndt, dts, 32)) return -1;
    if (nd != st->ndims) {
        tmpl_seterr(S->T, "op '%s' has %d dims, the task gives %d", st->op, nd, st->ndims);
        return -1;
    }
    memset(ob, 0, sizeof *ob);
    ob->ndims = nd;
    for (int d = 0; d < nd; d++) {
        int k = -1;
        for (int j = 0; j < st->ndims; j++)
            if (!strcmp(st->dims[j].name, dims[d])) k = j;
        if (k < 0) {
            tmpl_seterr(S->T, "op '%s' has no dim '%s' in the task (its dims: %s%s%s)", st->op, dims[d], dims[0],
                        nd > 1 ? ", " : "", nd > 1 ? dims[1] : "");
            return -1;
        }
        shape[d] = ob->rep[d] = b->rep[k];
        ob->align[d] = bucket_align(b, k);
        ob->lo[d] = b->lo[k];
        ob->hi[d] = b->hi[k];
        ob->slo[d] = b->slo[k];
        ob->shi[d] = b->shi[k];
        if (b->ranged >> k & 1) ob->ranged |= 1u << d;
        ob->salign[d] = b->salign[k];
        if (b->exact >> k & 1) ob->exact |= 1u << d;   /* tuned at that one size (spec_dim.exact) */
    }
    if (bucket_key_exact(nd, dims, ob->lo, ob->rep, ob->exact, ob->key, sizeof ob->key)) {
        tmpl_seterr(S->T, "op '%s': a bucket key of the task is longer than %d characters", st->op, (int)sizeof ob->key - 1);
        return -1;
    }
    return 0;
}

/* Every template a task names must be one of its op's. */
static int check_templates(sw *S, const spec_task *st)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, st->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    int rc = 0;
    for (int k = 0; k < st->ntemplates && !rc; k++) {
        int found = 0;
        strbuf have = { 0 };
        for (int i = 0; i < ntn; i++) {
            sb_printf(&have, "%s%s", i ? ", " : "", strchr(tn[i], '/') + 1);
            if (!strcmp(strchr(tn[i], '/') + 1, st->templates[k])) found = 1;
        }
        if (!found)
            rc = error("spec '%s' line %d: op '%s' has no template '%s' (it has: %s)", S->sp.path, st->templates_line,
                       st->op, st->templates[k], sb_str(&have));
        sb_free(&have);
    }
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    return rc;
}

/* Check every task against the templates before any work starts. */
int task_check_spec(sw *S)
{
    for (int i = 0; i < S->sp.ntasks; i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        spec_buckets(st, &bs);
        long long shape[TMPL_MAXDIMS];
        bucket ob;
        int bad = task_bucket(S, st, &bs[0], shape, &ob);
        for (int d = 0; d < st->ndtypes && !bad; d++) {
            op_task t;
            bad = tmpl_task(S->T, st->op, st->dtypes[d], shape, &t);
        }
        free(bs);
        if (bad || !search_for_spec(S->T, st->search)) {
            error("spec '%s' line %d: %s", S->sp.path, st->line, tmpl_errmsg(S->T));
            return -1;
        }
        if (st->ntemplates && check_templates(S, st)) return -1;
    }
    return 0;
}

/* The task message the worker sets buffers up from. */
int task_send(sw *S, const op_task *t)
{
    cand c = { 0 };
    if (tmpl_reference(S->T, t, "aitune_reference", &c.k)) return error("%s", tmpl_errmsg(S->T));
    snprintf(c.tmpl, sizeof c.tmpl, "%s/reference", t->op);
    int rc = cand_compile(S, &c, S->sp.arch) || cand_finish(S, &c);
    if (!rc && !c.job.ok) rc = error("op '%s' reference does not compile: %s", t->op, c.job.error);
    plan_geom g;
    char err[512];
    char *pj = NULL;
    if (!rc && (kernel_geometry(&c.k, t, &g, err, sizeof err) || !(pj = cand_plan_json(&c.k, err, sizeof err))))
        rc = error("op '%s' reference launch: %s", t->op, err);
    if (!rc) {
        wire_task wt = { .seed = S->sp.seed, .nargs = t->nargs, .rtol = t->rtol, .atol = t->atol, .ndims = t->ndims,
                         .plan = pj, .stream = t->stream };
        memcpy(wt.args, t->args, sizeof *wt.args * (size_t)t->nargs);
        memcpy(wt.shape, t->shape, sizeof *wt.shape * (size_t)t->ndims);
        snprintf(wt.name, sizeof wt.name, "%s", c.k.name);
        if (worker_task(S->W, &wt, c.job.cubin, c.job.cubin_len))
            rc = error("%s %s: cannot set the task up: %s", t->op, t->dtype, worker_errmsg(S->W));
    }
    free(pj);
    cand_free(&c);
    return rc ? -1 : 0;
}

void task_shape_text(const long long *shape, int ndims, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int d = 0; d < ndims && n < cap; d++) n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? "x" : "", shape[d]);
}
