/*
** rt_impl.h: what the runtime library's two layers share (rt.c: the handle,
** its sets of winners and the lookup; rt_launch.c, above it: the kernels,
** launches and bound launches, and aitune_close, which frees both). Private
** to libaitune: aitune.h is the contract.
*/
#ifndef RT_IMPL_H
#define RT_IMPL_H
#include "aitune.h"
#include "cu.h"
#include "dbguard.h"
#include "plan.h"
#include "vendor.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A growing string pool: NUL-terminated strings, referred to by offset. */
struct rt_pool {
    char *s;
    size_t n, cap;
};

struct rt_winner {
    size_t bucket, tmpl, config, hw; /* offsets into the set's pool; hw "" before schema 3 */
    size_t edges;     /* index into edges: ndims lo values, then ndims hi */
    size_t cls;       /* index into cls: ndims alignment classes (align.h: align_log2) */
    int ndims;
    int nexact;       /* dims its bucket key names exactly (names.h: bucket_exact_dims) */
    double median_us;
    long long rowid;  /* winners.rowid, for the plan and cubin */
};

struct rt_default {
    size_t op, arch, dtype, tmpl, config;         /* offsets into the handle's pool */
    long long rowid;  /* defaults.rowid; 0 when the schema has no kernel columns */
};

/* The winners of a set with one number of dims, sorted by lo[0]: a lookup
** binary-searches the few buckets whose dim-0 range can hold the shape, so
** an exact answer costs the same with 10 or 10k winners. */
struct rt_group {
    size_t first, count;
    int ndims;
    long long span0;          /* the widest hi[0] - lo[0] in the group */
    size_t run, nruns;        /* its runs of one dim-0 range, sorted */
    int disjoint;             /* the runs' dim-0 ranges do not overlap */
};

/* Winners of a group that share one dim-0 range [lo0, hi0): slots
** [first, first + count) of the set, each a winner's index. sorted1: their
** dim-1 ranges are sorted and each is equal to or apart from the next, so
** the ones holding a size are found by binary search too.
**
** A group whose dim-0 ranges nest (a split bucket's parts beside buckets
** left whole, spec.h: bucket_split) is cut into elementary ranges, between
** consecutive edges of any of its ranges; a run then lists every winner
** whose range covers its own, and the runs are disjoint again (rt_refine). */
struct rt_run {
    size_t first, count;
    long long lo0, hi0;
    int sorted1;
};

/* The winners of one (op, arch, dtype). */
struct rt_set {
    struct rt_set *next;      /* the chain; set before publishing, never changed */
    uint64_t hash;
    char *key;                /* op, arch (normalized) and dtype, each NUL-terminated */
    size_t arch, dtype;       /* offsets of arch and dtype in key */
    int rc;                   /* AITUNE_OK, or why loading failed (message in err) */
    char *err;
    struct rt_winner *winners;
    size_t nwinners, winners_cap;
    long long *edges;         /* bucket edges, hi exclusive */
    size_t nedges, edges_cap;
    unsigned char *cls;       /* the winners' alignment classes, of their shapes */
    size_t ncls, cls_cap;
    struct rt_pool pool;
    struct rt_group *groups;  /* one per number of dims */
    size_t ngroups;
    struct rt_run *runs;
    size_t nruns, runs_cap;
    size_t *slots;            /* the runs' winners, by index */
    size_t nslots, slots_cap;
};

#define RT_NCHAINS 256        /* hash chains of sets (a power of two) */
#define RT_MAXEMPTY 1024      /* sets without winners kept; past that, asked again */

struct aitune_kernel {
    struct aitune_kernel *next;
    const void *row;          /* the rt_winner or rt_default it came from */
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    plan *p;
    char *plan_json;
    aitune_kernel_info info;
    int ws;                   /* the plan has a workspace */
    unsigned optin;           /* dynamic shared memory allowed so far (atomic) */
    vendor *vend;             /* a vendor winner: cuBLASLt in ctx (the handle's), else NULL */
    int vkind;                /* its vendor_kind */
    int va, vb, vd;           /* its arguments A, B and D in the plan */
};

/* The vendor handle of one CUDA context. */
struct rt_vendor {
    struct rt_vendor *next;
    CUcontext ctx;
    vendor *v;
};

/* One counted miss. */
#define RT_MAXMISSES 256
struct rt_miss {
    char op[32], arch[16], dtype[16], shape[96];
    long long count;
};

struct aitune {
    struct rt_set *chains[RT_NCHAINS];            /* heads: atomic release/acquire */
    int nempty;                                   /* sets kept without winners */
    struct rt_default *defaults;
    size_t ndefaults, defaults_cap;
    struct rt_pool pool;                          /* the defaults' strings */
    char errmsg[512];
    char *path;                                   /* for messages and flushes */
    int uri;                                      /* opened immutable (a read-only directory) */
    int schema;
    sqlite3 *db;                                  /* read-only; used under mu */
    sqlite3_stmt *set_st;                         /* one set's winners; used under mu */
    dbguard_budget budget;                        /* each statement's work on db (dbguard.h) */
    pthread_mutex_t mu;                           /* sets' loading, db, kernels, misses, hw */
    CUcontext hw_ctx;                             /* the context hw was read for */
    char hw[256];                                 /* its GPU's hardware identity (cu_hw) */
    struct aitune_kernel *kernels;
    struct rt_vendor *vendors;                    /* under mu */
    struct aitune_bound *bounds;                  /* aitune_bind's, under mu */
    struct rt_miss misses[RT_MAXMISSES];
    int nmisses;
    long long dropped;                            /* misses past the table */
};

/* A bound launch (rt_launch.c's "bound launches"). */
/* How to encode one tensor-map parameter again at another address. */
struct rt_tmap_rec {
    int param;                      /* its index in the plan's params */
    int src;                        /* the op argument it maps; -1: the workspace */
    unsigned long long off;         /* bytes past that address (a map `at` the workspace) */
    int known;                      /* the prebuilt map was encoded at a caller's address */
    unsigned long long addr;        /* the address the prebuilt map holds */
    CUtensorMapDataType dt;
    cuuint32_t rank;
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t box[5], estride[5];
    CUtensorMapInterleave il;
    CUtensorMapSwizzle sw;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
};

/* The last map a launch encoded for one rt_tmap_rec (see above). */
struct rt_tmap_slot {
    atomic_int busy;                /* 1 while a launch reads or writes it */
    unsigned long long addr;        /* 0: empty (a mapped buffer is never NULL) */
    unsigned char map[sizeof(CUtensorMap)];
};

struct aitune_bound {
    struct aitune_bound *next;      /* the handle's list (under mu), freed at close */
    int kind;                       /* AITUNE_BOUND_KERNEL */
    int (*launch)(aitune *h, const struct aitune_bound *b, const aitune_arg *args, CUstream s);
    const struct aitune_kernel *k;
    const cu_api *cu;
    int nargs;                      /* the op's arguments; the workspace entry follows */
    int nbufs;
    signed char bufs[PLAN_MAXARGS]; /* the op arguments that are buffers */
    int ntmaps;
    struct rt_tmap_rec tmaps[PLAN_MAXPARAMS];
    struct rt_tmap_slot *slots;     /* ntmaps of them, written by launches (NULL: vendor) */
    plan_launch L;                  /* geometry and the prebuilt parameters */
    long long vshape[3];            /* AITUNE_BOUND_VENDOR: the problem (m, n, k) */
};

/* rt.c's, for layer 2. */

/* Set h's message and return rc, so failures read `return rt_error(...)`. */
int rt_error(aitune *h, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report a failed SQLite call on db and map it to an aitune status. */
int rt_sqlite_error(aitune *h, const char *path, sqlite3 *db, int rc);
/* A column as text; "" for NULL, which the schema forbids anyway. */
const char *rt_text(sqlite3_stmt *st, int col);
/* The answer for a query: *wp (a winner, of *sp) or *dp (a default). hw,
** when not NULL, is the current GPU's hardware identity: among winners of
** one bucket it prefers the one measured there. No allocation and no
** writes to h once the set is loaded, except the error message. */
int rt_choose(aitune *h, const char *op, const char *arch, const char *dtype, const long long *shape, int ndims,
              const char *hw, aitune_choice *out, const struct rt_set **sp, const struct rt_winner **wp,
              const struct rt_default **dp);
/* Count a query no tuned bucket held. Only misses take the lock: exact
** answers stay lock-free. */
void rt_count_miss(aitune *h, const char *op, const char *arch, const char *dtype, const long long *shape, int ndims);

/* Close h's connection to its registry. */
void rt_disconnect(aitune *h);
/* Free a set of winners. */
void rt_free_set(struct rt_set *s);

#endif
