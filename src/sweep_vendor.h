/* sweep_vendor.h: the vendor in a sweep (issue 33). For the ops the vendor
** serves (vendor.h: the GEMM ops), the lane's worker times cuBLASLt at each
** shape the sweep tunes, as it times a candidate (loaded into a slot,
** verified against the op's reference, timed by the task's method), and the
** registry keeps the time (registry_vendor.h), so a resumed sweep does not
** time it again. Where a template winner has been chosen for a bucket or a
** split bucket's part, the winner and the vendor are raced interleaved at
** its shape; when the vendor is faster, no template beat it there, and the
** vendor is stored as that bucket's or part's winner (template
** VENDOR_TEMPLATE, config "{}", no cubin).
**
** The vendor is a measurement, never the end of a sweep: a missing library,
** a wrong answer or a fault is recorded as the vendor's row (status runtime
** or wrong) and said once; the sweep goes on. This module knows only the
** worker, the registry and the run: the sweep hands those in. */
#ifndef SWEEP_VENDOR_H
#define SWEEP_VENDOR_H
#include "registry_vendor.h"
#include "spec.h"
#include "tmpl.h"
#include "worker.h"

/* What the vendor may do in a sweep (sweep --vendor): be timed and hold a
** bucket or part it wins (the default, 0), be timed only, or be left out. */
enum { SWEEP_VENDOR_WIN, SWEEP_VENDOR_TIME, SWEEP_VENDOR_OFF };

/* The slot the vendor takes in a race: the worker's last (a probe races
** it beside at most this many candidates: sweep_probe.h). */
#define SWEEP_VENDOR_SLOT (WIRE_SLOTS - 1)

typedef struct sweep_vendor {
    /* handed in by the sweep */
    int mode;                   /* SWEEP_VENDOR_* */
    worker *W;
    reg *R;
    long long dev_id, run_id;
    char arch[16];              /* the registry key: sm_90 */
    double kernel_timeout;      /* s, per verification */
    /* counts for the summary */
    int timed, resumed, failed; /* shapes timed now, found in the registry, failed */
    int raced, held;            /* races against a winner, and buckets or parts the vendor won */
    int nx;                     /* winners compared with the vendor */
    double log_x, worst_x;      /* sum of log(x vendor), and the smallest x vendor */
    int said;                   /* a failure was said (once per sweep) */
    /* the vendor's row while it sits in SWEEP_VENDOR_SLOT (a probe's bar from
    ** sweep_vendor_bar_load to its race's record, or sweep_vendor_race's) */
    reg_vendor bar;
    int bar_new;                /* a probe's bar: the registry had no row at its shape, counted as timed */
} sweep_vendor;

/* Parse a --vendor value: win, time or off. 0, or -1. */
int sweep_vendor_parse(const char *s, int *mode);

/* Hand the lane's worker, registry, run and arch in (before each bucket:
** a restarted lane keeps its counts). */
void sweep_vendor_bind(sweep_vendor *V, int mode, worker *W, reg *R, long long dev_id, long long run_id,
                       const char *arch, double kernel_timeout);
/* A lane's counts into the sweep's. */
void sweep_vendor_add(sweep_vendor *V, const sweep_vendor *L);

/* Whether the vendor is in t's sweep at all. */
int sweep_vendor_serves(const sweep_vendor *V, const op_task *t);

/* Time the vendor at t's shape (the task already set up on the worker),
** unless the registry has its time there on this GPU's hardware, timed t's
** way; home: the bucket key the shape is tuned for. *out gets the row (a
** failure's status and error too). 1: an ok time; 0: none (not served, or
** a failure, recorded); -1: the registry failed (said). */
int sweep_vendor_time(sweep_vendor *V, const op_task *t, const char *home, reg_vendor *out);

/* The vendor's time at t's shape (set up on the worker) as a bar for
** hold's races there where it is not raced beside them (sweep_probe.h;
** sweep_vendor_bar_load below): the registry's on this GPU's
** hardware, else measured and stored as sweep_vendor_time does; a time
** found is not counted again (the bucket's own shape was, by the sweep).
** 1 with *us, 0 none (not served, or the vendor's failure, recorded), -1
** the registry failed (said). */
int sweep_vendor_bar(sweep_vendor *V, const op_task *t, const char *home, double *us);

/* The vendor as a bar raced beside a probe's slots (sweep_probe.h), so its
** time comes from the same interleaved rounds as theirs, as the scan races
** the registry's answer against it: timed apart, before or after, its time
** and theirs can differ by more than a split's margin at compute-bound
** sizes (on an H200, twenty-ninth session: a bar timed alone against the
** scan's raced vendor at 14336 x 4096, m = 193..256, 0.86-1.07x, median
** 1.05x; 1024 x 4096, m <= 64, 0.88-1.43x). sweep_vendor_bar_load loads
** and verifies cuBLASLt's product for t (set up on the worker) into
** SWEEP_VENDOR_SLOT: 1 loaded, 0 not (not served; the registry holds the
** vendor's failure at that shape, so it is not tried again; or it fails
** now: recorded where the registry had no row there, else its time stays),
** -1 the registry failed (said). Then the caller races the
** slot beside its own (sweep_cand.h: cand_race_beside) and hands its
** statistics to sweep_vendor_bar_raced, which stores that time as the
** vendor's at t's shape (replacing the row before), gives it in *us and
** empties the slot: 1 with a time, 0 without one (the race failed: the
** row stays as it was), -1 the registry failed (said). */
int sweep_vendor_bar_load(sweep_vendor *V, const op_task *t, const char *home);
int sweep_vendor_bar_raced(sweep_vendor *V, const stats *st, double *us);

/* The same, measured whatever the registry has (check re-times a vendor
** winner); the row stored replaces the one before. */
int sweep_vendor_measure(sweep_vendor *V, const op_task *t, const char *home, reg_vendor *out);

/* Race the candidate loaded in slot against the vendor at t's shape, 30
** interleaved rounds, and record the vendor's race time (as its time at
** that shape). *cand_us and *vendor_us get the medians. 1 raced; 0 not: the
** vendor failed to load or verify (recorded), or the race itself failed
** (the candidate's slot, a restarted worker: nothing recorded); -1 the
** registry failed (said). */
int sweep_vendor_race(sweep_vendor *V, const op_task *t, const char *home, int slot, double *cand_us,
                      double *vendor_us);

/* Note a stored winner's x vendor (vendor_us over its time) for the summary. */
void sweep_vendor_count(sweep_vendor *V, double winner_us, double vendor_us);

/* The winner row of bucket b (dims, edges and key; a part's too) held by
** the vendor at t's shape, timed us, ahead of beaten (the template winner it
** raced, time beaten_us: the margin, and the only runner-up kept, so a
** retune can race it again; NULL: no template had a correct candidate);
** exhaustive: whether the templates' searches saw their whole spaces. W's
** launch and runners_up are malloc'd: free them (the sweep's
** winner_row_free). -1 when t is not the vendor's. */
int sweep_vendor_winner(const sweep_vendor *V, const op_task *t, const bucket *b, double us, const char *beaten_tmpl,
                        const char *beaten_config, double beaten_us, double default_us, int exhaustive, winner *W);

/* The summary's line ("vendor: ..."), "" when the vendor had no part. */
void sweep_vendor_summary(const sweep_vendor *V, char *out, int cap);

#endif
