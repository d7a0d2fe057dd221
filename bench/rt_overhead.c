/*
** rt_overhead: libaitune's host-side costs at scale, without a GPU.
**
**     make build/bench/rt_overhead && build/bench/rt_overhead db/schema.sql [N]
**
** Builds a registry of N winners (default 10000: 10 ops x 3 dtypes x 2 archs,
** each a 2-D grid of log2 buckets, each measured on one GPU) in a temporary
** file, then reports the median over 7 handles of aitune_open, of the first
** lookup of each (op, arch, dtype) (which reads that set's winners), and of
** open plus reading all 60 sets; then the median cost of one aitune_lookup
** with every set loaded (exact answers, shapes spread over the buckets;
** batches of 10000, 21 batches), and the same for nearest answers (misses).
** Last, the host cost of binding a softmax launch plan (plan_bind: what
** aitune_launch adds before cuLaunchKernel, less its context check).
*/
#define _GNU_SOURCE
#include "aitune.h"
#include "plan.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rt_overhead SCHEMA.sql [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 10000;
    char path[] = "/tmp/aitune-rt-overhead-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    static char schema[1 << 16];
    schema[fread(schema, 1, sizeof schema - 1, f)] = 0;
    fclose(f);
    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_exec(db, schema, NULL, NULL, NULL);
    sqlite3_exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '3'); BEGIN", NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, "
                           "median_us, launch) VALUES (?,?,?,?,'NVIDIA H100 80GB HBM3|sm_90|132 SMs|85045231616 B|L2 52428800 B',"
                           "'rows,cols',?,?,?,'t/x','{\"block\":256}',1.0,'{}')",
                       -1, &st, NULL);
    static const char *dts[] = { "bf16", "f16", "f32" }, *archs[] = { "sm_90", "sm_100" };
    int per = n / 60 > 0 ? n / 60 : 1, side = 1;
    while (side * side < per) side++;
    int made = 0;
    for (int o = 0; o < 10; o++)
        for (int d = 0; d < 3; d++)
            for (int a = 0; a < 2; a++)
                for (int i = 0; i < per && made < n; i++, made++) {
                    char op[16], bucket[64], lo[64], hi[64];
                    snprintf(op, sizeof op, "op%d", o);
                    int r = i / side, c = i % side;
                    snprintf(bucket, sizeof bucket, "rows=2^%d,cols=2^%d", r, c);
                    snprintf(lo, sizeof lo, "%lld,%lld", 1LL << r, 1LL << c);
                    snprintf(hi, sizeof hi, "%lld,%lld", 2LL << r, 2LL << c);
                    sqlite3_bind_text(st, 1, op, -1, SQLITE_TRANSIENT);
                    sqlite3_bind_text(st, 2, archs[a], -1, SQLITE_STATIC);
                    sqlite3_bind_text(st, 3, dts[d], -1, SQLITE_STATIC);
                    sqlite3_bind_text(st, 4, bucket, -1, SQLITE_TRANSIENT);
                    sqlite3_bind_text(st, 5, lo, -1, SQLITE_TRANSIENT);
                    sqlite3_bind_text(st, 6, hi, -1, SQLITE_TRANSIENT);
                    /* Tuned at its lower corner: the runtime reads each
                    ** winner's alignment classes from its shape. */
                    char shape[96];
                    snprintf(shape, sizeof shape, "{\"rows\":%lld,\"cols\":%lld}", 1LL << r, 1LL << c);
                    sqlite3_bind_text(st, 7, shape, -1, SQLITE_TRANSIENT);
                    sqlite3_step(st);
                    sqlite3_reset(st);
                }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);

    double t[21], tfirst[7], tall[7];
    aitune *h = NULL;
    for (int i = 0; i < 7; i++) {
        aitune_close(h);
        double t0 = now();
        if (aitune_open(path, &h) != AITUNE_OK) { fprintf(stderr, "%s\n", aitune_errmsg(h)); return 1; }
        double t1 = now();
        /* The first lookup of every set reads its winners. */
        int sets = 0;
        for (int o = 0; o < 10; o++)
            for (int d = 0; d < 3; d++)
                for (int a = 0; a < 2; a++, sets++) {
                    char op[16];
                    snprintf(op, sizeof op, "op%d", o);
                    long long shape[2] = { 1, 1 };
                    aitune_choice ch;
                    if (aitune_lookup(h, op, archs[a], dts[d], shape, 2, &ch) != AITUNE_OK) {
                        fprintf(stderr, "%s\n", aitune_errmsg(h));
                        return 1;
                    }
                }
        double t2 = now();
        t[i] = t1 - t0;
        tfirst[i] = (t2 - t1) / sets;
        tall[i] = t2 - t0;
    }
    int count = 0;
    aitune_count(h, &count);
    printf("winners in the registry: %d (%d per op/arch/dtype)\n", count, per);
    printf("aitune_open: %.2f ms median of 7\n", median(t, 7) * 1e3);
    printf("first lookup of a set (reads its %d winners): %.0f us median of 7\n", per, median(tfirst, 7) * 1e6);
    printf("aitune_open + the first lookup of all 60 sets: %.2f ms median of 7\n", median(tall, 7) * 1e3);
    /* The queries are built before the clock starts, so a batch times the
    ** lookups only, not the arithmetic that picks the next shape. */
    enum { Q = 10000 };
    static long long shapes[2][Q][2];
    static const char *qop[Q], *qarch[Q], *qdt[Q];
    static char opnames[10][8];
    for (int o = 0; o < 10; o++) snprintf(opnames[o], sizeof opnames[o], "op%d", o);
    for (int i = 0; i < Q; i++) {
        int r = (i * 7) % side, c = (i * 13) % side;
        shapes[0][i][0] = shapes[1][i][0] = (1LL << r) + i % 3;
        shapes[0][i][1] = (1LL << c) + 1;
        shapes[1][i][1] = 1LL << (side + 3);
        qop[i] = opnames[i % 10];
        qarch[i] = archs[i & 1];
        qdt[i] = dts[i % 3];
    }
    for (int kind = 0; kind < 2; kind++) {
        long long sink = 0;
        for (int b = 0; b < 21; b++) {
            aitune_choice ch;
            double t0 = now();
            for (int i = 0; i < Q; i++) {
                aitune_lookup(h, qop[i], qarch[i], qdt[i], shapes[kind][i], 2, &ch);
                sink += ch.level;
            }
            t[b] = (now() - t0) / Q;
        }
        printf("aitune_lookup (%s): %.0f ns median of 21 batches of %d (levels seen: %lld)\n",
               kind ? "nearest, a miss" : "exact", median(t, 21) * 1e9, Q, sink);
    }
    plan *pl = NULL;
    char err[512];
    if (plan_decode("{\"v\":2,\"kernel\":\"aitune_softmax_1a2b3c4d\",\"dims\":[\"rows\",\"cols\"],"
                    "\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"rows * cols\"},"
                    "{\"name\":\"y\",\"role\":\"out\",\"dtype\":\"bf16\",\"size\":\"rows * cols\"},"
                    "{\"name\":\"rows\",\"role\":\"dim\"},{\"name\":\"cols\",\"role\":\"dim\"}],"
                    "\"grid\":[\"cdiv(rows, 4)\",\"1\",\"1\"],\"block\":[\"128\",\"1\",\"1\"],"
                    "\"cluster\":[\"1\",\"1\",\"1\"],\"smem\":\"0\",\"params\":[{\"kind\":\"ptr\",\"arg\":\"x\"},"
                    "{\"kind\":\"ptr\",\"arg\":\"y\"},{\"kind\":\"dim\",\"expr\":\"rows\"},"
                    "{\"kind\":\"dim\",\"expr\":\"cols\"}]}", &pl, err, sizeof err)) {
        fprintf(stderr, "plan: %s\n", err);
        return 1;
    }
    static plan_launch L;
    plan_value args[4] = { { .ptr = 1 << 20 }, { .ptr = 2 << 20 }, { 0 }, { 0 } };
    long long shape[2] = { 4096, 1024 };
    for (int b = 0; b < 21; b++) {
        double t0 = now();
        for (int i = 0; i < Q; i++)
            if (plan_bind(pl, shape, args, 0, NULL, &L, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
        t[b] = (now() - t0) / Q;
    }
    printf("plan_bind (softmax plan, 4 params): %.0f ns median of 21 batches of %d\n", median(t, 21) * 1e9, Q);
    plan_free(pl);
    aitune_close(h);
    if (getenv("KEEP")) printf("kept %s\n", path);
    else unlink(path);
    return 0;
}
