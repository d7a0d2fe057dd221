/* sweep_record.h: what a bucket leaves in the registry beside its
** measurements: its winner row (with the runners-up retune races again and
** the kernel libaitune launches), the op's default, the losers' cubins
** dropped; and what earlier runs left there that a sweep reads back: the
** bucket's fastest measurements, its stored finalists, its stored family
** (the bucket's winner or its parts'). */
#ifndef SWEEP_RECORD_H
#define SWEEP_RECORD_H
#include "sweep_task.h"

/* The winner of bucket b (timed at t's shape): f[w] of the finalists
** bs->f[0, k), its kernel that of the candidate in cs[0, k) with its
** template and config, stored and said. -1: a tool failure (said). */
int record_winner(sw *S, const op_task *t, const bucket *b, const bucket_state *bs, int k, int w, cand *cs);
/* Its row alone: f[w] of f[0, k), the kernel from cs[0, ncs). W's
** runners_up and launch are malloc'd (record_row_free). */
int record_row(sw *S, const op_task *t, const bucket *b, const final *f, int k, int w, double default_us,
               int exhaustive, cand *cs, int ncs, winner *W);
void record_row_free(winner *W);
/* A stored winner's line (with x vendor where the vendor was timed). */
void record_say(sw *S, const op_task *t, const winner *W);

/* The vendor against a winner (sweep_vendor.h): W, of bucket b (a part's
** too) at t's shape (t's task set up on the worker), its kernel c's, is
** raced against cuBLASLt; where the vendor is faster, no template beat it,
** and *W becomes the vendor's row (the old one freed). home: the bucket the
** vendor's time is recorded under. 0 (W as it is, or the vendor's), -1 a
** tool failure (said). */
int record_vendor_race(sw *S, const op_task *t, const bucket *b, const char *home, cand *c, double default_us, winner *W);
/* No template has a correct candidate for b: where the vendor was timed at
** t's shape, it holds b (stored and said). 1 stored, 0 not, -1 said. */
int record_vendor_alone(sw *S, const op_task *t, const bucket *b, int exhaustive);

/* The default of (op, arch, dtype), with c's kernel when c (instantiated,
** compiled) has one, so libaitune can launch at the default level; c NULL:
** the config alone (a stored kernel of the same config stays).
** record_store_default compiles it first (compile: it is in the cache). */
int record_default(sw *S, const op_task *t, const char *tname, const char *config, const cand *c);
int record_store_default(sw *S, const op_task *t, const char *tname, const char *config);

/* Drop the losers' cubins of the buckets this run decided, but those of
** t's (op, dtype) when t is given: see sweep.h. -1: said. */
int record_trim(sw *S, const op_task *t);

/* The bucket's fastest measurements from earlier tasks and runs on this
** device join the finalists. */
int record_add_earlier(sw *S, const op_task *t, const bucket *b, bucket_state *bs);

/* A stored race, as retune reads it back. */
typedef struct retune_final {
    struct { char tmpl[64]; char *config; double median_us; } f[16];
    int n;
} retune_final;

/* reg_winner_finalists' callback: each stored finalist into a retune_final
** (ctx), once (a split bucket's parts share theirs). */
int record_add_stored(const char *tmpl, const char *config, double median_us, void *ctx);

/* The stored winners of b and its parts (this GPU's, hw, when it has any),
** and whether b is split: some are its parts'. */
int record_family(sw *S, const op_task *t, const bucket *b, const char *hw, winner **fam, int *n, int *split);
void record_family_free(winner *fam, int n);
/* A stored part as a bucket: edges from the row, its size from the row's
** shape. -1 when anything in them does not parse. */
int record_part_of_row(const winner *w, const op_task *t, bucket *pb);

#endif
