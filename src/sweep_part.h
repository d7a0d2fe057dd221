/* sweep_part.h: a split part's own search (sweep_split.h decides which
** parts get one; the part's record: sweep_splitrec.h). A part whose winner among the bucket's finalists still
** loses more than split_at, or ties or trails the vendor somewhere in it
** (sweep_probe.h: probe_behind_vendor), is searched where it loses most,
** among the sizes no search has covered, with the task's strategy and
** templates, at most split_evals candidates, warm-started from the
** registry's nearest winners (sweep_warm.h); the search's fastest new
** configs, those nearest winners, and the spans of the new configs and of
** the part's winner (tmpl.h: tmpl_span, each made to serve every size of
** the part as that size wants) race the part's candidates at every size
** raced in it, and where the new configs' own tiling steps up inside it
** (sweep_probe.h: probe_wave_shapes, PROBE_WAVES sizes at most), and the
** smallest worst loss wins. The winner is then polished over the part
** (sweep_polish.h). retune races the part's stored finalists instead. */
#ifndef SWEEP_PART_H
#define SWEEP_PART_H
#include "sweep_splitrec.h"

/* Whether a part may get a search of its own (part_research): spec
** split_evals, and budget left. */
int part_searched(sw *S, split *sp);

/* Part p of sp searched, and its candidates raced with the search's
** finalists and its neighbours' winners; p's winner, times and probes
** updated where one of them wins. Returns 0, 1 when Ctrl-C cut the search
** (the part is not decided), -1 for a tool failure. */
int part_research(sw *S, const op_task *t, split *sp, part *p);

#endif
