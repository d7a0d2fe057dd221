/*
** space_start: what a search costs before its first candidate, CPU only: the
** time to build a template's space for one task (search_new) and ask for the
** first batch of 8 (search_ask), per strategy, median of a few runs, with the
** space's size and the configs rejected by then. Not in `all`:
**
**     make build/bench/space_start && build/bench/space_start [REPO_ROOT] [REPS]
*/
#define _GNU_SOURCE
#include "device.h"
#include "search.h"
#include "tmpl.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char *op, *dtype, *tname;
    long long shape[3];
} space_case;

/* The spaces of the memory landscapes and the GEMM ones (tests/sim/landscapes). */
static const space_case cases[] = {
    { "softmax", "bf16", "softmax/hold", { 1 << 14, 1 << 12 } },
    { "softmax", "bf16", "softmax/stream", { 1 << 14, 1 << 12 } },
    { "rmsnorm", "bf16", "rmsnorm/hold", { 1 << 14, 1 << 13 } },
    { "gemm_nt", "bf16", "gemm_nt/gemv", { 16, 4096, 4096 } },
    { "gemm_nn", "bf16", "gemm_nn/wgmma", { 2048, 2048, 2048 } },
    { "gemm_nt", "bf16", "gemm_nt/mma", { 4096, 4096, 4096 } },
};
static const char *strategies[] = { "exhaustive", "random", "model", "anneal" };

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : AITUNE_SOURCE_DIR;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1 || reps > 99) reps = 5;
    device dev;
    if (device_assume("sm_90", &dev)) return 1;
    tmpl *T = tmpl_open(root);
    printf("%-16s %-10s %9s %9s %11s %11s\n", "template", "strategy", "size", "rejected", "start ms", "(min..max)");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const space_case *k = &cases[c];
        op_task t;
        if (tmpl_task(T, k->op, k->dtype, k->shape, &t)) {
            fprintf(stderr, "space_start: %s\n", tmpl_errmsg(T));
            return 1;
        }
        for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
            double ms[99];
            int size = 0, nrej = 0;
            for (int r = 0; r < reps; r++) {
                double t0 = now_ms();
                search *se = search_new(T, strategies[s], k->tname, &t, &dev, 1, 64);
                char **cfgs = NULL;
                int got = 0;
                if (!se || search_ask(se, 8, &cfgs, &got) || got < 1) {
                    fprintf(stderr, "space_start: %s %s: %s\n", k->tname, strategies[s], tmpl_errmsg(T));
                    return 1;
                }
                ms[r] = now_ms() - t0;
                size = search_size(se);
                nrej = search_nrejected(se);
                for (int i = 0; i < got; i++) free(cfgs[i]);
                free(cfgs);
                search_free(se);
            }
            qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
            printf("%-16s %-10s %9d %9d %11.2f  (%.2f..%.2f)\n", k->tname, strategies[s], size, nrej, ms[reps / 2], ms[0],
                   ms[reps - 1]);
        }
    }
    tmpl_close(T);
    return 0;
}
