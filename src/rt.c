/*
** rt.c: the runtime library, libaitune. aitune.h is the contract.
**
** aitune_open copies the registry's winners and defaults into the handle and
** closes the database, so a lookup is a scan over memory: no SQL, no
** allocation, no lock. Registries hold hundreds of winners, not millions, so
** a linear scan is fast enough for a launch path and needs no index to keep
** in sync.
**
** Rows refer to their strings and bucket edges by offset into two pools
** that grow while loading; offsets survive a realloc where pointers would
** not. Once aitune_open returns, nothing is reallocated again.
**
** Layer 2 (kernels) reads what it needs for one bucket only when asked: the
** winner's launch plan and cubin, by the row id remembered at open, through
** a connection opened for that call. Loaded kernels form a list under the
** handle's mutex; a kernel never moves or changes once published, so
** aitune_launch reads it without the lock. The launch plan (plan.c) binds
** arguments exactly as the worker that measured the kernel did.
*/
#define _GNU_SOURCE /* stat, realpath */

#include "aitune.h"
#include "cu.h"
#include "plan.h"

#include <pthread.h>

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct rt_winner {
    size_t op, arch, dtype, bucket, tmpl, config; /* offsets into pool */
    size_t edges;     /* index into edges: ndims lo values, then ndims hi */
    int ndims;
    double median_us;
    long long rowid;  /* winners.rowid, for the plan and cubin */
};

struct rt_default {
    size_t op, arch, dtype, tmpl, config;         /* offsets into pool */
    long long rowid;  /* defaults.rowid; 0 when the schema has no kernel columns */
};

/* Winners of one (op, arch, dtype, ndims), sorted by lo[0]: a lookup hashes
** to its group and binary-searches the few buckets whose dim-0 range can
** hold the shape, so an exact answer costs the same with 10 or 10k winners. */
struct rt_group {
    size_t first, count;
    int ndims;
    long long span0;          /* the widest hi[0] - lo[0] in the group */
    uint64_t hash;            /* of (op, arch, dtype) */
    size_t run, nruns;        /* its runs of one dim-0 range, sorted */
    int disjoint;             /* the runs' dim-0 ranges do not overlap */
};

/* Winners of a group that share one dim-0 range [lo0, hi0). */
struct rt_run {
    size_t first, count;
    long long lo0, hi0;
};

/* The registry schema this library reads (registry.h's REG_SCHEMA_VERSION). */
#define RT_SCHEMA_VERSION 3

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
};

/* One counted miss. */
#define RT_MAXMISSES 256
struct rt_miss {
    char op[32], arch[16], dtype[16], shape[96];
    long long count;
};

struct aitune {
    struct rt_winner *winners;
    size_t nwinners, winners_cap;
    struct rt_default *defaults;
    size_t ndefaults, defaults_cap;
    long long *edges;                             /* bucket edges, hi exclusive */
    size_t nedges, edges_cap;
    struct rt_group *groups;
    size_t ngroups;
    struct rt_run *runs;
    size_t nruns;
    int *slots;                                   /* open addressing: group index or -1 */
    size_t nslots;                                /* a power of two, or 0 */
    char *pool;                                   /* NUL-terminated strings */
    size_t npool, pool_cap;
    char errmsg[512];
    char *path;                                   /* for layer 2 and flushes */
    char *name;                                   /* what sqlite3_open_v2 got */
    int uri;
    int schema;
    pthread_mutex_t mu;                           /* kernels and misses */
    struct aitune_kernel *kernels;
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

/* Copy s into the pool; its offset in *off. 0, or -1 out of memory. */
static int rt_intern(aitune *h, const char *s, size_t *off)
{
    size_t n = strlen(s) + 1;
    if (rt_grow((void **)&h->pool, &h->pool_cap, h->npool + n, 1))
        return -1;
    memcpy(h->pool + h->npool, s, n);
    *off = h->npool;
    h->npool += n;
    return 0;
}

/* The length of arch without the suffix of an arch-specific ('a') or family
** ('f') target: sm_90a runs what was tuned for sm_90, and the registry keys
** winners by the base arch. Only a letter right after the digits counts, so
** a name that merely ends in 'a' is left alone. */
static size_t rt_arch_len(const char *arch)
{
    size_t n = strlen(arch);
    if (n >= 2 && (arch[n - 1] == 'a' || arch[n - 1] == 'f') &&
        arch[n - 2] >= '0' && arch[n - 2] <= '9')
        return n - 1;
    return n;
}

/* A column as text; "" for NULL, which the schema forbids anyway. */
static const char *rt_text(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return s ? (const char *)s : "";
}

/* Parse exactly n comma-separated integers from s into v; 0, or -1. */
static int rt_parse_ints(const char *s, long long *v, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        v[i] = strtoll(s, &end, 10);
        if (end == s || errno)
            return -1;
        if (*end != (i + 1 < n ? ',' : '\0'))
            return -1;
        s = end + 1;
    }
    return 0;
}

/* Report a failed SQLite call on db and map it to an aitune status. */
static int rt_sqlite_error(aitune *h, const char *path, sqlite3 *db, int rc)
{
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

/* Append one winners row (op, arch, dtype, bucket, dims, lo, hi, template,
** config, median_us) to h, checking its edges: the lookup trusts them. */
static int rt_add_winner(aitune *h, const char *path, sqlite3_stmt *st)
{
    const char *bucket = rt_text(st, 3), *dims = rt_text(st, 4);
    const char *lo = rt_text(st, 5), *hi = rt_text(st, 6);

    int ndims = 1;
    for (const char *p = dims; *p; p++)
        ndims += *p == ',';

    if (rt_grow((void **)&h->winners, &h->winners_cap, h->nwinners + 1, sizeof *h->winners) ||
        rt_grow((void **)&h->edges, &h->edges_cap, h->nedges + 2 * (size_t)ndims,
                sizeof *h->edges))
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", path);

    struct rt_winner *w = &h->winners[h->nwinners];
    long long *l = h->edges + h->nedges, *u = l + ndims;
    if (!*dims || rt_parse_ints(lo, l, ndims) || rt_parse_ints(hi, u, ndims))
        return rt_error(h, AITUNE_CORRUPT,
                        "registry '%s': winner %s %s %s %s: edges lo '%s' hi '%s' do not "
                        "match dims '%s'", path, rt_text(st, 0), rt_text(st, 1),
                        rt_text(st, 2), bucket, lo, hi, dims);
    for (int i = 0; i < ndims; i++)
        /* Sizes are >= 1, so a bucket must hold at least one size >= 1. */
        if (l[i] < 0 || u[i] <= l[i] || u[i] <= 1)
            return rt_error(h, AITUNE_CORRUPT,
                            "registry '%s': winner %s %s %s %s: empty bucket, lo '%s' hi '%s'",
                            path, rt_text(st, 0), rt_text(st, 1), rt_text(st, 2), bucket,
                            lo, hi);

    if (rt_intern(h, rt_text(st, 0), &w->op) || rt_intern(h, rt_text(st, 1), &w->arch) ||
        rt_intern(h, rt_text(st, 2), &w->dtype) || rt_intern(h, bucket, &w->bucket) ||
        rt_intern(h, rt_text(st, 7), &w->tmpl) || rt_intern(h, rt_text(st, 8), &w->config))
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", path);
    /* Normalize here too, so that a registry that stored "sm_90a" still matches. */
    h->pool[w->arch + rt_arch_len(h->pool + w->arch)] = '\0';
    w->edges = h->nedges;
    w->ndims = ndims;
    w->median_us = sqlite3_column_double(st, 9);
    w->rowid = sqlite3_column_int64(st, 10);
    h->nedges += 2 * (size_t)ndims;
    h->nwinners++;
    return AITUNE_OK;
}

/* Append one defaults row (op, arch, dtype, template, config) to h. */
static int rt_add_default(aitune *h, const char *path, sqlite3_stmt *st)
{
    if (rt_grow((void **)&h->defaults, &h->defaults_cap, h->ndefaults + 1,
                sizeof *h->defaults))
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", path);
    struct rt_default *d = &h->defaults[h->ndefaults];
    if (rt_intern(h, rt_text(st, 0), &d->op) || rt_intern(h, rt_text(st, 1), &d->arch) ||
        rt_intern(h, rt_text(st, 2), &d->dtype) || rt_intern(h, rt_text(st, 3), &d->tmpl) ||
        rt_intern(h, rt_text(st, 4), &d->config))
        return rt_error(h, AITUNE_NOMEM, "out of memory reading registry '%s'", path);
    h->pool[d->arch + rt_arch_len(h->pool + d->arch)] = '\0';
    d->rowid = h->schema >= 2 ? sqlite3_column_int64(st, 5) : 0;
    h->ndefaults++;
    return AITUNE_OK;
}

/* Run sql on db and hand each row to add. */
static int rt_read_rows(aitune *h, const char *path, sqlite3 *db, const char *sql,
                        int (*add)(aitune *, const char *, sqlite3_stmt *))
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rt_sqlite_error(h, path, db, rc);
    int arc = AITUNE_OK;
    while (arc == AITUNE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        arc = add(h, path, st);
    if (arc == AITUNE_OK && rc != SQLITE_DONE)
        arc = rt_sqlite_error(h, path, db, rc);
    sqlite3_finalize(st);
    return arc;
}

/* The schema version from meta: a newer one is refused (its tables may mean
** something this library does not know); a registry without the row (made
** by hand from db/schema.sql) counts as version 1. */
static int rt_schema(aitune *h, const char *path, sqlite3 *db)
{
    sqlite3_stmt *st;
    h->schema = 1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, NULL) != SQLITE_OK)
        return AITUNE_OK;   /* no meta table: the winners query says whether it is a registry */
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        char *end;
        long n = v ? strtol(v, &end, 10) : -1;
        if (!v || end == v || *end || n < 1) {
            sqlite3_finalize(st);
            return rt_error(h, AITUNE_CORRUPT, "registry '%s': bad schema version", path);
        }
        if (n > RT_SCHEMA_VERSION) {
            sqlite3_finalize(st);
            return rt_error(h, AITUNE_CORRUPT,
                            "registry '%s' was written by a newer aitune (schema %ld; this libaitune "
                            "reads up to %d): upgrade libaitune", path, n, RT_SCHEMA_VERSION);
        }
        h->schema = (int)n;
    }
    sqlite3_finalize(st);
    return AITUNE_OK;
}

/* Open name (a path, or a URI when uri is set) read-only and load it into h,
** which must be empty. path is for messages. */
static int rt_load(aitune *h, const char *path, const char *name, int uri)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(name, &db, SQLITE_OPEN_READONLY | (uri ? SQLITE_OPEN_URI : 0),
                             NULL);
    if (rc != SQLITE_OK) {
        rc = rt_sqlite_error(h, path, db, rc);
        sqlite3_close(db);
        return rc;
    }
    /* A sweep may be writing: wait out its brief locks rather than fail. */
    sqlite3_busy_timeout(db, 5000);
    /* One read transaction, so winners and defaults come from one snapshot. */
    rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    int arc = rc == SQLITE_OK ? AITUNE_OK : rt_sqlite_error(h, path, db, rc);
    if (arc == AITUNE_OK)
        arc = rt_schema(h, path, db);
    if (arc == AITUNE_OK)
        arc = rt_read_rows(h, path, db,
                           "SELECT op, arch, dtype, bucket, dims, lo, hi, template, config,"
                           " median_us, rowid FROM winners",   /* rt_index sorts */
                           rt_add_winner);
    if (arc == AITUNE_OK)
        arc = rt_read_rows(h, path, db,
                           h->schema >= 2 ? "SELECT op, arch, dtype, template, config, rowid FROM defaults"
                                          : "SELECT op, arch, dtype, template, config FROM defaults",
                           rt_add_default);
    if (arc == AITUNE_OK) {
        /* Layer 2 opens the same file the same way. */
        h->name = strdup(name);
        h->uri = uri;
        if (!h->name)
            arc = rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", path);
    }
    sqlite3_close(db); /* also ends the read transaction */
    return arc;
}

/* Load path as an immutable database: SQLite then reads the file as it is,
** without the -shm and -wal files that a WAL registry otherwise needs to
** create next to it. That is what makes a registry installed in a read-only
** directory readable, and it is safe there: no writer can be active in a
** directory where those files cannot be created. */
static int rt_load_immutable(aitune *h, const char *path)
{
    char *abs = realpath(path, NULL); /* canonical, so "file:" + abs is a valid URI */
    if (!abs)
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path,
                        strerror(errno));
    static const char tail[] = "?immutable=1";
    size_t n = strlen(abs);
    char *name = malloc(sizeof "file:" + 3 * n + sizeof tail);
    if (!name) {
        free(abs);
        return rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", path);
    }
    char *q = name + sprintf(name, "file:");
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
        /* Percent-encode all but unreserved characters, so '?', '#' and '%'
        ** in a file name cannot be read as URI syntax. */
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
            *q++ = (char)*p;
        else
            q += sprintf(q, "%%%02X", *p);
    }
    strcpy(q, tail);
    free(abs);
    int rc = rt_load(h, path, name, 1);
    free(name);
    return rc;
}

static int rt_index(aitune *h);

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
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_error(h, AITUNE_CANTOPEN, "cannot open registry '%s': %s", path,
                        strerror(errno));
    fclose(f);

    h->path = strdup(path);
    if (!h->path)
        return rt_error(h, AITUNE_NOMEM, "out of memory opening registry '%s'", path);
    int rc = rt_load(h, path, path, 0);
    if (rc == AITUNE_CANTOPEN) {
        /* The file is readable, so this is a WAL registry whose -shm file
        ** cannot be created: retry without one. */
        h->nwinners = h->ndefaults = h->nedges = h->npool = 0;
        rc = rt_load_immutable(h, path);
    }
    if (rc == AITUNE_OK)
        rc = rt_index(h);
    if (rc == AITUNE_OK)
        strcpy(h->errmsg, "not an error"); /* the retry succeeded */
    else
        h->nwinners = h->ndefaults = h->nslots = 0; /* a failed open answers no lookups */
    return rc;
}

/* Is (exact, dist, lo) a better answer than (bexact, bdist, blo)? Exact beats
** nearest, then the smaller distance wins. Distances within 1e-9 are a tie
** (two log2 differences that are equal on paper can round apart), broken by
** the smaller lo so that the answer never depends on row order. */
static int rt_better(int exact, double dist, const long long *lo, int bexact, double bdist,
                     const long long *blo, int ndims)
{
    if (exact != bexact)
        return exact;
    if (fabs(dist - bdist) > 1e-9)
        return dist < bdist;
    for (int i = 0; i < ndims; i++)
        if (lo[i] != blo[i])
            return lo[i] < blo[i];
    return 0;
}

/* Does a stored (op, arch, dtype) match the asked one? The stored arch is
** already normalized; archlen is the asked arch's normalized length. */
static int rt_same(const aitune *h, size_t op, size_t arch, size_t dtype, const char *qop,
                   const char *qarch, size_t archlen, const char *qdtype)
{
    const char *a = h->pool + arch;
    return strcmp(h->pool + op, qop) == 0 && strncmp(a, qarch, archlen) == 0 &&
           a[archlen] == '\0' && strcmp(h->pool + dtype, qdtype) == 0;
}

static uint64_t rt_hash(const char *op, const char *arch, size_t archlen, const char *dtype)
{
    uint64_t x = 0xcbf29ce484222325ULL;
    for (const char *p = op; *p; p++) x = (x ^ (unsigned char)*p) * 0x100000001b3ULL;
    x = (x ^ 0xff) * 0x100000001b3ULL;
    for (size_t i = 0; i < archlen; i++) x = (x ^ (unsigned char)arch[i]) * 0x100000001b3ULL;
    x = (x ^ 0xff) * 0x100000001b3ULL;
    for (const char *p = dtype; *p; p++) x = (x ^ (unsigned char)*p) * 0x100000001b3ULL;
    return x;
}

static int rt_cmp_winner(const void *a, const void *b, void *ctx)
{
    const aitune *h = ctx;
    const struct rt_winner *x = a, *y = b;
    int c;
    if ((c = strcmp(h->pool + x->op, h->pool + y->op)) || (c = strcmp(h->pool + x->arch, h->pool + y->arch)) ||
        (c = strcmp(h->pool + x->dtype, h->pool + y->dtype)))
        return c;
    if (x->ndims != y->ndims)
        return x->ndims < y->ndims ? -1 : 1;
    const long long *lx = h->edges + x->edges, *ly = h->edges + y->edges;
    if (lx[0] != ly[0])
        return lx[0] < ly[0] ? -1 : 1;
    if (lx[x->ndims] != ly[y->ndims])   /* hi[0]: one dim-0 range is one run */
        return lx[x->ndims] < ly[y->ndims] ? -1 : 1;
    for (int i = 1; i < x->ndims; i++)
        if (lx[i] != ly[i])
            return lx[i] < ly[i] ? -1 : 1;
    return 0;
}

/* Sort the winners into groups and hash the groups. */
static int rt_index(aitune *h)
{
    if (!h->nwinners)
        return AITUNE_OK;
    qsort_r(h->winners, h->nwinners, sizeof *h->winners, rt_cmp_winner, h);
    h->groups = calloc(h->nwinners, sizeof *h->groups);
    h->runs = calloc(h->nwinners, sizeof *h->runs);
    if (!h->groups || !h->runs)
        return rt_error(h, AITUNE_NOMEM, "out of memory indexing the registry");
    for (size_t k = 0; k < h->nwinners; k++) {
        const struct rt_winner *w = &h->winners[k];
        struct rt_group *g = h->ngroups ? &h->groups[h->ngroups - 1] : NULL;
        const struct rt_winner *f = g ? &h->winners[g->first] : NULL;
        if (!g || f->ndims != w->ndims || strcmp(h->pool + f->op, h->pool + w->op) ||
            strcmp(h->pool + f->arch, h->pool + w->arch) || strcmp(h->pool + f->dtype, h->pool + w->dtype)) {
            g = &h->groups[h->ngroups++];
            g->first = k;
            g->ndims = w->ndims;
            g->hash = rt_hash(h->pool + w->op, h->pool + w->arch, strlen(h->pool + w->arch), h->pool + w->dtype);
            g->run = h->nruns;
            g->disjoint = 1;
        }
        g->count++;
        const long long *lo = h->edges + w->edges;
        struct rt_run *r = g->nruns ? &h->runs[g->run + g->nruns - 1] : NULL;
        if (!r || r->lo0 != lo[0] || r->hi0 != lo[w->ndims]) {
            if (r && lo[0] < r->hi0)
                g->disjoint = 0;
            r = &h->runs[h->nruns++];
            g->nruns++;
            r->first = k;
            r->lo0 = lo[0];
            r->hi0 = lo[w->ndims];
        }
        r->count++;
        if (lo[w->ndims] - lo[0] > g->span0)
            g->span0 = lo[w->ndims] - lo[0];
    }
    h->nslots = 16;
    while (h->nslots < 2 * h->ngroups)
        h->nslots *= 2;
    h->slots = malloc(h->nslots * sizeof *h->slots);
    if (!h->slots)
        return rt_error(h, AITUNE_NOMEM, "out of memory indexing the registry");
    for (size_t i = 0; i < h->nslots; i++)
        h->slots[i] = -1;
    for (size_t gi = 0; gi < h->ngroups; gi++) {
        size_t s = h->groups[gi].hash & (h->nslots - 1);
        while (h->slots[s] >= 0)
            s = (s + 1) & (h->nslots - 1);
        h->slots[s] = (int)gi;
    }
    return AITUNE_OK;
}

/* The answer for a query: *wp (a winner) or *dp (a default). No allocation
** and no writes to h except the error message on failure. */
static int rt_choose(aitune *h, const char *op, const char *arch, const char *dtype,
                     const long long *shape, int ndims, aitune_choice *out,
                     const struct rt_winner **wp, const struct rt_default **dp)
{
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

    size_t archlen = rt_arch_len(arch);
    const struct rt_winner *best = NULL;
    int best_exact = 0, other_ndims = 0;
    double best_dist = 0;
    const struct rt_group *g = NULL;
    if (h->nslots) {
        uint64_t hv = rt_hash(op, arch, archlen, dtype);
        for (size_t s = hv & (h->nslots - 1); h->slots[s] >= 0; s = (s + 1) & (h->nslots - 1)) {
            const struct rt_group *c = &h->groups[h->slots[s]];
            const struct rt_winner *w = &h->winners[c->first];
            if (c->hash != hv || !rt_same(h, w->op, w->arch, w->dtype, op, arch, archlen, dtype))
                continue;
            if (c->ndims == ndims)
                g = c;
            else
                other_ndims = c->ndims; /* only for the message, if nothing answers */
        }
    }
    if (g) {
        /* Exact: only buckets whose dim-0 range holds shape[0]. With
        ** disjoint ranges (log2 or explicit edges) that is one run, found by
        ** binary search; else those with lo[0] in (shape[0] - span0, shape[0]]. */
        size_t lo_i, b;
        if (g->disjoint) {
            size_t x = g->run, y = g->run + g->nruns;
            while (x < y) {   /* the first run with hi0 > shape[0] */
                size_t m = x + (y - x) / 2;
                if (h->runs[m].hi0 > shape[0]) y = m; else x = m + 1;
            }
            lo_i = b = 0;
            if (x < g->run + g->nruns) {
                lo_i = h->runs[x].first;
                b = lo_i + h->runs[x].count;
            }
        } else {
            size_t a = g->first, x = a, y = g->first + g->count;
            while (x < y) {   /* first with lo[0] > shape[0] */
                size_t m = x + (y - x) / 2;
                if (h->edges[h->winners[m].edges] > shape[0]) y = m; else x = m + 1;
            }
            b = x;
            long long floor0 = shape[0] - g->span0;
            x = a, y = b;
            while (x < y) {   /* first with lo[0] > shape[0] - span0 */
                size_t m = x + (y - x) / 2;
                if (h->edges[h->winners[m].edges] > floor0) y = m; else x = m + 1;
            }
            lo_i = x;
        }
        for (size_t k = lo_i; k < b; k++) {
            const struct rt_winner *w = &h->winners[k];
            const long long *lo = h->edges + w->edges, *hi = lo + ndims;
            int exact = 1;
            for (int i = 0; i < ndims && exact; i++)
                exact = shape[i] >= (lo[i] > 1 ? lo[i] : 1) && shape[i] <= hi[i] - 1;
            if (exact && (!best || rt_better(1, 0, lo, 1, 0, h->edges + best->edges, ndims))) {
                best = w;
                best_exact = 1;
            }
        }
    }
    /* Nearest: the whole group, only when no bucket holds the shape. */
    size_t scan_from = g && !best ? g->first : 0, scan_to = g && !best ? g->first + g->count : 0;
    for (size_t k = scan_from; k < scan_to; k++) {
        const struct rt_winner *w = &h->winners[k];
        /* Distance to the nearest size the bucket holds, in log2 steps per
        ** dim: a kernel tuned for 2^20 suits 2^21 better than 2^25. */
        const long long *lo = h->edges + w->edges, *hi = lo + ndims;
        int exact = 1;
        double dist = 0;
        for (int i = 0; i < ndims; i++) {
            long long s = shape[i], a = lo[i] > 1 ? lo[i] : 1, b = hi[i] - 1;
            long long c = s < a ? a : s > b ? b : s;
            if (c != s) {
                exact = 0;
                dist += fabs(log2((double)s) - log2((double)c));
            }
        }
        if (!best || rt_better(exact, dist, lo, best_exact, best_dist,
                               h->edges + best->edges, ndims)) {
            best = w;
            best_exact = exact;
            best_dist = dist;
        }
    }
    if (best) {
        out->level = best_exact ? AITUNE_EXACT : AITUNE_NEAREST;
        out->template_name = h->pool + best->tmpl;
        out->config = h->pool + best->config;
        out->bucket = h->pool + best->bucket;
        out->median_us = best->median_us;
        out->distance = best_exact ? 0 : best_dist;
        *wp = best;
        return AITUNE_OK;
    }

    for (size_t k = 0; k < h->ndefaults; k++) {
        const struct rt_default *d = &h->defaults[k];
        if (rt_same(h, d->op, d->arch, d->dtype, op, arch, archlen, dtype)) {
            out->level = AITUNE_DEFAULT;
            out->template_name = h->pool + d->tmpl;
            out->config = h->pool + d->config;
            *dp = d;
            return AITUNE_OK;
        }
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
    snprintf(a, sizeof a, "%.*s", (int)rt_arch_len(arch), arch);
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

/* No allocation and no writes to h except the error message on failure and
** the miss count of a query no bucket held, so lookups on one handle may run
** in several threads at once. */
int aitune_lookup(aitune *h, const char *op, const char *arch, const char *dtype,
                  const long long *shape, int ndims, aitune_choice *out)
{
    if (!h)
        return AITUNE_MISUSE;
    const struct rt_winner *w;
    const struct rt_default *d;
    int rc = rt_choose(h, op, arch, dtype, shape, ndims, out, &w, &d);
    if (rc == AITUNE_OK ? out->level != AITUNE_EXACT : rc == AITUNE_NOTFOUND)
        rt_count_miss(h, op, arch, dtype, shape, ndims);
    return rc;
}

/* ---- layer 2: kernels ---- */

/* Read the row's launch plan and cubin (winners or defaults, by rowid) into
** *launch and *cubin (malloc'd), checking the row is still the one loaded. */
static int rt_fetch(aitune *h, const void *row, int is_default, char **launch, void **cubin,
                    size_t *cubin_len)
{
    *launch = NULL;
    *cubin = NULL;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(h->name, &db, SQLITE_OPEN_READONLY | (h->uri ? SQLITE_OPEN_URI : 0), NULL);
    if (rc != SQLITE_OK) {
        rc = rt_sqlite_error(h, h->path, db, rc);
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 5000);
    const char *sql = is_default
        ? "SELECT d.op, d.dtype, d.template, d.launch, c.cubin FROM defaults d "
          "LEFT JOIN cubins c ON c.hash = d.cubin WHERE d.rowid = ?"
        : "SELECT w.op, w.dtype, w.bucket, w.launch, c.cubin FROM winners w "
          "LEFT JOIN cubins c ON c.hash = w.cubin WHERE w.rowid = ?";
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        rc = rt_sqlite_error(h, h->path, db, rc);
        sqlite3_close(db);
        return rc;
    }
    const struct rt_winner *w = row;
    const struct rt_default *d = row;
    sqlite3_bind_int64(st, 1, is_default ? d->rowid : w->rowid);
    rc = sqlite3_step(st);
    int arc = AITUNE_OK;
    if (rc == SQLITE_ROW) {
        const char *third = is_default ? h->pool + d->tmpl : h->pool + w->bucket;
        if (strcmp(rt_text(st, 0), h->pool + (is_default ? d->op : w->op)) ||
            strcmp(rt_text(st, 1), h->pool + (is_default ? d->dtype : w->dtype)) ||
            strcmp(rt_text(st, 2), third))
            arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
        else if (sqlite3_column_type(st, 3) != SQLITE_TEXT)
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': %s has no launch plan", h->path,
                           is_default ? "the default" : "the winner");
        else if (sqlite3_column_type(st, 4) != SQLITE_BLOB || sqlite3_column_bytes(st, 4) < 16)
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': the cubin of %s %s is not stored", h->path,
                           is_default ? "the default" : "bucket", third);
        else {
            *launch = strdup(rt_text(st, 3));
            *cubin_len = (size_t)sqlite3_column_bytes(st, 4);
            *cubin = malloc(*cubin_len);
            if (!*launch || !*cubin)
                arc = rt_error(h, AITUNE_NOMEM, "out of memory");
            else
                memcpy(*cubin, sqlite3_column_blob(st, 4), *cubin_len);
        }
    } else if (rc == SQLITE_DONE) {
        arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
    } else {
        arc = rt_sqlite_error(h, h->path, db, rc);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (arc != AITUNE_OK) {
        free(*launch);
        free(*cubin);
        *launch = NULL;
        *cubin = NULL;
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

int aitune_kernel_get(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, aitune_kernel **out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_get: out is NULL");
    *out = NULL;
    aitune_choice c;
    const struct rt_winner *w;
    const struct rt_default *d;
    int rc = rt_choose(h, op, arch, dtype, shape, ndims, &c, &w, &d);
    if (rc == AITUNE_OK ? c.level != AITUNE_EXACT : rc == AITUNE_NOTFOUND)
        rt_count_miss(h, op, arch, dtype, shape, ndims);
    if (rc != AITUNE_OK)
        return rc;
    const void *row = w ? (const void *)w : (const void *)d;
    if (d && !d->rowid)
        return rt_error(h, AITUNE_NOTFOUND, "%s %s %s: only the default answers, and this registry "
                        "stores no compiled default", op, arch, dtype);
    const cu_api *cu = rt_cu(h);
    if (!cu)
        return AITUNE_ERROR;
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return rt_error(h, AITUNE_ERROR, "no current CUDA context in this thread (cudaSetDevice "
                        "and cudaFree(0), or cuCtxSetCurrent, first)");

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
    rc = rt_fetch(h, row, d != NULL, &launch, &cubin, &len);
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
    if (rc == AITUNE_OK && (cr = cu->ModuleLoadData(&k->mod, cubin)) != CUDA_SUCCESS)
        rc = rt_error(h, AITUNE_ERROR, "cannot load the kernel of %s %s %s into this context: %s",
                      op, arch, dtype, cu_errstr(cr));
    if (rc == AITUNE_OK && (cr = cu->ModuleGetFunction(&k->fn, k->mod, k->p->kernel)) != CUDA_SUCCESS)
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
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < p->nargs; i++) {
        v[i].ptr = p->args[i].role <= PLAN_INOUT ? args[i].ptr : 0;
        v[i].f32 = p->args[i].role == PLAN_SCALAR ? args[i].f32 : 0;
        if (p->args[i].role <= PLAN_INOUT && !args[i].ptr)
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
    if (L.g.ws_bytes && (cr = cu->MemsetD8Async(ws, 0, (size_t)L.g.ws_bytes, s)) != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: zero the workspace: %s", p->kernel, cu_errstr(cr));
    cr = plan_launch_kernel(cu->LaunchKernel, cu->LaunchKernelEx, k->fn, s, &L);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "launch %s: %s", p->kernel, cu_errstr(cr));
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
        int src = sqlite3_open_v2(h->path, &db, SQLITE_OPEN_READWRITE, NULL);
        sqlite3_stmt *st = NULL;
        if (src == SQLITE_OK) {
            sqlite3_busy_timeout(db, 5000);
            src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        }
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
    *out = (int)h->nwinners;
    return AITUNE_OK;
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
        pthread_mutex_destroy(&h->mu);
        free(h->path);
        free(h->name);
        free(h->groups);
        free(h->runs);
        free(h->slots);
        free(h->winners);
        free(h->defaults);
        free(h->edges);
        free(h->pool);
        free(h);
    }
    return AITUNE_OK;
}
