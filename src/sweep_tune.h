/* sweep_tune.h: one bucket, from its candidates to its winner: searched
** (a search per template, or one joint search over all of them), its
** fastest finalists raced interleaved (with the default, so the comparison
** is same-run), held and split where asked (sweep_hold.h), and stored;
** retuned (its stored finalists measured again, searched again when the
** ranking moved); or checked (its winner re-timed against its record). */
#ifndef SWEEP_TUNE_H
#define SWEEP_TUNE_H
#include "sweep_cand.h"

/* Spec task st's bucket b, timed at task t (the worker holds t): a search
** per template (tune_bucket) or one over them all (tune_joint, spec
** `joint: true`), then the race, then the winner stored. -1: a tool failure. */
int tune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b);
int tune_joint(sw *S, const spec_task *st, const op_task *t, const bucket *b);
/* aitune retune and aitune check, for one bucket: see sweep_tune.c. */
int retune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b);
int check_bucket(sw *S, const op_task *t, const bucket *b);

/* The race's choice, given its times: f[0, k) sorted fastest first, and
** the winner's index. Within 0.5% of the fastest the steadier (smaller
** spread) wins, then the lower canonical config, so the choice is
** repeatable; with keep_config (retune), the standing winner stays while it
** is within noise (relative) of the fastest. */
int tune_pick(final *f, int k, const char *keep_tmpl, const char *keep_config, double noise);

#endif
