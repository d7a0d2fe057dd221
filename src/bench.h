/* bench.h: the measurement engine. It runs inside the worker process, the
** only process that touches the GPU: it owns the context, the task's buffers
** (inputs from a seeded generator on the GPU, pristine copies, reference
** outputs), the L2 flush buffer, and the loaded candidates ("slots").
**
** The protocol (ARCHITECTURE.md): outputs poisoned with NaN before the
** verification run, every element compared with the reference, inputs of
** in-place kernels restored before every run, L2 flushed before every timed
** launch, warm-up first, repetitions until the median settles.
**
** Timing method: each sample is (restore in-place inputs, zero workspace,
** flush L2, start event, one launch, end event), queued in batches of
** BENCH_BATCH so the GPU never waits for the host. The flush (a memset of
** twice the L2) sits between the host and the timed launch, so the launch is
** already queued when the start event fires: host launch gaps stay out of
** the figure even for kernels of a few microseconds.
**
** Stream timing (the task's timing=stream; a spec's `timing: stream`), as a
** decode loop runs: each input is kept in `copies` copies, enough that the
** one a launch reads was last read two L2s of traffic before (at most
** BENCH_MAXCOPIES), and a sample is (flush L2, start event, a chain of at
** least BENCH_CHAIN launches over the copies in turn, end event), its time
** the chain's over its launches. Launches follow each other with no host
** gap, so a kernel's start-up overlaps its predecessor's tail wherever the
** hardware allows it (a plan with pdl: plan.h). Verification is unchanged:
** one launch over copy 0.
**
** Neighbour timing (`timing: neighbour`) is stream timing with another
** kernel before each launch of the chain (launch_neighbour: a short read on
** every SM that never signals a dependent launch), as a model's graph runs a
** GEMM between a norm and an activation: a kernel's start-up, and a pdl
** kernel's weight prefetch, cannot hide under its own previous launch. The
** neighbour's share (chains of it alone, timed once per task) is taken off
** each sample: what the launch adds to a chain of neighbours, as a graph
** pays it. (A profiler's per-kernel durations in a graph are no measure of
** that: a pdl kernel's duration starts when it launches early and includes
** its wait for the kernel before it.) On an H100, decode GEMMs at m 8..32
** timed 0.55-1.04x their stream times (median 0.89-0.99) with the same
** winners; cuBLASLt's split-K pair cost more (m 32, n 1024: 12.9 us against
** 9.1 us by stream): bench/RESULTS.md, 2026-11-27 third session.
**
** Calls return BENCH_OK, BENCH_WRONG (verification failed) or BENCH_FAIL
** with a message; bench_sticky() then says whether the context is lost and
** the process must be restarted. */
#ifndef BENCH_H
#define BENCH_H
#include "device.h"
#include "wire.h"
#include <stddef.h>

enum { BENCH_OK = 0, BENCH_WRONG = 1, BENCH_FAIL = -1 };
#define BENCH_BATCH 10
#define BENCH_SLOTS WIRE_SLOTS
#define BENCH_MAXCOPIES 16
#define BENCH_CHAIN 16
#define BENCH_NEIGHBOUR_BYTES (128 << 10)

/* Statistics of n samples (x is left untouched). */
void stats_of(const double *x, int n, stats *out);
/* Whether the median has settled: the median of all n samples and that of
** the first n - batch differ by less than tol (relative). */
int stats_settled(const double *x, int n, int batch, double tol);
/* Whether a race may end before its rounds: it has run max_seconds (> 0)
** and each of its nslots slots has at least minn samples (n[i]). */
int bench_race_done(const int *n, int nslots, int minn, double elapsed, double max_seconds);

typedef struct bench bench;

bench *bench_open(int ordinal, char *err, int errcap);
void bench_close(bench *b);
int bench_sticky(const bench *b);
const char *bench_err(const bench *b);
void bench_device(const bench *b, device *out);
/* Environment facts for the run record (JSON): clocks, temperature. */
void bench_env(const bench *b, strbuf *json);

/* The engine's kernels (fill_*, compare_*, same_bytes), once per process. */
int bench_support(bench *b, const void *cubin, size_t len);
/* Set a task up (wire.h), its reference's cubin the blob. */
int bench_task(bench *b, const wire_task *t, const void *blob, size_t len);
/* Load a candidate's cubin (the blob) into a slot. */
int bench_load(bench *b, const wire_load *l, const void *blob, size_t len);
int bench_unload(bench *b, int slot);
/* Load the vendor library's product (vendor.h) for the task into a slot
** (wire.h: wire_vendor; op and dtype: a GEMM op the task sets up).
** Verify and time it as any slot; desc gets the heuristic's choice. */
int bench_vendor(bench *b, const wire_vendor *v, char *desc, int desccap);
int bench_verify(bench *b, int slot);
/* Time the slots q->slots: one (adaptive) or several (interleaved rounds);
** out[i] for q->slots[i]. */
int bench_time(bench *b, const wire_time *q, stats *out);

/* The copy ceiling: a device-to-device copy of `bytes`, bytes read plus
** written per second, median of several runs. */
int bench_copy(bench *b, size_t bytes, double *gbps);

#endif
