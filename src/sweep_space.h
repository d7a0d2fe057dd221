/* sweep_space.h: how many candidates each bucket of a spec holds, known
** before any is compiled or timed. A template's space for a bucket is the
** configs its params make that its constraints accept (search.h: lazy,
** counted by checking each); a search tries all of them unless it is capped
** (max_evals) or a strategy that stops on its own.
**
** space_check, before compile or a sweep does any work: a bucket whose
** search would try every config (exhaustive, the default, with no
** max_evals nor --max-evals) of a space over SPACE_MAX is refused, one line
** naming the spec, its task's line, the bucket, the template, the count and
** what to set. A gemm bucket of every template holds tens of thousands:
** compiled, hours; timed, days.
**
** space_plan (`aitune compile --plan`): every bucket's templates with their
** counts, what compile would take of each (all, or max_evals of them), and
** the totals, on stdout; nothing compiled, the registry not opened.
**
** Counting a large space takes seconds of Lua: both show progress on
** stderr and stop within a moment at Ctrl-C (tmpl_watch). */
#ifndef SWEEP_SPACE_H
#define SWEEP_SPACE_H
#include "sweep_session.h"

/* The most candidates an uncapped exhaustive search may try in one bucket
** and template (a joint search: in one bucket): compiled on 16 cores, about
** a quarter of an hour of wgmma kernels. Above every uncapped space of the
** specs in specs/ (the largest: memory.yaml's softmax/hold, 196); a gemm
** bucket's wgmma space holds about 6000 at m = 4096, a decode bucket's gemv
** space about 47000 (specs/gemm.yaml and gemm-decode.yaml cap them). */
#define SPACE_MAX 4096

/* The cap on task st's searches: --max-evals, else the task's max_evals
** (which defaults to the spec's); 0: none. */
int space_cap(const sweep_opts *o, const spec_task *st);

/* 0, EXIT_INPUT when a bucket is over SPACE_MAX uncapped (said), 130 when
** interrupted, EXIT_FAIL when a template failed (said). S->dev must hold
** the device's facts. */
int space_check(sw *S);

/* compile --plan. Returns the exit code: 0 (also when compile would refuse
** a bucket: the plan says so), 130 interrupted, EXIT_FAIL a template failed. */
int space_plan(sw *S);

/* The watch over Lua work a sweep or compile sets (tmpl_watch): the
** progress line drawn when due, and stop at Ctrl-C. ctx is the sw. */
int space_watch(void *ctx);

#endif
