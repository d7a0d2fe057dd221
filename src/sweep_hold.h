/* sweep_hold.h: buckets that hold (spec `hold: true`). A winner is chosen
** at the bucket's representative size and then answers every shape of the
** bucket, up to twice as large in every dim. So the bucket's best
** HOLD_FINALISTS (the race's, and the next ones by their search times) are
** verified and raced at three shapes of the bucket: its representative, its
** geometric middle and its upper edge (sweep_probe.h: probe_size; a range
** bucket's sizes: probe_range_shapes), at the holes `aitune scan` found
** in it on this GPU, timed the same way (sweep_scan.h), and, in a range
** bucket, where a finalist's own tiling steps up (probe_wave_shapes: the
** race's winner's PROBE_WAVE_STEPS largest steps first, then the other
** finalists', PROBE_WAVES in all). A
** finalist's loss at a shape is its time over the fastest finalist's there,
** or the vendor's where the sweep times it and it is faster still (the
** vendor is a bar raced beside the finalists, never a candidate:
** sweep_probe.h), minus one (a finalist wrong or failing there loses
** everything). Beside
** the finalists race each of their templates' defaults at the other sizes
** (HOLD_SLOTS in all), built and verified at each size: a range bucket's
** search at its upper edge finds configs fit for that edge (swapab's
** mid-size kernel at m = 255: passes of 256 rows of A), the default at a
** smaller size is the template's own fit there (m = 129: 160 rows), so
** the bucket's winner loses where no finalist holds and the split's parts
** may take those defaults as their winners (never the bucket: its winner is
** a finalist, run at its representative). The
** winner becomes the finalist with the smallest worst loss (on a tie
** within 2%, the smaller mean loss), the race's winner when it is within
** the noise margin of that (hold_choose). The
** finalists' stored times become those of the race at the representative.
**
** A bucket whose winner still loses more than the task's split_at somewhere
** is split (sweep_split.h): its parts get winners of their own from the
** same finalists, a search of their own where they still lose, and parts of
** their own below that, down to the task's split_depth.
**
** The budget (sweep_session.h: the sweep's, and the bucket's share of it,
** the time left over the buckets left; a bucket that holds leaves its
** search HOLD_SEARCH_SHARE of its share) stops hold as it stops a search: no
** slot is built and no size raced once it is spent (split_out_of_budget),
** the race under way finishes. A hold cut before it raced every size keeps
** the race's winner (a choice over some of the sizes promises nothing over
** the bucket) and says after how many; a split cut keeps the winner hold
** chose, or the parts decided so far, each with the winner chosen among its
** candidates (sweep_split.h). Either way the bucket's rows are stored not
** exhaustive and the bucket is not recorded decided (the share or budget it
** hit keeps it out: sweep_resume.h), so the next run holds and splits it
** again, its searches taken from the registry; the summary counts the
** buckets cut. So a slow hold cannot take the time of the buckets after it
** (the fourth session's GPU run: rmsnorm's last bucket got none). Ctrl-C in
** hold's races or a part's search stores nothing for the bucket. */
#ifndef SWEEP_HOLD_H
#define SWEEP_HOLD_H
#include "sweep_split.h"

#define HOLD_FINALISTS 8
#define HOLD_SLOTS 12           /* finalists and hold's defaults: a part's own search needs room beside them (16) */

/* After the race of bucket b (its winner bs->f[w]; cs[0, *kp) the race's
** slots, compiled and loaded): the winner's index in bs->f, and sp->n > 0
** when the bucket is split (sp->rc: a tool failed, or Ctrl-C cut a part's
** search). A worker that cannot be given a probe's task (said already)
** ends the probes: the winner is chosen from those raced. */
int hold_probe(sw *S, const op_task *t, const bucket *b, bucket_state *bs, cand *cs, int *kp, int w, split *sp);

/* hold's choice, given the races: the slots raced at the probes P (slot i
** is bs->f[fi[i]], fi[i] -1 when it left the race), the race's winner
** bs->f[w]. The winner becomes probe_winner's over the probes inside b
** (sweep_probe.h: the smallest worst loss, the smaller mean loss on a tie
** within 2%), the race's winner preferred (and kept while within noise > 0
** of that). Returns 0 when there is no choice to make (the race's winner is
** not a slot, or no slot has a time): then c->nw is w. */
typedef struct hold_choice {
    int cw;                 /* the race winner's slot (-1: it is not one) */
    int cb;                 /* the slot that wins (the smallest worst loss where no slot has a time) */
    int nw;                 /* the winner now: an index in bs->f */
    double worst[PROBE_SLOTS];   /* each slot's worst loss (INFINITY: out of the race, or failing at a probe) */
    int at[PROBE_SLOTS];         /* the probe of that loss (-1: none) */
} hold_choice;
int hold_choose(const probes *P, const bucket *b, const int *fi, int w, double noise, hold_choice *c);

/* The holes `aitune scan` found in bucket b on S's GPU (R's scans), timed
** t's way, at sizes of the classes b's winner must run (align.h), that are
** not among shapes[0, n): added after them, up to cap in all. Returns how
** many shapes there are now. hold races its slots at them; a resumed sweep
** decides a bucket again when they change (sweep_resume.h). */
int hold_holes(sw *S, reg *R, const op_task *t, const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int n, int cap);

#endif

