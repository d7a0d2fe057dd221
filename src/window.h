/* window.h: `aitune window` (a tuning window: the most valuable work first,
** within a budget) and the misses filter of `aitune sweep --from-misses`. */
#ifndef WINDOW_H
#define WINDOW_H
#include "sweep.h"

/* Restrict o to the buckets of its spec that hold recorded misses (shapes
** applications asked for that no tuned bucket answered), read from
** o->db_path. Returns 0 (o->want set; free *ctx with window_misses_free),
** or an exit code after one error line. */
int window_from_misses(sweep_opts *o, void **ctx);
void window_misses_free(void *ctx);

#endif
