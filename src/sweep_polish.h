/* sweep_polish.h: a searched part's winner polished over the part (spec
** split_polish; sweep_part.h calls it once the part's race chose). */
#ifndef SWEEP_POLISH_H
#define SWEEP_POLISH_H
#include "sweep_splitrec.h"

/* Part p's winner polished over the part (spec split_polish: at most that
** many of its neighbours; 0: none): its neighbours one param step away in
** its template's space at tp, the size the part's search ran at
** (search/polish.lua; a step the constraints refuse comes after the others
** in its nearest valid form, search/space.lua's repair), raced with it at every
** size raced in the part, each told its time over the winner's there (the
** geometric mean), then the config that takes every move that paid at once,
** raced with it the same way. The smallest worst loss wins (probe_winner:
** the mean on a tie), the winner on a tie of both; a new winner joins p's
** own finalists and its candidates, with its times at p's sizes. A part's
** search runs at one size: on an H200 (bench/results/2026-11-30/s28/kbox)
** swapab's best at 14336 x 4096, m = 136..192 ran 0.99-1.00x cuBLASLt with 5
** slots, the weight evict-first and the L2 prefetch of 2 boxes, where the
** parts' winners, each a move or two from that, had stopped at 0.92x.
** Returns 0, 1 when Ctrl-C cut it (the winner stays), -1 a tool failure. */
int part_polish(sw *S, const op_task *t, split *sp, part *p, const op_task *tp);

#endif
