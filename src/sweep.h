/* sweep.h: a tuning window (`aitune sweep`) and its compile-only half
** (`aitune compile`). For each (op, dtype, bucket) of a spec: the template
** families' spaces are searched, each candidate instantiated (tmpl), compiled
** (jit, ahead of timing, through the registry's cubin cache), verified and
** timed in the worker, and stored as it lands; then the top K are re-timed
** interleaved and the winner is stored. A killed sweep resumes: configs the
** registry already has for this device are not measured again, and buckets
** it records decided are left as they are (sweep_resume.h).
**
** Compiles keep ahead of the GPU: before a candidate is timed, its search
** is asked for more batches until sweep_opts.ahead candidates compile behind
** it, across batch boundaries (a strategy is asked while some of its
** configs are untold). Candidates land in the order asked; a budget or
** Ctrl-C stops after the one in hand, and what was asked ahead is neither
** recorded nor told. AITUNE_TRACE=FILE logs the asks, compiles and timings
** (and compile's candidates as they are set off).
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
**   sweep_resume.h   the buckets decided already, left as they are; a decision recorded
**   sweep_compile.h  aitune compile
**   sweep_scan.h     aitune scan: the registry's answer timed at every size of a range
**   sweep_tune.h     a bucket: its searches, the race (tune_pick), its winner;
**                    retune; check
**   sweep_hold.h     hold: the race's finalists at other sizes of the bucket
**   sweep_split.h    a bucket's parts where no one winner holds it
**   sweep_part.h     a split part's own search, raced with its neighbours' winners
**   sweep_splitrec.h the record of a split's parts, their names, the budget check
**   sweep_warm.h     a search warm-started from the registry's nearest winners
**   sweep_probe.h    races at other sizes, losses, a box's winner
**   sweep_flow.h     a search's candidates on their way (look-ahead)
**   sweep_record.h   winner rows, defaults, what earlier runs stored
**   sweep_space.h    how many candidates each bucket holds (compile --plan)
**   sweep_task.h     the task at a shape, as the worker sets it up
**   sweep_cand.h     a candidate: instantiate, compile, load, verify, time
**   sweep_vendor.h   the vendor (cuBLASLt) timed and raced beside the candidates
**   sweep_session.h  the lane's state, budget, Ctrl-C, lines, trace, summary
**   sweep_opts.h     what a sweep is asked (sweep_opts)
** and below them the worker (worker.h), its typed messages (wire.h), the
** compile pool (jit.h), the registry, the templates and the searches. */
#ifndef SWEEP_H
#define SWEEP_H
#include "sweep_opts.h"

/* Returns the process exit code (util.h), 130 when interrupted. */
int sweep_run(const sweep_opts *o);

#endif
