/*
** test_registry: the SQLite registry (registry*.c) in a temporary directory:
** round trips of measurements, winners, defaults and cubins, and opening
** files that are not registries.
**
**     build/tests/test_registry
*/
#define _GNU_SOURCE
#include "check.h"
#include "registry_cubin.h"
#include "registry_decided.h"
#include "registry_measure.h"
#include "registry_winner.h"
#include "util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static const char *path_in(const char *name)
{
    static char p[8][400];
    static int k;
    char *s = p[k++ % 8];
    snprintf(s, sizeof p[0], "%s/%s", dir, name);
    return s;
}

static int has(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

static void rm_db(const char *p)
{
    char b[450];
    unlink(p);
    snprintf(b, sizeof b, "%s-wal", p);
    unlink(b);
    snprintf(b, sizeof b, "%s-shm", p);
    unlink(b);
}

static void fake_device(device *d, const char *uuid)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "Fake GPU");
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->cc = 90;
    d->sms = 132;
    d->mem = 85899345920LL;
    d->l2 = 52428800;
    snprintf(d->driver, sizeof d->driver, "fake");
    d->cuda_driver = 13000;
    snprintf(d->nvrtc, sizeof d->nvrtc, "13.0");
}

static void key_of(measurement *m, const char *bucket, const char *config, long long dev)
{
    memset(m, 0, sizeof *m);
    snprintf(m->op, sizeof m->op, "axpy");
    snprintf(m->tmpl, sizeof m->tmpl, "axpy/vec");
    snprintf(m->arch, sizeof m->arch, "sm_90");
    snprintf(m->dtype, sizeof m->dtype, "f32");
    snprintf(m->bucket, sizeof m->bucket, "%s", bucket);
    snprintf(m->shape, sizeof m->shape, "{\"n\":1024}");
    m->config = (char *)config;
    hash_hex(hash_str(HASH_INIT, config), m->config_hash);
    m->device = dev;
}

static void test_roundtrip(void)
{
    const char *p = path_in("sub/dir/reg.db");
    reg *r;
    int rc = reg_open(p, 0, &r);
    CHECK(rc == 0, "reg_open creates a registry (and its folders): %s", rc ? reg_errmsg(r) : "ok");
    if (rc) { reg_close(r); return; }
    CHECK(!strcmp(reg_path(r), p), "reg_path");
    CHECK(reg_check(r) == 0, "reg_check of a fresh registry is ok");

    device d;
    fake_device(&d, "GPU-1");
    long long dev = 0, dev2 = 0, run = 0;
    CHECK(reg_device(r, &d, &dev) == 0 && dev > 0, "reg_device inserts (id %lld)", dev);
    CHECK(reg_device(r, &d, &dev2) == 0 && dev2 == dev, "the same fingerprint gives the same id");
    snprintf(d.driver, sizeof d.driver, "fake2");
    CHECK(reg_device(r, &d, &dev2) == 0 && dev2 != dev, "another driver is another device row");
    CHECK(reg_run_begin(r, "aitune sweep x.yaml", "abc", 1, dev, "{}", &run) == 0 && run > 0, "reg_run_begin");

    measurement m, got;
    key_of(&m, "n=2^10", "{\"block\":256}", dev);
    m.run = run;
    snprintf(m.status, sizeof m.status, "ok");
    m.median_us = 12.5;
    m.min_us = 12;
    m.max_us = 14;
    m.spread = 0.01;
    m.samples = 40;
    m.gbps = 1234.5;
    m.registers = 16;
    snprintf(m.cubin, sizeof m.cubin, "0123456789abcdef");
    CHECK(reg_measure_put(r, &m) == 0, "reg_measure_put ok row");
    memset(&got, 0, sizeof got);
    rc = reg_measure_find(r, &m, &got);
    CHECK(rc == 1, "reg_measure_find finds it (rc %d)", rc);
    if (rc == 1) {
        CHECK(!strcmp(got.status, "ok") && got.median_us == 12.5 && got.min_us == 12 && got.max_us == 14 && got.samples == 40 &&
              got.gbps == 1234.5 && got.registers == 16 && !strcmp(got.cubin, "0123456789abcdef") &&
              !strcmp(got.config, "{\"block\":256}"),
              "the found row has what was put");
        measurement_free(&got);
    }
    /* A newer failure of the same config is what find returns. */
    measurement f = m;
    snprintf(f.status, sizeof f.status, "timeout");
    f.error = "no answer within 10 s";
    f.cubin[0] = 0;
    CHECK(reg_measure_put(r, &f) == 0, "reg_measure_put timeout row");
    rc = reg_measure_find(r, &m, &got);
    CHECK(rc == 1 && !strcmp(got.status, "timeout") && has(got.error, "no answer"), "find returns the newest row");
    if (rc == 1) measurement_free(&got);
    /* Keys that differ: not found. */
    measurement k2;
    key_of(&k2, "n=2^11", "{\"block\":256}", dev);
    CHECK(reg_measure_find(r, &k2, &got) == 0, "another bucket: not found");
    key_of(&k2, "n=2^10", "{\"block\":128}", dev);
    CHECK(reg_measure_find(r, &k2, &got) == 0, "another config: not found");
    key_of(&k2, "n=2^10", "{\"block\":256}", dev2);
    CHECK(reg_measure_find(r, &k2, &got) == 0, "another device: not found");
    key_of(&k2, "n=2^10", "{\"block\":256}", 0);
    CHECK(reg_measure_find(r, &k2, &got) == 0, "no device: not found");
    snprintf(k2.tmpl, sizeof k2.tmpl, "axpy/other");
    CHECK(reg_measure_find(r, &k2, &got) == 0, "another template: not found");
    /* A bucket's part may be searched at another size than its own. */
    key_of(&k2, "n=2^10", "{\"block\":256}", dev);
    snprintf(k2.shape, sizeof k2.shape, "{\"n\":1984}");
    CHECK(reg_measure_find(r, &k2, &got) == 0, "another shape: not found");
    /* A failed measurement without a device finds itself. */
    key_of(&k2, "n=2^12", "{\"block\":64}", 0);
    snprintf(k2.status, sizeof k2.status, "compile");
    k2.error = "error: x";
    CHECK(reg_measure_put(r, &k2) == 0 && reg_measure_find(r, &k2, &got) == 1, "a row without device is found by a key without device");
    measurement_free(&got);

    /* Winners. */
    const char *buckets[] = { "n=2^12", "n=2^10", "n=2^11" };
    long long los[] = { 4096, 1024, 2048 };
    for (int i = 0; i < 3; i++) {
        winner w;
        memset(&w, 0, sizeof w);
        snprintf(w.op, sizeof w.op, "axpy");
        snprintf(w.arch, sizeof w.arch, "sm_90");
        snprintf(w.dtype, sizeof w.dtype, "f32");
        snprintf(w.bucket, sizeof w.bucket, "%s", buckets[i]);
        snprintf(w.dims, sizeof w.dims, "n");
        snprintf(w.lo, sizeof w.lo, "%lld", los[i]);
        snprintf(w.hi, sizeof w.hi, "%lld", 2 * los[i]);
        snprintf(w.shape, sizeof w.shape, "{\"n\":%lld}", los[i]);
        snprintf(w.tmpl, sizeof w.tmpl, "axpy/vec");
        w.config = "{\"block\":256}";
        w.median_us = 10 + i;
        w.default_us = 20;
        w.margin = 0.05;
        w.exhaustive = i != 1;
        w.runners_up = "[]";
        snprintf(w.cubin, sizeof w.cubin, "0123456789abcdef");
        w.launch = "{\"grid\":[\"cdiv(n, 256)\",\"1\",\"1\"]}";
        w.device = dev;
        w.run = run;
        CHECK(reg_winner_put(r, &w) == 0, "reg_winner_put %s", buckets[i]);
    }
    /* bf16 sorts before f32; a 2^20 bucket after 2^12 (numeric, not text order). */
    winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.op, sizeof w.op, "axpy");
    snprintf(w.arch, sizeof w.arch, "sm_90");
    snprintf(w.dtype, sizeof w.dtype, "f32");
    snprintf(w.bucket, sizeof w.bucket, "n=2^20");
    snprintf(w.dims, sizeof w.dims, "n");
    snprintf(w.lo, sizeof w.lo, "1048576");
    snprintf(w.hi, sizeof w.hi, "2097152");
    snprintf(w.shape, sizeof w.shape, "{\"n\":1048576}");
    snprintf(w.tmpl, sizeof w.tmpl, "axpy/vec");
    w.config = "{\"block\":512}";
    w.median_us = 100;
    w.margin = -1;
    w.launch = "{}";
    CHECK(reg_winner_put(r, &w) == 0, "reg_winner_put n=2^20");
    snprintf(w.dtype, sizeof w.dtype, "bf16");
    CHECK(reg_winner_put(r, &w) == 0, "reg_winner_put bf16");

    winner g;
    rc = reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^10", &g);
    CHECK(rc == 1, "reg_winner_get finds n=2^10");
    if (rc == 1) {
        CHECK(!strcmp(g.config, "{\"block\":256}") && g.median_us == 11 && g.default_us == 20 && g.margin == 0.05 &&
              g.exhaustive == 0 && !strcmp(g.lo, "1024") && !strcmp(g.hi, "2048") && !strcmp(g.cubin, "0123456789abcdef") &&
              g.device == dev && g.run == run && has(g.launch, "cdiv(n, 256)"),
              "the winner read back has what was put");
        winner_free(&g);
    }
    rc = reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^20", &g);
    CHECK(rc == 1 && g.margin == -1 && g.cubin[0] == 0 && g.default_us == 0, "a winner without margin, cubin and default");
    if (rc == 1) winner_free(&g);
    CHECK(reg_winner_get(r, "axpy", "sm_90", "f16", "n=2^10", &g) == 0, "reg_winner_get of a missing key: 0");

    /* Replace: the same key keeps one row. */
    w.median_us = 90;
    CHECK(reg_winner_put(r, &w) == 0, "reg_winner_put replaces");
    rc = reg_winner_get(r, "axpy", "sm_90", "bf16", "n=2^20", &g);
    CHECK(rc == 1 && g.median_us == 90, "the replaced winner has the new time");
    if (rc == 1) winner_free(&g);
    reg_close(r);
}

/* A measurement row for test_measure_queries: config's at shape n, timed
** as stream says; ok with a time, else failed with status and no time. */
static int put_row(reg *r, const char *bucket, const char *config, int n, int stream, const char *status,
                   double us, double spread, long long dev, long long run)
{
    measurement m;
    key_of(&m, bucket, config, dev);
    snprintf(m.shape, sizeof m.shape, "{\"n\":%d}", n);
    snprintf(m.status, sizeof m.status, "%s", status);
    m.stream = stream;
    m.run = run;
    m.median_us = m.min_us = m.max_us = us;
    m.spread = spread;
    m.samples = (int)(us * 2);
    m.error = strcmp(status, "ok") ? "wrong: 3 elements" : NULL;
    return reg_measure_put(r, &m);
}

/* reg_measure_each's and reg_bucket_measurements' rows, as text. */
static char rows[1024];
static int row_text(const measurement *m, void *ctx)
{
    (void)ctx;
    size_t at = strlen(rows);
    snprintf(rows + at, sizeof rows - at, "%s%.1s%s:%s:%g:%d%s", at ? " " : "", m->config + 6, m->status[0] == 'o' ? "" : "!",
             m->shape + 5, m->median_us, m->stream, m->error ? "e" : "");
    return 0;
}

/* The readers that share registry_measure.c's one row reader: find takes a
** twin GPU's row but keeps the key's config, device and run; best gives each
** config's fastest ok row at the key's shape and timing on the key's GPU or
** its twins, fastest first; each gives each config's newest row of its
** task's newest timing; a bucket's rows come ok and fastest first, then the
** failures, and a part's are its home's. */
static void test_measure_queries(void)
{
    const char *p = path_in("measure.db");
    reg *r;
    if (reg_open(p, 0, &r)) {
        CHECK(0, "open %s: %s", p, reg_errmsg(r));
        reg_close(r);
        return;
    }
    device d;
    long long gpu0 = 0, twin = 0, other = 0, run1 = 0, run2 = 0;
    fake_device(&d, "GPU-A");
    reg_device(r, &d, &gpu0);
    fake_device(&d, "GPU-B");       /* the same hardware and toolchain: a twin */
    reg_device(r, &d, &twin);
    fake_device(&d, "GPU-C");
    d.sms = 114;                    /* other hardware */
    reg_device(r, &d, &other);
    reg_run_begin(r, "aitune sweep", NULL, 1, gpu0, "{}", &run1);
    reg_run_begin(r, "aitune sweep", NULL, 2, gpu0, "{}", &run2);
    const char *B = "n=2^10";
    int bad = put_row(r, B, "{\"b\":\"A\"}", 1024, 0, "ok", 20, 0.02, gpu0, run1) ||
              put_row(r, B, "{\"b\":\"A\"}", 1024, 0, "ok", 15, 0.05, twin, run1) ||
              put_row(r, B, "{\"b\":\"B\"}", 1024, 0, "ok", 18, 0.01, gpu0, run1) ||
              put_row(r, B, "{\"b\":\"C\"}", 1024, 0, "ok", 10, 0.01, other, run1) ||
              put_row(r, B, "{\"b\":\"D\"}", 2000, 0, "ok", 5, 0.01, gpu0, run1) ||
              put_row(r, B, "{\"b\":\"E\"}", 1024, 1, "ok", 4, 0.01, gpu0, run1) ||
              put_row(r, B, "{\"b\":\"F\"}", 1024, 0, "wrong", 0, 0, gpu0, run1);
    CHECK(!bad, "seven rows put: %s", bad ? reg_errmsg(r) : "ok");

    measurement key, got, best[4];
    key_of(&key, B, "{\"b\":\"A\"}", gpu0);
    key.run = run2;
    int rc = reg_measure_find(r, &key, &got);
    CHECK(rc == 1 && got.median_us == 15 && got.spread == 0.05 && got.samples == 30 && got.device == gpu0 &&
              got.run == run2 && got.config != key.config && !strcmp(got.config, key.config) && !strcmp(got.status, "ok"),
          "find: the twin's newer row, with the key's config, device and run (rc %d, %g us, device %lld, run %lld)", rc,
          got.median_us, got.device, got.run);
    if (rc == 1) measurement_free(&got);
    key.device = other;
    rc = reg_measure_find(r, &key, &got);
    CHECK(rc == 0, "find: another hardware's GPU has no row of config A (rc %d)", rc);

    key.device = gpu0;
    int n = reg_measure_best(r, &key, 4, best);
    CHECK(n == 2 && !strcmp(best[0].config, "{\"b\":\"A\"}") && best[0].median_us == 15 && best[0].spread == 0.05 &&
              best[0].samples == 30 && !strcmp(best[1].config, "{\"b\":\"B\"}") && best[1].median_us == 18 &&
              !strcmp(best[0].status, "ok") && !best[0].stream && !strcmp(best[0].tmpl, "axpy/vec"),
          "best: A's fastest row (the twin's), then B; not another GPU's, shape's, timing's or a failure (%d: %s %g)", n,
          n > 0 ? best[0].config : "", n > 0 ? best[0].median_us : 0);
    for (int i = 0; i < n; i++) measurement_free(&best[i]);
    n = reg_measure_best(r, &key, 1, best);
    CHECK(n == 1 && best[0].median_us == 15, "best of 1: A only (%d)", n);
    for (int i = 0; i < n; i++) measurement_free(&best[i]);
    key.stream = 1;
    n = reg_measure_best(r, &key, 4, best);
    CHECK(n == 1 && !strcmp(best[0].config, "{\"b\":\"E\"}") && best[0].stream == 1, "best timed as a stream: E (%d)", n);
    for (int i = 0; i < n; i++) measurement_free(&best[i]);

    rows[0] = 0;
    CHECK(reg_measure_each(r, "axpy", row_text, NULL) == 0, "each: %s", reg_errmsg(r));
    CHECK_STR(rows, "A:1024}:15:0 B:1024}:18:0 C:1024}:10:0 D:2000}:5:0 F!:1024}:0:0e",
              "each: every config's newest row, timed as the task's newest (flush): no E");
    const char *all = "E:1024}:4:1 D:2000}:5:0 C:1024}:10:0 A:1024}:15:0 B:1024}:18:0 A:1024}:20:0 F!:1024}:0:0e";
    rows[0] = 0;
    CHECK(reg_bucket_measurements(r, "axpy", "sm_90", "f32", B, row_text, NULL) == 0, "bucket rows: %s", reg_errmsg(r));
    CHECK_STR(rows, all, "a bucket's rows: ok ones fastest first, then the failures");
    rows[0] = 0;
    CHECK(reg_bucket_measurements(r, "axpy", "sm_90", "f32", "n=2^10/1500", row_text, NULL) == 0, "part rows");
    CHECK_STR(rows, all, "a part's rows are its home's");
    reg_close(r);
    rm_db(p);
}

/* Collect reg_winners' order. */
static char order[512];
static int collect(const winner *w, void *ctx)
{
    int *n = ctx;
    size_t at = strlen(order);
    snprintf(order + at, sizeof order - at, "%s%s/%s", (*n)++ ? " " : "", w->dtype, w->bucket);
    return 0;
}
static int stop_after_two(const winner *w, void *ctx)
{
    (void)w;
    return ++*(int *)ctx >= 2;
}

static void test_order_defaults_cubins(void)
{
    reg *r;
    if (reg_open(path_in("sub/dir/reg.db"), 0, &r)) { CHECK(0, "reopen: %s", reg_errmsg(r)); reg_close(r); return; }
    int n = 0;
    order[0] = 0;
    CHECK(reg_winners(r, collect, &n) == 0 && n == 5, "reg_winners visits 5 winners (%d)", n);
    CHECK_STR(order, "bf16/n=2^20 f32/n=2^10 f32/n=2^11 f32/n=2^12 f32/n=2^20", "winners ordered by dtype, then bucket edges");
    n = 0;
    CHECK(reg_winners(r, stop_after_two, &n) == 0 && n == 2, "a callback returning non-zero stops the walk");

    CHECK(reg_default_put(r, "axpy", "sm_90", "f16", "axpy/vec", "{\"block\":256}", NULL, NULL) == 0, "reg_default_put");
    CHECK(reg_default_put(r, "axpy", "sm_90", "f16", "axpy/vec", "{\"block\":128}", NULL, NULL) == 0, "reg_default_put again replaces");
    sqlite3 *db;
    if (sqlite3_open_v2(reg_path(r), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        int count = -1;
        char cfg[64] = "";
        if (sqlite3_prepare_v2(db, "SELECT count(*), max(config) FROM defaults WHERE op='axpy' AND dtype='f16'", -1, &st, NULL) ==
            SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) {
                count = sqlite3_column_int(st, 0);
                snprintf(cfg, sizeof cfg, "%s", sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "");
            }
            sqlite3_finalize(st);
        }
        CHECK(count == 1 && !strcmp(cfg, "{\"block\":128}"), "one default row per (op, arch, dtype), the latest (%d, %s)", count, cfg);
    }
    sqlite3_close(db);
    /* A default with its kernel is not replaced by one without (a task
    ** restricted to a template whose default cannot run at its shapes). */
    CHECK(reg_default_put(r, "axpy", "sm_90", "f16", "axpy/vec", "{\"block\":64}", "0123456789abcdef", "{\"v\":2}") == 0,
          "a default with its kernel");
    CHECK(reg_default_put(r, "axpy", "sm_90", "f16", "axpy/tma", "{\"x\":1}", NULL, NULL) == 0, "then one without");
    if (sqlite3_open_v2(reg_path(r), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        char got[128] = "";
        if (sqlite3_prepare_v2(db, "SELECT template || ' ' || config || ' ' || coalesce(cubin, '-') FROM defaults "
                                   "WHERE op='axpy' AND dtype='f16'", -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) snprintf(got, sizeof got, "%s", (const char *)sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
        CHECK_STR(got, "axpy/vec {\"block\":64} 0123456789abcdef", "the default with a kernel stays");
    }
    sqlite3_close(db);

    /* Cubins: put, get, and the collision rule. */
    jit_job j;
    memset(&j, 0, sizeof j);
    j.source = "extern \"C\" __global__ void k() {}";
    snprintf(j.name, sizeof j.name, "k");
    snprintf(j.arch, sizeof j.arch, "sm_90a");
    unsigned char bin[300];
    for (int i = 0; i < 300; i++) bin[i] = (unsigned char)(i * 13);
    bin[5] = 0;
    j.cubin = bin;
    j.cubin_len = sizeof bin;
    j.ok = 1;
    j.registers = 24;
    j.spills = 8;
    j.smem = 1024;
    j.stack = 16;
    j.log = "ptxas info: Used 24 registers";
    j.ms = 33.5;
    /* The cache's key is the source's, name's and options' (checked when read). */
    char key[17];
    jit_key(j.source, j.name, j.arch, key);
    CHECK(reg_cubin_put(r, key, &j) == 0, "reg_cubin_put");
    jit_job q;
    memset(&q, 0, sizeof q);
    q.source = j.source;
    snprintf(q.name, sizeof q.name, "k");
    int rc = reg_cubin_get(r, key, &q);
    CHECK(rc == 1, "reg_cubin_get finds it (rc %d)", rc);
    if (rc == 1) {
        CHECK(q.ok == 1 && q.done == 1 && q.cubin_len == sizeof bin && !memcmp(q.cubin, bin, sizeof bin), "the cubin bytes round trip");
        CHECK(q.registers == 24 && q.spills == 8 && q.smem == 1024 && q.stack == 16 && q.ms == 33.5 && has(q.log, "Used 24"),
              "the ptxas report round trips");
        free(q.cubin);
        free(q.log);
    }
    memset(&q, 0, sizeof q);
    q.source = "extern \"C\" __global__ void k() { /* other */ }";
    snprintf(q.name, sizeof q.name, "k");
    rc = reg_cubin_get(r, key, &q);
    CHECK(rc == 0 && q.cubin == NULL && q.ok == 0, "same hash, different source: not found (collision rule)");
    memset(&q, 0, sizeof q);
    q.source = j.source;
    snprintf(q.name, sizeof q.name, "k2");
    rc = reg_cubin_get(r, key, &q);
    CHECK(rc == 0 && q.cubin == NULL, "same hash and source, different kernel name: not found");
    memset(&q, 0, sizeof q);
    q.source = j.source;
    snprintf(q.name, sizeof q.name, "k");
    CHECK(reg_cubin_get(r, "00000000000000bb", &q) == 0, "an unknown hash: not found");
    char *src = NULL, name[64] = "";
    rc = reg_cubin_source(r, key, &src, name, sizeof name);
    CHECK(rc == 1 && src && !strcmp(src, j.source) && !strcmp(name, "k"), "reg_cubin_source gives the source and kernel name");
    free(src);
    CHECK(reg_cubin_source(r, "00000000000000bb", &src, name, sizeof name) == 0, "reg_cubin_source of an unknown hash: 0");
    CHECK(reg_check(r) == 0, "reg_check is ok after the writes");
    reg_close(r);

    /* Read-only: reads work, writes fail with a message. */
    rc = reg_open(path_in("sub/dir/reg.db"), 1, &r);
    CHECK(rc == 0, "read-only open of an existing registry (%s)", rc ? reg_errmsg(r) : "ok");
    if (!rc) {
        winner g;
        CHECK(reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^11", &g) == 1, "read-only: reads work");
        winner_free(&g);
        rc = reg_default_put(r, "axpy", "sm_90", "f32", "axpy/vec", "{}", NULL, NULL);
        CHECK(rc == -1 && has(reg_errmsg(r), "reg.db"), "read-only: a write fails naming the registry: '%s'", reg_errmsg(r));
    }
    reg_close(r);
}

static void write_bytes(const char *p, const void *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
        printf("FAIL setup: cannot write %s\n", p);
        exit(1);
    }
}

static void test_bad_files(void)
{
    reg *r;
    /* Garbage bytes. */
    const char *g = path_in("garbage.db");
    unsigned char junk[4096];
    srand(7);
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
    write_bytes(g, junk, sizeof junk);
    int rc = reg_open(g, 0, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), g), "garbage file: reg_open fails naming the path: '%s'", reg_errmsg(r));
    CHECK(!strchr(reg_errmsg(r), '\n'), "garbage file: one line");
    reg_close(r);
    size_t len = 0;
    char *after = read_file(g, &len);
    CHECK(after && len == sizeof junk && !memcmp(after, junk, len), "garbage file: left byte-identical");
    free(after);
    rc = reg_open(g, 1, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), g), "garbage file read-only: fails naming the path: '%s'", reg_errmsg(r));
    reg_close(r);

    /* A SQLite file that is not a registry. */
    const char *o = path_in("other.db");
    sqlite3 *db;
    sqlite3_open(o, &db);
    sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", NULL, NULL, NULL);
    sqlite3_close(db);
    rc = reg_open(o, 0, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), "not an aitune registry"), "another SQLite db: '%s'", reg_errmsg(r));
    reg_close(r);

    /* A newer schema. */
    const char *nw = path_in("newer.db");
    rc = reg_open(nw, 0, &r);
    reg_close(r);
    sqlite3_open(nw, &db);
    sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", NULL, NULL, NULL);
    sqlite3_close(db);
    rc = reg_open(nw, 0, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), "newer") && has(reg_errmsg(r), "99") && has(reg_errmsg(r), nw),
          "schema_version 99: fails with 'newer': '%s'", reg_errmsg(r));
    reg_close(r);
    rc = reg_open(nw, 1, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), "newer"), "schema_version 99 read-only: fails too");
    reg_close(r);

    /* Read-only open of a missing file: fails, with a hint, and creates nothing. */
    const char *m = path_in("missing.db");
    rc = reg_open(m, 1, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), m) && has(reg_errmsg(r), "aitune sweep"), "read-only missing file fails with a hint: '%s'",
          reg_errmsg(r));
    reg_close(r);
    CHECK(!file_exists(m), "read-only open created no file");
    /* An empty file is not a registry when read-only. */
    const char *e = path_in("empty.db");
    write_bytes(e, "", 0);
    rc = reg_open(e, 1, &r);
    CHECK(rc == -1 && has(reg_errmsg(r), "empty"), "read-only empty file: '%s'", reg_errmsg(r));
    reg_close(r);
    /* A path whose folder cannot be made. */
    rc = reg_open("/proc/aitune-test/x/reg.db", 0, &r);
    CHECK(rc == REG_NOTWRITABLE && has(reg_errmsg(r), "/proc/aitune-test/x/reg.db"), "an uncreatable folder: '%s'",
          reg_errmsg(r));
    reg_close(r);
    reg_close(NULL);
    rm_db(g);
    rm_db(o);
    rm_db(nw);
    rm_db(e);
}

static void test_two_handles(void)
{
    const char *p = path_in("shared.db");
    reg *a, *b;
    int ra = reg_open(p, 0, &a), rb = reg_open(p, 0, &b);
    CHECK(ra == 0 && rb == 0, "two handles on one registry (%s / %s)", ra ? reg_errmsg(a) : "ok", rb ? reg_errmsg(b) : "ok");
    if (ra || rb) { reg_close(a); reg_close(b); return; }
    sqlite3 *db;
    char mode[16] = "";
    if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) snprintf(mode, sizeof mode, "%s", sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    CHECK(!strcmp(mode, "wal"), "the registry is in WAL mode (%s)", mode);
    int fails = 0;
    for (int i = 0; i < 50; i++) {
        char cfg[64];
        measurement m;
        snprintf(cfg, sizeof cfg, "{\"block\":%d}", i);
        key_of(&m, "n=2^10", cfg, 0);
        snprintf(m.status, sizeof m.status, "ok");
        m.median_us = i;
        fails += reg_measure_put(i % 2 ? a : b, &m) != 0;
    }
    CHECK(fails == 0, "interleaved writes from both handles succeed (%d failed)", fails);
    measurement k, got;
    key_of(&k, "n=2^10", "{\"block\":49}", 0);
    CHECK(reg_measure_find(b, &k, &got) == 1 && got.median_us == 49, "a handle sees the other's writes");
    measurement_free(&got);
    key_of(&k, "n=2^10", "{\"block\":0}", 0);
    CHECK(reg_measure_find(a, &k, &got) == 1 && got.median_us == 0, "and the other way round");
    measurement_free(&got);
    /* A reader holding a transaction open does not block writers (WAL). */
    sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL);
    sqlite3_exec(db, "BEGIN; SELECT count(*) FROM measurements;", NULL, NULL, NULL);
    measurement m;
    key_of(&m, "n=2^11", "{\"block\":1}", 0);
    snprintf(m.status, sizeof m.status, "ok");
    double t0 = now_s();
    CHECK(reg_measure_put(a, &m) == 0 && now_s() - t0 < 2, "a write goes through while a reader holds a transaction");
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    reg_close(a);
    reg_close(b);
    rm_db(p);
}

/* Several processes create the same new registry at once (parallel shards
** on one path): each open succeeds and each write lands. */
static void test_concurrent_create(int round)
{
    char name[32];
    snprintf(name, sizeof name, "race%d.db", round);
    const char *p = path_in(name);
    enum { N = 8 };
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            reg *r;
            if (reg_open(p, 0, &r)) {
                fprintf(stderr, "child %d: %s\n", i, reg_errmsg(r));
                _exit(1);
            }
            char cfg[32];
            snprintf(cfg, sizeof cfg, "{\"child\":%d}", i);
            measurement m;
            key_of(&m, "n=2^10", cfg, 0);
            snprintf(m.status, sizeof m.status, "ok");
            int rc = reg_measure_put(r, &m);
            if (rc) fprintf(stderr, "child %d: %s\n", i, reg_errmsg(r));
            reg_close(r);
            _exit(rc ? 2 : 0);
        }
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    CHECK(bad == 0, "round %d: %d processes creating one registry at once all open and write (%d failed)", round, N, bad);
    reg *r;
    if (!reg_open(p, 1, &r)) {
        int found = 0;
        for (int i = 0; i < N; i++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "{\"child\":%d}", i);
            measurement k, got;
            key_of(&k, "n=2^10", cfg, 0);
            if (reg_measure_find(r, &k, &got) == 1) { found++; measurement_free(&got); }
        }
        CHECK(found == N, "every process's row is there (%d of %d)", found, N);
        CHECK(reg_check(r) == 0, "and the registry passes its integrity check");
    } else {
        CHECK(0, "reopen the raced registry: %s", reg_errmsg(r));
    }
    reg_close(r);
    rm_db(p);
}

/* A winner of bucket (key, lo, hi) of axpy f32 on device dev. */
static void split_row(winner *w, const char *key, long long lo, long long hi, const char *config, long long dev)
{
    memset(w, 0, sizeof *w);
    snprintf(w->op, sizeof w->op, "axpy");
    snprintf(w->arch, sizeof w->arch, "sm_90");
    snprintf(w->dtype, sizeof w->dtype, "f32");
    snprintf(w->bucket, sizeof w->bucket, "%s", key);
    snprintf(w->dims, sizeof w->dims, "n");
    snprintf(w->lo, sizeof w->lo, "%lld", lo);
    snprintf(w->hi, sizeof w->hi, "%lld", hi);
    snprintf(w->shape, sizeof w->shape, "{\"n\":%lld}", lo);
    snprintf(w->tmpl, sizeof w->tmpl, "axpy/vec");
    w->config = (char *)config;
    w->median_us = 10;
    w->margin = -1;
    w->runners_up = "[]";
    w->launch = "{}";
    w->device = dev;
}

static int family_keys(reg *r, const char *home, const char *hw, char *out, size_t cap)
{
    winner *ws;
    int n;
    out[0] = 0;
    if (reg_winner_family(r, "axpy", "sm_90", "f32", home, hw, &ws, &n)) return -1;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? " " : "", ws[i].bucket);
        winner_free(&ws[i]);
    }
    free(ws);
    return n;
}

/* A split bucket's parts (spec split_at) replace its winner of the same
** hardware in one transaction, and its winner them; other hardware's and
** other buckets' rows stay. */
static void test_split_parts(void)
{
    const char *p = path_in("split.db");
    reg *r;
    if (reg_open(p, 0, &r)) { CHECK(0, "open %s: %s", p, reg_errmsg(r)); reg_close(r); return; }
    device a, b;
    fake_device(&a, "GPU-A");
    fake_device(&b, "GPU-B");
    snprintf(b.name, sizeof b.name, "Other GPU");
    long long da = 0, db = 0;
    CHECK(reg_device(r, &a, &da) == 0 && reg_device(r, &b, &db) == 0, "two devices");
    winner w, parts[2];
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":0}", da);
    CHECK(reg_winner_put(r, &w) == 0, "the whole bucket on GPU A");
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":9}", db);
    CHECK(reg_winner_put(r, &w) == 0, "and on GPU B");
    split_row(&w, "n=2^1", 2, 4, "{\"v\":1}", da);
    CHECK(reg_winner_put(r, &w) == 0, "a bucket whose key is a prefix of it");
    split_row(&parts[0], "n=2^12/2^12", 4096, 5760, "{\"v\":2}", da);
    split_row(&parts[1], "n=2^12/5760", 5760, 8192, "{\"v\":3}", da);
    CHECK(reg_winners_put(r, "n=2^12", parts, 2) == 0, "GPU A's parts: %s", reg_errmsg(r));
    char keys[256];
    int n = family_keys(r, "n=2^12", NULL, keys, sizeof keys);
    CHECK(n == 3 && strstr(keys, "n=2^12/2^12 n=2^12/5760") && strstr(keys, "n=2^12"), "the family: A's parts and B's whole (%s)", keys);
    winner g;
    CHECK(reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^1", &g) == 1, "the prefix bucket stays");
    winner_free(&g);
    winner *all;
    int na;
    CHECK(reg_winners_of(r, "axpy", "sm_90", "f32", &all, &na) == 0 && na == 4, "4 rows: A's two parts, B's whole, n=2^1 (%d)", na);
    int whole_a = 0;
    for (int i = 0; i < na; i++) {
        whole_a += !strcmp(all[i].bucket, "n=2^12") && all[i].device == da;
        winner_free(&all[i]);
    }
    free(all);
    CHECK(!whole_a, "GPU A's whole winner is gone");
    /* Stored whole again: the parts go. */
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":4}", da);
    CHECK(reg_winner_put(r, &w) == 0, "A's whole winner again");
    n = family_keys(r, "n=2^12", NULL, keys, sizeof keys);
    CHECK(n == 2 && !strstr(keys, "/"), "the parts are gone, both whole winners left (%s)", keys);
    /* A failed write leaves the family as it was. */
    split_row(&parts[1], "n=2^12/5760", 5760, 8192, NULL, da);   /* config NOT NULL: the insert fails */
    CHECK(reg_winners_put(r, "n=2^12", parts, 2) == -1, "a part that cannot be stored fails the write");
    n = family_keys(r, "n=2^12", NULL, keys, sizeof keys);
    CHECK(n == 2 && !strstr(keys, "/"), "and nothing is half-written (%s)", keys);
    reg_close(r);
    rm_db(p);
}

/* reg_begin / reg_rollback / reg_commit around a run, reg_winners_put and
** reg_decided_move (pin.c's one transaction); a negative margin (a pin)
** stored as it is, -1 as none. */
static void test_transaction(void)
{
    const char *p = path_in("tx.db");
    reg *r;
    if (reg_open(p, 0, &r)) { CHECK(0, "open %s: %s", p, reg_errmsg(r)); reg_close(r); return; }
    device a;
    fake_device(&a, "GPU-A");
    long long da = 0, run1 = 0, run2 = 0;
    CHECK(reg_device(r, &a, &da) == 0 && reg_run_begin(r, "sweep", NULL, 0, da, "{}", &run1) == 0, "a device and a run");
    winner w;
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":0}", da);
    w.run = run1;
    CHECK(reg_winner_put(r, &w) == 0, "a winner");
    int winners = 0, moved = 0;
    CHECK(reg_decided_put(r, "axpy", "sm_90", "f32", "n=2^12", "hwA", "basis", run1, &winners) == 0, "decided: %s",
          reg_errmsg(r));
    /* Rolled back: nothing of it stays. */
    CHECK(reg_begin(r) == 0, "begin");
    CHECK(reg_run_begin(r, "pin", NULL, 0, da, "{}", &run2) == 0, "a run inside");
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":1}", da);
    w.run = run2;
    CHECK(reg_winners_put(r, "n=2^12", &w, 1) == 0, "winners_put nests inside: %s", reg_errmsg(r));
    CHECK(reg_decided_move(r, "axpy", "sm_90", "f32", "n=2^12", "hwA", run1, run2, &moved) == 0 && moved, "moved");
    reg_rollback(r);
    winner g;
    CHECK(reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^12", &g) == 1 && has(g.config, "\"v\":0"), "rolled back: the old winner");
    winner_free(&g);
    long long last = 0;
    CHECK(reg_run_last(r, &last) == 0 && last == run1, "rolled back: no run (%lld)", last);
    /* Committed: all of it. */
    CHECK(reg_begin(r) == 0 && reg_run_begin(r, "pin", NULL, 0, da, "{}", &run2) == 0, "begin again");
    w.run = run2;
    w.margin = -0.25;
    CHECK(reg_winners_put(r, "n=2^12", &w, 1) == 0, "winners_put");
    CHECK(reg_decided_move(r, "axpy", "sm_90", "f32", "n=2^12", "hwA", 999, run2, &moved) == 0 && !moved,
          "a decision of another run is not moved");
    CHECK(reg_decided_move(r, "axpy", "sm_90", "f32", "n=2^12", "hwA", run1, run2, &moved) == 0 && moved, "moved");
    CHECK(reg_commit(r) == 0, "commit");
    CHECK(reg_winner_get(r, "axpy", "sm_90", "f32", "n=2^12", &g) == 1 && has(g.config, "\"v\":1") && g.run == run2 &&
          g.margin < -0.24 && g.margin > -0.26, "committed: the new winner, its run, its negative margin (%g)", g.margin);
    winner_free(&g);
    reg_close(r);
    rm_db(p);
}

static int hw_of(const reg_winner_identity *w, void *ctx)
{
    snprintf(ctx, 256, "%s", w->hw);
    return 1;
}

/* A pin's hand-over of the sweep's decision: the decision stands for the
** pinned row (its run the pin's), as a sweep run again reads it. */
static void test_decided_move(void)
{
    const char *p = path_in("moved.db");
    reg *r;
    if (reg_open(p, 0, &r)) { CHECK(0, "open %s: %s", p, reg_errmsg(r)); reg_close(r); return; }
    device a;
    fake_device(&a, "GPU-A");
    long long da = 0, run1 = 0, run2 = 0, drun = 0;
    CHECK(reg_device(r, &a, &da) == 0 && reg_run_begin(r, "sweep", NULL, 0, da, "{}", &run1) == 0 &&
          reg_run_begin(r, "pin", NULL, 0, da, "{}", &run2) == 0, "a device and two runs");
    winner w;
    split_row(&w, "n=2^12", 4096, 8192, "{\"v\":0}", da);
    w.run = run1;
    CHECK(reg_winner_put(r, &w) == 0, "the sweep's winner");
    char hw[256] = "";
    reg_winner_identities(r, hw_of, hw);
    int winners = 0, moved = 0;
    CHECK(reg_decided_put(r, "axpy", "sm_90", "f32", "n=2^12", hw, "basis", run1, &winners) == 0 && winners == 1, "decided");
    w.run = run2;
    CHECK(reg_winner_put(r, &w) == 0, "the pin's winner");
    CHECK(reg_decided_get(r, "axpy", "sm_90", "f32", "n=2^12", hw, "basis", &drun, &winners) == 0,
          "the decision does not stand for a row another run wrote");
    CHECK(reg_decided_move(r, "axpy", "sm_90", "f32", "n=2^12", hw, run1, run2, &moved) == 0 && moved, "handed to the pin");
    CHECK(reg_decided_get(r, "axpy", "sm_90", "f32", "n=2^12", hw, "basis", &drun, &winners) == 1 && drun == run2,
          "it stands again, the pin's run (%lld)", drun);
    reg_close(r);
    rm_db(p);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/aitune-test-reg-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL setup: mkdtemp\n");
        return 1;
    }
    test_roundtrip();
    test_measure_queries();
    test_order_defaults_cubins();
    test_bad_files();
    test_two_handles();
    test_split_parts();
    test_transaction();
    test_decided_move();
    for (int round = 1; round <= 5; round++) test_concurrent_create(round);
    rm_db(path_in("sub/dir/reg.db"));
    rmdir(path_in("sub/dir"));
    rmdir(path_in("sub"));
    rmdir(dir);
    CHECK_DONE();
}
