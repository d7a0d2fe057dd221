/*
** test_rt: the runtime library against registries built here, in a temporary
** directory, from db/schema.sql (argv[1]).
**
**     build/tests/test_rt db/schema.sql
*/
#define _POSIX_C_SOURCE 200809L /* mkdtemp, chmod */

#include "aitune.h"
#include "check.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *schema_path;
static char dir[512];

/* Everything created under dir, removed in reverse order at the end. */
static char made[32][600];
static int nmade;

static void setup_failed(const char *what, const char *why)
{
    printf("FAIL setup: %s: %s\n", what, why);
    exit(1);
}

/* dir/name, remembered for cleanup. */
static const char *made_path(const char *name)
{
    if (nmade == (int)(sizeof made / sizeof made[0]))
        setup_failed(name, "too many files");
    snprintf(made[nmade], sizeof made[0], "%s/%s", dir, name);
    return made[nmade++];
}

static void cleanup(void)
{
    char buf[700];
    while (nmade > 0) {
        const char *p = made[--nmade];
        /* A WAL registry may leave its -wal and -shm files behind. */
        snprintf(buf, sizeof buf, "%s-wal", p);
        remove(buf);
        snprintf(buf, sizeof buf, "%s-shm", p);
        remove(buf);
        remove(p);
    }
    remove(dir);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        setup_failed(path, "cannot read");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
        setup_failed(path, "cannot read");
    s[n] = '\0';
    fclose(f);
    return s;
}

/* A new registry at dir/name: the schema, no rows. */
static sqlite3 *registry(const char *name)
{
    const char *path = made_path(name);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        setup_failed(path, sqlite3_errmsg(db));
    char *sql = read_file(schema_path);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        setup_failed(schema_path, sqlite3_errmsg(db));
    free(sql);
    return db;
}

static void exec(sqlite3 *db, const char *sql, const char *const *args, int nargs)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        setup_failed(sql, sqlite3_errmsg(db));
    for (int i = 0; i < nargs; i++)
        sqlite3_bind_text(st, i + 1, args[i], -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        setup_failed(sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
}

/* The shape a winner was tuned at, as the sweep writes it: {"dim":size},
** each dim at its bucket's lo edge, or at the sizes in rep ("4096,4097")
** when given. */
static void shape_json(const char *dims, const char *lo, const char *rep, char *out, size_t cap)
{
    const char *sizes = rep ? rep : lo;
    size_t at = (size_t)snprintf(out, cap, "{");
    while (*dims && at < cap) {
        size_t n = strcspn(dims, ","), m = strcspn(sizes, ",");
        at += (size_t)snprintf(out + at, cap - at, "%s\"%.*s\":%.*s", at > 1 ? "," : "", (int)n, dims, (int)m, sizes);
        dims += n + (dims[n] == ',');
        sizes += m + (sizes[m] == ',');
    }
    if (at < cap) snprintf(out + at, cap - at, "}");
}

static void winner_at(sqlite3 *db, const char *op, const char *arch, const char *dtype,
                      const char *bucket, const char *dims, const char *lo, const char *hi,
                      const char *rep, const char *tmpl, const char *config, const char *us)
{
    char shape[256];
    shape_json(dims, lo, rep, shape, sizeof shape);
    const char *args[] = { op, arch, dtype, bucket, dims, lo, hi, tmpl, config, us, shape };
    exec(db,
         "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, template, config,"
         " median_us, shape, launch) VALUES (?,?,?,?,?,?,?,?,?,CAST(? AS REAL),?,'{}')",
         args, 11);
}

static void winner(sqlite3 *db, const char *op, const char *arch, const char *dtype,
                   const char *bucket, const char *dims, const char *lo, const char *hi,
                   const char *tmpl, const char *config, const char *us)
{
    winner_at(db, op, arch, dtype, bucket, dims, lo, hi, NULL, tmpl, config, us);
}

static void deflt(sqlite3 *db, const char *op, const char *arch, const char *dtype,
                  const char *tmpl, const char *config)
{
    const char *args[] = { op, arch, dtype, tmpl, config };
    exec(db, "INSERT INTO defaults (op, arch, dtype, template, config) VALUES (?,?,?,?,?)",
         args, 5);
}

static void close_db(sqlite3 *db)
{
    if (sqlite3_close(db) != SQLITE_OK)
        setup_failed("sqlite3_close", sqlite3_errmsg(db));
}

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

/* Look up a 1-D shape; the status, with the answer in *c. */
static int lookup1(aitune *h, const char *op, const char *arch, const char *dtype,
                   long long n, aitune_choice *c)
{
    return aitune_lookup(h, op, arch, dtype, &n, 1, c);
}

/* The main registry: axpy in three buckets and defaults, a tie, a 2-D op. */
static const char *build_main(void)
{
    sqlite3 *db = registry("main.db");
    const char *path = made[nmade - 1];
    winner(db, "axpy", "sm_90", "bf16", "n=2^20", "n", "1048576", "2097152", "axpy/vec",
           "{\"block\":128}", "10.5");
    winner(db, "axpy", "sm_90", "bf16", "n=2^24", "n", "16777216", "33554432", "axpy/vec",
           "{\"block\":256}", "123.4");
    winner(db, "axpy", "sm_90", "bf16", "n=2^26", "n", "67108864", "134217728", "axpy/vec",
           "{\"block\":512}", "480.25");
    deflt(db, "axpy", "sm_90", "bf16", "axpy/vec", "{\"block\":64}");
    deflt(db, "axpy", "sm_90", "f32", "axpy/vec", "{\"block\":32}");
    deflt(db, "axpy", "sm_100", "bf16", "axpy/vec", "{\"block\":1024}");
    /* Shape 8 is one log2 step from both 4 (top of [1,5)) and 16: the tie goes
    ** to the smaller lo. The larger-lo bucket is inserted first and sorts
    ** first by name, so row order cannot be what decides. */
    winner(db, "tie", "sm_90", "f32", "a:n=16", "n", "16", "32", "tie/hi", "{\"v\":2}", "2");
    winner(db, "tie", "sm_90", "f32", "b:n<5", "n", "1", "5", "tie/lo", "{\"v\":1}", "1");
    winner(db, "softmax", "sm_90", "f16", "rows=2^14,cols=2^12", "rows,cols", "16384,4096",
           "32768,8192", "softmax/row", "{\"warps\":4}", "55");
    winner(db, "softmax", "sm_90", "f16", "rows=2^10,cols=2^10", "rows,cols", "1024,1024",
           "2048,2048", "softmax/row", "{\"warps\":1}", "3");
    close_db(db);
    return path;
}

static void test_main(const char *path)
{
    aitune *h = NULL;
    aitune_choice c;
    int n = -1;

    CHECK(aitune_open(path, &h) == AITUNE_OK, "open main registry: %s", aitune_errmsg(h));
    CHECK_STR(aitune_errmsg(h), "not an error", "errmsg after a good open");
    CHECK(aitune_count(h, &n) == AITUNE_OK && n == 7, "count is 7 (got %d)", n);

    /* Exact. */
    int rc = lookup1(h, "axpy", "sm_90", "bf16", 16777216 + 5, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT, "exact: rc %d level %d", rc, c.level);
    CHECK_STR(c.template_name, "axpy/vec", "exact template");
    CHECK_STR(c.config, "{\"block\":256}", "exact config");
    CHECK_STR(c.bucket, "n=2^24", "exact bucket");
    CHECK(c.median_us == 123.4 && c.distance == 0, "exact: median %g distance %g",
          c.median_us, c.distance);
    rc = lookup1(h, "axpy", "sm_90", "bf16", 33554431, &c); /* hi - 1 is inside */
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT && strcmp(c.bucket, "n=2^24") == 0,
          "exact at hi-1: %s", c.bucket ? c.bucket : "(null)");
    rc = lookup1(h, "axpy", "sm_90", "bf16", 1048576, &c); /* lo is inside */
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT && strcmp(c.bucket, "n=2^20") == 0,
          "exact at lo: %s", c.bucket ? c.bucket : "(null)");

    /* Nearest, below and above every bucket. */
    rc = lookup1(h, "axpy", "sm_90", "bf16", 1000, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_NEAREST, "below all: level %s",
          aitune_level_name(c.level));
    CHECK_STR(c.bucket, "n=2^20", "below all: bucket");
    CHECK_STR(c.config, "{\"block\":128}", "below all: config");
    CHECK(near(c.distance, 20 - log2(1000)) && c.median_us == 10.5,
          "below all: distance %g median %g", c.distance, c.median_us);
    rc = lookup1(h, "axpy", "sm_90", "bf16", 1LL << 30, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_NEAREST, "above all: level %s",
          aitune_level_name(c.level));
    CHECK_STR(c.bucket, "n=2^26", "above all: bucket");
    CHECK(near(c.distance, 30 - log2(134217727.0)), "above all: distance %g", c.distance);

    /* Nearest between two buckets, by log2 distance. 3*2^21 is nearer
    ** 2^21-1 in absolute terms but nearer 2^24 in log2 steps. */
    rc = lookup1(h, "axpy", "sm_90", "bf16", 3LL << 21, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_NEAREST, "between: level %s",
          aitune_level_name(c.level));
    CHECK_STR(c.bucket, "n=2^24", "between 2^21 and 2^24, log2-nearer the upper");
    CHECK(near(c.distance, 24 - log2(3.0 * (1 << 21))), "between: distance %g", c.distance);
    rc = lookup1(h, "axpy", "sm_90", "bf16", 1LL << 22, &c);
    CHECK_STR(rc == AITUNE_OK ? c.bucket : "", "n=2^20", "2^22: log2-nearer the lower");

    /* Equal distances: the smaller lo. */
    rc = lookup1(h, "tie", "sm_90", "f32", 8, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_NEAREST && near(c.distance, 1),
          "tie: level %s distance %g", aitune_level_name(c.level), c.distance);
    CHECK_STR(c.template_name, "tie/lo", "tie goes to the smaller lo");

    /* Default: no winners for f32; winners of the wrong number of dims. */
    rc = lookup1(h, "axpy", "sm_90", "f32", 1000, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_DEFAULT, "default: rc %d level %s", rc,
          aitune_level_name(c.level));
    CHECK_STR(c.config, "{\"block\":32}", "default config");
    CHECK(c.bucket == NULL && c.median_us == 0 && c.distance == 0,
          "default: no bucket, time or distance");
    long long two[] = { 1000, 1000 };
    rc = aitune_lookup(h, "axpy", "sm_90", "bf16", two, 2, &c);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "has 1 dims"),
          "2 dims for a 1-D op with winners: misuse, not its default: '%s'", aitune_errmsg(h));

    /* Arch suffixes. */
    rc = lookup1(h, "axpy", "sm_90a", "bf16", 16777216, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT, "sm_90a finds sm_90: rc %d", rc);
    CHECK_STR(c.bucket, "n=2^24", "sm_90a bucket");
    rc = lookup1(h, "axpy", "sm_100f", "bf16", 100, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_DEFAULT, "sm_100f finds sm_100's default");
    CHECK_STR(c.config, "{\"block\":1024}", "sm_100f config");
    rc = lookup1(h, "axpy", "sm_9", "bf16", 100, &c);
    CHECK(rc == AITUNE_NOTFOUND, "sm_9 is not a prefix match of sm_90: rc %d", rc);
    rc = lookup1(h, "axpy", "sm_90aa", "bf16", 100, &c);
    CHECK(rc == AITUNE_NOTFOUND, "only one suffix letter is dropped: rc %d", rc);

    /* A 2-D op. */
    long long rc2[] = { 20000, 5000 };
    rc = aitune_lookup(h, "softmax", "sm_90", "f16", rc2, 2, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT, "2-D exact: rc %d level %d", rc,
          c.level);
    CHECK_STR(c.bucket, "rows=2^14,cols=2^12", "2-D exact bucket");
    CHECK_STR(c.config, "{\"warps\":4}", "2-D exact config");
    long long wide[] = { 20000, 100000 }; /* rows inside, cols above */
    rc = aitune_lookup(h, "softmax", "sm_90", "f16", wide, 2, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_NEAREST, "2-D nearest: rc %d level %d", rc,
          c.level);
    CHECK_STR(c.bucket, "rows=2^14,cols=2^12", "2-D nearest bucket");
    CHECK(near(c.distance, log2(100000.0) - log2(8191.0)), "2-D distance %g", c.distance);
    long long small[] = { 1500, 3000 }; /* rows in the small bucket, cols between */
    rc = aitune_lookup(h, "softmax", "sm_90", "f16", small, 2, &c);
    CHECK_STR(rc == AITUNE_OK ? c.bucket : "", "rows=2^10,cols=2^10",
              "2-D nearest sums the dims");

    /* Not found. */
    rc = lookup1(h, "gemm", "sm_80", "f32", 4096, &c);
    const char *msg = aitune_errmsg(h);
    CHECK(rc == AITUNE_NOTFOUND, "nothing for gemm: rc %d", rc);
    CHECK(strstr(msg, "gemm") && strstr(msg, "sm_80") && strstr(msg, "f32"),
          "not-found message names op, arch, dtype: '%s'", msg);
    CHECK(c.template_name == NULL && c.config == NULL, "no answer left in out on failure");
    long long three[] = { 8, 8, 8 };
    rc = aitune_lookup(h, "softmax", "sm_90", "f16", three, 3, &c);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "dims"),
          "3 dims for a 2-D op: misuse: '%s'", aitune_errmsg(h));

    /* Misuse. */
    long long zero[] = { 1024, 0 };
    rc = aitune_lookup(h, "softmax", "sm_90", "f16", zero, 2, &c);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "shape[1] is 0"),
          "size 0 is misuse: '%s'", aitune_errmsg(h));
    long long neg = -5;
    CHECK(aitune_lookup(h, "axpy", "sm_90", "bf16", &neg, 1, &c) == AITUNE_MISUSE,
          "negative size is misuse");
    CHECK(aitune_lookup(h, "axpy", "sm_90", "bf16", two, 0, &c) == AITUNE_MISUSE,
          "ndims 0 is misuse");
    CHECK(aitune_lookup(h, NULL, "sm_90", "bf16", two, 1, &c) == AITUNE_MISUSE &&
          strstr(aitune_errmsg(h), "op is NULL"), "NULL op: '%s'", aitune_errmsg(h));
    CHECK(aitune_lookup(h, "axpy", NULL, "bf16", two, 1, &c) == AITUNE_MISUSE, "NULL arch");
    CHECK(aitune_lookup(h, "axpy", "sm_90", NULL, two, 1, &c) == AITUNE_MISUSE, "NULL dtype");
    CHECK(aitune_lookup(h, "axpy", "sm_90", "bf16", NULL, 1, &c) == AITUNE_MISUSE,
          "NULL shape");
    CHECK(aitune_lookup(h, "axpy", "sm_90", "bf16", two, 1, NULL) == AITUNE_MISUSE,
          "NULL out");
    CHECK(aitune_lookup(NULL, "axpy", "sm_90", "bf16", two, 1, &c) == AITUNE_MISUSE,
          "NULL handle to lookup");
    CHECK(aitune_count(h, NULL) == AITUNE_MISUSE, "NULL out to count");
    CHECK(aitune_count(NULL, &n) == AITUNE_MISUSE, "NULL handle to count");

    /* The handle still answers after failures. */
    rc = lookup1(h, "axpy", "sm_90", "bf16", 16777216, &c);
    CHECK(rc == AITUNE_OK && c.level == AITUNE_EXACT, "lookups work after errors");
    CHECK(aitune_close(h) == AITUNE_OK, "close");
}

static void test_open_errors(void)
{
    aitune *h = NULL;
    int rc, n;

    /* Missing file. */
    const char *missing = made_path("missing.db");
    rc = aitune_open(missing, &h);
    CHECK(rc == AITUNE_CANTOPEN, "missing file: rc %d", rc);
    CHECK(h != NULL && strstr(aitune_errmsg(h), missing) != NULL,
          "missing file: message names the path: '%s'", aitune_errmsg(h));
    CHECK(aitune_count(h, &n) == AITUNE_OK && n == 0, "a failed handle counts 0");
    aitune_choice c;
    CHECK(lookup1(h, "axpy", "sm_90", "bf16", 1, &c) == AITUNE_NOTFOUND,
          "a failed handle answers NOTFOUND");
    aitune_close(h);

    /* A directory. */
    rc = aitune_open(dir, &h);
    CHECK(rc == AITUNE_CANTOPEN, "a directory: rc %d '%s'", rc, aitune_errmsg(h));
    aitune_close(h);

    /* Garbage bytes. */
    const char *garbage = made_path("garbage.db");
    FILE *f = fopen(garbage, "wb");
    if (!f)
        setup_failed(garbage, "cannot write");
    for (int i = 0; i < 200; i++)
        fputs("this is not a database, just some bytes\n", f);
    fclose(f);
    rc = aitune_open(garbage, &h);
    CHECK(rc == AITUNE_CORRUPT, "garbage file: rc %d", rc);
    CHECK(strstr(aitune_errmsg(h), garbage) != NULL, "garbage: message names the path: '%s'",
          aitune_errmsg(h));
    aitune_close(h);

    /* A SQLite file that is not a registry. */
    const char *other = made_path("other.db");
    sqlite3 *db;
    if (sqlite3_open(other, &db) != SQLITE_OK)
        setup_failed(other, sqlite3_errmsg(db));
    exec(db, "CREATE TABLE t (x)", NULL, 0);
    close_db(db);
    rc = aitune_open(other, &h);
    CHECK(rc == AITUNE_CORRUPT, "no winners table: rc %d", rc);
    CHECK(strstr(aitune_errmsg(h), other) && strstr(aitune_errmsg(h), "table 't'"),
          "another schema: message names path and table: '%s'", aitune_errmsg(h));
    aitune_close(h);

    /* Edges that do not match the dims. */
    db = registry("badedges.db");
    const char *bad = made[nmade - 1];
    winner(db, "axpy", "sm_90", "bf16", "n=2^20", "n", "1,2", "3,4", "axpy/vec", "{}", "1");
    close_db(db);
    /* Winners are read per (op, arch, dtype) at its first lookup: the
    ** open succeeds, the lookup of that op says what is wrong, every time,
    ** and other ops still answer. */
    rc = aitune_open(bad, &h);
    CHECK(rc == AITUNE_OK, "bad edges: the open succeeds: rc %d '%s'", rc, aitune_errmsg(h));
    for (int i = 0; i < 2; i++) {
        rc = lookup1(h, "axpy", "sm_90", "bf16", 1 << 20, &c);
        CHECK(rc == AITUNE_CORRUPT && strstr(aitune_errmsg(h), "n=2^20"),
              "bad edges: lookup %d: rc %d '%s'", i + 1, rc, aitune_errmsg(h));
    }
    CHECK(lookup1(h, "axpy", "sm_90", "f32", 1 << 20, &c) == AITUNE_NOTFOUND, "bad edges: another dtype is not affected");
    aitune_close(h);

    /* An empty registry opens and finds nothing. */
    db = registry("empty.db");
    const char *empty = made[nmade - 1];
    close_db(db);
    rc = aitune_open(empty, &h);
    CHECK(rc == AITUNE_OK && aitune_count(h, &n) == AITUNE_OK && n == 0,
          "empty registry: rc %d count %d", rc, n);
    CHECK(lookup1(h, "axpy", "sm_90", "bf16", 1, &c) == AITUNE_NOTFOUND,
          "empty registry: NOTFOUND");
    aitune_close(h);

    /* NULL arguments. */
    CHECK(aitune_open(empty, NULL) == AITUNE_MISUSE, "open with NULL out");
    h = NULL;
    rc = aitune_open(NULL, &h);
    CHECK(rc == AITUNE_MISUSE && h != NULL, "open with NULL path: rc %d, handle set", rc);
    aitune_close(h);
    CHECK(aitune_close(NULL) == AITUNE_OK, "close(NULL)");
    CHECK(strlen(aitune_errmsg(NULL)) > 0, "errmsg(NULL) is a string");
    CHECK_STR(aitune_level_name(AITUNE_EXACT), "exact", "level name exact");
    CHECK_STR(aitune_level_name(AITUNE_NEAREST), "nearest", "level name nearest");
    CHECK_STR(aitune_level_name(AITUNE_DEFAULT), "default", "level name default");
}

/* A WAL registry in a directory the reader cannot write: SQLite cannot make
** the -shm file there. Only a non-root run tests the fallback; root writes
** anywhere. */
static void test_readonly_dir(void)
{
    const char *sub = made_path("ro");
    if (mkdir(sub, 0755) != 0)
        setup_failed(sub, "mkdir");
    sqlite3 *db = registry("ro/reg.db");
    const char *path = made[nmade - 1];
    winner(db, "axpy", "sm_90", "bf16", "n=2^20", "n", "1048576", "2097152", "axpy/vec",
           "{\"block\":128}", "10.5");
    close_db(db);
    chmod(sub, 0555);
    aitune *h;
    int n = -1, rc = aitune_open(path, &h);
    CHECK(rc == AITUNE_OK && aitune_count(h, &n) == AITUNE_OK && n == 1,
          "WAL registry in a read-only directory: rc %d count %d '%s'", rc, n,
          aitune_errmsg(h));
    CHECK_STR(aitune_errmsg(h), "not an error", "read-only directory: no error left");
    aitune_close(h);
    chmod(sub, 0755);
}

/* The lookup index: overlapping dim-0 ranges (cut into elementary runs),
** many groups, 2-D grids; answers as the plain scan gives them. */
static void test_index(void)
{
    sqlite3 *db = registry("index.db");
    const char *path = made[nmade - 1];
    winner(db, "ovl", "sm_90", "f32", "wide", "n", "1", "100", "ovl/wide", "{}", "1");
    winner(db, "ovl", "sm_90", "f32", "narrow", "n", "50", "60", "ovl/narrow", "{}", "1");
    winner(db, "ovl", "sm_90", "f32", "far", "n", "1000", "2000", "ovl/far", "{}", "1");
    char op[16], b[32], lo[32], hi[32];
    for (int o = 0; o < 20; o++)
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) {
                snprintf(op, sizeof op, "g%d", o);
                snprintf(b, sizeof b, "%d/%d", r, c);
                snprintf(lo, sizeof lo, "%d,%d", 1 << r, 1 << c);
                snprintf(hi, sizeof hi, "%d,%d", 2 << r, 2 << c);
                winner(db, op, "sm_90", "bf16", b, "rows,cols", lo, hi, "g/t", "{}", "1");
            }
    close_db(db);
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "open the index registry (%s)", aitune_errmsg(h));
    aitune_choice c;
    long long n = 55;
    CHECK(lookup1(h, "ovl", "sm_90", "f32", n, &c) == AITUNE_OK && c.level == AITUNE_EXACT && !strcmp(c.bucket, "wide"),
          "overlapping ranges: both hold 55, the smaller lo wins: %s", c.bucket ? c.bucket : "?");
    CHECK(lookup1(h, "ovl", "sm_90", "f32", 70, &c) == AITUNE_OK && c.level == AITUNE_EXACT && !strcmp(c.bucket, "wide"),
          "70 is held by the wide bucket only");
    CHECK(lookup1(h, "ovl", "sm_90", "f32", 1500, &c) == AITUNE_OK && c.level == AITUNE_EXACT && !strcmp(c.bucket, "far"),
          "1500 by the far one");
    CHECK(lookup1(h, "ovl", "sm_90", "f32", 500, &c) == AITUNE_OK && c.level == AITUNE_NEAREST && !strcmp(c.bucket, "far"),
          "500 is nearest to far (1 log2 step) not wide (2.3)");
    int good = 1;
    for (int o = 0; o < 20 && good; o++)
        for (int r = 0; r < 6 && good; r++)
            for (int cc = 0; cc < 6 && good; cc++) {
                long long shape[2] = { (1LL << r) + (r > 0), (2LL << cc) - 1 };
                snprintf(op, sizeof op, "g%d", o);
                snprintf(b, sizeof b, "%d/%d", r, cc);
                good = aitune_lookup(h, op, "sm_90", "bf16", shape, 2, &c) == AITUNE_OK && c.level == AITUNE_EXACT &&
                       !strcmp(c.bucket, b);
            }
    CHECK(good, "every shape of 20 ops x 36 buckets finds its own bucket exactly");
    long long outside[2] = { 1 << 10, 3 };
    CHECK(aitune_lookup(h, "g7", "sm_90", "bf16", outside, 2, &c) == AITUNE_OK && c.level == AITUNE_NEAREST &&
          !strcmp(c.bucket, "5/1"), "a shape past the grid goes to the nearest edge bucket (%s)", c.bucket ? c.bucket : "?");
    aitune_close(h);
}

/* One bucket tuned on two kinds of GPU (a merged registry): lookup, which
** knows no GPU, answers the same winner whatever the row order, and every
** other bucket still answers. Rows of a schema-3 registry carry hw. */
static void test_hw_order(void)
{
    for (int order = 0; order < 2; order++) {
        sqlite3 *db = registry(order ? "hw_b.db" : "hw_a.db");
        const char *path = made[nmade - 1];
        exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '3')", NULL, 0);
        const char *gpus[2] = { "NVIDIA H100 80GB HBM3|sm_90|132 SMs|85045231616 B|L2 52428800 B",
                                "NVIDIA H100 PCIe|sm_90|114 SMs|85520809984 B|L2 52428800 B" };
        for (int i = 0; i < 2; i++) {
            const char *g = gpus[order ? 1 - i : i];
            const char *tm = g[12] == '8' ? "sxm/t" : "pcie/t";
            const char *args[] = { g, tm };
            exec(db, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, template, config, median_us, shape, launch)"
                     " VALUES ('mm', 'sm_90', 'bf16', 'n=2^10', ?, 'n', '1024', '2048', ?, '{}', 1.0, '{\"n\":1024}', '{}')", args, 2);
        }
        exec(db, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, template, config, median_us, shape, launch)"
                 " VALUES ('mm', 'sm_90', 'bf16', 'n=2^11', 'x', 'n', '2048', '4096', 'other/t', '{}', 1.0, '{\"n\":2048}', '{}')", NULL, 0);
        close_db(db);
        aitune *h;
        CHECK(aitune_open(path, &h) == AITUNE_OK, "hw order %d: open (%s)", order, aitune_errmsg(h));
        aitune_choice c;
        CHECK(lookup1(h, "mm", "sm_90", "bf16", 1500, &c) == AITUNE_OK && c.level == AITUNE_EXACT &&
              !strcmp(c.template_name, "sxm/t"),
              "hw order %d: a bucket measured on two GPUs answers the first hw in name order: %s", order,
              c.template_name ? c.template_name : "?");
        CHECK(lookup1(h, "mm", "sm_90", "bf16", 3000, &c) == AITUNE_OK && !strcmp(c.template_name, "other/t"),
              "hw order %d: the next bucket answers", order);
        const char *on = NULL;
        CHECK(aitune_lookup_gpu(h, "mm", "sm_90", "bf16", (long long[]){ 1500 }, 1, gpus[1], &c, &on) == AITUNE_OK &&
              !strcmp(c.template_name, "pcie/t") && on && !strcmp(on, gpus[1]),
              "hw order %d: asked for the PCIe GPU, its own winner answers and says where it was measured: %s on %s",
              order, c.template_name ? c.template_name : "?", on ? on : "(null)");
        CHECK(aitune_lookup_gpu(h, "mm", "sm_90", "bf16", (long long[]){ 3000 }, 1, gpus[1], &c, &on) == AITUNE_OK &&
              !strcmp(c.template_name, "other/t") && on && !strcmp(on, "x"),
              "hw order %d: a bucket only another GPU tuned still answers, and says so (%s)", order, on ? on : "(null)");
        CHECK(aitune_lookup_gpu(h, "mm", "sm_90", "bf16", (long long[]){ 1500 }, 1, "unknown GPU", &c, &on) == AITUNE_OK &&
              !strcmp(c.template_name, "sxm/t"), "hw order %d: an unknown GPU gets the fixed order", order);
        int n = 0;
        CHECK(aitune_count(h, &n) == AITUNE_OK && n == 3, "hw order %d: count %d", order, n);
        aitune_close(h);
    }
}

/* Split buckets (spec split_at): a bucket's parts partition it, and the
** shapes of each part are answered exactly from it, however the set's
** dim-0 ranges nest (a part of a row of buckets split along rows beside
** buckets left whole). Checked against a brute-force answer: of the
** buckets holding the shape, the smallest lo, then the smallest hi. */
struct box { long long lo[2], hi[2]; char key[96]; };

static const char *brute(const struct box *b, int n, const long long *shape)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (shape[0] < b[i].lo[0] || shape[0] >= b[i].hi[0] || shape[1] < b[i].lo[1] || shape[1] >= b[i].hi[1])
            continue;
        if (best < 0) { best = i; continue; }
        long long x[4] = { b[i].lo[0], b[i].lo[1], b[i].hi[0], b[i].hi[1] };
        long long y[4] = { b[best].lo[0], b[best].lo[1], b[best].hi[0], b[best].hi[1] };
        for (int k = 0; k < 4; k++)
            if (x[k] != y[k]) { if (x[k] < y[k]) best = i; break; }
    }
    return best < 0 ? NULL : b[best].key;
}

static void test_split(void)
{
    sqlite3 *db = registry("split.db");
    const char *path = made[nmade - 1];
    /* 1-D: n=2^12 in two parts, its neighbours whole. */
    winner(db, "ax", "sm_90", "f32", "n=2^11", "n", "2048", "4096", "ax/t", "{\"v\":1}", "1");
    winner(db, "ax", "sm_90", "f32", "n=2^12/5760", "n", "5760", "8192", "ax/t", "{\"v\":3}", "3");
    winner(db, "ax", "sm_90", "f32", "n=2^12/2^12", "n", "4096", "5760", "ax/t", "{\"v\":2}", "2");
    winner(db, "ax", "sm_90", "f32", "n=2^13", "n", "8192", "16384", "ax/t", "{\"v\":4}", "4");
    /* 2-D: a 4 x 4 grid of log2 buckets; rows=2^12,cols=2^12 split along
    ** rows, rows=2^13,cols=2^13 along both, rows=2^11,cols=2^13 along cols. */
    struct box b[32];
    int n = 0;
    for (int r = 10; r < 14; r++)
        for (int c = 10; c < 14; c++) {
            long long rl = 1LL << r, cl = 1LL << c, rm = (long long)(sqrt(2.0) * rl) / 64 * 64, cm = (long long)(sqrt(2.0) * cl) / 64 * 64;
            int along = r == 12 && c == 12 ? 1 : r == 13 && c == 13 ? 3 : r == 11 && c == 13 ? 2 : 0;
            for (int pr = 0; pr < (along & 1 ? 2 : 1); pr++)
                for (int pc = 0; pc < (along & 2 ? 2 : 1); pc++) {
                    struct box *x = &b[n++];
                    x->lo[0] = along & 1 ? (pr ? rm : rl) : rl;
                    x->hi[0] = along & 1 ? (pr ? 2 * rl : rm) : 2 * rl;
                    x->lo[1] = along & 2 ? (pc ? cm : cl) : cl;
                    x->hi[1] = along & 2 ? (pc ? 2 * cl : cm) : 2 * cl;
                    if (along) snprintf(x->key, sizeof x->key, "rows=2^%d,cols=2^%d/%lld,%lld", r, c, x->lo[0], x->lo[1]);
                    else snprintf(x->key, sizeof x->key, "rows=2^%d,cols=2^%d", r, c);
                }
        }
    /* Inserted in reverse: the order rows come in must not matter. */
    for (int i = n - 1; i >= 0; i--) {
        char lo[48], hi[48];
        snprintf(lo, sizeof lo, "%lld,%lld", b[i].lo[0], b[i].lo[1]);
        snprintf(hi, sizeof hi, "%lld,%lld", b[i].hi[0], b[i].hi[1]);
        winner(db, "sm", "sm_90", "f16", b[i].key, "rows,cols", lo, hi, "sm/t", "{}", "1");
    }
    close_db(db);
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "open the split registry (%s)", aitune_errmsg(h));
    aitune_choice c;
    long long probes[][2] = { { 4096, 2 }, { 5000, 2 }, { 5759, 2 }, { 5760, 3 }, { 8191, 3 }, { 8192, 4 }, { 3000, 1 } };
    int good = 1;
    for (int i = 0; i < 7; i++) {
        int rc = lookup1(h, "ax", "sm_90", "f32", probes[i][0], &c);
        char want[16];
        snprintf(want, sizeof want, "{\"v\":%lld}", probes[i][1]);
        if (rc != AITUNE_OK || c.level != AITUNE_EXACT || strcmp(c.config, want)) {
            good = 0;
            printf("    n=%lld: %s %s\n", probes[i][0], c.bucket ? c.bucket : "?", c.config ? c.config : "?");
        }
    }
    CHECK(good, "1-D: each part answers its own sizes exactly, the buckets beside it theirs");
    CHECK(lookup1(h, "ax", "sm_90", "f32", 5000, &c) == AITUNE_OK && !strcmp(c.bucket, "n=2^12/2^12") && c.median_us == 2,
          "the part's key and time come back (%s)", c.bucket ? c.bucket : "?");
    int bad = 0, tried = 0;
    for (long long r = 900; r < 17000 && bad < 5; r = r * 21 / 20 + 1)
        for (long long cc = 900; cc < 17000 && bad < 5; cc = cc * 21 / 20 + 1) {
            long long shape[2] = { r, cc };
            const char *want = brute(b, n, shape);
            int rc = aitune_lookup(h, "sm", "sm_90", "f16", shape, 2, &c);
            tried++;
            if (want ? rc != AITUNE_OK || c.level != AITUNE_EXACT || strcmp(c.bucket, want)
                     : rc != AITUNE_OK || c.level != AITUNE_NEAREST) {
                bad++;
                printf("    %lldx%lld: got %s (%s), want %s\n", r, cc, c.bucket ? c.bucket : "?",
                       aitune_level_name(c.level), want ? want : "nearest");
            }
        }
    CHECK(!bad, "2-D, parts along rows, cols and both beside whole buckets: %d shapes answered as by brute force", tried);
    aitune_close(h);

    /* Merged from two GPUs: one split n=2^12, the other left it whole. */
    db = registry("split_hw.db");
    path = made[nmade - 1];
    exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '3')", NULL, 0);
    exec(db, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, template, config, median_us, shape, launch) VALUES"
             " ('ax', 'sm_90', 'f32', 'n=2^12', 'gpu A', 'n', '4096', '8192', 'ax/t', '{\"v\":\"A\"}', 1, '{\"n\":4096}', '{}'),"
             " ('ax', 'sm_90', 'f32', 'n=2^12/5760', 'gpu B', 'n', '5760', '8192', 'ax/t', '{\"v\":\"B hi\"}', 1, '{\"n\":5760}', '{}'),"
             " ('ax', 'sm_90', 'f32', 'n=2^12/2^12', 'gpu B', 'n', '4096', '5760', 'ax/t', '{\"v\":\"B lo\"}', 1, '{\"n\":4096}', '{}')",
         NULL, 0);
    close_db(db);
    CHECK(aitune_open(path, &h) == AITUNE_OK, "open the merged registry (%s)", aitune_errmsg(h));
    const char *on;
    CHECK(aitune_lookup_gpu(h, "ax", "sm_90", "f32", (long long[]){ 6000 }, 1, "gpu B", &c, &on) == AITUNE_OK &&
          !strcmp(c.config, "{\"v\":\"B hi\"}"), "on the GPU that split it, its part answers (%s)", c.config ? c.config : "?");
    CHECK(aitune_lookup_gpu(h, "ax", "sm_90", "f32", (long long[]){ 5000 }, 1, "gpu B", &c, &on) == AITUNE_OK &&
          !strcmp(c.config, "{\"v\":\"B lo\"}"), "and its lower part (%s)", c.config ? c.config : "?");
    CHECK(aitune_lookup_gpu(h, "ax", "sm_90", "f32", (long long[]){ 6000 }, 1, "gpu A", &c, &on) == AITUNE_OK &&
          !strcmp(c.config, "{\"v\":\"A\"}"), "on the GPU that left it whole, its own winner (%s)", c.config ? c.config : "?");
    CHECK(lookup1(h, "ax", "sm_90", "f32", 6000, &c) == AITUNE_OK && !strcmp(c.config, "{\"v\":\"A\"}") &&
          lookup1(h, "ax", "sm_90", "f32", 5000, &c) == AITUNE_OK && !strcmp(c.config, "{\"v\":\"B lo\"}"),
          "knowing no GPU: the smaller lo, then the narrower bucket");
    aitune_close(h);
}

/* Alignment classes: winners of one range tuned at 4096 and at 4097 (keys
** without and with ":align1"), in either row order, on one GPU or two. */
static const char *pick(aitune *h, long long m, long long n, long long k, const char *gpu, int *level)
{
    aitune_choice c;
    long long shape[3] = { m, n, k };
    int rc = aitune_lookup_gpu(h, "gemm_nt", "sm_90", "bf16", shape, 3, gpu, &c, NULL);
    *level = rc == AITUNE_OK ? c.level : -1;
    return rc == AITUNE_OK ? c.config : aitune_errmsg(h);
}

static void test_align(void)
{
    static const char *al = "m=2^12,n=2^12,k=2^12", *odd = "m=2^12,n=2^12:align1,k=2^12";
    for (int order = 0; order < 2; order++) {
        sqlite3 *db = registry(order ? "align_b.db" : "align_a.db");
        const char *path = made[nmade - 1];
        for (int i = 0; i < 2; i++) {
            int o = order ? 1 - i : i;
            winner_at(db, "gemm_nt", "sm_90", "bf16", o ? odd : al, "m,n,k", "4096,4096,4096", "8192,8192,8192",
                      o ? "4096,4097,4096" : "4096,4096,4096", "gemm_nt/t", o ? "{\"odd\":1}" : "{\"aligned\":1}", "1");
        }
        close_db(db);
        aitune *h;
        CHECK(aitune_open(path, &h) == AITUNE_OK, "align %d: open (%s)", order, aitune_errmsg(h));
        static const struct { long long n; const char *want, *why; } q[] = {
            { 4097, "{\"odd\":1}", "4097: the winner tuned at 4097" },
            { 4100, "{\"odd\":1}", "4100 (class 4): the odd winner fits, the aligned one does not" },
            { 4098, "{\"odd\":1}", "4098 (class 2): the odd winner" },
            { 4104, "{\"aligned\":1}", "4104 (class 8): the aligned winner, the closer class" },
            { 4096, "{\"aligned\":1}", "4096: the aligned winner" },
            { 8191, "{\"odd\":1}", "8191: the odd winner" },
        };
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
            int level;
            const char *got = pick(h, 4096, q[i].n, 4096, NULL, &level);
            CHECK(level == AITUNE_EXACT && !strcmp(got, q[i].want), "align %d: %s (%s)", order, q[i].why, got);
        }
        /* Out of range in k: nearest, the same distance to both; the class decides. */
        int level;
        const char *got = pick(h, 4096, 4097, 20000, NULL, &level);
        CHECK(level == AITUNE_NEAREST && !strcmp(got, "{\"odd\":1}"), "align %d: nearest, 4097 takes the odd winner (%s)",
              order, got);
        got = pick(h, 4096, 4096, 20000, NULL, &level);
        CHECK(level == AITUNE_NEAREST && !strcmp(got, "{\"aligned\":1}"), "align %d: nearest, 4096 the aligned one (%s)",
              order, got);
        aitune_close(h);
    }

    /* Only the aligned winner: 4097 gets it, exact, as before classes. */
    sqlite3 *db = registry("align_only.db");
    const char *path = made[nmade - 1];
    winner_at(db, "gemm_nt", "sm_90", "bf16", al, "m,n,k", "4096,4096,4096", "8192,8192,8192", "4096,4096,4096", "gemm_nt/t",
              "{\"aligned\":1}", "1");
    winner_at(db, "gemm_nt", "sm_90", "bf16", "m=2^13,n=2^12:align1,k=2^12", "m,n,k", "8192,4096,4096", "16384,8192,8192",
              "8192,4097,4096", "gemm_nt/t", "{\"next\":1}", "1");
    close_db(db);
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "align only: open (%s)", aitune_errmsg(h));
    int level;
    const char *got = pick(h, 4096, 4097, 4096, NULL, &level);
    CHECK(level == AITUNE_EXACT && !strcmp(got, "{\"aligned\":1}"),
          "a registry tuned at 4096 only answers 4097 from it, exact: an odd winner out of range is no answer (%s)", got);
    aitune_close(h);

    /* Two GPUs: the aligned winner measured on A, the odd one on B. The class
    ** comes first: A gets B's odd winner for 4097 (its own may not run). */
    db = registry("align_hw.db");
    path = made[nmade - 1];
    exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '3')", NULL, 0);   /* rows carry hw */
    exec(db, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, template, config, median_us, shape, launch) VALUES"
             " ('gemm_nt', 'sm_90', 'bf16', 'm=2^12,n=2^12,k=2^12', 'gpu A', 'm,n,k', '4096,4096,4096', '8192,8192,8192',"
             "  'gemm_nt/t', '{\"A\":1}', 1, '{\"m\":4096,\"n\":4096,\"k\":4096}', '{}'),"
             " ('gemm_nt', 'sm_90', 'bf16', 'm=2^12,n=2^12:align1,k=2^12', 'gpu B', 'm,n,k', '4096,4096,4096', '8192,8192,8192',"
             "  'gemm_nt/t', '{\"B\":1}', 1, '{\"m\":4096,\"n\":4097,\"k\":4096}', '{}'),"
             " ('gemm_nt', 'sm_90', 'bf16', 'm=2^12,n=2^12:align1,k=2^12', 'gpu A', 'm,n,k', '4096,4096,4096', '8192,8192,8192',"
             "  'gemm_nt/t', '{\"A odd\":1}', 1, '{\"m\":4096,\"n\":4097,\"k\":4096}', '{}')",
         NULL, 0);
    close_db(db);
    CHECK(aitune_open(path, &h) == AITUNE_OK, "align hw: open (%s)", aitune_errmsg(h));
    got = pick(h, 4096, 4097, 4096, "gpu A", &level);
    CHECK(level == AITUNE_EXACT && !strcmp(got, "{\"A odd\":1}"), "on A, 4097: A's own odd winner (%s)", got);
    got = pick(h, 4096, 4097, 4096, "gpu B", &level);
    CHECK(level == AITUNE_EXACT && !strcmp(got, "{\"B\":1}"), "on B, 4097: B's odd winner (%s)", got);
    got = pick(h, 4096, 4096, 4096, "gpu B", &level);
    CHECK(level == AITUNE_EXACT && !strcmp(got, "{\"A\":1}"), "on B, 4096: A's aligned winner, the class first (%s)", got);
    got = pick(h, 4096, 4097, 4096, NULL, &level);
    CHECK(level == AITUNE_EXACT && !strcmp(got, "{\"A odd\":1}"), "knowing no GPU, 4097: an odd winner, the first hw (%s)", got);
    aitune_close(h);

    /* A damaged shape: the set fails to load, naming registry, op and bucket. */
    static const struct { const char *shape, *what; } bad[] = {
        { "{\"m\":4096,\"k\":4096}", "dim 'n'" },
        { "{\"m\":4096,\"n\":\"x\",\"k\":4096}", "dim 'n'" },
        { "{\"m\":4096,\"n\":-4097,\"k\":4096}", "integer >= 1" },
        { "4096", "object" },
        { "", "JSON" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "align_bad%zu.db", i);
        db = registry(name);
        path = made[nmade - 1];
        const char *args[] = { bad[i].shape };
        exec(db, "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, template, config, median_us, shape, launch) VALUES"
                 " ('gemm_nt', 'sm_90', 'bf16', 'm=2^12,n=2^12:align1,k=2^12', 'm,n,k', '4096,4096,4096', '8192,8192,8192',"
                 "  'gemm_nt/t', '{}', 1, ?, '{}')", args, 1);
        close_db(db);
        CHECK(aitune_open(path, &h) == AITUNE_OK, "bad shape %zu: the open succeeds", i);
        aitune_choice c;
        long long shape[3] = { 4096, 4097, 4096 };
        int rc = aitune_lookup(h, "gemm_nt", "sm_90", "bf16", shape, 3, &c);
        const char *msg = aitune_errmsg(h);
        CHECK(rc == AITUNE_CORRUPT && strstr(msg, path) && strstr(msg, "gemm_nt") && strstr(msg, "m=2^12,n=2^12:align1,k=2^12") &&
              strstr(msg, bad[i].what) && !strchr(msg, '\n'),
              "shape '%s': AITUNE_CORRUPT naming the registry, op, bucket and '%s': %s", bad[i].shape, bad[i].what, msg);
        aitune_close(h);
    }
}

/* Lookups from many threads on one fresh handle: the first lookups of each
** set race to read it (one wins, under the lock; the others find it
** published) and every answer is right. Run under ThreadSanitizer with
** `make test-tsan`-style builds to see the publication is clean. */
struct thr { aitune *h; int id, bad; };

static void *lookups(void *arg)
{
    struct thr *t = arg;
    char op[16], b[32];
    for (int rep = 0; rep < 50; rep++)
        for (int o = 0; o < 20; o++) {
            int oo = (o + t->id * 7) % 20, r = (rep + t->id) % 6, c = (o + rep) % 6;
            snprintf(op, sizeof op, "g%d", oo);
            snprintf(b, sizeof b, "%d/%d", r, c);
            long long shape[2] = { (1LL << r) + (r > 0), (2LL << c) - 1 };
            aitune_choice ch;
            if (aitune_lookup(t->h, op, "sm_90", "bf16", shape, 2, &ch) != AITUNE_OK || ch.level != AITUNE_EXACT ||
                strcmp(ch.bucket, b))
                t->bad++;
        }
    return NULL;
}

static void test_threads(void)
{
    sqlite3 *db = registry("threads.db");
    const char *path = made[nmade - 1];
    char op[16], b[32], lo[32], hi[32];
    for (int o = 0; o < 20; o++)
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) {
                snprintf(op, sizeof op, "g%d", o);
                snprintf(b, sizeof b, "%d/%d", r, c);
                snprintf(lo, sizeof lo, "%d,%d", 1 << r, 1 << c);
                snprintf(hi, sizeof hi, "%d,%d", 2 << r, 2 << c);
                winner(db, op, "sm_90", "bf16", b, "rows,cols", lo, hi, "g/t", "{}", "1");
            }
    close_db(db);
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "threads: open (%s)", aitune_errmsg(h));
    enum { N = 8 };
    pthread_t th[N];
    struct thr t[N];
    int started = 0;
    for (int i = 0; i < N; i++) {
        t[i] = (struct thr){ h, i, 0 };
        started += pthread_create(&th[i], NULL, lookups, &t[i]) == 0;
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (i < started) pthread_join(th[i], NULL);
        bad += t[i].bad;
    }
    CHECK(started == N && bad == 0, "8 threads x 1000 lookups on a fresh handle, sets read on first use: %d wrong", bad);
    aitune_close(h);
}

/* Misses, a newer schema, and layer 2 as far as it goes without a GPU. */
static void test_layer2(const char *path)
{
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "open for misses (%s)", aitune_errmsg(h));
    aitune_choice c;
    long long n = 1 << 22, m = 5, big = 1LL << 30;
    aitune_lookup(h, "axpy", "sm_90", "bf16", &n, 1, &c);      /* nearest: a miss */
    aitune_lookup(h, "axpy", "sm_90", "bf16", &n, 1, &c);      /* the same miss again */
    aitune_lookup(h, "axpy", "sm_90a", "f32", &m, 1, &c);      /* default: a miss */
    aitune_lookup(h, "axpy", "sm_90", "bf16", &big, 1, &c);    /* nearest */
    long long exact = 1 << 20;
    aitune_lookup(h, "axpy", "sm_90", "bf16", &exact, 1, &c);  /* exact: not a miss */
    long long count = -1;
    CHECK(aitune_miss_count(h, &count) == AITUNE_OK && count == 4, "misses counted: %lld (want 4)", count);
    CHECK(aitune_flush_misses(h) == AITUNE_OK, "flush the misses (%s)", aitune_errmsg(h));
    CHECK(aitune_miss_count(h, &count) == AITUNE_OK && count == 0, "a flush resets the count");
    aitune_lookup(h, "axpy", "sm_90", "bf16", &n, 1, &c);
    CHECK(aitune_flush_misses(h) == AITUNE_OK, "flush again");
    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT group_concat(op || ' ' || arch || ' ' || dtype || ' ' || shape || ' ' || count, ';') "
                           "FROM (SELECT * FROM misses ORDER BY arch, dtype, shape)", -1, &st, NULL);
    const char *got = sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    CHECK_STR(got, "axpy sm_90 bf16 1073741824 1;axpy sm_90 bf16 4194304 3;axpy sm_90 f32 5 1",
              "the misses table holds each shape with its count (arch normalized)");
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* Layer 2 without a driver or a compiled default: clear errors. */
    aitune_kernel *k = (aitune_kernel *)1;
    int rc = aitune_kernel_get(h, "axpy", "sm_90", "f32", &m, 1, &k);
    CHECK(rc == AITUNE_NOTFOUND && k == NULL && strstr(aitune_errmsg(h), "no compiled default"),
          "kernel_get at a default with no compiled kernel: %s", aitune_errmsg(h));
    rc = aitune_kernel_get(h, "axpy", "sm_90", "bf16", &exact, 1, &k);
    CHECK(rc != AITUNE_OK && k == NULL, "kernel_get without a GPU or a stored plan fails cleanly: %s", aitune_errmsg(h));
    CHECK(aitune_launch(h, NULL, NULL, NULL, NULL) == AITUNE_MISUSE, "aitune_launch with NULLs is misuse");
    aitune_close(h);

    /* A newer schema is refused. */
    sqlite3 *ndb = registry("newer.db");
    const char *npath = made[nmade - 1];
    exec(ndb, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '99')", NULL, 0);
    close_db(ndb);
    rc = aitune_open(npath, &h);
    CHECK(rc == AITUNE_CORRUPT && strstr(aitune_errmsg(h), "newer aitune") && strstr(aitune_errmsg(h), "schema 99"),
          "a registry from a newer aitune is refused: %s", aitune_errmsg(h));
    aitune_close(h);
}

/* ---- bound launches, against the recording libcuda (tests/unit/fake_cuda.c) ---- */

/* A GEMM-like plan: maps of A and B (one of A read from the workspace), D by
** pointer, dims as i64 and i32, a workspace whose first 64 bytes are zeroed,
** a 2-CTA cluster and more than 48 KB of shared memory. */
#define BOUND_GEMM "{\"v\":2,\"kernel\":\"k_gemm\",\"dims\":[\"m\",\"n\",\"k\"],\"args\":[" \
    "{\"name\":\"A\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"m * k\"}," \
    "{\"name\":\"B\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"n * k\"}," \
    "{\"name\":\"D\",\"role\":\"out\",\"dtype\":\"bf16\",\"size\":\"m * n\"}," \
    "{\"name\":\"m\",\"role\":\"dim\"},{\"name\":\"n\",\"role\":\"dim\"},{\"name\":\"k\",\"role\":\"dim\"}]," \
    "\"grid\":[\"cdiv(n,128)\",\"cdiv(m,64)\",\"1\"],\"block\":[\"384\",\"1\",\"1\"],\"cluster\":[\"2\",\"1\",\"1\"]," \
    "\"smem\":\"100000\",\"params\":[" \
    "{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,64],\"swizzle\":128,\"oob\":\"zero\",\"l2\":256}," \
    "{\"kind\":\"tmap\",\"arg\":\"B\",\"dims\":[\"k\",\"n\"],\"strides\":[\"k*2\"],\"box\":[64,128],\"swizzle\":128,\"oob\":\"zero\",\"l2\":256}," \
    "{\"kind\":\"ptr\",\"arg\":\"D\"},{\"kind\":\"dim\",\"expr\":\"m\"},{\"kind\":\"i32\",\"expr\":\"cdiv(k,64)\"}," \
    "{\"kind\":\"workspace\",\"size\":\"1024 + m*k*2\",\"zero\":\"64\"}," \
    "{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"1024\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,64],\"swizzle\":128}]}"

/* A norm: three pointers, an f32 scalar, two dims; no map, no workspace. */
#define BOUND_NORM "{\"v\":2,\"kernel\":\"k_norm\",\"dims\":[\"rows\",\"cols\"],\"args\":[" \
    "{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"rows * cols\"}," \
    "{\"name\":\"w\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"cols\"}," \
    "{\"name\":\"y\",\"role\":\"out\",\"dtype\":\"bf16\",\"size\":\"rows * cols\"}," \
    "{\"name\":\"eps\",\"role\":\"scalar\"},{\"name\":\"rows\",\"role\":\"dim\"},{\"name\":\"cols\",\"role\":\"dim\"}]," \
    "\"grid\":[\"rows\",\"1\",\"1\"],\"block\":[\"256\",\"1\",\"1\"],\"smem\":\"0\",\"params\":[" \
    "{\"kind\":\"ptr\",\"arg\":\"x\"},{\"kind\":\"ptr\",\"arg\":\"w\"},{\"kind\":\"ptr\",\"arg\":\"y\"}," \
    "{\"kind\":\"f32\",\"arg\":\"eps\"},{\"kind\":\"dim\",\"expr\":\"rows\"},{\"kind\":\"i32\",\"expr\":\"cols\"}]}"

/* The recording libcuda's controls, found with dlsym. */
static struct {
    int (*launches)(void), (*encodes)(void), (*memsets)(void), (*optin)(void), (*nparams)(void), (*ex)(void);
    unsigned long long (*param)(int, int), (*memset_addr)(void), (*memset_bytes)(void), (*stream)(void);
    unsigned (*geom)(int, int);
    const char *(*kernel)(void);
    void (*fail)(const char *), (*set_context)(unsigned long long);
} fk;

static void bound_registry(const char *name)
{
    sqlite3 *db = registry(name);
    exec(db, "INSERT INTO cubins (hash, source, options, kernel, cubin) VALUES "
             "('hg', '', '', 'k_gemm', CAST('FAKECUBIN 7 gemm kernel' AS BLOB)), "
             "('hn', '', '', 'k_norm', CAST('FAKECUBIN 6 norm kernel' AS BLOB))", NULL, 0);
    const char *g[] = { BOUND_GEMM }, *n[] = { BOUND_NORM };
    exec(db, "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, median_us, cubin, launch) "
             "VALUES ('gemm_nt', 'sm_90', 'bf16', 'm=2^6,n=2^12,k=2^12', 'm,n,k', '64,4096,4096', '128,8192,8192', "
             "'{\"m\":64,\"n\":4096,\"k\":4096}', 'gemm_nt/fake', '{}', 10, 'hg', ?)", g, 1);
    exec(db, "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, median_us, cubin, launch) "
             "VALUES ('rmsnorm', 'sm_90', 'bf16', 'rows=2^4,cols=2^12', 'rows,cols', '16,4096', '32,8192', "
             "'{\"rows\":16,\"cols\":4096}', 'rmsnorm/fake', '{}', 3, 'hn', ?)", n, 1);
    close_db(db);
}

static void test_bound_fake(const char *path)
{
    aitune *h;
    CHECK(aitune_open(path, &h) == AITUNE_OK, "bound: open (%s)", aitune_errmsg(h));
    long long shape[] = { 64, 4096, 4096 };
    aitune_kernel *k = NULL;
    int rc = aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", shape, 3, &k);
    CHECK(rc == AITUNE_OK && k, "bound: the fake driver loads the gemm winner (%s)", aitune_errmsg(h));
    if (!k) {
        aitune_close(h);
        return;
    }
    const unsigned long long W = 0x7f0000100000ULL, A = 0x7f0000200000ULL, D = 0x7f0000300000ULL,
                             WS = 0x7f0000400000ULL;
    aitune_arg known[7] = { { 0 } };
    known[1].ptr = W;
    aitune_bound *b = NULL;
    int enc0 = fk.encodes();
    rc = aitune_bind(h, k, shape, known, &b);
    CHECK(rc == AITUNE_OK && b, "bound: bind the gemm at 64x4096x4096 (%s)", aitune_errmsg(h));
    if (!b) {
        aitune_close(h);
        return;
    }
    CHECK(fk.encodes() - enc0 == 3 && fk.optin() == 100000,
          "bound: bind encodes its 3 maps and opts in to 100000 bytes of shared memory (%d maps, %d bytes)",
          fk.encodes() - enc0, fk.optin());
    aitune_bound_info bi;
    rc = aitune_bound_info_get(h, b, &bi);
    CHECK(rc == AITUNE_OK && bi.kind == AITUNE_BOUND_KERNEL && bi.kernel == k && bi.nargs == 6 &&
          bi.ws_bytes == 1024ULL + 64 * 4096 * 2 && bi.grid[0] == 32 && bi.grid[1] == 1 && bi.cluster[0] == 2 &&
          bi.smem == 100000 && bi.ntmaps == 3,
          "bound: info: kind kernel, 6 args, workspace %llu bytes, grid %ux%u, cluster %u, %u maps", bi.ws_bytes,
          bi.grid[0], bi.grid[1], bi.cluster[0], bi.ntmaps);

    aitune_arg args[7] = { { 0 } };
    args[0].ptr = A, args[1].ptr = W, args[2].ptr = D, args[6].ptr = WS;
    int launches = fk.launches(), memsets = fk.memsets();
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, (void *)0x5150);
    CHECK(rc == AITUNE_OK && fk.launches() == launches + 1, "bound: launch (%s)", aitune_errmsg(h));
    CHECK(fk.param(0, 0) == A && fk.param(0, 15) == 0xfa4e && fk.param(0, 2) == 4096 && fk.param(0, 3) == 64 &&
          fk.param(0, 7) == 8192,
          "bound: A's map is encoded at A's address with dims k, m and stride k*2 (addr %llx)", fk.param(0, 0));
    CHECK(fk.param(1, 0) == W && fk.param(1, 3) == 4096, "bound: B's map holds the weight given at bind (%llx)",
          fk.param(1, 0));
    CHECK(fk.encodes() - enc0 == 2, "bound: the launch encodes the 2 maps whose address moved, not B's (%d)",
          fk.encodes() - enc0);
    CHECK(fk.param(2, 0) == D && (long long)fk.param(3, 0) == 64 && (unsigned)fk.param(4, 0) == 64 &&
          fk.param(5, 0) == WS,
          "bound: D, m, cdiv(k,64) as i32 and the workspace are patched (%llx %llu %u %llx)", fk.param(2, 0),
          fk.param(3, 0), (unsigned)fk.param(4, 0), fk.param(5, 0));
    CHECK(fk.param(6, 0) == WS + 1024, "bound: the map `at` 1024 reads the workspace there (%llx)", fk.param(6, 0));
    CHECK(fk.memsets() == memsets + 1 && fk.memset_addr() == WS && fk.memset_bytes() == 64,
          "bound: the workspace's first 64 bytes are zeroed on the stream (%llu bytes)", fk.memset_bytes());
    CHECK(fk.stream() == 0x5150 && fk.ex() && fk.geom(2, 0) == 2 && fk.geom(0, 0) == 32 && fk.geom(1, 0) == 384 &&
          fk.geom(3, 0) == 100000 && !strcmp(fk.kernel(), "k_gemm"),
          "bound: launched with cuLaunchKernelEx on the caller's stream, cluster 2, grid 32, 384 threads");

    /* The same through aitune_launch: the bound launch matches it. */
    unsigned long long p0[7];
    for (int i = 0; i < 7; i++)
        p0[i] = fk.param(i, 0);
    rc = aitune_launch(h, k, args, shape, (void *)0x5150);
    int same = rc == AITUNE_OK;
    for (int i = 0; i < 7; i++)
        same &= fk.param(i, 0) == p0[i];
    CHECK(same, "bound: aitune_launch at the same shape passes the same parameters");

    /* The same addresses again: the maps the last launch encoded are copied, not encoded. */
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.encodes() == enc0 && fk.param(0, 0) == A && fk.param(0, 15) == 0xfa4e &&
          fk.param(0, 2) == 4096 && fk.param(6, 0) == WS + 1024 && fk.param(1, 0) == W,
          "bound: a launch at the last launch's addresses copies their maps (%d encoded)", fk.encodes() - enc0);
    /* Another activation: A's map moves (the workspace's stays where it was), B's does not. */
    args[0].ptr = A + 4096;
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.param(0, 0) == A + 4096 && fk.param(1, 0) == W && fk.encodes() - enc0 == 1 &&
          fk.param(6, 0) == WS + 1024, "bound: a second launch maps the new A (%llx, %d encoded)", fk.param(0, 0),
          fk.encodes() - enc0);
    /* Back to A: one map per slot, so A is encoded again (and kept). */
    args[0].ptr = A;
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.param(0, 0) == A && fk.encodes() - enc0 == 1,
          "bound: the slot holds the last address only (%d encoded)", fk.encodes() - enc0);
    /* Another weight: B's map is encoded again, then kept like an activation's. */
    args[1].ptr = W + 8192;
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.param(1, 0) == W + 8192 && fk.encodes() - enc0 == 1,
          "bound: a launch with another weight encodes B's map again (%d maps)", fk.encodes() - enc0);
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.param(1, 0) == W + 8192 && fk.param(1, 3) == 4096 && fk.encodes() - enc0 == 1,
          "bound: and copies it at the next launch (%d maps)", fk.encodes() - enc0);
    args[1].ptr = W;
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.param(1, 0) == W && fk.encodes() - enc0 == 1,
          "bound: the weight given at bind is the prebuilt map again (%d maps)", fk.encodes() - enc0);

    /* Faults: each a clear error and no launch. */
    launches = fk.launches();
    args[0].ptr = A + 8;
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "'A'") && strstr(aitune_errmsg(h), "16-byte"),
          "bound: a misaligned buffer under a map is refused: %s", aitune_errmsg(h));
    args[0].ptr = A;
    args[2].ptr = 0;
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "'D' is NULL"), "bound: a NULL buffer: %s",
          aitune_errmsg(h));
    args[2].ptr = D;
    args[6].ptr = 0;
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "workspace"), "bound: no workspace: %s",
          aitune_errmsg(h));
    args[6].ptr = WS;
    fk.set_context(0x9000);
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "context"), "bound: another context: %s",
          aitune_errmsg(h));
    fk.set_context(0x7000);
    fk.fail("launch");
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_ERROR && strstr(aitune_errmsg(h), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
          "bound: the driver's refusal is reported: %s", aitune_errmsg(h));
    fk.fail("encode");
    args[0].ptr = A + 65536;
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_ERROR && strstr(aitune_errmsg(h), "tensor map of 'A'"), "bound: an encode that fails: %s",
          aitune_errmsg(h));
    CHECK(fk.launches() == launches, "bound: none of the faults launched anything");
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b, args, NULL);
    CHECK(rc == AITUNE_OK && fk.encodes() - enc0 == 1 && fk.param(0, 0) == A + 65536 && fk.param(0, 15) == 0xfa4e,
          "bound: a map whose encode failed is not kept: the next launch encodes it (%d)", fk.encodes() - enc0);
    CHECK(aitune_bound_launch(h, NULL, args, NULL) == AITUNE_MISUSE &&
          aitune_bound_launch(h, b, NULL, NULL) == AITUNE_MISUSE && aitune_bound_launch(NULL, b, args, NULL) ==
          AITUNE_MISUSE, "bound: NULL handle, bound or args is misuse");

    /* Bind's faults. */
    aitune_bound *b2 = (aitune_bound *)1;
    long long bad[] = { 64, 4096, 4100 };   /* stride 8200 bytes: not a multiple of 16 */
    rc = aitune_bind(h, k, bad, NULL, &b2);
    CHECK(rc == AITUNE_MISUSE && b2 == NULL && strstr(aitune_errmsg(h), "strides"),
          "bound: a shape whose rows TMA cannot read is refused at bind: %s", aitune_errmsg(h));
    long long zero[] = { 0, 4096, 4096 };
    rc = aitune_bind(h, k, zero, NULL, &b2);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "m = 0"), "bound: a zero size: %s", aitune_errmsg(h));
    fk.fail("optin");
    rc = aitune_bind(h, k, shape, NULL, &b2);
    CHECK(rc == AITUNE_OK, "bound: a second bind needs no new opt-in (%s)", aitune_errmsg(h));
    fk.fail("");
    long long big[] = { 127, 8191, 8192 };
    rc = aitune_bind(h, k, big, NULL, &b2);
    CHECK(rc == AITUNE_OK && b2, "bound: a bind without addresses at another shape of the bucket (%s)",
          aitune_errmsg(h));
    args[1].ptr = W;
    enc0 = fk.encodes();
    rc = aitune_bound_launch(h, b2, args, NULL);
    CHECK(rc == AITUNE_OK && fk.encodes() - enc0 == 3 && fk.param(1, 0) == W && fk.param(1, 3) == 8191 &&
          fk.geom(0, 0) == 64 && fk.geom(0, 1) == 2,
          "bound: without addresses at bind, every map is encoded at launch; grid 64x2 for 127x8191");
    CHECK(aitune_bound_free(h, b2) == AITUNE_OK && aitune_bound_free(h, NULL) == AITUNE_OK,
          "bound: free one, and NULL is a no-op");
    CHECK(aitune_bound_free(h, b2) == AITUNE_MISUSE, "bound: freeing it twice is misuse: %s", aitune_errmsg(h));

    /* The cached launch: the bound launch, its handle, stream and args in one struct. */
    args[0].ptr = A, args[1].ptr = W, args[2].ptr = D, args[6].ptr = WS;
    rc = aitune_bound_launch(h, b, args, (void *)0x5151);
    unsigned long long pb[7];
    for (int i = 0; i < 7; i++)
        pb[i] = fk.param(i, 0);
    aitune_cached c;
    memset(&c, 0, sizeof c);
    c.h = h, c.b = b, c.stream = (void *)0x5151;
    memcpy(c.args, args, sizeof args);
    launches = fk.launches();
    args[0].ptr = 0;   /* what the struct holds is launched, not args */
    rc = aitune_launch_cached(&c);
    same = rc == AITUNE_OK && fk.launches() == launches + 1 && fk.stream() == 0x5151;
    for (int i = 0; i < 7; i++)
        same &= fk.param(i, 0) == pb[i];
    CHECK(same, "cached: aitune_launch_cached launches what aitune_bound_launch does with the same arguments");
    c.args[0].ptr = A + 4096;
    rc = aitune_launch_cached(&c);
    CHECK(rc == AITUNE_OK && fk.param(0, 0) == A + 4096 && fk.param(2, 0) == D,
          "cached: an address written into the struct in place is the next launch's (%llx)", fk.param(0, 0));
    launches = fk.launches();
    c.args[2].ptr = 0;
    rc = aitune_launch_cached(&c);
    CHECK(rc == AITUNE_MISUSE && strstr(aitune_errmsg(h), "'D' is NULL"),
          "cached: bound launch's checks, the message in c->h: %s", aitune_errmsg(h));
    c.args[2].ptr = D;
    c.h = NULL;
    CHECK(aitune_launch_cached(&c) == AITUNE_MISUSE && aitune_launch_cached(NULL) == AITUNE_MISUSE &&
          fk.launches() == launches, "cached: a NULL struct or handle is misuse, and launches nothing");

    /* The norm: the scalar is patched per launch, no map, no workspace. */
    long long ns[] = { 16, 4096 };
    aitune_kernel *kn = NULL;
    aitune_bound *bn = NULL;
    rc = aitune_kernel_get(h, "rmsnorm", "sm_90", "bf16", ns, 2, &kn);
    if (rc == AITUNE_OK)
        rc = aitune_bind(h, kn, ns, NULL, &bn);
    CHECK(rc == AITUNE_OK && bn, "bound: bind the norm (%s)", aitune_errmsg(h));
    if (bn) {
        aitune_arg na[6] = { { 0 } };
        na[0].ptr = A, na[1].ptr = W, na[2].ptr = D, na[3].f32 = 1e-5f;
        rc = aitune_bound_launch(h, bn, na, NULL);
        unsigned long long e = fk.param(3, 0);
        float eps;
        unsigned u = (unsigned)e;
        memcpy(&eps, &u, 4);
        CHECK(rc == AITUNE_OK && !fk.ex() && fk.param(0, 0) == A && fk.param(2, 0) == D && eps == 1e-5f &&
              fk.param(4, 0) == 16 && (unsigned)fk.param(5, 0) == 4096 && fk.geom(0, 0) == 16,
              "bound: the norm gets its pointers, eps %g, rows and cols, through cuLaunchKernel", eps);
        na[3].f32 = 1e-6f;
        rc = aitune_bound_launch(h, bn, na, NULL);
        u = (unsigned)fk.param(3, 0);
        memcpy(&eps, &u, 4);
        CHECK(rc == AITUNE_OK && eps == 1e-6f, "bound: another eps at the next launch (%g)", eps);
    }
    aitune_close(h);   /* frees the bound launches left */

    /* A fresh handle loads the kernel again, which must opt in again. */
    CHECK(aitune_open(path, &h) == AITUNE_OK, "bound: open again (%s)", aitune_errmsg(h));
    k = NULL;
    b = (aitune_bound *)1;
    rc = aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", shape, 3, &k);
    fk.fail("optin");
    if (rc == AITUNE_OK)
        rc = aitune_bind(h, k, shape, NULL, &b);
    CHECK(rc == AITUNE_ERROR && b == NULL && strstr(aitune_errmsg(h), "allow 100000 bytes of shared memory"),
          "bound: the driver refusing the shared memory fails the bind: %s", aitune_errmsg(h));
    aitune_close(h);
}

/* The recording driver is loaded in a child process, so the rest of this
** file sees the machine's own libcuda (or its absence) as before. */
static void test_bound(const char *argv0)
{
    char lib[600];
    const char *slash = strrchr(argv0, '/');
    snprintf(lib, sizeof lib, "%.*sfakecuda/libcuda.so.1", slash ? (int)(slash - argv0 + 1) : 0, argv0);
    /* Without a driver: bind and launch refuse what they are given. */
    CHECK(aitune_bind(NULL, NULL, NULL, NULL, NULL) == AITUNE_MISUSE, "bound: bind without a handle is misuse");
    if (access(lib, R_OK) != 0) {
        SKIP("bound launches: no recording libcuda at %s (make %s)", lib, lib);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        void *dl = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
        if (!dl) {
            printf("FAIL bound: dlopen %s: %s\n", lib, dlerror());
            _exit(1);
        }
#define FK(name) *(void **)&fk.name = dlsym(dl, "fakecu_" #name)
        FK(launches); FK(encodes); FK(memsets); FK(optin); FK(nparams); FK(ex); FK(param); FK(memset_addr);
        FK(memset_bytes); FK(stream); FK(geom); FK(kernel); FK(fail); FK(set_context);
#undef FK
        bound_registry("bound.db");
        test_bound_fake(made[nmade - 1]);
        fflush(stdout);
        _exit(check_failed);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bound: the child with the recording libcuda passed");
    /* The child made bound.db; the parent removes it. */
    made_path("bound.db");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_rt SCHEMA.sql\n");
        return 2;
    }
    schema_path = argv[1];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_rt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        setup_failed(dir, "mkdtemp");

    /* First: its child must load the recording libcuda before anything here
    ** has tried the machine's (cu.c tries once per process). */
    test_bound(argv[0]);
    const char *mainp = build_main();
    test_main(mainp);
    test_layer2(mainp);
    test_index();
    test_hw_order();
    test_split();
    test_align();
    test_threads();
    test_open_errors();
    test_readonly_dir();

    cleanup();
    CHECK_DONE();
}
