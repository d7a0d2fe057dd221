/* registry_winner.h: the registry's answers: the winner of each bucket (per
** op, arch, dtype, bucket and the hardware that measured it) with the
** finalists its race timed (runners_up), and the template default of each
** (op, arch, dtype), libaitune's last fallback. A sweep stores them, every
** reader of results reads them; libaitune reads the same rows with the
** same columns (names.h: REG_WINNER_COLS, REG_WINNERS_OF).
**
** A bucket split in parts (spec.h: bucket_split) is stored as its parts'
** winners, never beside its own. Calls return 0 (or 1 found, 0 none where
** said) and -1 with reg_errmsg set. */
#ifndef REGISTRY_WINNER_H
#define REGISTRY_WINNER_H
#include "registry.h"

typedef struct winner {
    char op[32], arch[16], dtype[16], bucket[96];
    char dims[64], lo[96], hi[96], shape[128];
    char tmpl[64];
    char *config;
    double median_us, gbps, tflops, default_us;
    double margin;          /* the fastest other finalist's time over this one's, - 1; -1: none (stored NULL);
                            ** below 0 where a pin (pin.c) made a finalist the sweep timed slower the winner */
    int exhaustive;
    char *runners_up;       /* JSON */
    char cubin[17];
    char *launch;           /* JSON */
    long long device, run;
} winner;

/* Store w: the winner of w->bucket, in place of that bucket's and its
** parts' (spec.h: bucket_split) winners of the same hardware. */
int reg_winner_put(reg *r, const winner *w);
/* Store the n winners of home's bucket (n > 1: its parts, keys home/...,
** edges partitioning home's) in one transaction, in place of every winner
** of home and its parts on the same hardware (w[0]'s device): a registry
** never holds a split bucket's winner next to its parts'. Inside a
** transaction of the caller's (reg_begin), part of it. */
int reg_winners_put(reg *r, const char *home, const winner *w, int n);
/* The winner of (op, arch, dtype, bucket): 1 found, 0 none. arch is the base
** ("sm_90"); a row stored as "sm_90a" or "sm_90f" matches it, as in libaitune. */
int reg_winner_get(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, winner *w);
/* The same, measured on hardware hw only (identity.h: identity_hw). */
int reg_winner_get_hw(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                      winner *w);
/* Each winner, ordered by op, dtype and bucket edges; cb returning non-zero stops. */
int reg_winners(reg *r, int (*cb)(const winner *w, void *ctx), void *ctx);
/* The winners of bucket home and its parts (a split bucket's) of (op, arch,
** dtype): those measured on hw when it has any (hw NULL: every one), else
** every hardware's; in the order they were written. */
int reg_winner_family(reg *r, const char *op, const char *arch, const char *dtype, const char *home, const char *hw,
                      winner **out, int *n);
void winner_free(winner *w);
/* Every winner of (op, arch, dtype), ordered by bucket: *out is malloc'd
** (free each with winner_free, then the array). */
int reg_winners_of(reg *r, const char *op, const char *arch, const char *dtype, winner **out, int *n);

/* ---- the race ---- */

/* How the winner reg_winner_finalists picks (hw's, else the fastest) was
** timed: 1 stream, 0 flush (the newest ok measurement of its config in the
** bucket, its own run's first; a registry older than schema 4 timed
** everything after a flush), -1 when no measurement of it is left (a
** merged or garbage-collected registry), -2 on a database error. */
int reg_winner_stream(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                      const char *hw);

/* The finalists of a bucket's winner, for retune: the winner first, then its
** runners-up, fastest first. The winner row is hw's when there is one, else
** the fastest of any hardware. */
int reg_winner_finalists(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                         const char *hw, int (*cb)(const char *tmpl, const char *config, double median_us, void *ctx),
                         void *ctx);

/* The finalists a winner's race timed (its runners_up, the winner among
** them), fastest first, read with SQLite's JSON functions. */
int reg_winner_race(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                    int (*cb)(const char *tmpl, const char *config, double median_us, void *ctx), void *ctx);

/* ---- identity (status, retune, window) ---- */

/* A winner with the identity that measured it. Strings are "" when the
** registry does not know (a 0.1 run has no sources); they live only during
** the callback. */
typedef struct reg_winner_identity {
    const char *op, *arch, *dtype, *bucket, *hw, *tmpl, *config;
    double median_us;
    const char *driver, *nvrtc, *version, *sources, *when;
    int cuda_driver;
    double age_s;               /* since its run ended (or began); < 0 unknown */
    int exhaustive;             /* its search saw the whole space */
} reg_winner_identity;
/* Each winner, ordered by op, arch, dtype, bucket and hardware. */
int reg_winner_identities(reg *r, int (*cb)(const reg_winner_identity *w, void *ctx), void *ctx);

/* ---- defaults ---- */

/* cubin (a cubins hash) and launch (a plan) may be NULL: no kernel stored,
** unless one was for the same template and config (kept). */
int reg_default_put(reg *r, const char *op, const char *arch, const char *dtype,
                    const char *tmpl, const char *config, const char *cubin, const char *launch);
/* The base archs (sm_90, ...) with winners or a default for (op, dtype),
** comma separated into out; returns how many, or -1. */
int reg_archs_of(reg *r, const char *op, const char *dtype, char *out, int cap);
/* The default of (op, arch, dtype): 1 found (*config malloc'd), 0 none. */
int reg_default_get(reg *r, const char *op, const char *arch, const char *dtype,
                    char *tmpl, int tmplcap, char **config);

#endif
