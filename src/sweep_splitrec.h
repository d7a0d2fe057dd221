/* sweep_splitrec.h: the record of a split bucket (sweep_split.h): its
** parts at every level with their candidates, times, winners and own
** searches' finalists; their names on the sweep's lines; and the budget
** check that stops hold, the split and a part's own search (sweep_part.h)
** alike. Both the split and a part's search read and write it; neither
** owns the other. */
#ifndef SWEEP_SPLITREC_H
#define SWEEP_SPLITREC_H
#include "sweep_probe.h"

/* A part of a split bucket, at any level: the candidates raced in it (the
** hold race's slots, its parent part's candidates, and the finalists of its
** own search when it had one), each one's time at the part's size, its
** winner and the winner's worst loss in it. A part split again keeps its
** record (its parts point at its candidates) but is not stored. */
#define PART_OWN_MAX 8          /* a part's own finalists at most (sweep_part.h) */
#define SPLIT_MAXPARTS 64       /* parts of every level of one bucket: bounds a split's memory and races */
typedef struct part {
    bucket b;
    int depth;              /* 1: a part of the bucket, 2: a part of a part, ... */
    int up;                 /* its parent's index in split.p; -1: the bucket */
    int nkids;              /* split again into that many parts (those whose up is it); 0: stored */
    int n, w;               /* the candidates c[0, n); the winner c[w] */
    cand *c[PROBE_SLOTS];
    int fi[PROBE_SLOTS];      /* c[i]'s index in bs->f (-1: out of the race), or PART_OWN */
    double us[PROBE_SLOTS];
    double worst;
    char where[96];
    char whole[96];         /* why a part that still loses more than split_at was not split again */
    probes *q;              /* the probes inside it, of c[0, n) (owned): where its own parts are chosen */
    int searched;           /* its own search ran, at searched_at */
    long long searched_at[TMPL_MAXDIMS];
    cand *own;              /* its own search's finalists and its neighbours' winners, owned: own[0, nown), at most PART_OWN_MAX */
    int nown;
    int capped;             /* its own search was cut by its budget */
} part;

/* What hold_probe decided beyond the winner: n > 0 parts when the bucket
** is split, p[0, n) of every level (the bucket's own parts first, each
** part's parts after their parent); fi maps the race's slots to bs->f. */
typedef struct split {
    int n;
    int trial;              /* no part changes the winner among the slots: split only if a part's search does */
    part p[SPLIT_MAXPARTS];
    int fi[PROBE_SLOTS];
    int rc;                 /* -1: a tool failed in a part's search (said); 1: Ctrl-C cut one */
    int cut;                /* the budget stopped a race or search of hold's or the split's */
} split;

/* Whether hold and split stop: the budget spent or Ctrl-C (sw_out_of_budget,
** which owns both, the bucket's share included). The budget, not Ctrl-C,
** marks sp->cut. */
int split_out_of_budget(sw *S, split *sp);
/* Slots cs[0, Q->m) raced at shape into Q (sweep_probe.h: probe_race),
** unless split_out_of_budget: then *cut is set and nothing raced. -1: a
** tool failure. */
int split_race(sw *S, const op_task *t, split *sp, cand *const *cs, const int *fi, const long long *shape, probes *Q,
               int *cut);

/* Part p emptied: its probes and own finalists freed (a split on trial
** not kept drops its parts so). */
void part_clear(part *p);
/* Frees sp, its parts' probes and own finalists. */
void split_free(split *sp);

/* Part p's name on its lines: its key, with its edges where asked (edges)
** or where it is a part of a part, then its level and its parent's edges. */
void split_part_name(const op_task *t, const split *sp, const part *p, int edges, char *out, size_t cap);

#endif
