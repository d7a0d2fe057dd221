/* test_exact: dims tuned at exact sizes (a spec's `exact: true`; docs/SPEC.md
** "Exact sizes"). The spec's parsing and refusals, the buckets and keys it
** makes and their round trip through bucket_key_parse, split parts that
** never cut an exact dim, names.c's reading of keys for libaitune, and
** libaitune's lookup (what `aitune lookup` answers with) over registries
** built here: an exact bucket answers the shape it holds before a log2
** bucket that holds it too, once its classes fit; shapes it does not hold
** are answered as before; nearest takes it by distance from its size; a key
** whose edges are not its size is a corrupt registry. */
#define _GNU_SOURCE
#include "aitune.h"
#include "check.h"
#include "names.h"
#include "registry.h"
#include "spec.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the spec ---- */

/* A one-task spec whose shapes are dims (YAML flow mapping text). */
static int load(const char *dims, spec *s, char *err, int cap)
{
    char text[1024];
    snprintf(text, sizeof text, "name: x\ntasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    shapes: {%s}\n", dims);
    return spec_load_text("x.yaml", text, strlen(text), s, err, cap);
}

/* The keys of a spec's one task, ';'-joined, with each bucket's edges. */
static void keys_of(const spec *s, char *out, size_t cap)
{
    bucket *b;
    int n = spec_buckets(&s->tasks[0], &b);
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n && at < cap; i++) {
        at += (size_t)snprintf(out + at, cap - at, "%s[", b[i].key);
        for (int d = 0; d < b[i].ndims && at < cap; d++)
            at += (size_t)snprintf(out + at, cap - at, "%s%lld-%lld", d ? "," : "", b[i].lo[d], b[i].hi[d]);
        if (at < cap) at += (size_t)snprintf(out + at, cap - at, ")x%u;", b[i].exact);
    }
    free(b);
}

static void test_spec(void)
{
    spec s;
    char err[512], keys[2048];
    /* Llama-3-8B's fused q/k/v (6144) and o_proj (4096): one log2 bucket, one
    ** class. Without exact the spec is refused; with it, two buckets. */
    CHECK(load("m: {values: [16]}, n: {values: [4096, 6144]}, k: {values: [4096]}", &s, err, sizeof err) == -1 &&
              strstr(err, "sizes 4096 and 6144 fall in the same bucket"),
          "without exact, 4096 and 6144 share a bucket and are refused: %s", err);
    int rc = load("m: {values: [16]}, n: {values: [4096, 6144, 4104], exact: true}, k: {values: [4096], exact: true}", &s,
                  err, sizeof err);
    CHECK(rc == 0, "exact n and k load: %s", rc ? err : "ok");
    if (!rc) {
        CHECK(s.tasks[0].dims[1].exact && s.tasks[0].dims[2].exact && !s.tasks[0].dims[0].exact, "the exact dims say so");
        keys_of(&s, keys, sizeof keys);
        CHECK_STR(keys,
                  "m=2^4,n=4096,k=4096[16-32,4096-4097,4096-4097)x6;m=2^4,n=6144,k=4096[16-32,6144-6145,4096-4097)x6;"
                  "m=2^4,n=4104,k=4096[16-32,4104-4105,4096-4097)x6;",
                  "each exact size a bucket of its own, [v, v + 1), keyed by its size");
        spec_free(&s);
    }
    rc = load("m: {range: [1, 8], align: [1]}, n: {values: [6144], exact: true}, k: {log2: [12, 13], exact: true}", &s,
              err, sizeof err);
    CHECK(rc == 0, "exact beside a range, and exact log2: %s", rc ? err : "ok");
    if (!rc) {
        keys_of(&s, keys, sizeof keys);
        CHECK(strstr(keys, "m=2^2:align1,n=6144,k=8192[4-8,6144-6145,8192-8193)x6;") &&
                  strstr(keys, "m=2^3,n=6144,k=4096[8-16,6144-6145,4096-4097)x6;"),
              "the range keeps its log2 buckets, log2 exact sizes are keyed in digits: %s", keys);
        bucket *b;
        int n = spec_buckets(&s.tasks[0], &b), ranged = n > 0;
        for (int i = 0; i < n; i++) ranged &= b[i].ranged == 1u && b[i].rep[1] == 6144;
        CHECK(ranged, "the range dim stays ranged, the exact one is tuned at its size");
        free(b);
        spec_free(&s);
    }
    CHECK(load("n: {values: [4096], exact: false}, m: {values: [1]}, k: {values: [1]}", &s, err, sizeof err) == 0 &&
              !s.tasks[0].dims[0].exact,
          "exact: false is the default's spelling");
    spec_free(&s);
    static const char *const bad[][2] = {
        { "n: {range: [1, 64], exact: true}, m: {values: [1]}, k: {values: [1]}", "line 5: dim 'n': exact goes with values or log2, not range" },
        { "n: {values: [6144, 6144], exact: true}, m: {values: [1]}, k: {values: [1]}", "line 5: dim 'n': size 6144 is listed twice" },
        { "n: {values: [6144], exact: yes}, m: {values: [1]}, k: {values: [1]}", "line 5: dim 'n': exact must be true or false" },
        { "n: {values: [6144], exact: [true]}, m: {values: [1]}, k: {values: [1]}", "line 5: dim 'n': exact must be true or false" },
        { "n: {exact: true}, m: {values: [1]}, k: {values: [1]}", "dim 'n' needs exactly one of log2, values or range" },
        { "n: {values: [6144], exact: true, align: [1]}, m: {values: [1]}, k: {values: [1]}", "dim 'n': align goes with range" },
        { "n: {values: [6144], exact: true, exact: false}, m: {values: [1]}, k: {values: [1]}", "field 'exact' appears twice" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = load(bad[i][0], &s, err, sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i][1]) && !strchr(err, '\n'), "refused, one line: %s", rc ? err : bad[i][0]);
        if (!rc) spec_free(&s);
    }
}

/* ---- keys ---- */

static void test_keys(void)
{
    char names[SPEC_MAXDIMS][16] = { "m", "n", "k" }, key[96], why[128];
    long long lo[3] = { 16, 6144, 4096 }, rep[3] = { 31, 6144, 4096 };
    bucket_parsed k;
    CHECK(bucket_key_exact(3, names, lo, rep, 6, key, sizeof key) == 0, "an exact key is made");
    CHECK_STR(key, "m=2^4:align1,n=6144,k=4096", "exact n and k: their sizes, m its log2 bucket and class");
    CHECK(bucket_key_parse(key, &k, why, sizeof why) == 0 && k.exact == 6 && k.ndims == 3 && k.lo[0] == 16 &&
              k.cls[0] == 1 && k.lo[1] == 6144 && k.lo[2] == 4096 && k.cls[1] == 0 && bucket_parsed_hi(&k, 0) == 32 &&
              bucket_parsed_hi(&k, 1) == 6145 && bucket_parsed_hi(&k, 2) == 4097,
          "it parses back to its edges: %s", key);
    long long lo2[3] = { 16, 4096, 4096 };
    CHECK(bucket_key(3, names, lo2, rep, key, sizeof key) == 0 && !strcmp(key, "m=2^4:align1,n=2^12,k=2^12"),
          "without exact dims the key is what it was: %s", key);
    CHECK(bucket_key_parse(key, &k, why, sizeof why) == 0 && k.exact == 0 && bucket_parsed_hi(&k, 1) == 8192,
          "and parses as a log2 key");
    CHECK(bucket_key_parse("n=4096", &k, why, sizeof why) == 0 && k.exact == 1 && k.lo[0] == 4096 &&
              bucket_parsed_hi(&k, 0) == 4097,
          "n=4096: an exact power of two");

    /* A bucket of m in [16, 32) at n = 6144 exactly, split along every dim
    ** it lets: along m only; the parts' keys parse with the exact corner. */
    bucket b = { .ndims = 2, .lo = { 16, 6144 }, .hi = { 32, 6145 }, .rep = { 24, 6144 }, .align = { 8, 8 }, .exact = 2 };
    snprintf(b.key, sizeof b.key, "m=2^4,n=6144");
    bucket parts[16];
    int n = bucket_split(&b, 3, parts), all = n == 2;
    for (int i = 0; i < n && all; i++)
        all = bucket_key_parse(parts[i].key, &k, why, sizeof why) == 0 && k.part && k.exact == 2 &&
              k.corner[1] == 6144 && parts[i].lo[1] == 6144 && parts[i].hi[1] == 6145 && parts[i].rep[1] == 6144 &&
              parts[i].exact == 2;
    CHECK(all, "an exact dim is never cut: 2 parts along m, n whole (%s, %s)", n > 0 ? parts[0].key : "-",
          n > 1 ? parts[1].key : "-");
    CHECK(n == 2 && !strcmp(parts[1].key, "m=2^4,n=6144/24,6144"), "a part's key: %s", n == 2 ? parts[1].key : "-");
    bucket b1 = { .ndims = 1, .lo = { 4096 }, .hi = { 4097 }, .rep = { 4096 }, .align = { 8 }, .exact = 1 };
    snprintf(b1.key, sizeof b1.key, "n=4096");
    CHECK(bucket_split(&b1, 1, parts) == 1 && !strcmp(parts[0].key, "n=4096/2^12"), "a bucket exact in every dim stays whole");

    static const char *const bad[] = { "n=06144", "n=6144:align1", "n=0", "n=6144x", "n=-6144", "n=6144,",
                                       "m=2^4,n=6144/2^4,6000", "m=2^4,n=6144/2^4", "n=281474976710657", "n=" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(bucket_key_parse(bad[i], &k, why, sizeof why) == -1, "'%s' is refused: %s", bad[i], why);

    /* libaitune's reading (names.h): which dims a key names exactly. */
    long long sz[4] = { 0, 0, 0, 0 };
    CHECK(bucket_exact_dims("m=2^4:align1,n=6144,k=4096", "m,n,k", 3, sz) == 6 && sz[1] == 6144 && sz[2] == 4096 &&
              sz[0] == 0,
          "names.h: n and k exact, with their sizes");
    CHECK(bucket_exact_dims("m=2^4,n=6144/24,6144", "m,n", 2, NULL) == 2, "a part's home is read");
    CHECK(bucket_exact_dims("rows=2^14,cols=2^12", "rows,cols", 2, NULL) == 0, "a log2 key names none");
    static const struct { const char *key, *dims; int nd; } none[] = {
        { "wide", "n", 1 }, { "n=6144", "m", 1 }, { "m=2^4,n=6144", "m,n,k", 3 }, { "m=2^4,n=6144,k=1", "m,n", 2 },
        { "n=06144", "n", 1 }, { "n=6144000000000000000000", "n", 1 }, { "n=6144:align1", "n", 1 },
        { "n=6144", "n,k", 1 } };
    int ok = 1;
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) ok &= bucket_exact_dims(none[i].key, none[i].dims, none[i].nd, NULL) == 0;
    CHECK(ok, "keys of other forms, or of other dims, name none exactly");
}

/* ---- lookup (libaitune, as `aitune lookup` answers) ---- */

static void put(sqlite3 *db, const char *op, const char *bucket, const char *dims, const char *lo, const char *hi,
                const char *shape, const char *tmpl)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, template, config, median_us, "
                           "shape, launch) VALUES (?1, 'sm_90', 'bf16', ?2, ?3, ?4, ?5, ?6, '{}', 1.0, ?7, '{}')",
                           -1, &st, NULL) != SQLITE_OK) {
        printf("FAIL prepare: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
    const char *v[] = { op, bucket, dims, lo, hi, tmpl, shape };
    for (int i = 0; i < 7; i++) sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        printf("FAIL insert %s: %s\n", bucket, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_finalize(st);
}

/* A new registry (the schema, no rows) at dir/name, opened for inserts. */
static sqlite3 *fresh(const char *dir, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    reg *r;
    if (reg_open(path, 0, &r)) {
        printf("FAIL reg_open %s: %s\n", path, reg_errmsg(r));
        exit(1);
    }
    reg_close(r);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) exit(1);
    return db;
}

/* The answer for shape (comma separated) of op: "level bucket", or the status. */
static const char *ask(aitune *h, const char *op, const char *shape)
{
    static char out[160];
    long long s[4];
    int n = 0;
    for (const char *p = shape; n < 4; n++) {
        s[n] = atoll(p);
        p = strchr(p, ',');
        if (!p++) { n++; break; }
    }
    aitune_choice c;
    int rc = aitune_lookup(h, op, "sm_90", "bf16", s, n, &c);
    if (rc) snprintf(out, sizeof out, "status %d: %s", rc, aitune_errmsg(h));
    else snprintf(out, sizeof out, "%s %s", c.level == AITUNE_EXACT ? "exact" : c.level == AITUNE_NEAREST ? "nearest" : "default",
                  c.bucket ? c.bucket : "-");
    return out;
}

/* The fused Llama-3-8B projection beside o_proj's log2 bucket. */
#define LOG2_B "m=2^4,n=2^12,k=2^12"
#define EXACT_B "m=2^4,n=6144,k=4096"

static void gemm_rows(sqlite3 *db, int with_exact)
{
    put(db, "gemm_nt", LOG2_B, "m,n,k", "16,4096,4096", "32,8192,8192", "{\"m\":16,\"n\":4096,\"k\":4096}", "gemm_nt/a");
    if (with_exact)
        put(db, "gemm_nt", EXACT_B, "m,n,k", "16,6144,4096", "32,6145,4097", "{\"m\":16,\"n\":6144,\"k\":4096}",
            "gemm_nt/b");
}

static void test_lookup(const char *dir)
{
    char path[600], old[600];
    sqlite3 *db = fresh(dir, "old.db", old, sizeof old);
    gemm_rows(db, 0);
    sqlite3_close(db);
    db = fresh(dir, "exact.db", path, sizeof path);
    gemm_rows(db, 1);
    /* 1-D: an exact size beside a log2 bucket far below it. */
    put(db, "vec", "n=6144", "n", "6144", "6145", "{\"n\":6144}", "vec/b");
    put(db, "vec", "n=2^10", "n", "1024", "2048", "{\"n\":1024}", "vec/a");
    /* Classes fit before exactness: m tuned at 16 (class 8) exactly at n,
    ** and a log2 bucket tuned at m = 31 (class 1). */
    put(db, "fit", "m=2^4,n=6144", "m,n", "16,6144", "32,6145", "{\"m\":16,\"n\":6144}", "fit/b");
    put(db, "fit", "m=2^4:align1,n=2^12", "m,n", "16,4096", "32,8192", "{\"m\":31,\"n\":4096}", "fit/a");
    /* A key that names n exactly over edges that are not its size. */
    put(db, "bad", "n=6144", "n", "4096", "8192", "{\"n\":6144}", "bad/a");
    sqlite3_close(db);

    aitune *h, *ho;
    if (aitune_open(path, &h) || aitune_open(old, &ho)) {
        printf("FAIL aitune_open: %s\n", aitune_errmsg(h));
        exit(1);
    }
    CHECK_STR(ask(h, "gemm_nt", "16,6144,4096"), "exact " EXACT_B, "6144 x 4096: the winner tuned there");
    CHECK_STR(ask(h, "gemm_nt", "31,6144,4096"), "exact " EXACT_B, "... at every m of its bucket");
    CHECK_STR(ask(h, "gemm_nt", "16,4096,4096"), "exact " LOG2_B, "4096 x 4096: the log2 bucket's");
    CHECK_STR(ask(h, "gemm_nt", "16,5000,4096"), "exact " LOG2_B, "5000 x 4096: the log2 bucket's, exact as before");
    CHECK_STR(ask(h, "gemm_nt", "16,6144,4104"), "exact " LOG2_B, "k = 4104, which the exact bucket does not hold: log2");
    CHECK_STR(ask(h, "gemm_nt", "64,6144,4096"), "nearest " EXACT_B,
              "m = 64, no bucket holds it; as near in m, the one at n = 6144 exactly");
    CHECK_STR(ask(h, "gemm_nt", "64,4096,4096"), "nearest " LOG2_B, "m = 64 at n = 4096: the log2 bucket, nearer");
    /* Shapes the exact bucket does not hold: as the registry without it. */
    const char *same[] = { "16,4096,4096", "16,5000,4096", "20,8000,5000", "64,4096,4096", "1,4096,4096", "16,4096,20000" };
    int alike = 1;
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char a[160];
        snprintf(a, sizeof a, "%s", ask(h, "gemm_nt", same[i]));
        alike &= !strcmp(a, ask(ho, "gemm_nt", same[i]));
    }
    CHECK(alike, "every shape the exact bucket does not hold is answered as by the registry without it");
    CHECK_STR(ask(ho, "gemm_nt", "16,6144,4096"), "exact " LOG2_B, "(without it, 6144 is the log2 bucket's)");

    CHECK_STR(ask(h, "vec", "6144"), "exact n=6144", "1-D: 6144 exactly");
    CHECK_STR(ask(h, "vec", "1500"), "exact n=2^10", "1500: the log2 bucket");
    CHECK_STR(ask(h, "vec", "7000"), "nearest n=6144", "7000: nearest, 6144 nearer than 2047");
    CHECK_STR(ask(h, "vec", "6145"), "nearest n=6144", "6145: next to it, not in it");
    CHECK_STR(ask(h, "vec", "3000"), "nearest n=2^10", "3000: nearer 2047 than 6144");

    CHECK_STR(ask(h, "fit", "24,6144"), "exact m=2^4,n=6144", "m = 24 (class 8) fits both: the exact bucket");
    CHECK_STR(ask(h, "fit", "17,6144"), "exact m=2^4:align1,n=2^12",
              "m = 17 (class 1) fits only the winner tuned at 31: classes first");

    const char *b = ask(h, "bad", "6144");
    CHECK(strstr(b, "status") && strstr(b, "names n = 6144 exactly, its edges are [4096, 8192)"),
          "a key whose edges are not its size: a corrupt registry: %s", b);
    aitune_close(h);
    aitune_close(ho);
}

int main(void)
{
    char dir[] = "/tmp/aitune-exact-XXXXXX";
    if (!mkdtemp(dir)) { printf("FAIL mkdtemp\n"); return 1; }
    test_spec();
    test_keys();
    test_lookup(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
    CHECK_DONE();
}
