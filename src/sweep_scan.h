/* sweep_scan.h: `aitune scan SPEC`, what an application sees over every size
** of a range. A sweep tunes a range's buckets at chosen sizes; an application
** calls every size. Scan asks the registry, as libaitune does (rt.c:
** aitune_lookup_gpu on this GPU), for its answer at each size of each range
** (every size, or a stated sample), and times that answer there in the
** worker against the vendor library (cuBLASLt for the GEMM ops: sweep_vendor.h)
** raced interleaved in the same task, the answer verified against the op's
** reference first. A size is a hole when the answer is slower than the
** vendor (below 1.00x), or more than SCAN_BEHIND slower than the best
** candidate the registry measured at that very size (a bucket's or part's
** own size). Each size's row is stored (the registry's `scans` table: the
** latest scan of a size on this GPU's hardware replaces the one before), so
** `report` plots x vendor over each dim and `window` schedules the holes'
** buckets first.
**
** The sizes: per range dim (spec.h: {range: [lo, hi]}) every size of the
** range, or with a sample, the range's ends, each log2 bucket's first and
** last sizes and the sizes it was tuned at, and sample sizes evenly spread,
** or with a step, lo, lo + step, ... and hi; the other dims take their
** values. The spec's timing (flush, stream or neighbour) is the scan's. */
#ifndef SWEEP_SCAN_H
#define SWEEP_SCAN_H
#include "spec.h"
#include "sweep_opts.h"

#define SCAN_BEHIND 0.05        /* a hole: more than 5% behind the best measured at the size */
#define SCAN_MAXSIZES 100000    /* sizes of one dim, and shapes of one task */

/* How the sizes of a range are chosen (sweep.h: sweep_opts.scan_pick):
** sample > 0, this many spread, plus the edges (above); step > 0, lo, lo +
** step, ..., hi; neither, every size. */
typedef struct scan_pick scan_pick;

/* The sizes a scan takes of dim d, increasing, into out (at most cap):
** their count, or -1 when there would be more than cap. */
int scan_sizes(const spec_dim *d, const scan_pick *pick, long long *out, int cap);

struct sw;
/* The scan of the run's spec, on its lane (sweep_run with o->scan). Returns
** the exit code: 0 scanned (holes or not), 1 a tool failed. */
int scan_run(struct sw *S);

#endif
