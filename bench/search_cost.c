/*
** search_cost: the CPU a whole search costs its sweep, no GPU: one template's
** search for one gemm_nt bf16 task (strategy, default model), asked 8 at a
** time and told a made-up time for each, until it has told N (default 48,
** tune's max_evals); the wall time of its asks and tells, the configs its
** space rejected on the way and the space's size (the domain's product until
** a walk completed, then the valid count). ROOT names another tree's
** templates/ and search/ (an A/B of template changes). Not in `all`:
**
**     make build/bench/search_cost
**     build/bench/search_cost TEMPLATE M [N K [STRATEGY [EVALS]]]
**     ROOT=/tmp/old build/bench/search_cost gemm_nt/swapab 40
*/
#define _GNU_SOURCE
#include "device.h"
#include "search.h"
#include "tmpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: search_cost TEMPLATE M [N K [STRATEGY [EVALS]]]\n");
        return 2;
    }
    const char *tname = argv[1];
    long long shape[3] = { atoll(argv[2]), argc > 3 ? atoll(argv[3]) : 4096, argc > 4 ? atoll(argv[4]) : 4096 };
    const char *strategy = argc > 5 ? argv[5] : "model";
    int evals = argc > 6 ? atoi(argv[6]) : 48;
    device dev;
    if (device_assume("sm_90", &dev)) return 1;
    tmpl *T = tmpl_open(getenv("ROOT") ? getenv("ROOT") : AITUNE_SOURCE_DIR);
    op_task t;
    if (tmpl_task(T, "gemm_nt", "bf16", shape, &t)) {
        fprintf(stderr, "search_cost: %s\n", tmpl_errmsg(T));
        return 1;
    }
    double t0 = now_ms(), ask = 0, tell = 0;
    search *se = search_new(T, strategy, tname, &t, &dev, 1, evals);
    if (!se) {
        fprintf(stderr, "search_cost: %s\n", tmpl_errmsg(T));
        return 1;
    }
    int told = 0;
    unsigned r = 1;
    while (told < evals) {
        char **cfgs = NULL;
        int got = 0;
        double a = now_ms();
        if (search_ask(se, 8, &cfgs, &got)) {
            fprintf(stderr, "search_cost: ask: %s\n", tmpl_errmsg(T));
            return 1;
        }
        ask += now_ms() - a;
        if (got < 1) break;
        for (int i = 0; i < got; i++) {
            r = r * 1103515245u + 12345u;       /* a made-up time: 10-20 us */
            double b = now_ms();
            search_tell(se, cfgs[i], "ok", 10.0 + (r >> 16) % 1000 / 100.0);
            tell += now_ms() - b;
            free(cfgs[i]);
            told++;
        }
        free(cfgs);
    }
    printf("%s %lldx%lldx%lld %s: %d told, %.0f ms (asks %.0f, tells %.0f), %d rejected, size %d\n", tname, shape[0],
           shape[1], shape[2], strategy, told, now_ms() - t0, ask, tell, search_nrejected(se), search_size(se));
    search_free(se);
    tmpl_close(T);
    return 0;
}
