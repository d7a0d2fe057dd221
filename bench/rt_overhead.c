/*
** rt_overhead: libaitune's host-side costs at scale, without a GPU.
**
**     make build/bench/rt_overhead && build/bench/rt_overhead db/schema.sql [N]
**
** Builds a registry of N winners (default 10000: 10 ops x 3 dtypes x 2 archs,
** each a 2-D grid of log2 buckets) in a temporary file, then reports the
** median of aitune_open over 7 opens and the median cost of one
** aitune_lookup (exact answers, shapes spread over the buckets; batches of
** 10000, 21 batches), and the same for nearest answers (misses).
*/
#define _GNU_SOURCE
#include "aitune.h"

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
    sqlite3_exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '2'); BEGIN", NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, "
                           "median_us, launch) VALUES (?,?,?,?,'rows,cols',?,?,'{}','t/x','{\"block\":256}',1.0,'{}')",
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
                    sqlite3_step(st);
                    sqlite3_reset(st);
                }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);

    double t[21];
    aitune *h = NULL;
    for (int i = 0; i < 7; i++) {
        double t0 = now();
        aitune_close(h);
        if (aitune_open(path, &h) != AITUNE_OK) { fprintf(stderr, "%s\n", aitune_errmsg(h)); return 1; }
        t[i] = now() - t0;
    }
    int count = 0;
    aitune_count(h, &count);
    printf("winners loaded: %d (%d per op/arch/dtype)\n", count, per);
    printf("aitune_open: %.2f ms median of 7\n", median(t, 7) * 1e3);
    for (int kind = 0; kind < 2; kind++) {
        long long sink = 0;
        for (int b = 0; b < 21; b++) {
            aitune_choice ch;
            double t0 = now();
            for (int i = 0; i < 10000; i++) {
                int r = (i * 7) % side, c = (i * 13) % side;
                long long shape[2] = { (1LL << r) + i % 3, kind ? (1LL << (side + 3)) : (1LL << c) + 1 };
                char op[8] = "op0";
                op[2] = (char)('0' + i % 10);
                aitune_lookup(h, op, archs[i & 1], dts[i % 3], shape, 2, &ch);
                sink += ch.level;
            }
            t[b] = (now() - t0) / 10000;
        }
        printf("aitune_lookup (%s): %.0f ns median of 21 batches of 10000 (levels seen: %lld)\n",
               kind ? "nearest, a miss" : "exact", median(t, 21) * 1e9, sink);
    }
    aitune_close(h);
    if (getenv("KEEP")) printf("kept %s\n", path);
    else unlink(path);
    return 0;
}
