/* sweep_split.h: a bucket split into parts (spec.h: bucket_split) where
** no one winner holds all of it (sweep_hold.h says when). Each part gets a
** winner of its own among the bucket's candidates, raced at the part's
** size and upper edge; a part whose winner still loses more than the task's
** split_at (or ties or trails the vendor) gets a search of its own where it
** loses most (sweep_part.h), and then, still losing, is split
** again the same way among its own candidates, down to the task's
** split_depth. A split that no part's winner among the candidates would
** change is made on trial, kept only if a part's own search changes a
** winner. The parts not split again are stored in place of the bucket's
** winner (split_store).
**
** The budget (sweep_session.h: the sweep's, and the bucket's share of it)
** stops a split as it stops a search: no part race, part search or split
** again starts once it is spent (split_out_of_budget), the one under way
** finishes, and the parts keep the winners chosen so far among their
** candidates; a part's search under way stops as a search does (its
** finalists are then not raced, the part's winner stays). The bucket is
** then marked cut (split.cut): its rows not exhaustive, and not recorded
** decided, so the next run holds and splits it again (sweep_hold.h).
** The record (part, split) and its budget check: sweep_splitrec.h. */
#ifndef SWEEP_SPLIT_H
#define SWEEP_SPLIT_H
#include "sweep_splitrec.h"

/* Split box (the bucket, or part up of sp; -1: the bucket) among the
** candidates cs[0, Q->m) (fi: their indices in bs->f, -1 or PART_OWN)
** raced at the probes Q, whose winner cs[cw] loses more than split_at
** there; see sweep_split.c. Returns how many parts were added to sp (with
** *trial when kept on trial), 0 when not split with the reason in *why. */
int split_box(sw *S, const op_task *t, const bucket *box, cand *const *cs, const int *fi, int cw, probes *Q,
              split *sp, int up, int *trial, const char **why);
/* Part i of sp decided (its own search, split again): 0, 1 when Ctrl-C cut
** it (the bucket is not decided), -1 when a tool failed. */
int split_settle(sw *S, const op_task *t, split *sp, int i);
/* Whether a split on trial is kept: a stored part of sp->p[first, n) has a
** winner other than x, the one all the split's parts had among their
** candidates; or (--vendor win) the vendor beats the winner at some stored
** part's size but not at all of them, so the vendor holds a part, not the
** whole. */
int split_trial_kept(const sw *S, const split *sp, int first, const cand *x);
/* The line of a split (of the bucket b when i < 0, its winner losing loss;
** else of part i), and the lines of part i (its parts' after its own). */
void split_say(sw *S, const op_task *t, const bucket *b, const split *sp, int i, double loss);
void split_say_part(sw *S, const op_task *t, const split *sp, int i);
/* The parts of split bucket b as winner rows, in place of the bucket's,
** in one transaction. -1: a tool failure (said). */
int split_store(sw *S, const op_task *t, const bucket *b, const bucket_state *bs, const split *sp);

#endif
