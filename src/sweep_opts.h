/* sweep_opts.h: what a sweep is asked (sweep_opts), and the option values
** of --shard and --gpus read into it (their parsers live with the lanes
** that use them: sweep_lanes.c). Below every sweep module, so each reads
** the options without pointing back up at sweep.h. */
#ifndef SWEEP_OPTS_H
#define SWEEP_OPTS_H
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
    int count_only;             /* compile --plan: each bucket's candidates counted (sweep_space.h), nothing compiled */
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

#endif
