/* sweep_flow.h: a search's candidates on their way, from the strategy's
** asks to the GPU (look-ahead), and what a search leaves behind beside its
** measurements: the configs its constraints() rejected with an error. */
#ifndef SWEEP_FLOW_H
#define SWEEP_FLOW_H
#include "sweep_cand.h"

/* A search's candidates on their way (issue 12): the candidates a search
** asked for and has not been told about, in the order it asked: the first
** one is verified and timed while the ones behind it compile. Before the first one is timed the strategy is asked
** for batches until `ahead` candidates wait behind it, so NVRTC's pool
** keeps compiling across batch boundaries rather than idling while the
** GPU waits for the first compile of the next batch; ahead 0 asks for a
** batch only when the last one has landed, as sweeps did before. A
** strategy asking ahead knows fewer results when it asks: the configs a
** model-guided one picks depend on the depth (deterministic for a seed and
** a depth). Candidates asked ahead that a budget or Ctrl-C leaves untimed
** are not recorded or told; their compiles not yet started are dropped. */
typedef struct flow {
    sw *S;
    const op_task *t;
    const bucket *b;
    search *se;
    bucket_state *bs;
    const char *tname;          /* the search's template; NULL: a joint search (its configs name theirs) */
    const char *default_cfg;    /* the bucket's default, for the race (cand_land) */
    const char *store_tmpl, *store_cfg;   /* a default whose kernel goes to the registry once compiled, or NULL */
    int batch, ahead;           /* configs per ask; candidates kept on their way behind the one being timed */
    int evals;                  /* the most configs the search will ask for (its budget) */
    int nasked, done;           /* batches asked; the strategy has no more */
    int id;                     /* the lane's search number (the trace's) */
    cand **q;                   /* on their way: q[0] lands next */
    int n, cap;
    cand **kept;                /* defaults that landed: a search that asks for one is told its result */
    int nkept;
} flow;


/* A search from its defaults (defaults[i] of template names[i], measured
** first, those valid; NULL: none) to its end, a budget or Ctrl-C. The
** caller sets f's S, t, b, se, bs, tname, default_cfg, store_*, batch and
** evals; the rest is flow_run's. -1: a tool failure (said). */
int flow_run(flow *f, char *const *names, char *const *defaults, int nd);

/* Whether max_evals cuts se's space (a bound until the lazy walk is
** complete), and the most configs se will ask for: max_evals when it cuts,
** else the space's valid configs. */
int flow_capped(search *se, int max_evals);
int flow_budget(search *se, int max_evals);

/* Template errors in constraints() are recorded results, once. tname: the
** search's template, or NULL for a joint search (its configs say theirs). */
void flow_rejected(sw *S, search *se, const char *tname, const op_task *t, const bucket *b);

/* Whether spec task st uses template tname and it handles t on this GPU (a
** template that errors in supports() is warned about and counted). With bs,
** counts the templates that do (bs->served) and keeps why the last one of
** the task's that does not, does not (bs->unserved): a bucket no template
** serves says so, and why, instead of "no correct candidate". */
int flow_usable(sw *S, const spec_task *st, const char *tname, const op_task *t, bucket_state *bs);

#endif
