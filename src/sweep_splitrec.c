/* sweep_splitrec.c: see sweep_splitrec.h. */
#define _GNU_SOURCE
#include "sweep_splitrec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void part_clear(part *p)
{
    for (int j = 0; j < p->nown; j++) cand_free(&p->own[j]);
    free(p->own);
    free(p->q);
    memset(p, 0, sizeof *p);
}

void split_free(split *sp)
{
    for (int i = 0; i < SPLIT_MAXPARTS; i++) part_clear(&sp->p[i]);
    free(sp);
}

int split_out_of_budget(sw *S, split *sp)
{
    if (!sw_out_of_budget(S)) return 0;
    if (!sw_interrupted()) sp->cut = 1;
    return 1;
}

int split_race(sw *S, const op_task *t, split *sp, cand *const *cs, const int *fi, const long long *shape, probes *Q,
               int *cut)
{
    if ((*cut = split_out_of_budget(S, sp))) return 0;
    return probe_race(S, t, cs, fi, shape, Q) < 0 ? -1 : 0;
}

/* A box's edges on a line: "rows [1024, 1408), cols [5760, 8192)". */
static size_t box_text(const op_task *t, const bucket *b, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int d = 0; d < b->ndims && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s [%lld, %lld)", d ? ", " : "", t->dims[d], b->lo[d], b->hi[d]);
    return at < cap ? at : cap - 1;
}

/* A part's name on its lines: its key, with its edges where asked or
** where it is a part of a part (whose key it may share), and then its
** level and its parent's edges. */
void split_part_name(const op_task *t, const split *sp, const part *p, int edges, char *out, size_t cap)
{
    size_t at = (size_t)snprintf(out, cap, "%s", p->b.key);
    if ((edges || p->depth > 1) && at + 2 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ": ");
        at += box_text(t, &p->b, out + at, cap - at);
    }
    if (p->depth > 1 && at + 32 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ", level %d in ", p->depth);
        box_text(t, &sp->p[p->up].b, out + at, cap - at);
    }
}
