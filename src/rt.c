/*
** rt.c: the runtime library, libaitune. aitune.h is the contract.
**
** aitune_open reads the registry's schema version and its defaults, checks
** that its winners can be read, and keeps one read-only connection. The
** winners of one (op, arch, dtype), a set, are read the first time a lookup
** asks for them: one indexed query under the handle's mutex, copied into
** memory and published. From then on a lookup of that set is a hash probe
** and a binary search over memory: no SQL, no allocation, no lock. So open
** costs the same with 10 or 10k winners, and an application pays only for
** the ops it uses.
**
** Sets hang off a fixed array of hash chains. A set is complete before it
** is published (a release store of the chain head) and never changes or
** moves afterwards, which is what lets readers walk the chains without the
** lock. A set that failed to load keeps its error and is not read again.
**
** Within a set, rows refer to their strings and bucket edges by offset into
** pools that grow while loading; offsets survive a realloc where pointers
** would not.
**
** Layer 2 (kernels) reads a winner's launch plan and cubin by the row id
** remembered when its set was loaded, through the same connection (under the
** mutex). Loaded kernels form a list under the mutex; a kernel never moves
** or changes once published, so aitune_launch reads it without the lock.
** The launch plan (plan.c) binds arguments exactly as the worker that
** measured the kernel did.
**
** A winner whose template is the vendor's (vendor.h: VENDOR_TEMPLATE) has
** no cubin: its kernel is a cuBLASLt call, through one vendor handle per
** CUDA context (kept in the handle, made on first use), whose cached plan
** per shape makes a launch one cublasLtMatmul.
*/
#define _GNU_SOURCE /* stat, realpath */

#include "aitune.h"
#include "align.h"
#include "cu.h"
#include "dbguard.h"
#include "names.h"
#include "plan.h"
#include "vendor.h"

#include <pthread.h>
#include <stdatomic.h>

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Set h's message and return rc, so failures read `return rt_error(...)`. */
static int rt_error(aitune *h, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

/* Make room for need elements of size bytes in *buf; 0, or -1 out of memory. */
static int rt_grow(void **buf, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    if (n < need)
        n = need;
    if (n > SIZE_MAX / size)
        return -1;
    void *p = realloc(*buf, n * size);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Copy the n bytes at s into pool as a string; its offset in *off. 0, or -1
** out of memory. */
static int rt_intern(struct rt_pool *pool, const char *s, size_t n, size_t *off)
{
    if (rt_grow((void **)&pool->s, &pool->cap, pool->n + n + 1, 1))
        return -1;
    memcpy(pool->s + pool->n, s, n);
    pool->s[pool->n + n] = '\0';
    *off = pool->n;
    pool->n += n + 1;
    return 0;
}

/* A column as text; "" for NULL, which the schema forbids anyway. */
static const char *rt_text(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return s ? (const char *)s : "";
}

/* Parse exactly n comma-separated decimal integers (each >= 0, below 2^62)
** from s into v; 0, or -1. Bucket edges are sizes: no sign, no spaces. */
static int rt_parse_ints(const char *s, long long *v, int n)
{
    for (int i = 0; i < n; i++) {
        if (*s < '0' || *s > '9')
            return -1;
        long long x = 0;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (x >= (1LL << 62) / 10)
                return -1;
            x = x * 10 + (*s - '0');
        }
        v[i] = x;
        if (*s++ != (i + 1 < n ? ',' : '\0'))
            return -1;
    }
    return 0;
}

/* Report a failed SQLite call on db and map it to an aitune status. */
static int rt_sqlite_error(aitune *h, const char *path, sqlite3 *db, int rc)
{
    if ((rc & 0xff) == SQLITE_INTERRUPT && db == h->db && h->budget.hit)
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': a query stopped after %lld steps of work (a registry "
                        "altered to make its readers hang?)", path, h->budget.ticks * DBGUARD_TICK);
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", path);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s", path, msg);
    case SQLITE_ERROR: /* a missing table or column: not (this version of) a registry */
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s: not an aitune registry",
                        path, msg);
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
    case SQLITE_READONLY:
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path, msg);
    default:
        return rt_error(h, AITUNE_ERROR, "registry '%s': %s", path, msg);
    }
}

/* Fold the n bytes at s into x, eight at a time: a lookup hashes its op,
** arch and dtype on every call. */
static uint64_t rt_mix(uint64_t x, const char *s, size_t n)
{
    const uint64_t k = 0x9e3779b97f4a7c15ULL;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t c;
        memcpy(&c, s, 8);
        x = (x ^ c) * k;
        x ^= x >> 32;
    }
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c |= (uint64_t)(unsigned char)s[i] << (8 * i);
    x = (x ^ c ^ ((uint64_t)n << 59)) * k;
    return x ^ (x >> 32);
}

/* A set's hash, computed on every lookup, so it samples rather than reads
** each name: its length and its first, middle and last bytes (names that
** share all four land in one chain, where strcmp tells them apart). */
static uint64_t rt_sample(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    return n ? (uint64_t)n | (uint64_t)u[0] << 8 | (uint64_t)u[n / 2] << 16 | (uint64_t)u[n - 1] << 24 : 0;
}

static uint64_t rt_hash(const char *op, const char *arch, size_t archlen, const char *dtype)
{
    uint64_t x = rt_sample(op, strlen(op)) | rt_sample(arch, archlen) << 32;
    x = (x ^ rt_sample(dtype, strlen(dtype))) * 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 29);
}

/* ---- loading a set ---- */

/* While a set loads: its distinct names (template, hardware) are stored
** once; names[i] is a pool offset + 1, 0 for a free slot. last: the previous
** row's template and hardware, tried first, since rows come in runs. */
struct rt_loader {
    size_t *names;
    size_t nnames, cap;
    size_t last[2];
};

static int rt_name(struct rt_loader *L, struct rt_pool *pool, const char *s, size_t n, size_t *off)
{
    if (L->nnames * 2 >= L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 32;
        size_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < L->cap; i++)
            if (L->names[i]) {
                const char *q = pool->s + L->names[i] - 1;
                size_t j = rt_mix(0, q, strlen(q)) & (cap - 1);
                while (t[j])
                    j = (j + 1) & (cap - 1);
                t[j] = L->names[i];
            }
        free(L->names);
        L->names = t;
        L->cap = cap;
    }
    size_t j = rt_mix(0, s, n) & (L->cap - 1);
    for (; L->names[j]; j = (j + 1) & (L->cap - 1)) {
        const char *q = pool->s + L->names[j] - 1;
        if (strncmp(q, s, n) == 0 && q[n] == '\0') {
            *off = L->names[j] - 1;
            return 0;
        }
    }
    if (rt_intern(pool, s, n, off))
        return -1;
    L->names[j] = *off + 1;
    L->nnames++;
    return 0;
}

/* Column col as a name, the previous row's (slot) tried first. */
static int rt_field(struct rt_loader *L, struct rt_pool *pool, sqlite3_stmt *st, int col, int slot,
                    size_t *off)
{
    const char *s = rt_text(st, col);
    size_t n = strlen(s), last = L->last[slot];
    if (last && strncmp(pool->s + last - 1, s, n) == 0 && pool->s[last - 1 + n] == '\0') {
        *off = last - 1;
        return 0;
    }
    if (rt_name(L, pool, s, n, off))
        return -1;
    L->last[slot] = *off + 1;
    return 0;
}

/* Record why set s failed to load (h's message too) and return rc. */
static int rt_set_fail(aitune *h, struct rt_set *s, int rc, const char *fmt, ...)
{
    /* Formatted apart first: an argument may be h->errmsg itself, which
    ** vsnprintf into h->errmsg would overwrite while reading it (an empty
    ** message after AITUNE_CORRUPT). */
    char msg[sizeof h->errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(h->errmsg, msg, sizeof msg);
    s->rc = rc;
    s->err = strdup(h->errmsg);
    return rc;
}

/* The columns of a set's query (rt_connect): names.h's REG_WINNER_LOOKUP,
** then rowid and hw. */
enum { RT_BUCKET, RT_DIMS, RT_LO, RT_HI, RT_SHAPE, RT_TEMPLATE, RT_CONFIG, RT_US, RT_ROWID, RT_HW };

/* Append the statement's current row to s, checking its edges and its
** shape, whose sizes give its alignment classes: the lookup trusts both. */
static int rt_add_winner(aitune *h, struct rt_set *s, struct rt_loader *L, sqlite3_stmt *st)
{
    const char *bucket = rt_text(st, RT_BUCKET), *dims = rt_text(st, RT_DIMS);
    const char *lo = rt_text(st, RT_LO), *hi = rt_text(st, RT_HI);
    const char *op = s->key, *arch = s->key + s->arch, *dtype = s->key + s->dtype;

    int ndims = 1;
    for (const char *p = dims; *p; p++)
        ndims += *p == ',';

    if (rt_grow((void **)&s->winners, &s->winners_cap, s->nwinners + 1, sizeof *s->winners) ||
        rt_grow((void **)&s->edges, &s->edges_cap, s->nedges + 2 * (size_t)ndims, sizeof *s->edges) ||
        rt_grow((void **)&s->cls, &s->cls_cap, s->ncls + (size_t)ndims, 1))
        return rt_set_fail(h, s, AITUNE_NOMEM, "out of memory reading registry '%s'", h->path);

    struct rt_winner *w = &s->winners[s->nwinners];
    long long *l = s->edges + s->nedges, *u = l + ndims;
    if (!*dims || rt_parse_ints(lo, l, ndims) || rt_parse_ints(hi, u, ndims))
        return rt_set_fail(h, s, AITUNE_CORRUPT,
                           "registry '%s': winner %s %s %s %s: edges lo '%s' hi '%s' do not match "
                           "dims '%s'", h->path, op, arch, dtype, bucket, lo, hi, dims);
    for (int i = 0; i < ndims; i++)
        /* Sizes are >= 1, so a bucket must hold at least one size >= 1. */
        if (u[i] <= l[i] || u[i] <= 1)
            return rt_set_fail(h, s, AITUNE_CORRUPT,
                               "registry '%s': winner %s %s %s %s: empty bucket, lo '%s' hi '%s'",
                               h->path, op, arch, dtype, bucket, lo, hi);
    char why[160];
    if (align_shape(rt_text(st, RT_SHAPE), dims, ndims, s->cls + s->ncls, why, sizeof why))
        return rt_set_fail(h, s, AITUNE_CORRUPT, "registry '%s': winner %s %s %s %s: %s", h->path, op, arch,
                           dtype, bucket, why);
    /* A dim the key names exactly ranks the winner first (rt_align_score):
    ** its edges must be that one size. */
    long long one[16];
    unsigned exact = bucket_exact_dims(bucket, dims, ndims, one);
    w->nexact = 0;
    for (int i = 0; i < ndims; i++) {
        if (!(exact >> i & 1))
            continue;
        const char *name = dims;   /* the i-th of dims, which the key's pieces matched */
        for (int j = 0; j < i; j++)
            name += strcspn(name, ",") + 1;
        if (l[i] != one[i] || u[i] != one[i] + 1)
            return rt_set_fail(h, s, AITUNE_CORRUPT,
                               "registry '%s': winner %s %s %s %s: its key names %.*s = %lld exactly, its edges "
                               "are [%lld, %lld)", h->path, op, arch, dtype, bucket, (int)strcspn(name, ","), name,
                               one[i], l[i], u[i]);
        w->nexact++;
    }
    if (rt_intern(&s->pool, bucket, strlen(bucket), &w->bucket) ||
        rt_field(L, &s->pool, st, RT_TEMPLATE, 0, &w->tmpl) ||
        rt_intern(&s->pool, rt_text(st, RT_CONFIG), strlen(rt_text(st, RT_CONFIG)), &w->config) ||
        rt_field(L, &s->pool, st, RT_HW, 1, &w->hw))
        return rt_set_fail(h, s, AITUNE_NOMEM, "out of memory reading registry '%s'", h->path);
    w->edges = s->nedges;
    w->cls = s->ncls;
    w->ndims = ndims;
    w->median_us = sqlite3_column_double(st, RT_US);
    w->rowid = sqlite3_column_int64(st, RT_ROWID);
    s->nedges += 2 * (size_t)ndims;
    s->ncls += (size_t)ndims;
    s->nwinners++;
    return AITUNE_OK;
}

/* Order within a set: dims, lo[0], hi[0] (one dim-0 range is one run), the
** other lo and hi, then the hardware, the alignment classes and the bucket
** key, so that even winners of one bucket measured on two GPUs, or of one
** range tuned at sizes of two classes, have a fixed order. */
static int rt_cmp_winner(const void *a, const void *b, void *ctx)
{
    const struct rt_set *s = ctx;
    const struct rt_winner *x = a, *y = b;
    if (x->ndims != y->ndims)
        return x->ndims < y->ndims ? -1 : 1;
    const long long *lx = s->edges + x->edges, *ly = s->edges + y->edges;
    int n = x->ndims;
    if (lx[0] != ly[0])
        return lx[0] < ly[0] ? -1 : 1;
    if (lx[n] != ly[n])
        return lx[n] < ly[n] ? -1 : 1;
    for (int i = 1; i < 2 * n; i++)
        if (lx[i] != ly[i])
            return lx[i] < ly[i] ? -1 : 1;
    int c = x->hw == y->hw ? 0 : strcmp(s->pool.s + x->hw, s->pool.s + y->hw);
    if (!c)
        c = memcmp(s->cls + x->cls, s->cls + y->cls, (size_t)n);
    return c ? c : strcmp(s->pool.s + x->bucket, s->pool.s + y->bucket);
}

/* Whether dim-1 ranges of slots [first, first + n) are sorted and each
** equal to or apart from the next (struct rt_run). */
static int rt_sorted1(const struct rt_set *s, size_t first, size_t n, int ndims)
{
    if (ndims < 2)
        return 0;
    for (size_t k = first + 1; k < first + n; k++) {
        const long long *p = s->edges + s->winners[s->slots[k - 1]].edges;
        const long long *c = s->edges + s->winners[s->slots[k]].edges;
        if (!((p[1] == c[1] && p[ndims + 1] == c[ndims + 1]) || p[ndims + 1] <= c[1]))
            return 0;
    }
    return 1;
}

/* Order of slots within an elementary run: dims 1.. first (for sorted1),
** then the set's order. */
static int rt_cmp_slot(const void *a, const void *b, void *ctx)
{
    const struct rt_set *s = ctx;
    const struct rt_winner *x = &s->winners[*(const size_t *)a], *y = &s->winners[*(const size_t *)b];
    const long long *lx = s->edges + x->edges, *ly = s->edges + y->edges;
    int n = x->ndims;
    for (int i = 1; i < n; i++) {
        if (lx[i] != ly[i])
            return lx[i] < ly[i] ? -1 : 1;
        if (lx[n + i] != ly[n + i])
            return lx[n + i] < ly[n + i] ? -1 : 1;
    }
    return rt_cmp_winner(x, y, ctx);
}

static int rt_cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* Make group g's runs disjoint (struct rt_run): its runs are replaced by
** elementary ones. Left as it is (the lookup then scans by span0) when
** that would cost more than a few times the group's size. Only out of
** memory fails. */
static int rt_refine(struct rt_set *s, struct rt_group *g)
{
    size_t nb = 0, total = 0;
    long long *B = malloc(2 * g->nruns * sizeof *B);
    if (!B)
        return -1;
    for (size_t i = 0; i < g->nruns; i++) {
        B[nb++] = s->runs[g->run + i].lo0;
        B[nb++] = s->runs[g->run + i].hi0;
    }
    qsort(B, nb, sizeof *B, rt_cmp_ll);
    size_t u = 0;
    for (size_t i = 0; i < nb; i++)
        if (!u || B[i] != B[u - 1])
            B[u++] = B[i];
    nb = u;
    /* What it would cost: a run's winners once per elementary range it covers. */
    for (size_t i = 0, j = 0; i < g->nruns; i++) {
        const struct rt_run *r = &s->runs[g->run + i];
        while (B[j] < r->lo0)
            j++;
        size_t k = j;
        while (B[k] < r->hi0)
            k++;
        total += (k - j) * r->count;
        if (total > 4 * g->count + 64 || g->nruns * nb > ((size_t)1 << 22)) {
            free(B);
            return 0;
        }
    }
    size_t run0 = s->nruns, nruns = 0;
    if (rt_grow((void **)&s->runs, &s->runs_cap, s->nruns + nb, sizeof *s->runs) ||
        rt_grow((void **)&s->slots, &s->slots_cap, s->nslots + total, sizeof *s->slots)) {
        free(B);
        return -1;
    }
    for (size_t j = 0; j + 1 < nb; j++) {
        struct rt_run *e = &s->runs[run0 + nruns];
        memset(e, 0, sizeof *e);
        e->first = s->nslots;
        e->lo0 = B[j];
        e->hi0 = B[j + 1];
        for (size_t i = 0; i < g->nruns; i++) {
            const struct rt_run *r = &s->runs[g->run + i];
            if (r->lo0 > B[j])
                break;         /* runs come by lo0 */
            if (r->hi0 < B[j + 1])
                continue;
            for (size_t k = 0; k < r->count; k++)
                s->slots[s->nslots++] = s->slots[r->first + k];
        }
        e->count = s->nslots - e->first;
        if (!e->count)
            continue;          /* a gap between buckets */
        qsort_r(s->slots + e->first, e->count, sizeof *s->slots, rt_cmp_slot, s);
        e->sorted1 = rt_sorted1(s, e->first, e->count, g->ndims);
        nruns++;
    }
    free(B);
    s->nruns = run0 + nruns;
    g->run = run0;
    g->nruns = nruns;
    g->disjoint = 1;
    return 0;
}

/* Sort the set's winners into groups (one per ndims) and runs. */
static int rt_index(aitune *h, struct rt_set *s)
{
    if (!s->nwinners)
        return AITUNE_OK;
    /* Sweeps write a bucket range in order, so rows often come sorted. */
    size_t k0 = 1;
    while (k0 < s->nwinners && rt_cmp_winner(&s->winners[k0 - 1], &s->winners[k0], s) <= 0)
        k0++;
    if (k0 < s->nwinners)
        qsort_r(s->winners, s->nwinners, sizeof *s->winners, rt_cmp_winner, s);
    s->groups = calloc(s->nwinners, sizeof *s->groups);
    s->runs = calloc(s->nwinners, sizeof *s->runs);
    s->slots = malloc(s->nwinners * sizeof *s->slots);
    if (!s->groups || !s->runs || !s->slots)
        return rt_set_fail(h, s, AITUNE_NOMEM, "out of memory indexing the registry");
    s->runs_cap = s->nslots = s->slots_cap = s->nwinners;
    for (size_t k = 0; k < s->nwinners; k++)
        s->slots[k] = k;
    for (size_t k = 0; k < s->nwinners; k++) {
        const struct rt_winner *w = &s->winners[k];
        struct rt_group *g = s->ngroups ? &s->groups[s->ngroups - 1] : NULL;
        if (!g || g->ndims != w->ndims) {
            g = &s->groups[s->ngroups++];
            g->first = k;
            g->ndims = w->ndims;
            g->run = s->nruns;
            g->disjoint = 1;
        }
        g->count++;
        const long long *lo = s->edges + w->edges;
        int n = w->ndims;
        struct rt_run *r = g->nruns ? &s->runs[g->run + g->nruns - 1] : NULL;
        if (!r || r->lo0 != lo[0] || r->hi0 != lo[n]) {
            if (r && lo[0] < r->hi0)
                g->disjoint = 0;
            r = &s->runs[s->nruns++];
            g->nruns++;
            r->first = k;
            r->lo0 = lo[0];
            r->hi0 = lo[n];
            r->sorted1 = n >= 2;
        } else if (r->sorted1) {
            /* The previous winner of the run: its dim-1 range must equal
            ** this one's or end where this one starts or before. */
            const long long *p = s->edges + s->winners[k - 1].edges;
            if (!((p[1] == lo[1] && p[n + 1] == lo[n + 1]) || p[n + 1] <= lo[1]))
                r->sorted1 = 0;
        }
        r->count++;
        if (lo[n] - lo[0] > g->span0)
            g->span0 = lo[n] - lo[0];
    }
    for (size_t i = 0; i < s->ngroups; i++)
        if (!s->groups[i].disjoint && rt_refine(s, &s->groups[i]))
            return rt_set_fail(h, s, AITUNE_NOMEM, "out of memory indexing the registry");
    return AITUNE_OK;
}

/* Read the winners of (op, arch, dtype) into a new set. Under h->mu. NULL
** only out of memory; else a set that may carry a failure (s->rc). */
static struct rt_set *rt_load_set(aitune *h, const char *op, const char *arch, size_t archlen,
                                  const char *dtype, uint64_t hash)
{
    struct rt_set *s = calloc(1, sizeof *s);
    size_t nop = strlen(op), ndt = strlen(dtype);
    if (!s || !(s->key = malloc(nop + archlen + ndt + 3))) {
        free(s);
        rt_error(h, AITUNE_NOMEM, "out of memory");
        return NULL;
    }
    s->hash = hash;
    memcpy(s->key, op, nop + 1);
    s->arch = nop + 1;
    memcpy(s->key + s->arch, arch, archlen);
    s->key[s->arch + archlen] = '\0';
    s->dtype = s->arch + archlen + 1;
    memcpy(s->key + s->dtype, dtype, ndt + 1);

    sqlite3_stmt *st = h->set_st;
    sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, arch, (int)archlen, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, dtype, -1, SQLITE_STATIC);
    struct rt_loader L = { 0 };
    int rc = SQLITE_DONE;   /* the loop sets it: s->rc starts OK */
    while (s->rc == AITUNE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rt_add_winner(h, s, &L, st);
    if (s->rc == AITUNE_OK && rc != SQLITE_DONE) {
        int arc = rt_sqlite_error(h, h->path, h->db, rc);
        rt_set_fail(h, s, arc, "%s", h->errmsg);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    free(L.names);
    if (s->rc == AITUNE_OK)
        rt_index(h, s);
    return s;
}

static void rt_free_set(struct rt_set *s)
{
    free(s->key);
    free(s->err);
    free(s->winners);
    free(s->edges);
    free(s->cls);
    free(s->pool.s);
    free(s->groups);
    free(s->runs);
    free(s->slots);
    free(s);
}

/* The set of (op, arch, dtype), loading it on first use. NULL when it
** cannot be had (h's message says why: out of memory, or an unopened
** handle); otherwise check s->rc. *transient: the set is not published
** (a set without winners past RT_MAXEMPTY) and the caller frees it. */
static struct rt_set *rt_get_set(aitune *h, const char *op, const char *arch, const char *dtype,
                                 int *transient)
{
    size_t archlen = arch_base_len(arch);
    uint64_t hv = rt_hash(op, arch, archlen, dtype);
    struct rt_set **chain = &h->chains[hv & (RT_NCHAINS - 1)];
    *transient = 0;
    for (int locked = 0;; locked = 1) {
        for (struct rt_set *s = __atomic_load_n(chain, __ATOMIC_ACQUIRE); s; s = s->next)
            if (s->hash == hv && strcmp(s->key, op) == 0 &&
                strncmp(s->key + s->arch, arch, archlen) == 0 && s->key[s->arch + archlen] == '\0' &&
                strcmp(s->key + s->dtype, dtype) == 0) {
                if (locked)
                    pthread_mutex_unlock(&h->mu);
                return s;
            }
        if (locked)
            break;
        if (!h->set_st) {
            rt_error(h, AITUNE_NOTFOUND, "the registry is not open");
            return NULL;
        }
        pthread_mutex_lock(&h->mu);   /* look again: another thread may have loaded it */
    }
    struct rt_set *s = rt_load_set(h, op, arch, archlen, dtype, hv);
    if (s && s->rc == AITUNE_OK && !s->nwinners && h->nempty >= RT_MAXEMPTY) {
        *transient = 1;
    } else if (s) {
        h->nempty += !s->nwinners;
        s->next = *chain;
        __atomic_store_n(chain, s, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&h->mu);
    return s;
}

/* ---- opening ---- */

/* Append one defaults row (op, arch, dtype, template, config) to h. */
static int rt_add_default(aitune *h, sqlite3_stmt *st)
{
    if (rt_grow((void **)&h->defaults, &h->defaults_cap, h->ndefaults + 1, sizeof *h->defaults))
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", h->path);
    struct rt_default *d = &h->defaults[h->ndefaults];
    const char *arch = rt_text(st, 1);
    const char *f[5] = { rt_text(st, 0), arch, rt_text(st, 2), rt_text(st, 3), rt_text(st, 4) };
    size_t *off[5] = { &d->op, &d->arch, &d->dtype, &d->tmpl, &d->config };
    for (int i = 0; i < 5; i++)
        if (rt_intern(&h->pool, f[i], i == 1 ? arch_base_len(arch) : strlen(f[i]), off[i]))
            return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", h->path);
    d->rowid = h->schema >= 2 ? sqlite3_column_int64(st, 5) : 0;
    h->ndefaults++;
    return AITUNE_OK;
}

/* The schema version from meta: a newer one is refused (its tables may mean
** something this library does not know); a registry without the row (made
** by hand from db/schema.sql) counts as version 1. */
static int rt_schema(aitune *h, sqlite3 *db)
{
    sqlite3_stmt *st;
    h->schema = 1;
    if (sqlite3_prepare_v2(db, REG_SCHEMA_VERSION_SQL, -1, &st, NULL) != SQLITE_OK)
        return AITUNE_OK;   /* no meta table: the winners query says whether it is a registry */
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        char *end;
        long n = v ? strtol(v, &end, 10) : -1;
        if (!v || end == v || *end || n < 1) {
            sqlite3_finalize(st);
            return rt_error(h, AITUNE_CORRUPT, "registry '%s': bad schema version", h->path);
        }
        if (n > REG_SCHEMA_VERSION) {
            sqlite3_finalize(st);
            return rt_error(h, AITUNE_CORRUPT,
                            "registry '%s' was written by a newer aitune (schema %ld; this libaitune "
                            "reads up to %d): upgrade libaitune", h->path, n, REG_SCHEMA_VERSION);
        }
        h->schema = (int)n;
    } else if (rc != SQLITE_DONE) {
        int arc = rt_sqlite_error(h, h->path, db, rc);
        sqlite3_finalize(st);
        return arc;
    }
    sqlite3_finalize(st);
    return AITUNE_OK;
}

/* Open name (a path, or a URI when uri is set) read-only into h: the schema
** version, the defaults, and the statement that reads a set (which checks
** that the winners table has the columns this library reads). */
static int rt_connect(aitune *h, const char *name, int uri)
{
    /* The connection is used under h->mu only: no SQLite mutexes. The file
    ** is read through a map, without a copy per page. */
    char *plain = uri ? NULL : dbguard_name(name);   /* a path is never read as a URI */
    if (!uri && !plain)
        return rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", h->path);
    int rc = sqlite3_open_v2(uri ? name : plain, &h->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
                             (uri ? SQLITE_OPEN_URI : 0), NULL);
    free(plain);
    if (rc != SQLITE_OK)
        return rt_sqlite_error(h, h->path, h->db, rc);
    /* No query may run for ever, and a schema with views, foreign triggers
    ** or virtual tables is not read at all. */
    dbguard_bound(h->db, &h->budget, DBGUARD_RT_STEPS);
    char why[512];
    if (dbguard_check(h->db, NULL, why, sizeof why)) {
        if (h->budget.hit)
            return rt_sqlite_error(h, h->path, h->db, SQLITE_INTERRUPT);
        /* CANTOPEN (a WAL registry whose -shm cannot be made) is retried
        ** immutable by aitune_open; anything else is the file's. */
        rc = sqlite3_errcode(h->db);
        if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY)
            return rt_sqlite_error(h, h->path, h->db, rc);
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s", h->path, why);
    }
    /* A sweep may be writing: wait out its brief locks rather than fail. */
    sqlite3_busy_timeout(h->db, 5000);
    sqlite3_exec(h->db, "PRAGMA mmap_size = 268435456", NULL, NULL, NULL);   /* a hint: may fail */
    /* One read transaction, so the defaults and the checks see one snapshot. */
    rc = sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL);
    int arc = rc == SQLITE_OK ? AITUNE_OK : rt_sqlite_error(h, h->path, h->db, rc);
    if (arc == AITUNE_OK)
        arc = rt_schema(h, h->db);
    if (arc == AITUNE_OK) {
        /* A stored arch may carry the 'a' or 'f' suffix: the set's query
        ** takes the base arch and both suffixed forms (names.h, as the
        ** tool reads winners). Schema 3 added the hardware column. */
        const char *sql = h->schema >= 3 ? REG_WINNERS_OF(REG_WINNER_LOOKUP("") ", rowid, hw")
                                         : REG_WINNERS_OF(REG_WINNER_LOOKUP("") ", rowid, ''");
        rc = sqlite3_prepare_v3(h->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &h->set_st, NULL);
        if (rc != SQLITE_OK)
            arc = rt_sqlite_error(h, h->path, h->db, rc);
    }
    sqlite3_stmt *st = NULL;
    if (arc == AITUNE_OK) {
        rc = sqlite3_prepare_v2(h->db, h->schema >= 2
                                ? "SELECT op, arch, dtype, template, config, rowid FROM defaults"
                                : "SELECT op, arch, dtype, template, config FROM defaults", -1, &st, NULL);
        if (rc != SQLITE_OK)
            arc = rt_sqlite_error(h, h->path, h->db, rc);
    }
    while (arc == AITUNE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        arc = rt_add_default(h, st);
    if (arc == AITUNE_OK && rc != SQLITE_DONE)
        arc = rt_sqlite_error(h, h->path, h->db, rc);
    sqlite3_finalize(st);
    sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    h->uri = uri;
    return arc;
}

/* Undo rt_connect. */
static void rt_disconnect(aitune *h)
{
    sqlite3_finalize(h->set_st);
    h->set_st = NULL;
    sqlite3_close(h->db);
    h->db = NULL;
    h->ndefaults = 0;
    h->pool.n = 0;
}

/* Connect to path as an immutable database: SQLite then reads the file as
** it is, without the -shm and -wal files that a WAL registry otherwise needs
** to create next to it. That is what makes a registry installed in a
** read-only directory readable, and it is safe there: no writer can be
** active in a directory where those files cannot be created. */
static int rt_connect_immutable(aitune *h, const char *path)
{
    char *name = dbguard_immutable_uri(path);
    if (!name && errno == ENOMEM)
        return rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", path);
    if (!name)
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path, strerror(errno));
    int rc = rt_connect(h, name, 1);
    free(name);
    return rc;
}

/* *out is set to NULL only when the handle itself cannot be allocated
** (AITUNE_NOMEM). aitune_errmsg(NULL) then says "out of memory" and
** aitune_close(NULL) does nothing, so callers need no special case; a static
** fallback handle would instead be shared state that failing calls write to. */
int aitune_open(const char *path, aitune **out)
{
    if (!out)
        return AITUNE_MISUSE;
    aitune *h = calloc(1, sizeof *h);
    *out = h;
    if (!h)
        return AITUNE_NOMEM;
    pthread_mutex_init(&h->mu, NULL);
    strcpy(h->errmsg, "not an error");
    if (!path)
        return rt_error(h, AITUNE_MISUSE, "aitune_open: path is NULL");

    /* SQLite would say only "unable to open database file"; say why. */
    struct stat sb;
    if (stat(path, &sb) != 0)
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path,
                        strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': not a regular file",
                        path);
    /* Readable? Asked without opening it: closing any descriptor of the file
    ** drops every POSIX lock this process holds on it, the SQLite connections'
    ** of the handles already open included, and a sweep or pin writing the
    ** registry meanwhile then takes them for gone (its checkpoint resets the
    ** WAL they still read: "database disk image is malformed"). */
    if (access(path, R_OK) != 0)
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path,
                        strerror(errno));

    h->path = strdup(path);
    if (!h->path)
        return rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", path);
    int rc = rt_connect(h, path, 0);
    if (rc == AITUNE_CANTOPEN) {
        /* The file is readable, so this is a WAL registry whose -shm file
        ** cannot be created: retry without one. */
        rt_disconnect(h);
        rc = rt_connect_immutable(h, path);
    }
    if (rc == AITUNE_OK)
        strcpy(h->errmsg, "not an error"); /* the retry succeeded */
    else
        rt_disconnect(h); /* a failed open answers no lookups */
    return rc;
}

/* ---- lookup ---- */

/* How winner w's bucket suits shape (align.h: bucket_score): its
** alignment classes fit the shape's, then the dims it names exactly, then
** how close the classes are. A set whose winners were all tuned at aligned
** sizes of log2 buckets scores them all alike, so neither changes any of
** its answers. */
static long long rt_align_score(const struct rt_set *s, const struct rt_winner *w, const long long *shape, int ndims)
{
    return bucket_score(s->cls + w->cls, w->nexact, shape, ndims);
}

/* Is (exact, dist, nexact, lo, score) a better answer than (bexact, bdist,
** bnexact, blo, bscore)? Exact beats nearest, then the smaller distance
** wins. Distances within 1e-9 are a tie (two log2 differences that are
** equal on paper can round apart), broken by the more dims named exactly
** (an exact bucket at the shape's n and a log2 one, both as far in m: the
** one tuned at that n; 0 in registries without exact dims), then by the
** smaller lo so that the answer never depends on row order, then by the
** score (rt_align_score: buckets of one range tuned at sizes of several
** classes). Alignment never makes another
** bucket the answer than the one today's rule picks: a registry tuned at
** aligned sizes answers as it did before classes, and a winner that holds
** the shape (exact; rt_exact_better) beats any nearer fit, since the
** memory-bound kernels run at any class. */
static int rt_better(int exact, double dist, int nexact, const long long *lo, long long score, int bexact,
                     double bdist, int bnexact, const long long *blo, long long bscore, int ndims)
{
    if (exact != bexact)
        return exact;
    if (fabs(dist - bdist) > 1e-9)
        return dist < bdist;
    if (nexact != bnexact)
        return nexact > bnexact;
    for (int i = 0; i < ndims; i++)
        if (lo[i] != blo[i])
            return lo[i] < blo[i];
    return score > bscore;
}

/* Of two buckets that both hold shape, is w's the answer rather than
** best's? The one that suits the shape better (rt_align_score: classes
** first, one tuned at 4097 for 4097 or 4100, one tuned at 4096 for 4096 or
** 4104; then the more dims named exactly, n = 6144 before n's log2 bucket
** [4096, 8192) that also holds it); then the one measured on hw, when hw is given (a
** registry merged from several GPUs: one may have split a bucket another
** left whole); then the smaller lo; then the set's fixed order (the
** narrower range first), so the answer never depends on the order the
** buckets are visited in. */
static int rt_exact_better(const struct rt_set *s, const struct rt_winner *w, const struct rt_winner *best,
                           const char *hw, const long long *shape, int ndims)
{
    long long sw = rt_align_score(s, w, shape, ndims), sb = rt_align_score(s, best, shape, ndims);
    if (sw != sb)
        return sw > sb;
    if (hw) {
        int a = !strcmp(s->pool.s + w->hw, hw), b = !strcmp(s->pool.s + best->hw, hw);
        if (a != b)
            return a;
    }
    const long long *lo = s->edges + w->edges, *blo = s->edges + best->edges;
    for (int i = 0; i < ndims; i++)
        if (lo[i] != blo[i])
            return lo[i] < blo[i];
    return rt_cmp_winner(w, best, (void *)s) < 0;
}

/* Among winners of one bucket (same lo and hi) measured on several GPUs,
** prefer the one measured on hw: is w (not best) that one? */
static int rt_prefer_hw(const struct rt_set *s, const struct rt_winner *w, const struct rt_winner *best,
                        const char *hw, int ndims)
{
    if (!hw || !best || strcmp(s->pool.s + w->hw, hw) || !strcmp(s->pool.s + best->hw, hw))
        return 0;
    return memcmp(s->edges + w->edges, s->edges + best->edges, 2 * (size_t)ndims * sizeof(long long)) == 0;
}

/* The winners of group g whose buckets may hold shape, as indexes [*from,
** *to) into s->winners (through *slot when it is not NULL). With disjoint
** ranges (log2 or explicit edges) that is one run, found by binary search,
** and within it (sorted1) the dim-1 range by another; else those with lo[0]
** in (shape[0] - span0, shape[0]]. */
static void rt_exact_range(const struct rt_set *s, const struct rt_group *g, const long long *shape, int ndims,
                           size_t *from, size_t *to, const size_t **slot)
{
    const long long *E = s->edges;
    size_t lo_i = 0, b = 0;
    *slot = g->disjoint ? s->slots : NULL;   /* runs list winners through slots */
    if (g->disjoint) {
        size_t x = g->run, y = g->run + g->nruns;
        while (x < y) {   /* the first run with hi0 > shape[0] */
            size_t m = x + (y - x) / 2;
            if (s->runs[m].hi0 > shape[0]) y = m; else x = m + 1;
        }
        if (x < g->run + g->nruns) {
            const struct rt_run *r = &s->runs[x];
            lo_i = r->first;
            b = lo_i + r->count;
            if (r->sorted1) {
                size_t p = lo_i, q = b;
                while (p < q) {   /* the first with hi1 > shape[1] */
                    size_t m = p + (q - p) / 2;
                    if (E[s->winners[(*slot)[m]].edges + ndims + 1] > shape[1]) q = m; else p = m + 1;
                }
                lo_i = p;
                q = p;
                while (q < b && E[s->winners[(*slot)[q]].edges + 1] <= shape[1])
                    q++;        /* those whose dim-1 range starts at or before it */
                b = q;
            }
        }
    } else {
        size_t a = g->first, x = a, y = g->first + g->count;
        while (x < y) {   /* first with lo[0] > shape[0] */
            size_t m = x + (y - x) / 2;
            if (E[s->winners[m].edges] > shape[0]) y = m; else x = m + 1;
        }
        b = x;
        long long floor0 = shape[0] - g->span0;
        x = a, y = b;
        while (x < y) {   /* first with lo[0] > shape[0] - span0 */
            size_t m = x + (y - x) / 2;
            if (E[s->winners[m].edges] > floor0) y = m; else x = m + 1;
        }
        lo_i = x;
    }
    *from = lo_i;
    *to = b;
}

/* The best winner of group g whose bucket holds shape (rt_exact_better),
** or NULL. */
static const struct rt_winner *rt_exact(const struct rt_set *s, const struct rt_group *g, const long long *shape,
                                        int ndims, const char *hw)
{
    const struct rt_winner *best = NULL;
    size_t from, to;
    const size_t *slot;
    rt_exact_range(s, g, shape, ndims, &from, &to, &slot);
    for (size_t k = from; k < to; k++) {
        const struct rt_winner *w = &s->winners[slot ? slot[k] : k];
        const long long *lo = s->edges + w->edges, *hi = lo + ndims;
        int exact = 1;
        for (int i = 0; i < ndims && exact; i++)
            exact = shape[i] >= (lo[i] > 1 ? lo[i] : 1) && shape[i] <= hi[i] - 1;
        if (exact && (!best || rt_exact_better(s, w, best, hw, shape, ndims))) best = w;
    }
    return best;
}

/* The whole group's nearest winner (rt_better), when no bucket holds the
** shape: *exact whether it holds it after all, *dist how far it is, in
** log2 steps summed over the dims (a kernel tuned for 2^20 suits 2^21
** better than 2^25). */
static const struct rt_winner *rt_nearest(const struct rt_set *s, const struct rt_group *g, const long long *shape,
                                          int ndims, const char *hw, int *best_exact, double *best_dist)
{
    const long long *E = s->edges;
    const struct rt_winner *best = NULL;
    long long best_score = 0;
    *best_exact = 0;
    *best_dist = 0;
    for (size_t k = g->first; k < g->first + g->count; k++) {
        const struct rt_winner *w = &s->winners[k];
        const long long *lo = E + w->edges, *hi = lo + ndims;
        int exact = 1;
        double dist = 0;
        for (int i = 0; i < ndims; i++) {
            long long v = shape[i], a = lo[i] > 1 ? lo[i] : 1, c = hi[i] - 1;
            long long near = v < a ? a : v > c ? c : v;
            if (near != v) {
                exact = 0;
                dist += fabs(log2((double)v) - log2((double)near));
            }
        }
        long long score = rt_align_score(s, w, shape, ndims);
        if (!best ||
            rt_better(exact, dist, w->nexact, lo, score, *best_exact, *best_dist, best->nexact, E + best->edges,
                      best_score, ndims) ||
            (!rt_better(*best_exact, *best_dist, best->nexact, E + best->edges, best_score, exact, dist, w->nexact, lo,
                        score, ndims) &&
             rt_prefer_hw(s, w, best, hw, ndims))) {
            best = w;
            *best_exact = exact;
            *best_dist = dist;
            best_score = score;
        }
    }
    return best;
}

/* The default of (op, arch's base, dtype), or NULL. */
static const struct rt_default *rt_default_of(const aitune *h, const char *op, const char *arch, const char *dtype)
{
    size_t archlen = arch_base_len(arch);
    for (size_t k = 0; k < h->ndefaults; k++) {
        const struct rt_default *d = &h->defaults[k];
        const char *a = h->pool.s + d->arch;
        if (!strcmp(h->pool.s + d->op, op) && !strncmp(a, arch, archlen) && a[archlen] == '\0' &&
            !strcmp(h->pool.s + d->dtype, dtype))
            return d;
    }
    return NULL;
}

/* The answer for a query: *wp (a winner, of *sp) or *dp (a default). hw,
** when not NULL, is the current GPU's hardware identity: among winners of
** one bucket it prefers the one measured there. No allocation and no
** writes to h once the set is loaded, except the error message. */
static int rt_choose(aitune *h, const char *op, const char *arch, const char *dtype,
                     const long long *shape, int ndims, const char *hw, aitune_choice *out,
                     const struct rt_set **sp, const struct rt_winner **wp,
                     const struct rt_default **dp)
{
    *sp = NULL;
    *wp = NULL;
    *dp = NULL;
    if (!op || !arch || !dtype || !shape || !out)
        return rt_error(h, AITUNE_MISUSE, "aitune_lookup: %s is NULL",
                        !op ? "op" : !arch ? "arch" : !dtype ? "dtype" : !shape ? "shape"
                                                                               : "out");
    memset(out, 0, sizeof *out);
    if (ndims < 1)
        return rt_error(h, AITUNE_MISUSE, "ndims is %d: must be >= 1", ndims);
    for (int i = 0; i < ndims; i++)
        if (shape[i] < 1)
            return rt_error(h, AITUNE_MISUSE, "shape[%d] is %lld: sizes must be >= 1", i,
                            shape[i]);

    int transient = 0;
    struct rt_set *s = rt_get_set(h, op, arch, dtype, &transient);
    if (!s)
        return h->set_st ? AITUNE_NOMEM : AITUNE_NOTFOUND;
    if (s->rc != AITUNE_OK)
        return rt_error(h, s->rc, "%s", s->err ? s->err : "registry: a set failed to load");

    const struct rt_group *g = NULL;
    int other_ndims = 0;
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].ndims == ndims)
            g = &s->groups[i];
        else
            other_ndims = s->groups[i].ndims; /* only for the message, if nothing answers */
    /* Winners of this op with another number of dims: the caller's shape
    ** is not this op's (a default would answer it, wrongly). */
    if (!g && other_ndims)
        return rt_error(h, AITUNE_MISUSE, "%s %s %s has %d dims (its winners'); the shape given has %d", op, arch,
                        dtype, other_ndims, ndims);
    int best_exact = 1;
    double best_dist = 0;
    const struct rt_winner *best = g ? rt_exact(s, g, shape, ndims, hw) : NULL;
    if (g && !best) best = rt_nearest(s, g, shape, ndims, hw, &best_exact, &best_dist);
    if (best) {
        out->level = best_exact ? AITUNE_EXACT : AITUNE_NEAREST;
        out->template_name = s->pool.s + best->tmpl;
        out->config = s->pool.s + best->config;
        out->bucket = s->pool.s + best->bucket;
        out->median_us = best->median_us;
        out->distance = best_exact ? 0 : best_dist;
        *sp = s;
        *wp = best;
        return AITUNE_OK;
    }
    if (transient)
        rt_free_set(s);   /* it had no winners: nothing points into it */

    const struct rt_default *d = rt_default_of(h, op, arch, dtype);
    if (d) {
        out->level = AITUNE_DEFAULT;
        out->template_name = h->pool.s + d->tmpl;
        out->config = h->pool.s + d->config;
        *dp = d;
        return AITUNE_OK;
    }
    if (other_ndims)
        return rt_error(h, AITUNE_NOTFOUND,
                        "no winner or default for %s %s %s with %d dims (its winners have %d)",
                        op, arch, dtype, ndims, other_ndims);
    return rt_error(h, AITUNE_NOTFOUND, "no winner or default for %s %s %s", op, arch, dtype);
}

/* Count a query no tuned bucket held. Only misses take the lock: exact
** answers stay lock-free. */
static void rt_count_miss(aitune *h, const char *op, const char *arch, const char *dtype,
                          const long long *shape, int ndims)
{
    char sh[96];
    size_t at = 0;
    for (int i = 0; i < ndims && at < sizeof sh; i++)
        at += (size_t)snprintf(sh + at, sizeof sh - at, "%s%lld", i ? "," : "", shape[i]);
    if (at >= sizeof sh || strlen(op) >= 32 || strlen(arch) >= 16 || strlen(dtype) >= 16)
        return;
    char a[16];
    snprintf(a, sizeof a, "%.*s", (int)arch_base_len(arch), arch);
    pthread_mutex_lock(&h->mu);
    int i = 0;
    while (i < h->nmisses && (strcmp(h->misses[i].op, op) || strcmp(h->misses[i].arch, a) ||
                              strcmp(h->misses[i].dtype, dtype) || strcmp(h->misses[i].shape, sh)))
        i++;
    if (i < h->nmisses) {
        h->misses[i].count++;
    } else if (h->nmisses < RT_MAXMISSES) {
        struct rt_miss *m = &h->misses[h->nmisses++];
        snprintf(m->op, sizeof m->op, "%s", op);
        snprintf(m->arch, sizeof m->arch, "%s", a);
        snprintf(m->dtype, sizeof m->dtype, "%s", dtype);
        snprintf(m->shape, sizeof m->shape, "%s", sh);
        m->count = 1;
    } else {
        h->dropped++;
    }
    pthread_mutex_unlock(&h->mu);
}

/* Once the set is loaded: no allocation and no writes to h except the error
** message on failure and the miss count of a query no bucket held, so
** lookups on one handle may run in several threads at once. */
int aitune_lookup_gpu(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, const char *gpu, aitune_choice *out,
                      const char **measured_on)
{
    if (!h)
        return AITUNE_MISUSE;
    const struct rt_set *s;
    const struct rt_winner *w;
    const struct rt_default *d;
    int rc = rt_choose(h, op, arch, dtype, shape, ndims, gpu && *gpu ? gpu : NULL, out, &s, &w, &d);
    if (rc == AITUNE_OK ? out->level != AITUNE_EXACT : rc == AITUNE_NOTFOUND)
        rt_count_miss(h, op, arch, dtype, shape, ndims);
    if (measured_on)
        *measured_on = w ? s->pool.s + w->hw : NULL;
    return rc;
}

int aitune_lookup(aitune *h, const char *op, const char *arch, const char *dtype,
                  const long long *shape, int ndims, aitune_choice *out)
{
    return aitune_lookup_gpu(h, op, arch, dtype, shape, ndims, NULL, out, NULL);
}

/* ---- layer 2: kernels ---- */

/* Read the row's launch plan and cubin (a winner of set s, or a default, by
** rowid) into *launch and *cubin (malloc'd), checking the row is still the
** one loaded; cubin NULL: the plan only (a vendor winner has no cubin).
** Under h->mu: it uses the handle's connection. */
static int rt_fetch(aitune *h, const struct rt_set *s, const void *row, int is_default, char **launch,
                    void **cubin, size_t *cubin_len)
{
    *launch = NULL;
    if (cubin)
        *cubin = NULL;
    const char *sql = is_default
        ? "SELECT d.op, d.dtype, d.template, d.launch, c.cubin FROM defaults d "
          "LEFT JOIN cubins c ON c.hash = d.cubin WHERE d.rowid = ?"
        : "SELECT w.op, w.dtype, w.bucket, w.launch, c.cubin FROM winners w "
          "LEFT JOIN cubins c ON c.hash = w.cubin WHERE w.rowid = ?";
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rt_sqlite_error(h, h->path, h->db, rc);
    const struct rt_winner *w = row;
    const struct rt_default *d = row;
    sqlite3_bind_int64(st, 1, is_default ? d->rowid : w->rowid);
    rc = sqlite3_step(st);
    int arc = AITUNE_OK;
    if (rc == SQLITE_ROW) {
        const char *op = is_default ? h->pool.s + d->op : s->key;
        const char *dtype = is_default ? h->pool.s + d->dtype : s->key + s->dtype;
        const char *third = is_default ? h->pool.s + d->tmpl : s->pool.s + w->bucket;
        if (strcmp(rt_text(st, 0), op) || strcmp(rt_text(st, 1), dtype) || strcmp(rt_text(st, 2), third))
            arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
        else if (sqlite3_column_type(st, 3) != SQLITE_TEXT)
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': %s has no launch plan", h->path,
                           is_default ? "the default" : "the winner");
        else if (cubin && (sqlite3_column_type(st, 4) != SQLITE_BLOB || sqlite3_column_bytes(st, 4) < 16))
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': the cubin of %s %s is not stored", h->path,
                           is_default ? "the default" : "bucket", third);
        else if (!(*launch = strdup(rt_text(st, 3))))
            arc = rt_error(h, AITUNE_NOMEM, "out of memory");
        else if (cubin) {
            *cubin_len = (size_t)sqlite3_column_bytes(st, 4);
            *cubin = malloc(*cubin_len);
            if (!*cubin)
                arc = rt_error(h, AITUNE_NOMEM, "out of memory");
            else
                memcpy(*cubin, sqlite3_column_blob(st, 4), *cubin_len);
        }
    } else if (rc == SQLITE_DONE) {
        arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
    } else {
        arc = rt_sqlite_error(h, h->path, h->db, rc);
    }
    sqlite3_finalize(st);
    if (arc != AITUNE_OK) {
        free(*launch);
        *launch = NULL;
        if (cubin) {
            free(*cubin);
            *cubin = NULL;
        }
    }
    return arc;
}

static const cu_api *rt_cu(aitune *h)
{
    const char *why = NULL;
    const cu_api *cu = cu_load(&why);
    if (!cu)
        rt_error(h, AITUNE_ERROR, "%s", why ? why : "cannot load libcuda");
    return cu;
}

/* Whether winner w of set s is the vendor's (vendor.h: VENDOR_TEMPLATE). */
static int rt_is_vendor(const struct rt_set *s, const struct rt_winner *w)
{
    return w && vendor_is_template(s->pool.s + w->tmpl);
}

/* The vendor handle of context ctx into *out, made on first use. Under
** h->mu. */
static int rt_vendor_of(aitune *h, CUcontext ctx, vendor **out)
{
    for (struct rt_vendor *x = h->vendors; x; x = x->next)
        if (x->ctx == ctx) {
            *out = x->v;
            return AITUNE_OK;
        }
    char err[768];
    struct rt_vendor *x = calloc(1, sizeof *x);
    if (!x)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    if (vendor_open(&x->v, err, sizeof err)) {
        free(x);
        return rt_error(h, AITUNE_ERROR, "cuBLASLt in this context: %s", err);
    }
    x->ctx = ctx;
    x->next = h->vendors;
    h->vendors = x;
    *out = x->v;
    return AITUNE_OK;
}

/* A vendor winner's kernel: its plan names the op's A and B (in), D (out)
** and dims m, n, k (what vendor_gemm reads) and a workspace, and cuBLASLt
** opens in ctx. Under h->mu. */
static int rt_vendor_kernel(aitune *h, struct aitune_kernel *k, const char *op, const char *dtype,
                            const char *bucket, CUcontext ctx)
{
    const plan *p = k->p;
    k->vkind = vendor_kind(op, dtype);
    k->va = plan_arg_index(p, "A");
    k->vb = plan_arg_index(p, "B");
    k->vd = plan_arg_index(p, "D");
    int ws = 0;
    for (int i = 0; i < p->nparams; i++)
        ws |= p->params[i].kind == PLAN_WORKSPACE;
    if (k->vkind < 0 || p->ndims != 3 || strcmp(p->dims[0], "m") || strcmp(p->dims[1], "n") ||
        strcmp(p->dims[2], "k") || k->va < 0 || k->vb < 0 || k->vd < 0 || p->args[k->va].role != ROLE_IN ||
        p->args[k->vb].role != ROLE_IN || p->args[k->vd].role != ROLE_OUT || !ws)
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s bucket %s names the vendor, but the vendor "
                        "serves no such problem (%s %s, its plan's arguments and workspace)", h->path, op, dtype,
                        bucket, op, dtype);
    int rc = rt_vendor_of(h, ctx, &k->vend);
    if (rc == AITUNE_OK)
        k->ws = 1;
    return rc;
}

int aitune_kernel_get(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, aitune_kernel **out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_get: out is NULL");
    *out = NULL;
    aitune_choice c;
    const struct rt_set *s;
    const struct rt_winner *w;
    const struct rt_default *d;
    int rc = rt_choose(h, op, arch, dtype, shape, ndims, NULL, &c, &s, &w, &d);
    if (rc == AITUNE_OK ? c.level != AITUNE_EXACT : rc == AITUNE_NOTFOUND)
        rt_count_miss(h, op, arch, dtype, shape, ndims);
    if (rc != AITUNE_OK)
        return rc;
    if (d && !d->rowid)
        return rt_error(h, AITUNE_NOTFOUND, "%s %s %s: only the default answers, and this registry "
                        "stores no compiled default", op, arch, dtype);
    if (rt_is_vendor(s, w)) {
        /* Before the driver: a registry that names the vendor says so even
        ** where cuBLASLt (or the GPU) is missing. */
        char why[768];
        if (vendor_kind(op, dtype) < 0)
            return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s bucket %s names the vendor, which serves "
                            "no %s %s", h->path, op, dtype, c.bucket, op, dtype);
        if (vendor_available(why, sizeof why))
            return rt_error(h, AITUNE_ERROR, "%s %s %s bucket %s is held by the vendor (%s), which cannot be "
                            "opened: %s", op, arch, dtype, c.bucket, VENDOR_TEMPLATE, why);
    }
    const cu_api *cu = rt_cu(h);
    if (!cu)
        return AITUNE_ERROR;
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return rt_error(h, AITUNE_ERROR, "no current CUDA context in this thread (cudaSetDevice "
                        "and cudaFree(0), or cuCtxSetCurrent, first)");
    /* The GPU of this context: among winners of one bucket measured on
    ** several GPUs, the one measured on this kind of GPU answers. */
    char hw[256];
    pthread_mutex_lock(&h->mu);
    if (h->hw_ctx != ctx) {
        CUdevice dev;
        if (cu->CtxGetDevice(&dev) != CUDA_SUCCESS || cu_hw(cu, dev, h->hw, sizeof h->hw))
            h->hw[0] = '\0';
        h->hw_ctx = ctx;
    }
    memcpy(hw, h->hw, sizeof hw);
    pthread_mutex_unlock(&h->mu);
    if (w && hw[0] && (rc = rt_choose(h, op, arch, dtype, shape, ndims, hw, &c, &s, &w, &d)) != AITUNE_OK)
        return rc;
    const void *row = w ? (const void *)w : (const void *)d;

    pthread_mutex_lock(&h->mu);
    for (struct aitune_kernel *k = h->kernels; k; k = k->next)
        if (k->row == row && k->ctx == ctx) {
            pthread_mutex_unlock(&h->mu);
            *out = k;
            return AITUNE_OK;
        }
    char *launch = NULL;
    void *cubin = NULL;
    size_t len = 0;
    struct aitune_kernel *k = NULL;
    int is_vendor = rt_is_vendor(s, w);
    rc = rt_fetch(h, s, row, d != NULL, &launch, is_vendor ? NULL : &cubin, &len);
    if (rc == AITUNE_OK && !(k = calloc(1, sizeof *k)))
        rc = rt_error(h, AITUNE_NOMEM, "out of memory");
    char err[512];
    if (rc == AITUNE_OK && plan_decode(launch, &k->p, err, sizeof err))
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s %s %s: %s", h->path, op, arch, dtype,
                      c.bucket ? c.bucket : "default", err);
    if (rc == AITUNE_OK && k->p->ndims != ndims)
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': the launch plan has %d dims, the bucket %d",
                      h->path, k->p->ndims, ndims);
    CUresult cr;
    if (rc == AITUNE_OK && is_vendor)
        rc = rt_vendor_kernel(h, k, op, dtype, c.bucket, ctx);
    else if (rc == AITUNE_OK && (cr = cu->ModuleLoadData(&k->mod, cubin)) != CUDA_SUCCESS)
        rc = rt_error(h, AITUNE_ERROR, "cannot load the kernel of %s %s %s into this context: %s",
                      op, arch, dtype, cu_errstr(cr));
    if (rc == AITUNE_OK && !is_vendor && (cr = cu->ModuleGetFunction(&k->fn, k->mod, k->p->kernel)) != CUDA_SUCCESS)
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': the cubin has no kernel '%s': %s", h->path,
                      k->p->kernel, cu_errstr(cr));
    if (rc == AITUNE_OK) {
        k->row = row;
        k->ctx = ctx;
        k->plan_json = launch;
        launch = NULL;
        k->info.level = c.level;
        k->info.template_name = c.template_name;
        k->info.config = c.config;
        k->info.bucket = c.bucket;
        k->info.plan = k->plan_json;
        k->info.ndims = k->p->ndims;
        k->info.nargs = k->p->nargs;
        for (int i = 0; i < k->p->nparams; i++)
            k->ws |= k->p->params[i].kind == PLAN_WORKSPACE;
        k->next = h->kernels;
        h->kernels = k;
        *out = k;
    } else if (k) {
        if (k->mod)
            cu->ModuleUnload(k->mod);
        plan_free(k->p);
        free(k);
    }
    pthread_mutex_unlock(&h->mu);
    free(launch);
    free(cubin);
    return rc;
}

int aitune_kernel_info_get(aitune *h, const aitune_kernel *k, aitune_kernel_info *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !out)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_info_get: %s is NULL", !k ? "k" : "out");
    *out = k->info;
    return AITUNE_OK;
}

int aitune_kernel_workspace(aitune *h, const aitune_kernel *k, const long long *shape,
                            unsigned long long *bytes)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !shape || !bytes)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_workspace: an argument is NULL");
    if (k->vend) {
        *bytes = VENDOR_WORKSPACE;
        return AITUNE_OK;
    }
    plan_geom g;
    char err[512];
    if (plan_geometry(k->p, shape, &g, err, sizeof err))
        return rt_error(h, AITUNE_MISUSE, "%s: %s", k->p->kernel, err);
    *bytes = g.ws_bytes;
    return AITUNE_OK;
}

int aitune_launch(aitune *h, const aitune_kernel *k, const aitune_arg *args,
                  const long long *shape, void *stream)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !args || !shape)
        return rt_error(h, AITUNE_MISUSE, "aitune_launch: %s is NULL", !k ? "k" : !args ? "args" : "shape");
    const cu_api *cu = cu_load(NULL);   /* loaded: k exists */
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_launch: the current context is not the one the "
                        "kernel was loaded in (aitune_kernel_get in this context)");
    const plan *p = k->p;
    if (k->vend) {
        const int idx[3] = { k->va, k->vb, k->vd };
        for (int i = 0; i < 3; i++)
            if (!args[idx[i]].ptr)
                return rt_error(h, AITUNE_MISUSE, "aitune_launch: buffer '%s' is NULL", p->args[idx[i]].name);
        if (!args[p->nargs].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_launch: the vendor's workspace is NULL (%llu bytes: "
                            "aitune_kernel_workspace)", VENDOR_WORKSPACE);
        char err[512];
        if (vendor_gemm(k->vend, k->vkind, shape, args[k->va].ptr, args[k->vb].ptr, args[k->vd].ptr,
                        args[p->nargs].ptr, stream, err, sizeof err))
            return rt_error(h, AITUNE_ERROR, "aitune_launch (vendor): %s", err);
        return AITUNE_OK;
    }
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < p->nargs; i++) {
        v[i].ptr = p->args[i].role <= ROLE_INOUT ? args[i].ptr : 0;
        v[i].f32 = p->args[i].role == ROLE_SCALAR ? args[i].f32 : 0;
        if (p->args[i].role <= ROLE_INOUT && !args[i].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_launch: buffer '%s' is NULL", p->args[i].name);
    }
    unsigned long long ws = k->ws ? args[p->nargs].ptr : 0;
    plan_launch L;
    char err[512];
    if (plan_bind(p, shape, v, ws, cu->TensorMapEncodeTiled, &L, err, sizeof err))
        return rt_error(h, AITUNE_MISUSE, "aitune_launch %s: %s", p->kernel, err);
    CUstream s = (CUstream)stream;
    CUresult cr;
    unsigned allowed = __atomic_load_n(&((struct aitune_kernel *)k)->optin, __ATOMIC_RELAXED);
    if (L.g.smem > allowed) {
        /* Past 48 KB of static plus dynamic shared memory a kernel must opt
        ** in; allowing the dynamic size needs no check of the static part. */
        cr = cu->FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)L.g.smem);
        if (cr != CUDA_SUCCESS)
            return rt_error(h, AITUNE_ERROR, "%s: allow %u bytes of shared memory: %s", p->kernel,
                            L.g.smem, cu_errstr(cr));
        while (allowed < L.g.smem &&
               !__atomic_compare_exchange_n(&((struct aitune_kernel *)k)->optin, &allowed, L.g.smem, 0,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    if (L.g.ws_zero && (cr = cu->MemsetD8Async(ws, 0, (size_t)L.g.ws_zero, s)) != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: zero the workspace: %s", p->kernel, cu_errstr(cr));
    cr = plan_launch_kernel(cu->LaunchKernel, cu->LaunchKernelEx, k->fn, s, &L);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "launch %s: %s", p->kernel, cu_errstr(cr));
    return AITUNE_OK;
}

/* ---- bound launches (the cached fast path) ----
**
** aitune_bind does once what aitune_launch does on every call: it evaluates
** the launch plan at a shape (geometry, dims, i32s), opts the kernel in to
** its shared memory, and encodes its tensor maps. What it cannot know yet,
** the buffers' addresses, it leaves to aitune_bound_launch, which copies the
** prebuilt parameters onto its stack, writes the addresses, scalars and the
** workspace into them, and launches: no expression, no JSON, no allocation,
** no lock waited on, no write to shared state but a tensor map's slot (below).
**
** A tensor map holds its buffer's address, encoded by the driver in a layout
** it does not document, so a map is re-encoded at launch when its address is
** not the one it was prebuilt at (cuTensorMapEncodeTiled is a host-only call
** with every other argument stored here: no expression is evaluated again).
** Each map keeps the last one encoded at launch, with its address, in a slot
** of its own (rt_tmap_slot): a decode loop's activations come back at the
** same addresses step after step (the caching allocator hands a module's
** input the block it had), so a launch there copies 128 bytes instead of
** calling the driver. A slot is taken with an atomic exchange and never
** waited on: a launch that finds it busy encodes, as it would without it.
** To learn those arguments without a second copy of plan.c's tensor-map
** rules, bind hands plan_bind a recording encoder (rt_record_encode) that
** keeps each call's arguments before it calls the driver's.
**
** The kind and the launcher: a bound launch runs through b->launch, which for
** a tuned kernel is rt_bound_kernel. Another kind (a vendor library's call)
** gets its own launcher and keeps its state beside the kernel's. */

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

/* Where rt_record_encode writes (bind's, in this thread). */
struct rt_recorder {
    struct aitune_bound *b;
    const cu_api *cu;
    int n;                          /* maps recorded so far */
};
static _Thread_local struct rt_recorder *rt_rec;

static CUresult rt_record_encode(CUtensorMap *tm, CUtensorMapDataType dt, cuuint32_t rank, void *addr,
                                 const cuuint64_t *gdim, const cuuint64_t *gstride, const cuuint32_t *box,
                                 const cuuint32_t *estride, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                 CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    struct rt_recorder *R = rt_rec;
    if (!R || R->n >= R->b->ntmaps || rank < 1 || rank > 5)
        return CUDA_ERROR_INVALID_VALUE;
    struct rt_tmap_rec *r = &R->b->tmaps[R->n++];
    r->addr = (unsigned long long)(uintptr_t)addr;
    r->dt = dt;
    r->rank = rank;
    for (cuuint32_t d = 0; d < rank; d++) {
        r->gdim[d] = gdim[d];
        r->box[d] = box[d];
        r->estride[d] = estride[d];
        if (d + 1 < rank)
            r->gstride[d] = gstride[d];
    }
    r->il = il;
    r->sw = sw;
    r->l2 = l2;
    r->oob = oob;
    return R->cu->TensorMapEncodeTiled(tm, dt, rank, addr, gdim, gstride, box, estride, il, sw, l2, oob);
}

/* Where bind pretends buffers live when the caller gives no address: 16-byte
** aligned, non-zero, and never reused by a launch (r->known stays 0). */
#define RT_FAKE_ADDR(i) ((1ULL << 46) + ((unsigned long long)(i) << 20))

static void rt_bound_release(struct aitune_bound *b)
{
    free(b->slots);
    free(b);
}

/* Copy into tm the map slot holds for address a; 0 when it holds another or is busy. */
static int rt_slot_get(struct rt_tmap_slot *slot, unsigned long long a, CUtensorMap *tm)
{
    if (atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire))
        return 0;
    int hit = slot->addr == a;
    if (hit)
        memcpy(tm, slot->map, sizeof *tm);
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
    return hit;
}

static void rt_slot_put(struct rt_tmap_slot *slot, unsigned long long a, const CUtensorMap *tm)
{
    if (atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire))
        return;
    slot->addr = a;
    memcpy(slot->map, tm, sizeof *tm);
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
}

static int rt_bound_kernel(aitune *h, const struct aitune_bound *b, const aitune_arg *args, CUstream s)
{
    const struct aitune_kernel *k = b->k;
    const plan *p = k->p;
    const cu_api *cu = b->cu;
    for (int i = 0; i < b->nbufs; i++)
        if (!args[b->bufs[i]].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: buffer '%s' is NULL", p->args[b->bufs[i]].name);
    unsigned long long ws = b->L.g.ws_bytes ? args[b->nargs].ptr : 0;
    if (b->L.g.ws_bytes && !ws)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch %s: the workspace (args[%d]) is NULL", p->kernel,
                        b->nargs);
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the current context is not the one the "
                        "kernel was loaded in");
    plan_launch L;
    L.g = b->L.g;
    L.nparams = b->L.nparams;
    for (int i = 0; i < L.nparams; i++) {
        const plan_param *q = &p->params[i];
        L.params[i] = &L.storage[i];
        switch (q->kind) {
        case PLAN_PTR:       L.storage[i].u64 = args[q->arg].ptr; break;
        case PLAN_F32:       L.storage[i].f32 = args[q->arg].f32; break;
        case PLAN_WORKSPACE: L.storage[i].u64 = ws; break;
        case PLAN_TMAP:      break;   /* below */
        default:             L.storage[i].i64 = b->L.storage[i].i64; break;   /* dim, i32 */
        }
    }
    for (int j = 0; j < b->ntmaps; j++) {
        const struct rt_tmap_rec *r = &b->tmaps[j];
        unsigned long long a = (r->src < 0 ? ws : args[r->src].ptr) + r->off;
        CUtensorMap *tm = &L.storage[r->param].tmap;
        if (r->known && a == r->addr) {
            memcpy(tm, &b->L.storage[r->param].tmap, sizeof *tm);
            continue;
        }
        if (a % 16)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch %s: buffer '%s' is not 16-byte aligned "
                            "(a TMA tensor map reads it)", p->kernel,
                            r->src < 0 ? "workspace" : p->args[r->src].name);
        if (rt_slot_get(&b->slots[j], a, tm))
            continue;
        memset(tm, 0, sizeof *tm);
        CUresult cr = cu->TensorMapEncodeTiled(tm, r->dt, r->rank, (void *)(uintptr_t)a, r->gdim,
                                               r->rank > 1 ? r->gstride : NULL, r->box, r->estride, r->il, r->sw,
                                               r->l2, r->oob);
        if (cr != CUDA_SUCCESS)
            return rt_error(h, AITUNE_ERROR, "aitune_bound_launch %s: encode the tensor map of '%s': %s", p->kernel,
                            r->src < 0 ? "workspace" : p->args[r->src].name, cu_errstr(cr));
        rt_slot_put(&b->slots[j], a, tm);
    }
    CUresult cr;
    if (L.g.ws_zero && (cr = cu->MemsetD8Async(ws, 0, (size_t)L.g.ws_zero, s)) != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: zero the workspace: %s", p->kernel, cu_errstr(cr));
    cr = plan_launch_kernel(cu->LaunchKernel, cu->LaunchKernelEx, k->fn, s, &L);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "launch %s: %s", p->kernel, cu_errstr(cr));
    return AITUNE_OK;
}

/* A vendor bucket's bound launch: one cublasLtMatmul through the kernel's
** vendor handle, its plan found by shape and alignment (vendor.h). */
static int rt_bound_vendor(aitune *h, const struct aitune_bound *b, const aitune_arg *args, CUstream s)
{
    const struct aitune_kernel *k = b->k;
    const int idx[3] = { k->va, k->vb, k->vd };
    for (int i = 0; i < 3; i++)
        if (!args[idx[i]].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: buffer '%s' is NULL", k->p->args[idx[i]].name);
    if (!args[b->nargs].ptr)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the vendor's workspace (args[%d]) is NULL", b->nargs);
    CUcontext ctx = NULL;
    if (b->cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the current context is not the one the "
                        "kernel was loaded in");
    char err[512];
    if (vendor_gemm(k->vend, k->vkind, b->vshape, args[k->va].ptr, args[k->vb].ptr, args[k->vd].ptr,
                    args[b->nargs].ptr, s, err, sizeof err))
        return rt_error(h, AITUNE_ERROR, "aitune_bound_launch (vendor): %s", err);
    return AITUNE_OK;
}

/* Bind a vendor bucket's kernel: the shape kept, the heuristic run now for
** the addresses args gives (else aligned ones), so the first launch finds
** its plan. */
static int rt_bind_vendor(aitune *h, const struct aitune_kernel *k, const long long *shape, const aitune_arg *args,
                          aitune_bound **out)
{
    struct aitune_bound *b = calloc(1, sizeof *b);
    if (!b)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    b->kind = AITUNE_BOUND_VENDOR;
    b->launch = rt_bound_vendor;
    b->k = k;
    b->cu = cu_load(NULL);
    b->nargs = k->p->nargs;
    b->L.g.ws_bytes = VENDOR_WORKSPACE;
    memcpy(b->vshape, shape, sizeof b->vshape);
    unsigned long long a[3];
    const int idx[3] = { k->va, k->vb, k->vd };
    for (int i = 0; i < 3; i++)
        a[i] = args && args[idx[i]].ptr ? args[idx[i]].ptr : RT_FAKE_ADDR(i + 1);
    char desc[128], err[512];
    if (vendor_describe(k->vend, k->vkind, shape, a[0], a[1], a[2], desc, sizeof desc, err, sizeof err)) {
        free(b);
        return rt_error(h, AITUNE_ERROR, "aitune_bind (vendor): %s", err);
    }
    pthread_mutex_lock(&h->mu);
    b->next = h->bounds;
    h->bounds = b;
    pthread_mutex_unlock(&h->mu);
    *out = b;
    return AITUNE_OK;
}

/* Allow k smem bytes of dynamic shared memory (once per size reached). */
static int rt_optin(aitune *h, const cu_api *cu, struct aitune_kernel *k, unsigned smem)
{
    unsigned allowed = __atomic_load_n(&k->optin, __ATOMIC_RELAXED);
    if (smem <= allowed)
        return AITUNE_OK;
    CUresult cr = cu->FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: allow %u bytes of shared memory: %s", k->p->kernel, smem, cu_errstr(cr));
    while (allowed < smem && !__atomic_compare_exchange_n(&k->optin, &allowed, smem, 0, __ATOMIC_RELAXED,
                                                          __ATOMIC_RELAXED))
        ;
    return AITUNE_OK;
}

int aitune_bind(aitune *h, const aitune_kernel *k, const long long *shape, const aitune_arg *args,
                aitune_bound **out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_bind: out is NULL");
    *out = NULL;
    if (!k || !shape)
        return rt_error(h, AITUNE_MISUSE, "aitune_bind: %s is NULL", !k ? "k" : "shape");
    const plan *p = k->p;
    for (int i = 0; i < p->ndims; i++)
        if (shape[i] < 1)
            return rt_error(h, AITUNE_MISUSE, "aitune_bind %s: %s = %lld (sizes must be >= 1)", p->kernel,
                            p->dims[i], shape[i]);
    if (k->vend)
        return rt_bind_vendor(h, k, shape, args, out);
    const cu_api *cu = cu_load(NULL);   /* loaded: k exists */
    struct aitune_bound *b = calloc(1, sizeof *b);
    if (!b)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    b->kind = AITUNE_BOUND_KERNEL;
    b->launch = rt_bound_kernel;
    b->k = k;
    b->cu = cu;
    b->nargs = p->nargs;
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < p->nargs; i++) {
        int buf = p->args[i].role <= ROLE_INOUT;
        v[i].ptr = !buf ? 0 : args && args[i].ptr ? args[i].ptr : RT_FAKE_ADDR(i + 1);
        v[i].f32 = p->args[i].role == ROLE_SCALAR && args ? args[i].f32 : 0;
        if (buf)
            b->bufs[b->nbufs++] = (signed char)i;
    }
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_TMAP) {
            struct rt_tmap_rec *r = &b->tmaps[b->ntmaps++];
            r->param = i;
            r->src = p->params[i].at ? -1 : p->params[i].arg;
        }
    if (b->ntmaps && !(b->slots = calloc((size_t)b->ntmaps, sizeof *b->slots))) {
        free(b);
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    }
    /* The workspace entry is read only when the plan has one. */
    unsigned long long ws = RT_FAKE_ADDR(0);
    struct rt_recorder R = { b, cu, 0 };
    rt_rec = &R;
    char err[512];
    int bad = plan_bind(p, shape, v, ws, rt_record_encode, &b->L, err, sizeof err);
    rt_rec = NULL;
    int rc = AITUNE_OK;
    if (bad)
        rc = rt_error(h, AITUNE_MISUSE, "aitune_bind %s: %s", p->kernel, err);
    else if (R.n != b->ntmaps)
        rc = rt_error(h, AITUNE_ERROR, "aitune_bind %s: %d of %d tensor maps encoded", p->kernel, R.n, b->ntmaps);
    for (int j = 0; rc == AITUNE_OK && j < b->ntmaps; j++) {
        struct rt_tmap_rec *r = &b->tmaps[j];
        unsigned long long base = r->src < 0 ? ws : v[r->src].ptr;
        r->off = r->addr - base;
        r->known = r->src >= 0 && args && args[r->src].ptr;
    }
    if (rc == AITUNE_OK)
        rc = rt_optin(h, cu, (struct aitune_kernel *)k, b->L.g.smem);
    if (rc != AITUNE_OK) {
        rt_bound_release(b);
        return rc;
    }
    pthread_mutex_lock(&h->mu);
    b->next = h->bounds;
    h->bounds = b;
    pthread_mutex_unlock(&h->mu);
    *out = b;
    return AITUNE_OK;
}

int aitune_bound_launch(aitune *h, const aitune_bound *b, const aitune_arg *args, void *stream)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!b || !args)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: %s is NULL", !b ? "b" : "args");
    return b->launch(h, b, args, (CUstream)stream);
}

_Static_assert(PLAN_MAXARGS + 1 <= AITUNE_CACHED_MAXARGS, "aitune_cached holds every argument and the workspace");

int aitune_launch_cached(const aitune_cached *c)
{
    if (!c || !c->h)
        return AITUNE_MISUSE;
    return aitune_bound_launch(c->h, c->b, c->args, c->stream);
}

int aitune_bound_info_get(aitune *h, const aitune_bound *b, aitune_bound_info *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!b || !out)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_info_get: %s is NULL", !b ? "b" : "out");
    memset(out, 0, sizeof *out);
    out->kind = b->kind;
    out->kernel = b->k;
    out->nargs = b->nargs;
    out->ws_bytes = b->L.g.ws_bytes;
    for (int i = 0; i < 3; i++) {
        out->grid[i] = b->L.g.grid[i];
        out->block[i] = b->L.g.block[i];
        out->cluster[i] = b->L.g.cluster[i];
    }
    out->smem = b->L.g.smem;
    out->ntmaps = b->ntmaps;
    return AITUNE_OK;
}

int aitune_bound_free(aitune *h, aitune_bound *b)
{
    if (!b)
        return AITUNE_OK;
    if (!h)
        return AITUNE_MISUSE;
    pthread_mutex_lock(&h->mu);
    struct aitune_bound **at = &h->bounds;
    while (*at && *at != b)
        at = &(*at)->next;
    int found = *at != NULL;
    if (found)
        *at = b->next;
    pthread_mutex_unlock(&h->mu);
    if (!found)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_free: not a bound launch of this handle");
    rt_bound_release(b);
    return AITUNE_OK;
}

int aitune_miss_count(aitune *h, long long *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_miss_count: out is NULL");
    pthread_mutex_lock(&h->mu);
    long long n = h->dropped;
    for (int i = 0; i < h->nmisses; i++)
        n += h->misses[i].count;
    pthread_mutex_unlock(&h->mu);
    *out = n;
    return AITUNE_OK;
}

int aitune_flush_misses(aitune *h)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!h->path)
        return rt_error(h, AITUNE_MISUSE, "aitune_flush_misses: the handle has no registry");
    pthread_mutex_lock(&h->mu);
    int rc = AITUNE_OK;
    if (h->nmisses) {
        sqlite3 *db = NULL;
        char *plain = dbguard_name(h->path), why[512];
        int src = plain ? sqlite3_open_v2(plain, &db, SQLITE_OPEN_READWRITE, NULL) : SQLITE_NOMEM;
        free(plain);
        sqlite3_stmt *st = NULL;
        dbguard_budget budget;
        if (src == SQLITE_OK) {
            sqlite3_busy_timeout(db, 5000);
            dbguard_bound(db, &budget, DBGUARD_RT_STEPS);
            /* A trigger added since the open would run on this write. */
            if (dbguard_check(db, NULL, why, sizeof why)) {
                rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': %s", h->path, why);
                src = SQLITE_ERROR;
            }
        }
        if (src == SQLITE_OK)
            src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (src == SQLITE_OK)
            src = sqlite3_prepare_v2(db, "INSERT INTO misses (op, arch, dtype, shape, count) VALUES (?,?,?,?,?) "
                                         "ON CONFLICT (op, arch, dtype, shape) DO UPDATE SET count = count + excluded.count",
                                     -1, &st, NULL);
        for (int i = 0; src == SQLITE_OK && i < h->nmisses; i++) {
            struct rt_miss *m = &h->misses[i];
            sqlite3_bind_text(st, 1, m->op, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, m->arch, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, m->dtype, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 4, m->shape, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 5, m->count);
            src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (src == SQLITE_OK)
            src = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (src != SQLITE_OK) {
            if (rc == AITUNE_OK)
                rc = rt_sqlite_error(h, h->path, db, src);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        } else {
            h->nmisses = 0;
            h->dropped = 0;
        }
        sqlite3_close(db);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int aitune_count(aitune *h, int *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_count: out is NULL");
    *out = 0;
    pthread_mutex_lock(&h->mu);
    int rc = AITUNE_OK;
    sqlite3_stmt *st = NULL;
    if (h->db) {
        int src = sqlite3_prepare_v2(h->db, "SELECT count(*) FROM winners", -1, &st, NULL);
        if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
            *out = sqlite3_column_int(st, 0);
        else
            rc = rt_sqlite_error(h, h->path, h->db, src);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

const char *aitune_errmsg(aitune *h)
{
    /* The one way aitune_open leaves a NULL handle is running out of memory. */
    return h ? h->errmsg : "out of memory";
}

const char *aitune_level_name(int level)
{
    switch (level) {
    case AITUNE_EXACT:   return "exact";
    case AITUNE_NEAREST: return "nearest";
    case AITUNE_DEFAULT: return "default";
    default:             return "unknown";
    }
}

int aitune_close(aitune *h)
{
    if (h) {
        for (struct aitune_bound *b = h->bounds, *next; b; b = next) {
            next = b->next;
            rt_bound_release(b);
        }
        const cu_api *cu = h->kernels ? cu_load(NULL) : NULL;
        for (struct aitune_kernel *k = h->kernels, *next; k; k = next) {
            next = k->next;
            /* The context may be gone already; then there is nothing to unload. */
            if (cu && k->mod)
                cu->ModuleUnload(k->mod);
            plan_free(k->p);
            free(k->plan_json);
            free(k);
        }
        for (struct rt_vendor *x = h->vendors, *next; x; x = next) {
            next = x->next;
            vendor_close(x->v);
            free(x);
        }
        pthread_mutex_destroy(&h->mu);
        rt_disconnect(h);
        for (int i = 0; i < RT_NCHAINS; i++)
            for (struct rt_set *s = h->chains[i], *next; s; s = next) {
                next = s->next;
                rt_free_set(s);
            }
        free(h->path);
        free(h->defaults);
        free(h->pool.s);
        free(h);
    }
    return AITUNE_OK;
}
