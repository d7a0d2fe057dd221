/* sweep_compile.h: `aitune compile`, the compile-only half of a sweep:
** every candidate of the spec's buckets (or, with --max-evals, a seeded
** sample of each space) instantiated and compiled for the spec's arch into
** the registry's cubin cache, each kernel once however many buckets share
** it, stored as it lands, so a killed compile keeps what it did; then the
** table (-v) or a summary (progress.h), and each (op, dtype)'s default with
** its kernel, so lookup and emit answer without a sweep. */
#ifndef SWEEP_COMPILE_H
#define SWEEP_COMPILE_H
#include "sweep_cand.h"

/* 0, 1 when a kernel failed to compile, -1 when a tool failed (said). */
int compile_run(sw *S);

#endif
