/* sweep_probe.h: a bucket's candidates raced at other sizes of the bucket
** than the one it was tuned at (probes), and what a choice among them is
** made of: a slot's loss at a probe (its time over the fastest's there,
** minus one; a slot wrong or failing there loses everything), its worst loss
** over the probes inside a box, and the box's winner. Used by hold
** (sweep_hold.h) and by the split of a bucket into parts (sweep_split.h). */
#ifndef SWEEP_PROBE_H
#define SWEEP_PROBE_H
#include "sweep_cand.h"
#include "wire.h"

#define PROBES_MAX 48           /* sizes raced for one bucket, its parts' included */
#define PROBE_SLOTS WIRE_SLOTS  /* candidates raced at once: the worker's slots */
#define PART_OWN (-2)           /* fi of a finalist of a part's own search (the part's or a parent's) */

/* The sizes a bucket's finalists were raced at: slot i's time there, 0
** when it failed (load, verification) or had no time; and the vendor's
** time there where the sweep times the vendor (sweep --vendor win or
** time, an op it serves: sweep_vendor.h), 0 where it does not or failed.
** The vendor is a bar, never a candidate: raced beside the slots (in the
** worker's last slot, SWEEP_VENDOR_SLOT, where the race leaves it free;
** else timed apart), a slot's loss is taken against
** the fastest of the slots and the vendor, so a winner that loses to
** cuBLASLt somewhere in a bucket is split and its parts searched there as
** one that loses to another finalist is (sweep_hold.h), but only a slot
** wins. */
typedef struct probe {
    long long shape[TMPL_MAXDIMS];
    double us[PROBE_SLOTS], spread[PROBE_SLOTS];
    double vendor_us;
} probe;

typedef struct probes {
    probe p[PROBES_MAX];
    int n;
    int m;                  /* slots raced: cs[0, m) */
} probes;


/* Race slots cs[0, P->m) (fi[i] == -1: out of the race) at shape, each
** verified there first, but at the task's own shape where the bucket's
** search verified it (every slot but PART_OWN ones); their times become a
** probe of P, with the vendor's there (raced beside them, its time stored
** under S->home; where it cannot be, the registry's or one timed apart). The worker's slots are left empty
** or not as the race left them: a caller loads what it runs next. 1 raced
** (or raced already), 0 skipped, -1 a tool failure. */
int probe_race(sw *S, const op_task *t, cand *const *cs, const int *fi, const long long *shape, probes *P);
/* The probe at shape, or -1. */
int probe_find(const probes *P, const long long *shape, int ndims);
/* Slot i's loss at probe p among m slots: its time over the fastest of
** the slots and the vendor, minus one (INFINITY: it failed there). */
double probe_loss(const probe *p, int i, int m);
/* Whether the vendor is faster at p than every slot of [0, m). */
int probe_vendor_ahead(const probe *p, int m);
/* Probe a of P on a line, for "loses 12.0% (at ...)": its shape ("the
** representative" where it is rep's; rep NULL: never), and ", behind the
** vendor" where the vendor is faster there than every slot (so the loss
** is against the vendor). */
void probe_where(const probes *P, int a, int ndims, const long long *rep, char *out, size_t cap);
int probe_in_box(const bucket *box, const long long *shape);
/* Slot i's worst loss over the probes inside box (0 with none); *at the
** first probe where it is that (-1: none). */
double probe_worst(const probes *P, const bucket *box, int i, int *at);
/* Whether slot i ties or trails the vendor at a probe inside box: slower
** than VENDOR_TIE below the vendor's time (a part there gets a search of
** its own, sweep_split.c). A tie counts: on an H200 the part [97, 128) of
** 1024 x 4096 was no slower than cuBLASLt at any size hold raced in it in
** one sweep, and 0.4-1.4% slower at 16 sizes of the scan that followed
** (the timing's spread at 9 us is about 1%; bench/RESULTS.md, eighteenth
** session). */
#define VENDOR_TIE 0.02
int probe_behind_vendor(const probes *P, const bucket *box, int i);
/* The winner of box among slots [0, P->m): the smallest worst loss over the
** probes inside it, slots within PROBE_TIE of that tying on it and the
** smallest mean loss (geometric, over the same probes) among them winning;
** the preferred slot (>= 0) on a tie of means, and with noise > 0 (retune's
** margin) whenever its worst loss is within noise of the smallest. *worst
** the winner's worst loss, *at where. The worst loss is often one size
** where every slot trails the vendor: on an H200 (twenty-eighth session)
** 14336 x 4096's part [225, 256) was held by wgmma 128 x 128, 13.9% behind
** cuBLASLt at m = 255 and 5-11% inside, over swapab's span, a little more
** behind at 255 and level with it at 225. */
#define PROBE_TIE 0.02
int probe_winner(const probes *P, const bucket *box, int prefer, double noise, double *worst, int *at);
int probe_winner(const probes *P, const bucket *box, int prefer, double noise, double *worst, int *at);
/* The probes of Q inside box, as a set of their own (the same slots; caller frees). */
probes *probes_in(const probes *Q, const bucket *box);

/* Where box's range dim d is cut when it is split along it alone
** (sweep_split.c), or 0: at its geometric middle (spec.h:
** bucket_split_point). A range bucket's probes sit at its tiles'
** boundaries, and the best config often changes right at one (a tile of
** 128 rows makes one pass at m = 128 and two at 129), where the middle
** would leave both sides in one part. So each probe's size inside the range
** is a cut too: the parts each side take the slot with the smallest worst
** loss over their probes (a part holding no probe rules the cut out), and
** the cut whose worse part loses least wins, unless the middle's is within
** noise of it. No cut leaves the upper edge's size alone: the part below
** would be searched at its own upper edge, the size before, where the same
** tiles lose as much (twenty-fourth session: 4096^2's m = [1024, 1792) was
** cut at 1791, and [1024, 1791) searched at 1789 still lost 20.6% to
** cuBLASLt there, its split depth spent). */
long long probe_cut(const probes *Q, const bucket *box, int d, double noise);

/* A size of b's dim d to probe near x (rounded down to a multiple of 64,
** in the bucket's alignment class), fallback where that leaves the bucket;
** and b's upper edge, each dim's last size so rounded. */
long long probe_size(const bucket *b, int d, long long x, long long fallback);
void probe_upper(const bucket *b, long long *shape);

/* A range bucket (spec.h: bucket.ranged) promises every size of its range
** dims that it serves (its class and those above it that the range does
** not tune apart: spec.h, bucket.salign), and is tuned at each one's
** largest size of its class, where a kernel tiled along the dim does the
** most work; its winner is then checked where a smaller size may want
** another config: the shapes it is raced at, the representative first,
** then per range dim (the other dims at their representative) the first
** size it serves, and every size of its class in the bucket when there
** are at most PROBE_RANGE_ALL, else the first of its class, and at each
** quarter's boundary of tiles of a power of two rows the boundary where it
** serves it (a tile's last full pass: where a vendor's aligned kernels are
** fastest) and the first of its class past it, where a tiled kernel starts
** another pass ([128, 256) of class 1, the range tuning class 8 apart:
** 129, 161, 193, 225, 255; tuning class 1 alone: 128, 129, 160, 161, ...
** 255). At most cap shapes; returns how many. */
#define PROBE_RANGE_ALL 6
int probe_range_shapes(const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int cap);

/* Where a config's own tiling steps inside range bucket b: the sizes of
** its one range dim (the other dims at the representative) at which plan
** pl's waves (plan.h: the rounds of tiles its grid runs) step up from the
** size before, each the first size of b's class from there, up to most of
** them, the largest steps first (2 rounds after 1 before 8 after 7), then
** the smaller sizes; added to shapes[0, n) where not there already, up to
** cap in all. Past such a step a tiled kernel's time jumps where a
** vendor's rises smoothly, so its worst loss is there, and the boundaries
** of tiles of a power of two rows (probe_range_shapes) miss it for tiles
** of other widths: a swapped 192 x 224 config at 4096^2 ran m = 1293
** (132 tiles on 132 SMs, one round) at 0.96x cuBLASLt and 1354 (242
** narrower tiles, two rounds) at 0.82x (twenty-fourth session). A plan
** without waves, a bucket
** without exactly one range dim, or waves that do not evaluate add
** nothing. Returns how many shapes there are now. */
int probe_wave_shapes(const bucket *b, const plan *pl, int most, long long (*shapes)[TMPL_MAXDIMS], int n, int cap);
/* The range dims' sizes of shapes[from, n), each " %lld", into out (the
** traces' lists of raced sizes). */
void probe_sizes_text(const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int from, int n, char *out, size_t cap);
/* How many such sizes hold (sweep_hold.h) and a part's search
** (sweep_part.h) race: PROBE_WAVE_STEPS a finalist, PROBE_WAVES in all. */
#define PROBE_WAVE_STEPS 2
#define PROBE_WAVES 6

#endif
