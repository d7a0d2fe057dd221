/*
** kernel_sample: a fixed sample of template instances, their CUDA sources and
** their compiles, so a change to the templates or to the NVRTC options can be
** checked against what came before. No GPU; sm_90a's assumed device facts.
**
**   kernel_sample list [-n N] SPEC...
**       One line per instance, tab-separated: template, dtype, shape (the
**       op's dims in order, comma-separated), kind ("default" or "sample"),
**       config. For every task, dtype and bucket of the specs (at the size
**       the bucket tunes) and every template the task uses that supports
**       it: the default, then N configs (default 2) of a seeded random
**       search over the template's space. A line's fields are what the rest
**       reads; a list is written once and kept (tests/fixtures).
**
**   kernel_sample sources [-c] [-o DIR] LIST
**       Instantiates every line of LIST (a list's lines; a trailing column
**       is ignored) and prints it with a sixth column: the 16-hex hash of
**       its source. A "default" line's config must still be the template's
**       default; if not, the line says "default-changed" in the hash's
**       place. -c: a config the template's params or constraints refuse at
**       the line's shape (no candidate a sweep would compile) is not
**       instantiated, and stderr says why (without -c a list kept from
**       before a param was added still instantiates). -o DIR: each source
**       also goes to DIR/<line number>.cu. Exit 0 when every line
**       instantiated, 1 otherwise.
**
**   kernel_sample compile [-o DIR] LIST
**       Compiles every line of LIST with the options aitune uses (jit.c),
**       in this process, one after another, after one warm-up compile (so
**       NVRTC's start-up is not counted; a tuning helper pays it once).
**       Prints per line: template, dtype, shape, kind, config, then
**       "regs spills smem stack", the CPU seconds of the compile (user +
**       sys of this process, not wall time: the machine may be loaded) and
**       the wall seconds. -o DIR: each cubin goes to DIR/<line number>.cubin.
**       Exit 0 when every line compiled, 1 otherwise.
**
** The kernel is named as a sweep names it (aitune_<op>_<8 hex of the config
** hash>), so a source hashed here is the source a sweep compiles.
*/
#define _GNU_SOURCE
#include "device.h"
#include "jit.h"
#include "search.h"
#include "spec.h"
#include "tmpl.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static const char *ARCH = "sm_90a";

static void usage(void)
{
    fprintf(stderr, "usage: kernel_sample list [-n N] SPEC...\n"
                    "       kernel_sample sources [-c] [-o DIR] LIST\n"
                    "       kernel_sample compile [-o DIR] LIST\n");
    exit(2);
}

static void shape_text(const op_task *t, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int d = 0; d < t->ndims && len < cap; d++)
        len += (size_t)snprintf(out + len, cap - len, "%s%lld", d ? "," : "", t->shape[d]);
}

/* ---- list ---- */

static int list_task(tmpl *T, const device *dev, const spec_task *st, const char *dtype, const bucket *b, int n)
{
    op_task task;
    if (tmpl_task(T, st->op, dtype, b->rep, &task)) {
        fprintf(stderr, "kernel_sample: %s %s: %s\n", st->op, dtype, tmpl_errmsg(T));
        return -1;
    }
    char shape[128];
    shape_text(&task, shape, sizeof shape);
    char **names;
    int nt;
    if (tmpl_templates(T, st->op, &names, &nt)) {
        fprintf(stderr, "kernel_sample: %s\n", tmpl_errmsg(T));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < nt && !rc; i++) {
        int ok = 0;
        char why[256];
        if (!spec_task_uses(st, names[i]) || tmpl_supports(T, names[i], &task, dev, &ok, why, sizeof why) || !ok)
            continue;
        char *def = NULL;
        if (tmpl_default(T, names[i], &task, dev, &def)) {
            fprintf(stderr, "kernel_sample: %s default: %s\n", names[i], tmpl_errmsg(T));
            rc = -1;
            break;
        }
        printf("%s\t%s\t%s\tdefault\t%s\n", names[i], dtype, shape, def);
        search *s = n > 0 ? search_new(T, "random", names[i], &task, dev, 1, n) : NULL;
        char **cfgs = NULL;
        int got = 0;
        if (n > 0 && (!s || search_ask(s, n, &cfgs, &got))) {
            fprintf(stderr, "kernel_sample: %s sample: %s\n", names[i], tmpl_errmsg(T));
            rc = -1;
        }
        if (!rc)
            for (int c = 0; c < got; c++) {
                if (strcmp(cfgs[c], def)) printf("%s\t%s\t%s\tsample\t%s\n", names[i], dtype, shape, cfgs[c]);
                free(cfgs[c]);
            }
        free(cfgs);
        search_free(s);
        free(def);
    }
    for (int i = 0; i < nt; i++) free(names[i]);
    free(names);
    return rc;
}

static int cmd_list(tmpl *T, const device *dev, int argc, char **argv)
{
    int n = 2, i = 0;
    if (i + 1 < argc && !strcmp(argv[i], "-n")) {
        n = atoi(argv[i + 1]);
        i += 2;
    }
    if (i >= argc || n < 0) usage();
    for (; i < argc; i++) {
        spec s;
        char err[512];
        if (spec_load(argv[i], &s, err, sizeof err)) {
            fprintf(stderr, "kernel_sample: %s\n", err);
            return 3;
        }
        for (int k = 0; k < s.ntasks; k++) {
            const spec_task *st = &s.tasks[k];
            bucket *bs = NULL;
            int nb = spec_buckets(st, &bs);
            for (int d = 0; d < st->ndtypes; d++)
                for (int b = 0; b < nb; b++)
                    if (list_task(T, dev, st, st->dtypes[d], &bs[b], n)) {
                        free(bs);
                        spec_free(&s);
                        return 1;
                    }
            free(bs);
        }
        spec_free(&s);
    }
    return 0;
}

/* ---- reading a list ---- */

typedef struct entry {
    char tname[64], dtype[16], kind[16];
    char shape[128];
    char *config;
    op_task task;
    int lineno;
} entry;

/* Split line (modified) at tabs into entry e and resolve its task. */
static int parse_line(tmpl *T, char *line, int lineno, entry *e)
{
    char *f[6] = { 0 };
    int nf = 0;
    for (char *p = line; nf < 6;) {
        f[nf++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    if (nf < 5) {
        fprintf(stderr, "kernel_sample: line %d: want template, dtype, shape, kind, config\n", lineno);
        return -1;
    }
    memset(e, 0, sizeof *e);
    snprintf(e->tname, sizeof e->tname, "%s", f[0]);
    snprintf(e->dtype, sizeof e->dtype, "%s", f[1]);
    snprintf(e->shape, sizeof e->shape, "%s", f[2]);
    snprintf(e->kind, sizeof e->kind, "%s", f[3]);
    e->config = f[4];
    e->lineno = lineno;
    char op[64];
    const char *slash = strchr(e->tname, '/');
    if (!slash) {
        fprintf(stderr, "kernel_sample: line %d: template '%s' is not op/impl\n", lineno, e->tname);
        return -1;
    }
    snprintf(op, sizeof op, "%.*s", (int)(slash - e->tname), e->tname);
    long long shape[TMPL_MAXDIMS] = { 0 };
    int nd = 0;
    for (char *p = f[2], *end; *p && nd < TMPL_MAXDIMS; p = *end ? end + 1 : end) {
        shape[nd++] = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',')) {
            fprintf(stderr, "kernel_sample: line %d: bad shape '%s'\n", lineno, f[2]);
            return -1;
        }
    }
    if (tmpl_task(T, op, e->dtype, shape, &e->task)) {
        fprintf(stderr, "kernel_sample: line %d: %s\n", lineno, tmpl_errmsg(T));
        return -1;
    }
    return 0;
}

static int instantiate(tmpl *T, const device *dev, const entry *e, kernel_src *k)
{
    char h[17], kname[64];
    hash_hex(hash_str(hash_str(HASH_INIT, e->tname), e->config), h);
    snprintf(kname, sizeof kname, "aitune_%s_%.8s", e->task.op, h);
    if (tmpl_instantiate(T, e->tname, e->config, &e->task, dev, kname, k)) {
        fprintf(stderr, "kernel_sample: line %d: %s\n", e->lineno, tmpl_errmsg(T));
        return -1;
    }
    return 0;
}

static void write_out(const char *dir, int lineno, const char *ext, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.%s", dir, lineno, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "kernel_sample: cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

typedef int (*each_fn)(tmpl *T, const device *dev, entry *e, const char *dir);

static int each_line(tmpl *T, const device *dev, const char *path, const char *dir, each_fn fn)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "kernel_sample: cannot read %s\n", path);
        return 1;
    }
    if (dir) mkdir(dir, 0777);
    int bad = 0, lineno = 0;
    for (char *line = text, *next; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next) *next++ = 0;
        lineno++;
        if (!*line || *line == '#') continue;
        entry e;
        if (parse_line(T, line, lineno, &e) || fn(T, dev, &e, dir)) bad = 1;
    }
    free(text);
    return bad;
}

/* ---- sources ---- */

static int check_valid;     /* sources -c */

static int one_source(tmpl *T, const device *dev, entry *e, const char *dir)
{
    int ok = 1;
    char why[256];
    if (check_valid && tmpl_valid(T, e->tname, e->config, &e->task, dev, &ok, why, sizeof why)) {
        fprintf(stderr, "kernel_sample: line %d: %s\n", e->lineno, tmpl_errmsg(T));
        return -1;
    }
    if (!ok) {
        fprintf(stderr, "kernel_sample: line %d: %s refuses %s: %s\n", e->lineno, e->tname, e->config, why);
        return -1;
    }
    kernel_src k;
    if (instantiate(T, dev, e, &k)) return -1;
    char h[17];
    hash_hex(hash_str(HASH_INIT, k.source), h);
    const char *mark = h;
    char *def = NULL;
    if (!strcmp(e->kind, "default")) {
        if (tmpl_default(T, e->tname, &e->task, dev, &def)) {
            fprintf(stderr, "kernel_sample: line %d: %s\n", e->lineno, tmpl_errmsg(T));
            kernel_src_free(&k);
            return -1;
        }
        if (strcmp(def, e->config)) mark = "default-changed";
    }
    printf("%s\t%s\t%s\t%s\t%s\t%s\n", e->tname, e->dtype, e->shape, e->kind, e->config, mark);
    if (dir) write_out(dir, e->lineno, "cu", k.source, strlen(k.source));
    free(def);
    kernel_src_free(&k);
    return 0;
}

/* ---- compile ---- */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int one_compile(tmpl *T, const device *dev, entry *e, const char *dir)
{
    kernel_src k;
    if (instantiate(T, dev, e, &k)) return -1;
    jit_job j;
    memset(&j, 0, sizeof j);
    j.source = k.source;
    k.source = NULL;
    snprintf(j.name, sizeof j.name, "%s", k.name);
    snprintf(j.arch, sizeof j.arch, "%s", ARCH);
    kernel_src_free(&k);
    double c0 = cpu_s(), w0 = now_s();
    jit_compile(&j);
    double c = cpu_s() - c0, w = now_s() - w0;
    int rc = 0;
    if (!j.ok) {
        fprintf(stderr, "kernel_sample: line %d: %s: %s\n", e->lineno, e->tname, j.error ? j.error : "compile failed");
        rc = -1;
    } else {
        printf("%s\t%s\t%s\t%s\t%s\t%d %d %d %d\t%.3f\t%.3f\n", e->tname, e->dtype, e->shape, e->kind, e->config,
               j.registers, j.spills, j.smem, j.stack, c, w);
        if (dir) write_out(dir, e->lineno, "cubin", j.cubin, j.cubin_len);
    }
    fflush(stdout);
    jit_job_clear(&j);
    return rc;
}

/* NVRTC's start-up (its builtins, the first program), paid here, not by
** the first line. */
static void warm_up(void)
{
    jit_job j;
    memset(&j, 0, sizeof j);
    j.source = xstrdup("extern \"C\" __global__ void warm(int *p) { p[threadIdx.x] = 1; }\n");
    snprintf(j.name, sizeof j.name, "warm");
    snprintf(j.arch, sizeof j.arch, "%s", ARCH);
    double c0 = cpu_s();
    jit_compile(&j);
    fprintf(stderr, "kernel_sample: NVRTC %s, warm-up compile %.3f CPU s (%s)\n", jit_nvrtc_version(), cpu_s() - c0,
            j.ok ? "ok" : j.error);
    jit_job_clear(&j);
}

int main(int argc, char **argv)
{
    if (argc < 3) usage();
    const char *root = getenv("AITUNE_TEST_ROOT") ? getenv("AITUNE_TEST_ROOT") : AITUNE_SOURCE_DIR;
    device dev;
    if (device_assume(ARCH, &dev)) return 1;
    tmpl *T = tmpl_open(root);
    int rc;
    if (!strcmp(argv[1], "list")) {
        rc = cmd_list(T, &dev, argc - 2, argv + 2);
    } else {
        const char *dir = NULL;
        int i = 2;
        for (; i < argc - 1; i++) {
            if (!strcmp(argv[i], "-o") && i + 2 < argc) {
                dir = argv[++i];
            } else if (!strcmp(argv[i], "-c") && !strcmp(argv[1], "sources")) {
                check_valid = 1;
            } else {
                usage();
            }
        }
        if (i != argc - 1) usage();
        if (!strcmp(argv[1], "sources")) {
            rc = each_line(T, &dev, argv[i], dir, one_source);
        } else if (!strcmp(argv[1], "compile")) {
            warm_up();
            rc = each_line(T, &dev, argv[i], dir, one_compile);
        } else {
            usage();
        }
    }
    tmpl_close(T);
    return rc;
}
