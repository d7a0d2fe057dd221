/* sweep_warm.h: a bucket's search (or a split part's) warm-started from its
** neighbours' winners.
** A range cut into many buckets gives each a few candidates (a spec's
** max_evals per bucket and template); neighbouring buckets of one op and
** dtype are usually won by nearby configs. Before a template's search in a
** bucket, the sweep asks for the configs of the registry's winners of the
** same op, GPU architecture, dtype and template (and a split part's, the
** winners of the bucket's other parts searched already, which are stored
** only when the bucket ends: warm_seen), the nearest first by the
** distance of the shape each was tuned at to the bucket's (the sum over the
** dims of |log2 of their ratio|, and 1 more for each dim of another alignment
** class; the bucket's own winner, from an earlier run, is at 0), at most the
** spec's `warm` of them (4 in a range by default, else 0), and at most a
** quarter of the search's max_evals (search/space.lua's ledger).
** Each is carried to the bucket's size first (tmpl_carry: the template's
** carry, where it has one, gives the config that tiles this size as the
** winner tiled its own; swapab and the swapped wgmma kernel's fixed widths
** keep their tiles of A's rows, each as wide as they now need). The
** strategy tries those the template's space holds first, or the
** nearest config it holds (one param moved: search/space.lua's nearest),
** within the bucket's max_evals; the rest of the search goes as before.
** The model, anneal, genetic and local strategies take them; random (the
** baseline) and exhaustive (the whole space) start as they always did.
**
** The registry is untrusted: a winner whose config is not one JSON object,
** or whose shape lacks one of the task's dims, is skipped, never an error. */
#ifndef SWEEP_WARM_H
#define SWEEP_WARM_H
#include "search.h"
#include "sweep_session.h"

/* A config this sweep found and has not stored yet (a split part's winner:
** a bucket's parts are stored together when it ends), of template tmpl,
** found at the size at. */
typedef struct warm_seen {
    const char *tmpl, *config;
    long long at[TMPL_MAXDIMS];
} warm_seen;

/* tname's search (search_new_warm) in b, a bucket or a split's part, at
** t's shape (the size it is tuned at), started from the configs of the
** registry's winners and seen[0, nseen) nearest t, carried to t's shape:
** for the same op, GPU architecture, dtype and template, at most the spec's
** `warm` (SPEC_WARM in a range, else 0; none for random, the baseline, and
** exhaustive, the whole space). Each warm start is traced. NULL when the
** search cannot be made (tmpl_errmsg). */
search *warm_search(sw *S, const op_task *t, const bucket *b, const char *tname, const char *strategy,
                    unsigned long long seed, int max_evals, const warm_seen *seen, int nseen);

/* The configs of the registry's winners nearest t for template tname, as
** they are (the nearest first, no config twice), as many as b's searches
** start from (the spec's `warm`, SPEC_WARM in a range, whatever the strategy): a split
** part's search races them beside its own finalists (sweep_part.c), since
** a search of a few evaluations takes at most a quarter of them. Returns
** how many; *out (NULL with none) goes to warm_free. */
int warm_neighbours(sw *S, const op_task *t, const bucket *b, const char *tname, char ***out);
void warm_free(char **w, int n);

#endif
