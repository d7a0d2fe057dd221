/* sweep_cand.h: one candidate of a sweep, from a config to a measurement:
** instantiated (tmpl), compiled through the registry's cubin cache (jit,
** ahead of timing), loaded into a slot of the lane's worker, verified
** against the op's reference and timed there, and recorded. A candidate
** that fails anywhere is a result (its status says where), never the end
** of the sweep; a tool that fails (the registry) is.
**
** The bucket's finalists (bucket_state) collect the candidates that passed,
** for the race among the fastest (sweep_tune.h) and hold (sweep_hold.h). */
#ifndef SWEEP_CAND_H
#define SWEEP_CAND_H
#include "registry_measure.h"
#include "sweep_session.h"
#include "search.h"

/* One candidate on its way: instantiated, compiling or compiled. */
typedef struct cand {
    char tmpl[64];
    char *config;
    char config_hash[17];
    kernel_src k;
    jit_job job;
    char key[17];
    int cached;
    char *error;            /* set when instantiation failed */
    char *joined;           /* a joint search's form of the config (search_new_bucket), or NULL */
    measurement m;          /* the result */
    /* on its way in a search (flow) */
    int batch;              /* the search's batch that asked for it (the trace's) */
    int extra;              /* a template default, measured first, not asked for */
    char **also;            /* forms of it the search asked for while it was on its way */
    int nalso;
} cand;

/* A finalist of a bucket: a candidate that passed, with its time. */
typedef struct final {
    char tmpl[64];
    char *config;
    double median_us, spread;
    int is_default;
} final;

/* The finalists of a bucket, as its candidates land (bucket_state_keep),
** and what the race that picks its winner must know. */
typedef struct bucket_state {
    final *f;
    int nf;
    double default_us;
    int exhaustive;
    const char *keep_tmpl, *keep_config;   /* retune: the standing winner */
    const winner *parts;                    /* retune: a split bucket's stored winners (its parts'), */
    int nparts;                             /* each raced by hold whatever its time at the bucket's size */
    const char *default_tmpl;               /* a joint search: the template whose default is the bucket's */
    int served;                             /* templates that handle the bucket's shape (flow_usable) */
    char unserved[320];                     /* "template: why" of the last one that does not */
} bucket_state;


void cand_free(cand *c);
/* Config of template tname as candidate c: its kernel, or c->error. */
void cand_instantiate(sw *S, cand *c, const char *tname, const char *config, const op_task *t);
/* Compile c's kernel for arch through the cache: on return c->job is done
** (a cache hit: c->cached) or submitted to the pool. -1: the registry failed. */
int cand_compile(sw *S, cand *c, const char *arch);
/* Wait for c's compile and store its cubin. -1: the registry failed
** (said), or Ctrl-C gave the compile up (c->job.cancelled; nothing said):
** either way the caller stops. */
int cand_finish(sw *S, cand *c);
/* cand_instantiate, then compiled and waited for: 0 when c has a kernel,
** else -1 (c->error or c->job.error says why, or a registry failure was
** said, or Ctrl-C gave the compile up: sw_interrupted). */
int cand_build(sw *S, cand *c, const char *tname, const char *config, const op_task *t);

/* The kernel's launch plan (JSON) as the registry and the worker hold it;
** caller frees. NULL with err when it has none. */
char *cand_plan_json(const kernel_src *k, char *err, int errcap);
void cand_set_status(cand *c, const char *status, const char *err);

/* On the lane's worker: load c into slot (its plan bound at t's shape),
** verify the kernel in slot against the task's reference, race the slots
** [0, k) interleaved (f[i] gets slot i's median and spread; left as they
** were where a time is missing). cand_load and cand_verify return 1 when
** it went well, else 0 with c's status saying why. */
int cand_load(sw *S, cand *c, const op_task *t, int slot);
int cand_verify(sw *S, cand *c, int slot);
void cand_race(sw *S, cand *cs, int k, final *f);
/* cand_race with one more slot, extra (-1: none; the vendor's, loaded by
** the caller), raced interleaved beside [0, k): its statistics into
** *extra_st (zero where it has no time). A race that fails is said as
** cs[0]'s (worker_said), as cand_race's is. */
void cand_race_beside(sw *S, cand *cs, int k, int extra, final *f, stats *extra_st);

/* The measurement fields that name t's bucket b on this device and run, and
** those with c's template and config too. */
void cand_bucket_fields(sw *S, measurement *m, const op_task *t, const bucket *b);
void cand_key_fields(sw *S, cand *c, const op_task *t, const bucket *b);

/* A candidate sets off (cand_start) and lands (cand_land): see
** sweep_cand.c; one whose compile Ctrl-C gave up lands with an empty
** status, recorded nowhere. cand_run_batch runs [0, n) through both.
** cand_drain must come before candidates with compiles in flight are
** freed. -1: a tool failure (said). */
int cand_start(sw *S, cand *c, const op_task *t, const bucket *b);
int cand_land(sw *S, cand *c, const op_task *t, const bucket *b, search *se, bucket_state *bs,
              const char *default_cfg, int search_id);
int cand_run_batch(sw *S, cand *cs, int n, const op_task *t, const bucket *b, search *se, bucket_state *bs,
                   const char *default_cfg);
void cand_drain(sw *S, cand *const *cs, int n);

/* c joins the finalists when it passed (once per template and config). */
void bucket_state_keep(bucket_state *bs, const cand *c, int is_default);
void bucket_state_free(bucket_state *bs);
/* qsort order of finalists: fastest first. */
int final_cmp(const void *a, const void *b);

#endif
