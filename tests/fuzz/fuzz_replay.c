/* fuzz_replay.c: libFuzzer harness for the landscape reader (replay.c:
** replay_load), which `aitune replay` runs on files recorded elsewhere or
** written by hand, and for the metric's pure functions on what it read.
**
** The input is the file. What must hold: replay_load returns 0 or -1 with
** one line in err; what it returns is whole: every landscape's key fits its
** fields, every row has a known status, a config that starts with '{',
** finite times (positive when ok), counts >= 0, and no config twice in one
** landscape; replay_values and replay_random_expected over each landscape
** give finite numbers, the expected best never below the optimum. */
#define _GNU_SOURCE
#include "replay.h"
#include "util.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], path[96];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/aitune-fuzz-replay-%d", base, (int)getpid());
    snprintf(path, sizeof path, "%s/in.tsv", dir);
    if (mkdir(dir, 0700) && access(dir, W_OK)) abort();
    atexit(cleanup);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mkdir(dir, 0700);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    landscape *ls;
    int n;
    char err[512] = "";
    if (replay_load(path, &ls, &n, err, sizeof err)) {
        if (!err[0] || strchr(err, '\n')) { fprintf(stderr, "fuzz_replay: a failure without one line\n"); abort(); }
        return 0;
    }
    for (int i = 0; i < n; i++) {
        landscape *l = &ls[i];
        if (strlen(l->op) >= sizeof l->op || strlen(l->bucket) >= sizeof l->bucket || l->n < 1) abort();
        char **cfg = malloc(sizeof *cfg * (size_t)l->n);
        for (int r = 0; r < l->n; r++) {
            land_row *w = &l->rows[r];
            int ok = !strcmp(w->status, "ok");
            if (!ok && strcmp(w->status, "compile") && strcmp(w->status, "runtime") && strcmp(w->status, "timeout") &&
                strcmp(w->status, "wrong"))
                abort();
            if (!w->config || w->config[0] != '{') abort();
            if (!isfinite(w->time_us) || (ok && !(w->time_us > 0)) || !isfinite(w->compile_ms) || w->compile_ms < 0)
                abort();
            if (w->registers < 0 || w->spills < 0 || w->smem < 0) abort();
            cfg[r] = w->config;
        }
        qsort(cfg, (size_t)l->n, sizeof *cfg, cmp_str);
        for (int r = 1; r < l->n; r++)
            if (!strcmp(cfg[r - 1], cfg[r])) { fprintf(stderr, "fuzz_replay: a config twice\n"); abort(); }
        free(cfg);
        double *value = malloc(sizeof *value * (size_t)l->n), *exp = malloc(sizeof *exp * (size_t)l->n);
        double opt = replay_values(l, value);
        replay_random_expected(value, l->n, exp);
        for (int k = 0; k < l->n; k++)
            if (!isfinite(value[k]) || !isfinite(exp[k]) || exp[k] < opt * (1 - 1e-9) - 1e-9) {
                fprintf(stderr, "fuzz_replay: value %g, expected best %g, optimum %g\n", value[k], exp[k], opt);
                abort();
            }
        free(value);
        free(exp);
    }
    replay_free(ls, n);
    return 0;
}
