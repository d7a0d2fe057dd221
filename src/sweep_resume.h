/* sweep_resume.h: a sweep run again goes on where the last one stopped.
** Every measurement a sweep takes is stored as it lands (registry_measure.h),
** so a sweep cut by Ctrl-C, SIGTERM or a time limit, run again, measures no
** candidate twice; this module makes it skip the buckets themselves. When a
** bucket's decision is complete (searched, raced, held and split where its
** task asks, its winner rows stored, or none where no candidate was
** correct), the sweep records it (registry_decided.h) with its basis: what
** the decision was made on, as text:
**   spec HASH          the spec's text (its tasks, seed, search, caps, timing)
**   aitune VERSION     the tool
**   TOOLCHAIN          the driver, CUDA driver API and NVRTC (identity.h)
**   sources HASH       the op's template sources (identity_sources)
**   max_evals N        --max-evals (0: the spec's)
**   vendor MODE        --vendor
**   holes HASH         a bucket that holds: the holes `aitune scan` found in
**                      it on this GPU (hold races at them: sweep_hold.h)
** A sweep run again leaves a bucket as it is when the registry records it
** decided on the same basis on this GPU's hardware and still holds exactly
** the winner rows that decision stored: no search, race, hold probe, split
** or vendor timing runs for it, and no worker task is set up. Any other
** bucket it decides as before, from the registry's measurements: one cut
** mid-search, mid-race, mid-probe or mid-split is decided again from its
** start (its measurements taken from the registry, its races run again).
** A bucket cut by a budget (--budget, its share of one) is not recorded
** decided, whether its search, its hold or its split was cut (their winners
** so far are stored, not exhaustive: sweep_hold.h): run again, its search
** goes on and its hold and split run again whole. A spec edited, a template changed,
** another toolchain, or a scan that found other holes, and the bucket is
** decided again. retune, check, compile and scan neither read nor record it. */
#ifndef SWEEP_RESUME_H
#define SWEEP_RESUME_H
#include "sweep_session.h"

/* Whether S's run decides buckets and records them (a sweep or a window's,
** not retune, check, compile, scan or a plan). */
int resume_applies(const sweep_opts *o);

/* Bucket b, at task t (its timing set), on lane S's GPU: whether R records
** it decided on this basis and its winner rows stand. 1 (the *run that
** decided it, its *winners), 0 not, -1 a registry failure (reg_errmsg). hold:
** whether the bucket holds (sweep_hold.h: its holes are in the basis). */
int resume_decided(sw *S, reg *R, const op_task *t, const bucket *b, int hold, long long *run, int *winners);

/* Bucket b decided by S's run now, in S's registry: recorded, counted
** (S->decided_now). -1: said. */
int resume_record(sw *S, const op_task *t, const bucket *b, int hold);

#endif
