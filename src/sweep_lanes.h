/* sweep_lanes.h: a sweep's buckets and the GPUs they run on. The spec's
** buckets, in its order (task, dtype, bucket), are this run's share of them
** (--shard i/n: dealt round-robin, so every shard of the same spec gets a
** fixed share) and queue up; each GPU is a lane (sweep_session.h: sw) with
** its own worker, thread, templates and registry connection, taking the
** next bucket from the queue until it is empty, the budget is spent or
** Ctrl-C. */
#ifndef SWEEP_LANES_H
#define SWEEP_LANES_H
#include "sweep_session.h"
#include <pthread.h>

/* One bucket of the queue: the spec's task, dtype and bucket, and whether
** an earlier run decided it on this run's basis (sweep_resume.h): then the
** lanes leave it as it is. */
typedef struct slot {
    int task, dtype;
    bucket b;
    long long decided;      /* the earlier run that decided it; 0: to decide */
    int winners;            /* that run's winner rows for it */
} slot;

/* What the lanes of one sweep share. The buckets are handed out one at a
** time to whichever lane asks first, so a slow bucket on one GPU never
** idles another, and each bucket is measured and raced on one GPU. The
** lock also serializes o->want, whose context is the caller's, not the
** lanes'. Compiles go through the one jit pool (its -j is the whole
** host's budget); the registry is one file with a connection per lane (WAL,
** busy timeout: each write commits on its own, so a kill loses nothing
** committed and leaves nothing half-written). */
typedef struct hub {
    pthread_mutex_t mu;
    slot *q;
    int nq, next;
    int queued;             /* q holds the queue (lanes_queue) */
    int nwanted, nkept, kept_winners;   /* lanes_decided's counts */
    int nlanes;
    sw *lanes[SWEEP_MAX_GPUS];  /* lanes[0] is the sweep's own state */
} hub;


/* The workers and their device facts, before the registry is touched:
** without a GPU a sweep leaves no file behind. S->o->gpus (else S->o->gpu
** alone) says which; each becomes a lane of H, S the first. Returns 0 or
** the exit code (said). */
int lanes_start(sw *S, hub *H);
/* Each lane's device and run records, engine kernels and copy ceiling, and
** the run's template sources. -1: said. */
int lanes_begin(hub *H);
/* The buckets of the spec in its order (task, dtype, bucket): this
** shard's, into H's queue (once). */
void lanes_queue(sw *S, hub *H);
/* Each bucket of the queue, read in R: decided already on this run's basis
** (sweep_resume.h), on the hardware of any lane, and whether o->want
** accepts it; H's counts set (the buckets wanted, those decided and their
** winner rows). Does nothing but count for a run that records no
** decisions (resume_applies). Returns how many wanted buckets are left to
** decide, -1 on a registry failure (reg_errmsg(R), not said). */
int lanes_decided(sw *S, hub *H, reg *R);
/* The losers' cubins of the earlier runs whose buckets this run left as
** they were dropped, as those runs would have at their end (sweep.h). -1:
** said. */
int lanes_trim_kept(sw *S, hub *H);
/* The queue worked through by every lane; their counts end up in S's. */
void lanes_run(sw *S, hub *H);
/* The lanes but S, the queue. */
void lanes_free(hub *H);

/* Whether the bucket at place slot of the spec's order is this shard's,
** and how many of the spec's buckets are. */
int lanes_in_shard(const sweep_opts *o, int slot);
int lanes_buckets(const sw *S);

/* A bucket's share of a budget (share_of in sweep_lanes.c says why): left
** seconds of the budget, buckets left (the one in hand and those after it),
** lanes (GPUs), and the wall time and count of the buckets the lane has
** finished. Pure: tests/unit/test_sweep.c. */
double sweep_share(double left, int buckets, int lanes, double done_s, int done_n);

#endif
