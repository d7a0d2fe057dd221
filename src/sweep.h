/* sweep.h: a tuning window (`aitune sweep`) and its compile-only half
** (`aitune compile`). For each (op, dtype, bucket) of a spec: the template
** families' spaces are searched, each candidate instantiated (tmpl), compiled
** (jit, ahead of timing, through the registry's cubin cache), verified and
** timed in the worker, and stored as it lands; then the top K are re-timed
** interleaved and the winner is stored. A killed sweep resumes: configs the
** registry already has for this device are not measured again.
**
** Compiles keep ahead of the GPU: before a candidate is timed, its search
** is asked for more batches until sweep_opts.ahead candidates compile behind
** it, across batch boundaries (a strategy is asked while some of its
** configs are untold). Candidates land in the order asked; a budget or
** Ctrl-C stops after the one in hand, and what was asked ahead is neither
** recorded nor told. AITUNE_TRACE=FILE logs the asks, compiles and timings.
**
** On several GPUs (sweep_opts.gpus) each GPU is a lane: its own worker and
** thread, taking the spec's buckets one at a time from one queue, so every
** bucket is measured and raced on one GPU and no two workers time on the
** same GPU. Compiles of all lanes share one pool. Resume takes what any GPU
** of the same hardware and toolchain identity measured.
**
** The cubins a bucket's losers leave in the compile cache are dropped once
** the run has stored its winner (reg_cubin_trim): at the end of each bucket
** those of the buckets of other (op, dtype) pairs, which cannot share its
** kernels, and at the end of the run the rest (unless interrupted: then the
** (op, dtype) in hand stays whole). Winners', finalists' and defaults'
** kernels stay, and so does everything of a bucket with no winner yet, so
** an interrupted sweep resumes without compiling again.
**
** The modules (each header is its manual), from the run down:
**   sweep.c          sweep_run: the spec, the lanes, the registry, the run's end
**   sweep_lanes.h    the buckets' queue, shards (--shard), one lane per GPU (--gpus)
**   sweep_compile.h  aitune compile
**   sweep_tune.h     a bucket: its searches, the race (tune_pick), its winner;
**                    retune; check
**   sweep_hold.h     hold: the race's finalists at other sizes of the bucket
**   sweep_split.h    a bucket's parts where no one winner holds it
**   sweep_probe.h    races at other sizes, losses, a box's winner
**   sweep_flow.h     a search's candidates on their way (look-ahead)
**   sweep_record.h   winner rows, defaults, what earlier runs stored
**   sweep_task.h     the task at a shape, as the worker sets it up
**   sweep_cand.h     a candidate: instantiate, compile, load, verify, time
**   sweep_session.h  the lane's state, budget, Ctrl-C, lines, trace, summary
** and below them the worker (worker.h), its typed messages (wire.h), the
** compile pool (jit.h), the registry, the templates and the searches. */
#ifndef SWEEP_H
#define SWEEP_H
#include "device.h"
#include "spec.h"

/* Which GPUs of the host a sweep spreads its buckets over (--gpus). All
** zero: sweep_opts.gpu alone. */
#define SWEEP_MAX_GPUS 16
typedef struct sweep_gpus {
    int all;                    /* every GPU the driver sees */
    int first;                  /* > 0: GPUs 0 .. first-1 */
    int n, list[SWEEP_MAX_GPUS];/* n > 0: these ordinals (named: models may differ) */
} sweep_gpus;

typedef struct sweep_opts {
    const char *spec_path;
    const char *db_path;
    const char *root;           /* holds templates/ and search/ */
    const char *command;        /* recorded with the run */
    int compile_only;
    double budget_s;            /* > 0 overrides the spec */
    int max_evals;              /* > 0 overrides the spec */
    double kernel_timeout;      /* seconds a verification run may take */
    int threads;                /* compile threads; <= 0: one per core */
    int ahead;                  /* candidates a search keeps compiling behind the one being timed
                                ** (--ahead); 0: twice the threads, shared by the GPUs, at most an
                                ** eighth of the search's budget, at least a batch of 8; < 0: none,
                                ** a batch asked when the last one is done */
    int gpu;                    /* the one GPU, when gpus is all zero */
    sweep_gpus gpus;            /* sweep: one lane (worker, thread) per GPU */
    int quiet;                  /* no progress lines */
    int verbose;                /* compile: every kernel's row, not a summary */
    const char *peers_path;     /* peer figures (peers.h): each winner's ratio printed */
    int shard_i, shard_n;       /* --shard i/n: this run's share of the buckets (n 0: all) */
    /* want, when set: only the buckets it accepts (the GPU's facts at hand;
    ** the bucket's edges in the op's dim order). */
    int (*want)(void *ctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b);
    void *want_ctx;
    int retune;                 /* race each bucket's stored finalists first (aitune retune) */
    double noise;               /* retune: relative margin within which the winner stays */
    int check;                  /* re-time each bucket's winner against its record (aitune check) */
    int plan_only;              /* walk the buckets through want only: measure and record nothing */
    int keep_cubins;            /* keep every candidate's cubin, not only winners', finalists' and defaults' */
    int vendor;                 /* sweep_vendor.h: SWEEP_VENDOR_WIN (0, the default), _TIME or _OFF */
    int scan;                   /* aitune scan: every size of the spec's ranges timed (sweep_scan.h) */
    struct scan_pick { int sample; long long step; } scan_pick;   /* scan: which sizes of a range */
} sweep_opts;

/* "i/n" with 0 <= i < n <= 100000 -> *i, *n: 0, else -1. */
int sweep_parse_shard(const char *s, int *i, int *n);

/* "all", "N" (GPUs 0..N-1, 1 <= N <= SWEEP_MAX_GPUS) or "I,J,..." (two or
** more distinct ordinals in [0, 63]) -> *g: 0, else -1. */
int sweep_parse_gpus(const char *s, sweep_gpus *g);

/* Returns the process exit code (util.h), 130 when interrupted. */
int sweep_run(const sweep_opts *o);

#endif
