/* sweep_session.h: the state of a sweep's work on one GPU (a lane), and
** what every part of a sweep shares through it: the budget and Ctrl-C,
** lines on stdout beside the progress line, the AITUNE_TRACE log, the
** counts and the summary on stderr.
**
** Ctrl-C (SIGINT, SIGTERM) stops a sweep after the candidate being timed
** (the GPU's work in hand), and gives the compiles in flight up at once:
** the compile pool stops on sw_interrupted (jit_pool_stop_when), its
** helpers killed within 0.1 s, and a compile it gave up is no result
** (sweep_cand.h). A second one ends the process at once (sw_signals).
** sw_interrupted and sw_out_of_budget are what the loops ask before each
** step. */
#ifndef SWEEP_SESSION_H
#define SWEEP_SESSION_H
#include "jit.h"
#include "peers.h"
#include "progress.h"
#include "registry_cubin.h"
#include "spec.h"
#include "sweep_opts.h"
#include "sweep_vendor.h"
#include "tmpl.h"
#include "worker.h"

/* One lane of a sweep: the state of the work on one GPU. A sweep on one GPU
** has one; on several, each lane runs on a thread of its own with its own
** worker, template state and registry connection (lanes share only the
** spec, the compile pool, the progress line and the bucket queue:
** sweep_lanes.h). */
typedef struct sw {
    const sweep_opts *o;
    peers peers;                /* --peers: figures to compare winners with */
    spec sp;
    tmpl *T;
    reg *R;
    worker *W;
    jit_pool *pool;
    device dev;
    long long dev_id, run_id;
    char arch[16];          /* the registry key: sm_90 (no 'a') */
    double t0, budget_s, copy_gbps;
    int budget_hit;
    /* A budget is shared by the buckets: the one in hand may use its share,
    ** what is left after a reserve for the buckets left (sweep_lanes.c:
    ** share_of), and stops at share_end (0: no budget) without stopping the
    ** sweep. done_s and done_n: the wall time and the number of the
    ** buckets this lane finished, the reserve's measure. */
    double share_end, done_s;
    int done_n;
    int share_hit;          /* the bucket in hand used its share */
    /* A bucket that holds: its searches stop at search_end (0: none), the
    ** HOLD_SEARCH_SHARE of its share, and the rest is hold's, its races at
    ** the bucket's sizes and its splits (sweep_hold.h). */
    double search_end;
    int search_hit;         /* the bucket in hand's search stopped there */
    int shares_cut;         /* buckets stopped at the end of their share */
    int holds_cut;          /* buckets whose hold or split the budget cut (sweep_hold.h) */
    /* counts for the summary */
    int evaluated, resumed, compiled, cache_hits, by_status[8], rejected, winners;
    int retuned, escalated; /* retune: buckets re-raced, and searched again */
    int checked, regressed; /* check: winners re-timed, and slower or failing */
    int hold;               /* the task in hand asks for buckets that hold (spec `hold: true`) */
    int held, moved;        /* hold: buckets probed, and whose winner changed */
    double hold_before, hold_after;   /* hold: the worst loss over the probed buckets, before and after */
    double split_at;        /* the task in hand's (spec `split_at`); 0: no splits */
    int split_depth;        /* the task in hand's (spec `split_depth`): levels of parts below a bucket */
    const spec_task *task;  /* the task in hand: a part's own search is the bucket's (search_part) */
    char home[96];          /* the bucket in hand's key: the vendor's times at its probes are filed under it */
    int split, parts;       /* hold: buckets split, and their parts stored (those not split again) */
    int resplit;            /* hold: parts split again */
    int searched, searched_evals;     /* hold: parts searched (sweep_part.h: part_research), and their candidates */
    double hold_final;      /* hold: the worst loss of the winners stored, parts' included */
    int vendor_bars;        /* hold: probes where the vendor's time was a bar (sweep_probe.h) */
    int broken_before, broken_after;  /* hold: winners wrong or failing at a probed shape, before and after */
    int kept, kept_winners; /* resume: buckets decided by earlier runs left as they are, and their winner rows */
    int decided_now;        /* resume: buckets this run decided and recorded (sweep_resume.h) */
    char resume_op[32], resume_src[17];   /* the last op whose template sources a decision's basis hashed */
    reg_trim_stats trimmed; /* losers' cubins dropped (sweep.h) */
    sweep_vendor V;         /* the vendor in the sweep (bound to the lane's worker per bucket), its counts */
    /* wall time per op, for the summary */
    int nops;
    char op_name[32][32];
    double op_s[32];
    progress *P;            /* NULL when quiet */
    progress *run_P;        /* the run's own (S's; freed at the end): on several GPUs, S->P is lane 0's view of it */
    /* the lane */
    int nlanes;             /* lanes of the sweep, once they started (0 or 1: one) */
    int gpu;                /* the GPU's ordinal */
    char tag[16];           /* " [GPU 1]" on its lines when there are several */
    strbuf env;             /* the run's environment, from the worker */
    worker_stats ws;        /* the worker's counts, kept when it is freed */
    int code;               /* the lane's exit code */
    int searches;           /* searches started by the lane (the trace's numbers) */
} sw;


/* SIGINT and SIGTERM stop the sweep after the candidate being timed; a
** second one ends the process (its default action). */
void sw_signals(void);
/* Whether Ctrl-C came. */
int sw_interrupted(void);
/* Whether the lane must stop: Ctrl-C, or its budget spent (sets budget_hit),
** or the bucket in hand its share of it (sets share_hit). */
int sw_out_of_budget(sw *S);
/* Whether a bucket's search must stop: sw_out_of_budget, or the part of
** its share that a bucket that holds leaves its search (search_end; sets
** search_hit). A part's own search, in hold, stops at sw_out_of_budget. */
int sw_search_over(sw *S);
#define HOLD_SEARCH_SHARE 0.5   /* a holding bucket's search: this part of its share */
/* Whether the bucket in hand was cut short: the budget, its share, its
** search's part of that, or Ctrl-C. Its winners are then not exhaustive,
** and it is not recorded decided (the next run decides it again). */
int sw_bucket_cut(const sw *S);

/* AITUNE_TRACE=FILE: the sweep appends what its searches do as it happens
** (batches asked, compiles, timings; times in seconds since the run began),
** for tests and for seeing the compiles run ahead of timing. sw_tracing
** says whether a log is open, so costly lines are built only then. */
void sw_trace_open(void);
void sw_trace_close(void);
int sw_tracing(void);
void sw_trace(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A line (or lines) on stdout, the progress line out of its way: lanes on
** other GPUs print too. With several GPUs each line names its GPU. */
void sw_say(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The progress line's note; an empty note makes room for a line on stdout. */
void sw_note(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Counts: a candidate's status, an op's wall time, a lane's into the sweep's. */
void sw_count_status(sw *S, const char *status);
void sw_op_time(sw *S, const char *op, double s);
void sw_add_counts(sw *S, const sw *L);
/* The run's summary on stderr (compile's or sweep's). */
void sw_summary(sw *S);
/* The command this run is ("aitune check SPEC ...": check), for messages:
** retune, check and window run through sweep_run too. */
void sw_verb(const sweep_opts *o, char out[16]);

#endif
