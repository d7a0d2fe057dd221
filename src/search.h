/* search.h: runs a search strategy (search/<name>.lua) over one template's
** space for one task, ask/tell, so compilation can run ahead of timing.
** Configs cross this boundary as canonical JSON. */
#ifndef SEARCH_H
#define SEARCH_H
#include "tmpl.h"

typedef struct search search;

/* Whether search/<strategy>.lua names a strategy; if not, tmpl_errmsg says so. */
int search_exists(tmpl *T, const char *strategy);
/* search/polish.lua: one config's ring of neighbours and their combination,
** not a search of a space (sweep_polish.h drives it). */
#define SEARCH_POLISH "polish"
/* Whether a spec's search may name strategy: search_exists, and not
** SEARCH_POLISH; if not, tmpl_errmsg says why. */
int search_for_spec(tmpl *T, const char *strategy);

/* A search of tname's space for task on dev. max_evals <= 0: no cap.
** Returns NULL after setting tmpl_errmsg(T). */
search *search_new(tmpl *T, const char *strategy, const char *tname, const op_task *task,
                   const device *dev, unsigned long long seed, int max_evals);
/* The same, warm-started: the strategy tries the configs warm[0, nwarm)
** (canonical JSON, e.g. the finalists of neighbouring buckets) first; those
** not in this space are skipped. */
search *search_new_warm(tmpl *T, const char *strategy, const char *tname, const op_task *task,
                        const device *dev, unsigned long long seed, int max_evals, char *const *warm, int nwarm);
/* A search over the given configs (a replayed landscape, replay.h): the
** params are their keys, each param's values in sorted order. */
search *search_of_configs(tmpl *T, const char *strategy, char *const *configs, int n, unsigned long long seed,
                          int max_evals, char *const *warm, int nwarm);
/* One search over several templates of one bucket (tnames[0, n)): the
** union of their spaces (search/space.lua: Space.union). The configs it asks
** for, rejects and is told about are joined: they carry "template", and "-"
** for the params their template lacks; search_split takes one apart. */
search *search_new_bucket(tmpl *T, const char *strategy, char *const *tnames, int n, const op_task *task,
                          const device *dev, unsigned long long seed, int max_evals, char *const *warm, int nwarm);
/* A joined config's template (into tname) and its config as that template
** knows it (*config: canonical JSON, caller frees). 0, or -1 (tmpl_errmsg). */
int search_split(tmpl *T, const char *joined, char *tname, int cap, char **config);
/* Join configs[i] of template tnames[i] (all of one bucket): *joined holds n
** canonical JSON configs (caller frees each and the array). */
int search_join(tmpl *T, char *const *tnames, char *const *configs, int n, char ***joined);
void search_free(search *s);

/* The space is enumerated lazily (search/space.lua): a config's constraints
** are checked when the search first meets it. search_size is an upper bound
** on the valid configs (the product of the params' value counts) until the
** whole space was met, then their exact number; search_count is the exact
** number, and checks whatever was not met yet to get it. */
int search_size(search *s);
int search_count(search *s);
/* search_count without keeping what it checks (what a plan counts once, a
** space of millions of indices); -1 with tmpl_errmsg when it fails. */
long long search_tally(search *s);
/* The configs rejected so far, in the order the search met them. */
int search_nrejected(search *s);
/* The i-th config the constraints rejected: JSON (caller frees), the reason,
** and whether the template raised an error rather than saying no. */
int search_rejected(search *s, int i, char **config, char *why, int whycap, int *is_error);

/* Up to n configs not yet tried; *got = 0 when the strategy is done. Each
** config is malloc'd JSON; the caller frees them and the array. */
int search_ask(search *s, int n, char ***configs, int *got);
/* A result: status "ok" with time_us, or a failure status. */
int search_tell(search *s, const char *config, const char *status, double time_us);
/* A result with everything known about it: status, time, min, max, spread
** (ok only), ptxas registers, spills and shared memory, compile time. */
struct measurement;
int search_tell_measured(search *s, const char *config, const struct measurement *m);

#endif
