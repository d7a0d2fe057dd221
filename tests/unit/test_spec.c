/*
** test_spec: sweep specs (spec.c) from YAML written into a temporary
** directory: a complete spec, its buckets, and each error path, which must
** give one line naming the file, the line and the field.
**
**     build/tests/test_spec
*/
#define _GNU_SOURCE
#include "align.h"
#include "check.h"
#include "spec.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static int nfiles;

/* Write text to a new file in dir; returns its path (static storage per call). */
static const char *yaml(const char *text)
{
    static char paths[64][320];
    char *p = paths[nfiles % 64];
    snprintf(p, sizeof paths[0], "%s/spec%d.yaml", dir, nfiles++);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        printf("FAIL setup: cannot write %s\n", p);
        exit(1);
    }
    return p;
}

static void cleanup(void)
{
    char p[320];
    for (int i = 0; i < nfiles; i++) {
        snprintf(p, sizeof p, "%s/spec%d.yaml", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static const char good[] =
    "# a complete spec\n"
    "name: elementwise\n"
    "arch: sm_90a\n"
    "seed: 7\n"
    "search: random\n"
    "max_evals: 200\n"
    "budget: 1h30m\n"
    "top_k: 3\n"
    "tasks:\n"
    "  - op: axpy\n"
    "    dtypes: [f32, bf16]\n"
    "    search: exhaustive\n"
    "    max_evals: 12\n"
    "    templates: [vec]\n"
    "    shapes:\n"
    "      n: {log2: [10, 12]}\n"
    "  - op: reduce_rows\n"
    "    dtypes: [f16]\n"
    "    shapes:\n"
    "      rows: {log2: [14, 15]}\n"
    "      cols: {values: [4096, 9000, 100]}\n";

static void test_good(void)
{
    spec s;
    char err[1024] = "";
    const char *path = yaml(good);
    int rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0, "a complete spec loads (%s)", err);
    if (rc) return;
    CHECK_STR(s.name, "elementwise", "name");
    CHECK_STR(s.arch, "sm_90a", "arch");
    CHECK(s.seed == 7, "seed = %llu", s.seed);
    CHECK_STR(s.search, "random", "search");
    CHECK(s.max_evals == 200, "max_evals = %d", s.max_evals);
    CHECK(s.budget_s == 5400, "budget 1h30m = %g s", s.budget_s);
    CHECK(s.top_k == 3, "top_k = %d", s.top_k);
    CHECK(strlen(s.hash) == 16, "spec hash has 16 hex digits: '%s'", s.hash);
    CHECK(s.ntasks == 2, "2 tasks (got %d)", s.ntasks);
    if (s.ntasks != 2) { spec_free(&s); return; }
    spec_task *a = &s.tasks[0], *r = &s.tasks[1];
    CHECK_STR(a->op, "axpy", "task 1 op");
    CHECK(a->line == 10, "task 1 line = %d (want 10)", a->line);
    CHECK(a->ndtypes == 2 && !strcmp(a->dtypes[0], "f32") && !strcmp(a->dtypes[1], "bf16"), "task 1 dtypes [f32, bf16]");
    CHECK_STR(a->search, "exhaustive", "task search overrides the spec's");
    CHECK(a->max_evals == 12, "task max_evals overrides the spec's (%d)", a->max_evals);
    CHECK(a->ndims == 1 && !strcmp(a->dims[0].name, "n") && a->dims[0].nvalues == 3, "task 1 has dim n with 3 sizes");
    CHECK(a->dims[0].values[0] == 1024 && a->dims[0].values[2] == 4096, "log2 [10, 12] gives 2^10 .. 2^12");
    CHECK(a->ntemplates == 1 && !strcmp(a->templates[0], "vec"), "task 1 names template vec");
    CHECK(spec_task_uses(a, "axpy/vec") && !spec_task_uses(a, "axpy/other"), "task 1 uses axpy/vec only");
    CHECK(r->ntemplates == 0 && spec_task_uses(r, "reduce_rows/split"), "a task naming no templates uses them all");
    CHECK(a->dims[0].line == 16, "dim n line = %d (want 16)", a->dims[0].line);
    CHECK_STR(r->search, "random", "a task without search inherits the spec's");
    CHECK(r->max_evals == 200, "a task without max_evals inherits the spec's (%d)", r->max_evals);
    CHECK(r->ndims == 2 && !strcmp(r->dims[0].name, "rows") && !strcmp(r->dims[1].name, "cols"), "task 2 dims rows, cols in order");

    /* Buckets: log2 ranges. */
    bucket *b;
    int nb = spec_buckets(a, &b);
    CHECK(nb == 3, "log2 [10, 12]: 3 buckets (got %d)", nb);
    if (nb == 3) {
        CHECK(b[0].ndims == 1 && b[0].lo[0] == 1024 && b[0].hi[0] == 2048 && b[0].rep[0] == 1024, "bucket 1: [1024, 2048) tuned at 1024");
        CHECK_STR(b[0].key, "n=2^10", "bucket 1 key");
        CHECK_STR(b[2].key, "n=2^12", "bucket 3 key");
        CHECK(b[2].lo[0] == 4096 && b[2].hi[0] == 8192, "bucket 3 edges");
    }
    free(b);

    /* 2-D: cross product; values bucketed by log2, representatives kept. */
    nb = spec_buckets(r, &b);
    CHECK(nb == 6, "2 rows x 3 cols values: 6 buckets (got %d)", nb);
    int found = 0, found5000 = 0, found100 = 0;
    for (int i = 0; i < nb; i++) {
        CHECK(b[i].ndims == 2, "bucket %d has 2 dims", i);
        if (!strcmp(b[i].key, "rows=2^14,cols=2^12") && b[i].rep[1] == 4096) found++;
        if (b[i].rep[0] == 1 << 15 && b[i].rep[1] == 9000) {
            found5000++;
            CHECK(b[i].lo[1] == 8192 && b[i].hi[1] == 16384, "cols=9000 is bucketed [8192, 16384)");
            CHECK_STR(b[i].key, "rows=2^15,cols=2^13", "key of rows=2^15, cols=9000");
        }
        if (b[i].rep[1] == 100) {
            found100++;
            CHECK(b[i].lo[1] == 64 && b[i].hi[1] == 128, "cols=100 is bucketed [64, 128) with rep 100");
        }
    }
    CHECK(found == 1, "bucket rows=2^14,cols=2^12 exists once with rep 4096");
    CHECK(found5000 == 1 && found100 == 2, "representatives 9000 and 100 are kept");
    /* The first dim varies slowest. */
    CHECK(nb == 6 && b[0].rep[0] == 1 << 14 && b[1].rep[0] == 1 << 14 && b[3].rep[0] == 1 << 15, "cross product order: rows outer, cols inner");
    free(b);
    spec_free(&s);

    /* Defaults. */
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [1000]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0, "a minimal spec loads (%s)", err);
    if (!rc) {
        CHECK(!strcmp(s.arch, "sm_90a") && s.seed == 1 && !strcmp(s.search, "exhaustive") && s.max_evals == 0 &&
              s.budget_s == 0 && s.top_k == 5 && !strcmp(s.name, "unnamed"),
              "defaults: sm_90a, seed 1, exhaustive, no cap, no budget, top_k 5");
        nb = spec_buckets(&s.tasks[0], &b);
        CHECK(nb == 1 && b[0].rep[0] == 1000 && b[0].lo[0] == 512 && b[0].hi[0] == 1024 && !strcmp(b[0].key, "n=2^9"),
              "values [1000]: bucket [512, 1024) key n=2^9, rep 1000 (key '%s')", nb ? b[0].key : "");
        free(b);
        spec_free(&s);
    }
    /* Same text, same hash. */
    spec s2, s3;
    const char *p2 = yaml(good), *p3 = yaml(good);
    if (!spec_load(p2, &s2, err, sizeof err) && !spec_load(p3, &s3, err, sizeof err)) {
        CHECK(!strcmp(s2.hash, s3.hash), "the same text gives the same spec hash");
        spec_free(&s2);
        spec_free(&s3);
    }

    /* log2 with a step. */
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [10, 16, 3]}\n");
    if (!spec_load(path, &s, err, sizeof err)) {
        CHECK(s.tasks[0].dims[0].nvalues == 3 && s.tasks[0].dims[0].values[1] == 1 << 13 && s.tasks[0].dims[0].values[2] == 1 << 16,
              "log2 [10, 16, 3] gives 2^10, 2^13, 2^16");
        spec_free(&s);
    } else {
        CHECK(0, "log2 with a step loads: %s", err);
    }
}

/* split_at: a fraction, the spec's default for its tasks; and the rule
** that splits a bucket into parts. */
static void test_split(void)
{
    spec s;
    char err[1024] = "";
    const char *path = yaml("hold: true\nsplit_at: 0.1\ntasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n"
                            "      n: {log2: [12, 12]}\n  - op: axpy\n    dtypes: [bf16]\n    split_at: 0\n    shapes:\n"
                            "      n: {log2: [12, 12]}\n");
    int rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0, "a spec with split_at loads (%s)", err);
    if (!rc) {
        CHECK(s.split_at == 0.1 && s.tasks[0].split_at == 0.1 && s.tasks[0].hold, "split_at 0.1 reaches the task (%g)",
              s.tasks[0].split_at);
        CHECK(s.tasks[1].split_at == 0, "a task's split_at: 0 overrides the spec's");
        spec_free(&s);
    }
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [12, 12]}\n");
    if (!spec_load(path, &s, err, sizeof err)) {
        CHECK(s.tasks[0].split_at == 0.05, "split_at defaults to 0.05 (%g)", s.tasks[0].split_at);
        CHECK(s.split_evals == -1 && s.tasks[0].split_evals == -1, "split_evals defaults to -1, the sweep's choice (%d)",
              s.tasks[0].split_evals);
        spec_free(&s);
    }
    /* split_evals: the spec's default for its tasks, a task's own, 0. */
    path = yaml("split_evals: 12\ntasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [12, 12]}\n"
                "  - op: axpy\n    dtypes: [bf16]\n    split_evals: 0\n    shapes:\n      n: {log2: [12, 12]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0, "a spec with split_evals loads (%s)", err);
    if (!rc) {
        CHECK(s.tasks[0].split_evals == 12 && s.tasks[1].split_evals == 0, "split_evals reaches the tasks, a task's 0 overrides "
              "(%d, %d)", s.tasks[0].split_evals, s.tasks[1].split_evals);
        spec_free(&s);
    }
    /* split_polish: 16 by default, the spec's for its tasks, a task's own. */
    path = yaml("split_polish: 5\ntasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [12, 12]}\n"
                "  - op: axpy\n    dtypes: [bf16]\n    split_polish: 0\n    shapes:\n      n: {log2: [12, 12]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0 && s.tasks[0].split_polish == 5 && s.tasks[1].split_polish == 0,
          "split_polish reaches the tasks, a task's 0 overrides (%d, %d; %s)", rc ? -1 : s.tasks[0].split_polish,
          rc ? -1 : s.tasks[1].split_polish, err);
    if (!rc) spec_free(&s);
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [12, 12]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0 && s.tasks[0].split_polish == SPEC_SPLIT_POLISH, "split_polish defaults to %d (%d)", SPEC_SPLIT_POLISH,
          rc ? -1 : s.tasks[0].split_polish);
    if (!rc) spec_free(&s);

    long long at;
    CHECK(bucket_split_point(4096, 8192, &at) && at == 5760, "[4096, 8192) splits at 5760 (%lld)", at);
    CHECK(bucket_split_point(64, 128, &at) && at == 88, "[64, 128) splits at 88, a multiple of 8 (%lld)", at);
    CHECK(bucket_split_point(1024, 1152, &at) && at == 1088, "[1024, 1152) splits at 1088, rounded up to 64 (%lld)", at);
    CHECK(bucket_split_point(1024, 1088, &at) && at == 1048, "[1024, 1088) splits at 1048, a multiple of 8 (%lld)", at);
    CHECK(bucket_split_point(16384, 23168, &at) && at == 19456, "[16384, 23168) splits at 19456 (%lld)", at);
    CHECK(bucket_split_point(4, 8, &at) && at == 5, "[4, 8) splits at 5 (%lld)", at);
    CHECK(!bucket_split_point(2, 4, &at) && !bucket_split_point(1, 2, &at), "[2, 4) and [1, 2) do not split");
    bucket b = { .ndims = 1, .lo = { 4096 }, .hi = { 8192 }, .rep = { 4096 }, .key = "n=2^12" }, parts[16];
    int n = bucket_split(&b, 1, parts);
    CHECK(n == 2 && parts[0].lo[0] == 4096 && parts[0].hi[0] == 5760 && parts[1].lo[0] == 5760 && parts[1].hi[0] == 8192,
          "n=2^12 splits into [4096, 5760) and [5760, 8192)");
    CHECK(n == 2 && parts[0].rep[0] == 4096 && parts[1].rep[0] == 5760, "tuned at 4096 and 5760");
    CHECK(n == 2 && !strcmp(parts[0].key, "n=2^12/2^12") && !strcmp(parts[1].key, "n=2^12/5760"), "keys %s and %s",
          parts[0].key, parts[1].key);
    bucket v = { .ndims = 2, .lo = { 16384, 4096 }, .hi = { 32768, 8192 }, .rep = { 16384, 7000 }, .key = "rows=2^14,cols=2^12" };
    n = bucket_split(&v, 3, parts);
    CHECK(n == 4, "two dims split: 4 parts (%d)", n);
    if (n == 4) {
        CHECK(parts[0].lo[0] == 16384 && parts[0].hi[0] == 23168 && parts[0].hi[1] == 5760 && parts[1].lo[1] == 5760 &&
              parts[2].lo[0] == 23168 && parts[3].lo[0] == 23168 && parts[3].lo[1] == 5760, "dim 0 varies slowest");
        CHECK(parts[0].rep[1] == 4096 && parts[1].rep[1] == 7000 && parts[2].rep[0] == 23168,
              "a part holding the parent's size is tuned there, another at its lower edge");
        CHECK_STR(parts[3].key, "rows=2^14,cols=2^12/23168,5760", "a 2-D part's key");
    }
    n = bucket_split(&v, 2, parts);
    CHECK(n == 2 && parts[0].lo[0] == 16384 && parts[0].hi[0] == 32768 && parts[1].lo[1] == 5760, "mask 2 splits cols only");
    bucket one = { .ndims = 2, .lo = { 1, 4096 }, .hi = { 2, 8192 }, .rep = { 1, 4096 }, .key = "b=2^0,n=2^12" };
    n = bucket_split(&one, 3, parts);
    CHECK(n == 2 && parts[0].lo[0] == 1 && parts[0].hi[0] == 2, "a dim of one value is not split (%d parts)", n);
    char home[96];
    bucket_home("n=2^12/5760", home, sizeof home);
    CHECK_STR(home, "n=2^12", "a part's home");
    bucket_home("n=2^12", home, sizeof home);
    CHECK_STR(home, "n=2^12", "a bucket is its own home");
    CHECK(bucket_in_home("n=2^12/5760", "n=2^12") && bucket_in_home("n=2^12", "n=2^12") &&
          !bucket_in_home("n=2^12/5760", "n=2^1") && !bucket_in_home("n=2^13", "n=2^1"), "bucket_in_home");
}

/* The spec must fail with one line that names the file, line and words. */
static void expect_error(const char *what, const char *text, int line, const char *w1, const char *w2)
{
    spec s;
    char err[1024] = "";
    const char *path = yaml(text);
    int rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == -1, "%s: spec_load fails", what);
    if (rc != -1) { spec_free(&s); return; }
    char want[400];
    if (line > 0) snprintf(want, sizeof want, "spec '%s' line %d: ", path, line);
    else snprintf(want, sizeof want, "spec '%s'", path);
    CHECK(!strncmp(err, want, strlen(want)), "%s: message starts with \"%s\": '%s'", what, want, err);
    CHECK(!strchr(err, '\n'), "%s: message is one line", what);
    CHECK(!w1 || strstr(err, w1), "%s: message names '%s': '%s'", what, w1 ? w1 : "", err);
    CHECK(!w2 || strstr(err, w2), "%s: message names '%s': '%s'", what, w2 ? w2 : "", err);
}

#define TASK "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [10, 12]}\n"

static void test_errors(void)
{
    expect_error("unknown top-level field", "name: x\nbudgett: 10m\n" TASK, 2, "budgett", "known:");
    expect_error("unknown task field",
                 "tasks:\n  - op: axpy\n    dtype: [f32]\n    dtypes: [f32]\n    shapes:\n      n: {log2: [10, 12]}\n", 3,
                 "'dtype'", "task");
    expect_error("dtypes not a list", "tasks:\n  - op: axpy\n    dtypes: f32\n    shapes:\n      n: {log2: [10, 12]}\n", 3,
                 "dtypes", "list");
    expect_error("empty dtypes", "tasks:\n  - op: axpy\n    dtypes: []\n    shapes:\n      n: {log2: [10, 12]}\n", 3,
                 "dtypes", NULL);
    expect_error("log2 hi < lo", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [12, 10]}\n", 5,
                 "'n'", "log2");
    expect_error("log2 exponent out of range", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [10, 99]}\n", 5,
                 "log2", "99");
    expect_error("dim with log2 and values",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [10, 12], values: [5]}\n", 5, "'n'", "log2");
    expect_error("a size of 0", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [0]}\n", 5, "size", "0");
    expect_error("a size that is not a number", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [1k]}\n", 5,
                 "size", "1k");
    expect_error("bad budget", "budget: abc\n" TASK, 1, "budget", "abc");
    expect_error("budget nan", "budget: nan\n" TASK, 1, "budget", "nan");
    expect_error("top_k out of range", "top_k: 99\n" TASK, 1, "top_k", "99");
    expect_error("top_k zero", "top_k: 0\n" TASK, 1, "top_k", NULL);
    expect_error("seed not an integer", "seed: x1\n" TASK, 1, "seed", "x1");
    expect_error("arch not like sm_90a", "arch: gfx90a\n" TASK, 1, "arch", "gfx90a");
    expect_error("invalid YAML (unclosed bracket)", "name: x\ntasks:\n  - op: axpy\n    dtypes: [f32, bf16\n", 0, "line", NULL);
    expect_error("empty tasks", "name: x\ntasks: []\n", 2, "tasks", "empty");
    expect_error("tasks missing", "name: x\n", 1, "tasks", NULL);
    expect_error("task without op", "tasks:\n  - dtypes: [f32]\n    shapes:\n      n: {log2: [10, 12]}\n", 2, "op", NULL);
    expect_error("task without shapes", "tasks:\n  - op: axpy\n    dtypes: [f32]\n", 2, "shapes", NULL);
    expect_error("bad dim name", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      N-1: {log2: [10, 12]}\n", 5, "N-1",
                 NULL);
    expect_error("empty file", "", 0, "empty", NULL);
    expect_error("spec not a mapping", "- 1\n- 2\n", 1, "mapping", NULL);
    expect_error("duplicate buckets from values",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [4096, 5000]}\n", 5, "5000", "bucket");
    expect_error("templates not a list",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    templates: vec\n    shapes:\n      n: {log2: [10, 12]}\n", 4,
                 "templates", "list");
    expect_error("a template listed twice",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    templates: [vec, vec]\n    shapes:\n      n: {log2: [10, 12]}\n", 4,
                 "'vec'", "twice");
    expect_error("a bad template name",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    templates: [axpy/vec]\n    shapes:\n      n: {log2: [10, 12]}\n", 4,
                 "axpy/vec", "template");
    expect_error("split_at not a number", "hold: true\nsplit_at: lots\n" TASK, 2, "'split_at'", "lots");
    expect_error("split_at above 1", "hold: true\nsplit_at: 5\n" TASK, 2, "'split_at'", "[0, 1]");
    expect_error("split_at negative", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    split_at: -0.1\n    shapes:\n"
                 "      n: {log2: [10, 12]}\n", 4, "'split_at'", "-0.1");
    expect_error("split_at nan", "split_at: nan\n" TASK, 1, "'split_at'", "nan");
    expect_error("split_evals negative", "split_evals: -1\n" TASK, 1, "'split_evals'", "out of range");
    expect_error("split_polish negative", "split_polish: -3\n" TASK, 1, "'split_polish'", "out of range");
    expect_error("split_polish not a number", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    split_polish: yes\n    shapes:\n"
                 "      n: {log2: [10, 12]}\n", 4, "'split_polish'", "yes");
    expect_error("split_evals not a number", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    split_evals: many\n    shapes:\n"
                 "      n: {log2: [10, 12]}\n", 4, "'split_evals'", "many");
    expect_error("empty templates",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    templates: []\n    shapes:\n      n: {log2: [10, 12]}\n", 4,
                 "templates", "empty");

    /* Missing file: names the file and says why. */
    spec s;
    char err[1024] = "", path[400];
    snprintf(path, sizeof path, "%s/no-such.yaml", dir);
    int rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == -1 && strstr(err, path) && strstr(err, "No such file") && !strchr(err, '\n'),
          "missing file: one line naming it and the reason: '%s'", err);
    /* The invalid-YAML line is the line of the problem, not 0. */
    const char *p = yaml("name: x\ntasks:\n  - op: axpy\n    dtypes: [f32, bf16\n    shapes: {}\n");
    rc = spec_load(p, &s, err, sizeof err);
    CHECK(rc == -1 && !strstr(err, "line 0") && strstr(err, "line "), "invalid YAML names a line >= 1: '%s'", err);
    /* A small err buffer truncates, never overflows. */
    char small[16];
    memset(small, 'X', sizeof small);
    rc = spec_load(path, &s, small, 10);
    CHECK(rc == -1 && small[9] == 0 && small[10] == 'X', "error text is truncated to errcap");
}

/* Alignment classes (align.h): sizes of one log2 bucket and different
** classes are buckets of their own, keyed apart; aligned ones keep their
** keys; a split keeps the class in its parts' sizes. */
static void test_align(void)
{
    CHECK(align_class(4096) == 8 && align_class(4104) == 8 && align_class(4097) == 1 && align_class(4098) == 2 &&
          align_class(4100) == 4 && align_class(1) == 1 && align_class(6) == 2, "align_class: 8, 8, 1, 2, 4, 1, 2");
    CHECK(align_up(5760, 1) == 5761 && align_up(5760, 8) == 5760 && align_up(5761, 8) == 5768 && align_up(5760, 2) == 5762 &&
          align_up(5760, 4) == 5764 && align_up(5762, 1) == 5763 && align_up(5763, 1) == 5763 && align_up(5765, 4) == 5772,
          "align_up: the first size of a class from a size");
    unsigned char lg[3] = { 9, 9, 9 };
    char err[256] = "";
    CHECK(!align_shape("{\"m\":4096,\"n\":4097,\"k\":4100}", "m,n,k", 3, lg, err, sizeof err) && lg[0] == 3 && lg[1] == 0 &&
          lg[2] == 2, "align_shape reads each dim's class from a winner's shape (%s)", err);
    CHECK(align_shape("{\"m\":4096,\"k\":4100}", "m,n,k", 3, lg, err, sizeof err) && strstr(err, "dim 'n'"),
          "a shape without a dim: '%s'", err);
    CHECK(align_shape("{\"m\":4096,\"n\":-3,\"k\":1}", "m,n,k", 3, lg, err, sizeof err) && strstr(err, "dim 'n'") &&
          strstr(err, "integer >= 1"), "a negative size: '%s'", err);
    CHECK(align_shape("{\"m\":4096,\"n\":\"4097\",\"k\":1}", "m,n,k", 3, lg, err, sizeof err) && strstr(err, "dim 'n'"),
          "a size that is not a number: '%s'", err);
    CHECK(align_shape("{\"m\":4096.5,\"n\":1,\"k\":1}", "m,n,k", 3, lg, err, sizeof err) && strstr(err, "dim 'm'"),
          "a size that is not an integer: '%s'", err);
    CHECK(align_shape("[4096]", "m", 1, lg, err, sizeof err) && strstr(err, "object"), "a shape that is no object: '%s'", err);
    CHECK(align_shape("{\"m\":", "m", 1, lg, err, sizeof err) && strstr(err, "JSON"), "a shape that is no JSON: '%s'", err);

    /* A spec may list 4096 and 4097 (and 4098, 4100) for one dim; keys. */
    spec s;
    const char *path = yaml("tasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    shapes:\n      m: {values: [4096]}\n"
                            "      n: {values: [4096, 4097, 4098, 4100, 8192, 8193]}\n      k: {values: [4096]}\n");
    int rc = spec_load(path, &s, err, sizeof err);
    CHECK(rc == 0, "a dim may list 4096, 4097, 4098 and 4100: one bucket range, four classes (%s)", err);
    if (!rc) {
        bucket *b;
        int nb = spec_buckets(&s.tasks[0], &b);
        const char *want[] = { "m=2^12,n=2^12,k=2^12", "m=2^12,n=2^12:align1,k=2^12", "m=2^12,n=2^12:align2,k=2^12",
                               "m=2^12,n=2^12:align4,k=2^12", "m=2^12,n=2^13,k=2^12", "m=2^12,n=2^13:align1,k=2^12" };
        int cls[] = { 8, 1, 2, 4, 8, 1 };
        CHECK(nb == 6, "6 buckets (%d)", nb);
        for (int i = 0; i < nb && i < 6; i++) {
            CHECK_STR(b[i].key, want[i], "a bucket's key names its class where not aligned");
            CHECK(b[i].align[1] == cls[i] && b[i].align[0] == 8 && b[i].lo[1] == (i < 4 ? 4096 : 8192),
                  "bucket %d records class %d in n (%d), 8 in m, and the log2 edges", i, cls[i], b[i].align[1]);
        }
        free(b);
        spec_free(&s);
    }
    /* Below 8 no size is aligned: a log2 spec's keys from 2^0 stay as they were. */
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [0, 4]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    if (!rc) {
        bucket *b;
        int nb = spec_buckets(&s.tasks[0], &b);
        CHECK(nb == 5 && !strcmp(b[0].key, "n=2^0") && !strcmp(b[1].key, "n=2^1") && !strcmp(b[2].key, "n=2^2") &&
              !strcmp(b[3].key, "n=2^3") && !strcmp(b[4].key, "n=2^4"), "log2 [0, 4]: keys n=2^0 .. n=2^4, no class (%s %s %s)",
              nb > 0 ? b[0].key : "", nb > 1 ? b[1].key : "", nb > 2 ? b[2].key : "");
        free(b);
        spec_free(&s);
    } else {
        CHECK(0, "log2 [0, 4] loads (%s)", err);
    }
    path = yaml("tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [4, 5, 6, 3]}\n");
    rc = spec_load(path, &s, err, sizeof err);
    if (!rc) {
        bucket *b;
        int nb = spec_buckets(&s.tasks[0], &b);
        CHECK(nb == 4 && !strcmp(b[0].key, "n=2^2") && !strcmp(b[1].key, "n=2^2:align1") && !strcmp(b[2].key, "n=2^2:align2") &&
              !strcmp(b[3].key, "n=2^1:align1"), "4, 5, 6 and 3: n=2^2, n=2^2:align1, n=2^2:align2, n=2^1:align1");
        free(b);
        spec_free(&s);
    } else {
        CHECK(0, "values [4, 5, 6, 3] load (%s)", err);
    }
    /* Same bucket, same class: refused, naming both sizes and the class. */
    expect_error("two sizes of one bucket and class",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [4096, 4097, 4104]}\n", 5,
                 "sizes 4096 and 4104", "alignment class 8");
    expect_error("two odd sizes of one bucket",
                 "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [4097, 4099]}\n", 5,
                 "sizes 4097 and 4099", "alignment class 1");
    expect_error("bucket keys too long",
                 "tasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    shapes:\n      aaaaaaaaaaaaaaa: {values: [4097]}\n"
                 "      bbbbbbbbbbbbbbb: {values: [4097]}\n      ccccccccccccccc: {values: [4097]}\n"
                 "      ddddddddddddddd: {values: [4097]}\n", 8, "longer than 95", NULL);

    /* A split keeps the class: an odd bucket's parts are tuned at odd sizes. */
    bucket odd = { .ndims = 2, .lo = { 4096, 4096 }, .hi = { 8192, 8192 }, .rep = { 4096, 4097 }, .align = { 8, 1 },
                   .key = "m=2^12,n=2^12:align1" }, parts[16];
    int n = bucket_split(&odd, 3, parts);
    CHECK(n == 4, "an odd bucket splits along both dims (%d)", n);
    if (n == 4) {
        CHECK(parts[0].rep[0] == 4096 && parts[0].rep[1] == 4097 && parts[1].rep[1] == 5761 && parts[2].rep[0] == 5760 &&
              parts[3].rep[0] == 5760 && parts[3].rep[1] == 5761,
              "its parts are tuned at n = 4097 and 5761 (odd), m = 4096 and 5760 (aligned): %lld %lld %lld %lld",
              parts[0].rep[1], parts[1].rep[1], parts[2].rep[0], parts[3].rep[1]);
        CHECK(parts[1].align[1] == 1 && parts[3].align[0] == 8, "the parts record the bucket's classes");
        CHECK_STR(parts[3].key, "m=2^12,n=2^12:align1/5760,5760", "a part's key keeps the class in its home");
        char home[96];
        bucket_home(parts[3].key, home, sizeof home);
        CHECK_STR(home, "m=2^12,n=2^12:align1", "its home is the odd bucket");
        CHECK(bucket_in_home(parts[3].key, "m=2^12,n=2^12:align1") && !bucket_in_home(parts[3].key, "m=2^12,n=2^12"),
              "it is in the odd bucket's home, not the aligned one's");
        bucket again[16];
        int n2 = bucket_split(&parts[1], 2, again);
        CHECK(n2 == 2 && again[1].rep[1] % 2 == 1 && again[1].rep[1] > again[1].lo[1] && again[1].rep[1] < again[1].hi[1],
              "a part's part is tuned at an odd size too (%lld in [%lld, %lld))", n2 == 2 ? again[1].rep[1] : 0,
              n2 == 2 ? again[1].lo[1] : 0, n2 == 2 ? again[1].hi[1] : 0);
    }
    bucket two = { .ndims = 1, .lo = { 4096 }, .hi = { 8192 }, .rep = { 4100 }, .align = { 4 }, .key = "n=2^12:align4" };
    n = bucket_split(&two, 1, parts);
    CHECK(n == 2 && parts[0].rep[0] == 4100 && parts[1].rep[0] == 5764, "class 4: the upper part at 5764 (%lld)",
          n == 2 ? parts[1].rep[0] : 0);
    /* No size of the class in the part: its lower edge. */
    bucket tiny = { .ndims = 1, .lo = { 4 }, .hi = { 8 }, .rep = { 6 }, .align = { 2 }, .key = "n=2^2:align2" };
    n = bucket_split(&tiny, 1, parts);
    CHECK(n == 2 && parts[0].lo[0] == 4 && parts[0].hi[0] == 5 && parts[0].rep[0] == 4 && parts[1].rep[0] == 6,
          "[4, 8) of class 2 cut at 5: [4, 5) at 4 (no size of class 2 in it), [5, 8) at 6");
}

/* Ranges: a bucket per log2 range and class asked for, tuned at its largest
** size of that class (where a kernel tiled along the dim does the most
** work); every size of the range served by a bucket of its class or lower. */
static void reps_are(const char *what, long long lo, long long hi, unsigned align, const long long *want, int nwant)
{
    long long got[64];
    int n = spec_range_reps(lo, hi, align, got, 64);
    int same = n == nwant;
    for (int i = 0; same && i < n; i++) same = got[i] == want[i];
    char text[512] = "";
    for (int i = 0, at = 0; i < n && at < (int)sizeof text - 24; i++) at += snprintf(text + at, sizeof text - (size_t)at, " %lld", got[i]);
    CHECK(same, "%s: tuned at%s", what, text);
}

/* Whether every size of [lo, hi] is served: a rep in its log2 bucket of a
** key class at most its own (align_key_class; 0 is the bucket's top), and
** at most 7 below it (within one period of the classes: a bucket is tuned
** at its largest size of its class). */
static int key_cls(long long s, long long blo)
{
    int k = align_key_class(s, blo);
    return k ? k : blo >= 8 ? 8 : (int)blo;
}

static int covers(long long lo, long long hi, const long long *reps, int n)
{
    for (long long s = lo; s <= hi; s++) {
        long long blo, bhi;
        bucket_of(s, &blo, &bhi);
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            ok = reps[i] >= blo && reps[i] < bhi && key_cls(reps[i], blo) <= key_cls(s, blo) && reps[i] >= s - 7;
        if (!ok) return 0;
    }
    return 1;
}

static void test_range(void)
{
    static const long long dflt[] = { 1, 2, 3, 4, 7, 8, 15, 24, 31, 56, 63, 120, 127, 248, 255, 256 };
    reps_are("[1, 256], classes 8 and 1", 1, 256, 9, dflt, (int)(sizeof dflt / sizeof *dflt));
    static const long long odd[] = { 1, 3, 7, 15, 31, 63, 127, 255, 256 };
    reps_are("[1, 256], class 1 only (256: the bucket's only size)", 1, 256, 1, odd, 9);
    static const long long few[] = { 19 };
    reps_are("[17, 20]: no multiple of 8 in it, class 1 at 19", 17, 20, 9, few, 1);
    static const long long eight[] = { 4, 7, 8, 15 };
    reps_are("[4, 15], class 8 only: the odd sizes still get a bucket", 4, 15, 8, eight, 4);
    long long r[64];
    for (long long lo = 1; lo <= 40; lo += 3)
        for (long long hi = lo; hi <= 300; hi += 37) {
            int n1 = spec_range_reps(lo, hi, 9, r, 64), n8 = 0;
            int ok1 = n1 > 0 && covers(lo, hi, r, n1);
            long long r8[64];
            n8 = spec_range_reps(lo, hi, 8, r8, 64);
            if (!ok1 || !(n8 > 0 && covers(lo, hi, r8, n8))) {
                CHECK(0, "range [%lld, %lld] is covered by its buckets", lo, hi);
                return;
            }
        }
    CHECK(1, "every range [lo, hi] sampled from 1..300 is covered by its buckets (classes 8+1, and 8 alone)");
    CHECK(spec_range_reps(1, 1LL << 40, 9, r, 64) == -1, "[1, 2^40] with two classes: more than 64 buckets, refused");

    const char *path = yaml("tasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    shapes:\n      m: {range: [1, 64]}\n"
                            "      n: {values: [4096]}\n      k: {values: [4096]}\n");
    spec s;
    char err[512];
    if (spec_load(path, &s, err, sizeof err)) {
        CHECK(0, "a range spec loads (%s)", err);
        return;
    }
    bucket *b = NULL;
    int nb = spec_buckets(&s.tasks[0], &b);
    CHECK(nb == 12, "m in [1, 64]: 12 buckets (1; 2, 3; 4, 7; 8, 15; 24, 31; 56, 63; 64) (got %d)", nb);
    int k24 = -1, k31 = -1, k64 = -1;
    for (int i = 0; i < nb; i++) {
        if (b[i].rep[0] == 24) k24 = i;
        if (b[i].rep[0] == 31) k31 = i;
        if (b[i].rep[0] == 64) k64 = i;
    }
    CHECK(k24 >= 0 && !strcmp(b[k24].key, "m=2^4,n=2^12,k=2^12") && b[k24].ranged == 1 && b[k24].slo[0] == 16 &&
          b[k24].shi[0] == 32 && b[k24].lo[0] == 16 && b[k24].hi[0] == 32,
          "24: key m=2^4 (the aligned bucket), serves [16, 32) (key '%s')", k24 >= 0 ? b[k24].key : "");
    CHECK(k31 >= 0 && !strcmp(b[k31].key, "m=2^4:align1,n=2^12,k=2^12") && b[k31].align[0] == 1,
          "31: key m=2^4:align1 (key '%s')", k31 >= 0 ? b[k31].key : "");
    CHECK(k64 >= 0 && b[k64].lo[0] == 64 && b[k64].hi[0] == 128 && b[k64].slo[0] == 64 && b[k64].shi[0] == 65,
          "64: the bucket [64, 128) keeps its log2 edges and serves only 64 of the range");
    /* A range bucket's parts are tuned at their largest sizes, and a dim
    ** is not cut where one side would hold no size of the range. */
    bucket parts[16];
    int np = k31 >= 0 ? bucket_split(&b[k31], 1, parts) : 0;
    CHECK(np == 2 && parts[0].rep[0] == 23 && parts[1].rep[0] == 31 && parts[0].shi[0] == 24 && parts[1].slo[0] == 24,
          "[16, 32) of class 1 cut at 24: parts tuned at 23 and 31 (got %lld, %lld)", np == 2 ? parts[0].rep[0] : 0,
          np == 2 ? parts[1].rep[0] : 0);
    np = k24 >= 0 ? bucket_split(&b[k24], 1, parts) : 0;
    CHECK(np == 2 && parts[0].rep[0] == 16 && parts[1].rep[0] == 24, "[16, 32) of class 8: parts tuned at 16 and 24");
    np = k64 >= 0 ? bucket_split(&b[k64], 1, parts) : 0;
    CHECK(np == 1 && parts[0].rep[0] == 64, "[64, 128) serving only 64: not cut (%d parts)", np);
    free(b);
    spec_free(&s);

    expect_error("range with values", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [1, 8], values: [4]}\n",
                 5, "exactly one", "range");
    expect_error("align without range", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {values: [4], align: [1]}\n",
                 5, "align", "range");
    expect_error("an empty range", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [9, 8]}\n", 5,
                 "empty", NULL);
    expect_error("a range of one size", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [9]}\n", 5,
                 "[lo, hi]", NULL);
    expect_error("class 3", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [1, 9], align: [3]}\n", 5,
                 "class 3", NULL);
    expect_error("a class twice", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [1, 9], align: [1, 1]}\n",
                 5, "twice", NULL);
    expect_error("a range too wide", "tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {range: [1, 1099511627776]}\n",
                 5, "more than 64 buckets", NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/aitune-test-spec-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL setup: mkdtemp\n");
        return 1;
    }
    test_good();
    test_errors();
    test_split();
    test_align();
    test_range();
    cleanup();
    CHECK_DONE();
}
