/* sweep_warm.h: a bucket's search warm-started from its neighbours' winners.
** A range cut into many buckets gives each a few candidates (a spec's
** max_evals per bucket and template); neighbouring buckets of one op and
** dtype are usually won by nearby configs. Before a template's search in a
** bucket, the sweep asks for the configs of the registry's winners of the
** same op, GPU architecture, dtype and template, the nearest first by the
** distance of the shape each was tuned at to the bucket's (the sum over the
** dims of |log2 of their ratio|, and 1 more for each dim of another alignment
** class; the bucket's own winner, from an earlier run, is at 0), at most the
** spec's `warm` of them (4 in a range by default, else 0), and at most a
** quarter of the search's max_evals (search/space.lua's ledger).
** The strategy tries those the template's space holds first, or the
** nearest config it holds (one param moved: search/space.lua's nearest),
** within the bucket's max_evals; the rest of the search goes as before.
** The model, anneal, genetic and local strategies take them; random (the
** baseline) and exhaustive (the whole space) start as they always did.
**
** The registry is untrusted: a winner whose config is not one JSON object,
** or whose shape lacks one of the task's dims, is skipped, never an error. */
#ifndef SWEEP_WARM_H
#define SWEEP_WARM_H
#include "sweep_session.h"

/* How many neighbours' winners a search in b (a bucket, or a split's part)
** with strategy starts from: the spec's `warm`, else SPEC_WARM in a range
** and 0 elsewhere; 0 for random (the baseline) and exhaustive (the whole
** space). */
int warm_count(const sw *S, const bucket *b, const char *strategy);

/* The configs (JSON texts, malloc'd) for tname's search in bucket b of
** task t (t's shape is the one the bucket is tuned at): at most k, the
** nearest first, no config twice. Returns how many (0 on a registry error,
** said as a warning; the search then starts cold). Free with warm_free. */
int warm_configs(sw *S, const op_task *t, const char *tname, int k, char ***out);
void warm_free(char **w, int n);

#endif
