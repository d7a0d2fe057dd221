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
** Layer 2 (kernels, launches, bound launches) and aitune_close are
** rt_launch.c, above this file; what the two share is rt_impl.h.
*/
#define _GNU_SOURCE /* stat, realpath */

#include "rt_impl.h"
#include "align.h"
#include "names.h"

#include <stdatomic.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set h's message and return rc, so failures read `return rt_error(...)`. */
int rt_error(aitune *h, int rc, const char *fmt, ...)
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
const char *rt_text(sqlite3_stmt *st, int col)
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
int rt_sqlite_error(aitune *h, const char *path, sqlite3 *db, int rc)
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

void rt_free_set(struct rt_set *s)
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
void rt_disconnect(aitune *h)
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
int rt_choose(aitune *h, const char *op, const char *arch, const char *dtype,
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
void rt_count_miss(aitune *h, const char *op, const char *arch, const char *dtype,
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
