/* why.c: `aitune why`: why the registry chose what it chose for one bucket.
** The winner and the finalists' race, the measured candidates (fastest ok
** first), every failure with its status and reason, and the environment the
** run recorded. Reads the registry only. */
#define _GNU_SOURCE
#include "cli.h"
#include "align.h"
#include "registry_measure.h"
#include "registry_vendor.h"
#include "registry_winner.h"
#include "spec.h"
#include "tmpl.h"
#include "vendor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char why_summary[] =
    "Explain one bucket's result, from the registry. The winner and the finalists' race, the fastest\n"
    "candidates, every failed candidate with its status and reason (wrong: elements and worst error;\n"
    "compile: the ptxas or NVRTC error, pruned spills; runtime: the CUDA error; timeout), the\n"
    "recorded environment (GPU, driver, NVRTC, clocks, command, seed), and the vendor library\n"
    "(cuBLASLt) where the sweep timed it: x vendor beside the winner, its time at each shape. The\n"
    "bucket is the one that holds --shape (of buckets of one range tuned at sizes of other alignment\n"
    "classes, n=2^12 and n=2^12:align1, the one whose class suits the shape, and one of an exact size,\n"
    "n=6144, before a log2 bucket that holds it too, as lookup picks), or\n"
    "--bucket as `aitune show` prints it. A bucket split in parts (spec split_at) shows the winner of\n"
    "the part that holds --shape (every part's for --bucket); its measurements are the bucket's.\n\n"
    "  --dtype T      the dtype (required)\n"
    "  --shape S      a shape in the op's dims (4096 or 4096,1024), or\n"
    "  --bucket KEY   a bucket key (n=2^26 or rows=2^14,cols=2^12; a part: n=2^12/5760; of an\n"
    "                 unaligned size: n=2^12:align1; of a dim tuned at exact sizes: n=6144)\n"
    "  --arch A       only this arch (default: every arch with that bucket)\n"
    "  --all          every ok candidate, not only the fastest 10\n"
    "  --db PATH      the registry\n\n"
    "Exit: 0, 1 when nothing is recorded for the bucket, 2 for a usage error or an unknown op or dtype,\n"
    "3 for a registry that does not open.";
const char why_usage[] = "aitune why OP --dtype T (--shape S | --bucket KEY) [--arch A] [--all] [--db PATH]";

/* Whether bucket key ("rows=2^14,cols=2^12", "n=2^12:align1", "n=6144")
** holds the shape given per dim name: each dim's size in [lo, 2 lo), or an
** exact dim's (names.h) its size. *score: how the class the key names
** (spec.h: bucket_key; none: its lower edge's, up to 8; an exact size's
** own) suits the shape's, and the dims named exactly, as libaitune ranks
** winners (rt.c: rt_align_score, align.h: bucket_score): higher when every
** size is of the key's class or a higher one (a config tuned at 4097 runs
** 4096, not the reverse), then the more dims exact, then the closer the
** classes. */
static int key_holds(const char *key, int nd, char dims[][16], const long long *shape, long long *score)
{
    int matched = 0, nexact = 0;
    unsigned char have[TMPL_MAXDIMS];
    memset(have, 3, sizeof have);   /* aligned, for a dim a key names twice and another not */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", key);
    for (char *save = NULL, *part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        if (!eq) return 0;
        *eq = 0;
        char *cls = strstr(eq + 1, ":align");
        int e = !strncmp(eq + 1, "2^", 2) ? atoi(eq + 3) : -1;   /* the key is the registry's: any text */
        long long lo = e >= 0 ? (e < 62 ? 1LL << e : 0) : atoll(eq + 1);
        int d = 0, exact = e < 0;
        while (d < nd && strcmp(dims[d], part)) d++;
        if (d == nd || lo < 1 || shape[d] < lo || shape[d] >= (exact ? lo + 1 : 2 * lo)) return 0;
        have[d] = (unsigned char)align_log2(exact ? lo : cls ? atoi(cls + 6) : lo < ALIGN_FULL ? lo : ALIGN_FULL);
        nexact += exact;
        matched++;
    }
    if (matched != nd) return 0;
    *score = bucket_score(have, nexact, shape, nd);
    return 1;
}

typedef struct want {
    const char *op, *dtype, *bucket;
    int nd;
    char dims[TMPL_MAXDIMS][16];
    long long shape[TMPL_MAXDIMS];
    int n;                      /* matches */
    char arch[8][16], key[8][96];
    long long score[8];         /* a --shape match's (key_holds) */
} want;

/* A shape's bucket is a home bucket: a split one's parts are explained
** under it (explain), a part alone only when --bucket names it. Of the
** buckets of one arch that hold a shape (4096 and 4097 of one range, keyed
** without and with ":align1"), those whose class suits it best, as lookup
** picks (key_holds). */
static int pick_bucket(const char *arch, const char *bucket, void *ctx)
{
    want *w = ctx;
    char home[96];
    bucket_home(bucket, home, sizeof home);
    const char *key = w->bucket ? bucket : home;
    long long score = 0;
    int hit = w->bucket ? !strcmp(w->bucket, bucket) : key_holds(home, w->nd, w->dims, w->shape, &score);
    for (int i = 0; i < w->n && hit; i++) hit = strcmp(w->arch[i], arch) || strcmp(w->key[i], key);
    for (int i = 0; i < w->n && hit; i++) hit = strcmp(w->arch[i], arch) || w->score[i] <= score;
    for (int i = 0; i < w->n && hit;)   /* a better class of the same arch replaces them */
        if (!strcmp(w->arch[i], arch) && w->score[i] < score) {
            w->n--;
            memmove(&w->arch[i], &w->arch[i + 1], sizeof w->arch[0] * (size_t)(w->n - i));
            memmove(&w->key[i], &w->key[i + 1], sizeof w->key[0] * (size_t)(w->n - i));
            memmove(&w->score[i], &w->score[i + 1], sizeof w->score[0] * (size_t)(w->n - i));
        } else {
            i++;
        }
    if (hit && w->n < 8) {
        snprintf(w->arch[w->n], sizeof w->arch[0], "%s", arch);
        snprintf(w->key[w->n], sizeof w->key[0], "%s", key);
        w->score[w->n] = score;
        w->n++;
    }
    return 0;
}

static int list_bucket(const char *arch, const char *bucket, void *ctx)
{
    strbuf *sb = ctx;
    sb_printf(sb, "%s%s %s", sb->len ? ", " : "", cli_shown(arch), cli_shown(bucket));
    return 0;
}

typedef struct tally {
    int all, shown_ok, ok, by_status[8];
    long long runs[16];
    int nruns;
    strbuf fails;
} tally;

static const char *statuses[] = { "ok", "constraint", "compile", "runtime", "timeout", "wrong", NULL };

static int add_run(tally *t, long long run)
{
    for (int i = 0; i < t->nruns; i++)
        if (t->runs[i] == run) return 0;
    if (run > 0 && t->nruns < 16) t->runs[t->nruns++] = run;
    return 0;
}

static int one(const measurement *m, void *ctx)
{
    tally *t = ctx;
    int s = 0;
    while (statuses[s] && strcmp(statuses[s], m->status)) s++;
    if (statuses[s]) t->by_status[s]++;
    add_run(t, m->run);
    if (!strcmp(m->status, "ok")) {
        if (t->ok++ == 0) printf("fastest correct candidates:\n");
        if (t->all || t->ok <= 10)
            printf("  %10.2f us  %5.1f%%  %8.1f GB/s  %3d regs  %s %s%s%s%s\n", m->median_us, 100 * m->spread, m->gbps,
                   m->registers, cli_shown(m->tmpl), cli_shown(m->config), m->stream ? "  (" : "",
                   m->stream ? timing_name(m->stream) : "", m->stream ? ")" : "");
        return 0;
    }
    /* The reason, on one line: errors can span several (ptxas logs). */
    sb_printf(&t->fails, "  %-10s %s %s: %s\n", cli_shown(m->status), cli_shown(m->tmpl), cli_shown(m->config),
              m->error && *m->error ? cli_shown(m->error) : "(no reason recorded)");
    return 0;
}

static void show_env(reg *r, long long run)
{
    reg_run ru;
    if (reg_run_get(r, run, &ru) != 1) return;
    printf("run %lld: %s\n", run, cli_shown(ru.command));
    printf("  aitune %s, seed %llu, %s .. %s (%s)\n", ru.version[0] ? cli_shown(ru.version) : "?", ru.seed,
           cli_shown(ru.started), ru.ended[0] ? cli_shown(ru.ended) : "?", ru.outcome[0] ? cli_shown(ru.outcome) : "?");
    if (ru.device_id)
        printf("  GPU: %s (sm_%d, %d SMs, %.1f GB, L2 %.0f MB) %s; driver %s, CUDA %d.%d, NVRTC %s\n", cli_shown(ru.dev.name),
               ru.dev.cc, ru.dev.sms, ru.dev.mem / 1e9, ru.dev.l2 / 1048576.0, cli_shown(ru.dev.uuid),
               ru.dev.driver[0] ? cli_shown(ru.dev.driver) : "?", ru.dev.cuda_driver / 1000, ru.dev.cuda_driver % 1000 / 10,
               cli_shown(ru.dev.nvrtc));
    if (ru.env[0] && strcmp(ru.env, "{}")) printf("  recorded: %s\n", cli_shown(ru.env));
}

typedef struct race_ctx { int n; double first; } race_ctx;

static int race_row(const char *tmpl, const char *config, double median_us, void *ctx)
{
    race_ctx *c = ctx;
    c->n++;
    printf("  %2d  %10.2f us  %+6.1f%%  %s %s\n", c->n, median_us, c->first > 0 ? 100 * (median_us / c->first - 1) : 0,
           cli_shown(tmpl), cli_shown(config));
    return 0;
}

/* Whether the stored part w holds the shape of q (no shape: every part does). */
static int part_holds(const winner *w, const want *q)
{
    if (!q || q->bucket) return 1;
    const char *lo = w->lo, *hi = w->hi;
    for (int d = 0; d < q->nd; d++) {
        char *e1, *e2;
        long long l = strtoll(lo, &e1, 10), h = strtoll(hi, &e2, 10);
        if (e1 == lo || e2 == hi || q->shape[d] < l || q->shape[d] >= h) return 0;
        lo = *e1 ? e1 + 1 : e1;
        hi = *e2 ? e2 + 1 : e2;
    }
    return 1;
}

static int show_winner(reg *r, const winner *w);

/* The vendor's measurements of the bucket (registry_vendor.h), one a line. */
static int vendor_row(const reg_vendor *v, void *ctx)
{
    int *n = ctx;
    if (!(*n)++) printf("the vendor (%s), timed as the candidates:\n", cli_shown(v->library));
    if (!strcmp(v->status, "ok"))
        printf("  %10.2f us  %5.1f%%  at %s%s%s%s  %s\n", v->median_us, 100 * v->spread, cli_shown(v->shape),
               v->stream ? " (" : "", v->stream ? timing_name(v->stream) : "", v->stream ? ")" : "", cli_shown(v->algo));
    else
        printf("  %-10s at %s: %s\n", cli_shown(v->status), cli_shown(v->shape),
               v->error[0] ? cli_shown(v->error) : "(no reason recorded)");
    return 0;
}


/* A split bucket (spec split_at): its parts' winners, those that hold the
** shape asked about. Returns how many parts it has, or -1. */
static int explain_parts(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const want *q)
{
    winner *ws;
    int n;
    if (reg_winner_family(r, op, arch, dtype, bucket, NULL, &ws, &n)) return error("%s", reg_errmsg(r));
    int parts = 0, rc = 0;
    for (int i = 0; i < n; i++) parts += strcmp(ws[i].bucket, bucket) != 0;
    if (parts) printf("split in %d parts (spec split_at: one config did not hold across the bucket)\n", parts);
    for (int i = 0; i < n && !rc; i++) {
        if (!strcmp(ws[i].bucket, bucket) || !part_holds(&ws[i], q)) continue;
        printf("part %s:\n", cli_shown(ws[i].bucket));
        rc = show_winner(r, &ws[i]);
    }
    for (int i = 0; i < n; i++) winner_free(&ws[i]);
    free(ws);
    return rc ? rc : parts;
}

static int explain(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, int all, const want *q)
{
    printf("%s %s %s on %s\n", cli_shown(op), cli_shown(dtype), cli_shown(bucket), cli_shown(arch));
    winner w;
    int has = reg_winner_get(r, op, arch, dtype, bucket, &w);
    if (has < 0) return error("%s", reg_errmsg(r));
    int parts = has ? 0 : explain_parts(r, op, arch, dtype, bucket, q);
    if (parts < 0) return -1;
    if (has) {
        int bad = show_winner(r, &w);
        winner_free(&w);
        if (bad) return -1;
    } else if (!parts) {
        printf("no winner: no candidate verified correct, or the sweep stopped before the race\n");
    }
    tally t = { .all = all, .fails = STRBUF_INIT };
    if (has) add_run(&t, w.run);   /* the run that stored it (a pin's too), first */
    if (reg_bucket_measurements(r, op, arch, dtype, bucket, one, &t)) {
        sb_free(&t.fails);
        return error("%s", reg_errmsg(r));
    }
    if (t.ok > 10 && !all) printf("  ... %d more (--all shows them)\n", t.ok - 10);
    int total = 0;
    for (int s = 0; statuses[s]; s++) total += t.by_status[s];
    printf("measured: %d candidate%s", total, total == 1 ? "" : "s");
    for (int s = 0; statuses[s]; s++)
        if (t.by_status[s]) printf(", %d %s", t.by_status[s], statuses[s]);
    printf("\n");
    if (t.fails.len) printf("failed:\n%s", sb_str(&t.fails));
    sb_free(&t.fails);
    int nv = 0;
    if (reg_vendor_each(r, op, arch, dtype, bucket, vendor_row, &nv)) return error("%s", reg_errmsg(r));
    for (int i = 0; i < t.nruns; i++) show_env(r, t.runs[i]);
    return 0;
}

/* A winner and the race it won. */
static int show_winner(reg *r, const winner *w)
{
    /* What cut the search, from its run: the run's budget, --max-evals on
    ** its command line, else the spec (its max_evals, or a strategy that
    ** samples the space). */
    char cut[96] = "";
    if (!w->exhaustive) {
        reg_run run;
        int got = w->run ? reg_run_get(r, w->run, &run) : 0;
        const char *why = got != 1 ? "a budget, --max-evals or the spec's max_evals"
                        : !strcmp(run.outcome, "budget") ? "the run's budget ran out"
                        : strstr(run.command, " --max-evals") ? "--max-evals on its command line"
                        : "the spec's max_evals or search strategy";
        snprintf(cut, sizeof cut, " (not exhaustive: %s cut the search)", why);
    }
    printf("winner: %s %s: %.2f us, %.1f GB/s, %.3f TFLOP/s%s\n", cli_shown(w->tmpl), cli_shown(w->config), w->median_us,
           w->gbps, w->tflops, cut);
    if (w->default_us > 0)
        printf("  %.2fx the template default (%.2f us in the same race)\n", w->default_us / w->median_us, w->default_us);
    if (w->margin >= 0) printf("  %.1f%% ahead of the runner-up\n", 100 * w->margin);
    else if (w->margin > -1) printf("  %.1f%% behind the fastest other finalist in the race (pinned: see its run)\n", -100 * w->margin);
    double vus = 0;
    int hv = reg_vendor_for_winner(r, w, &vus);
    if (hv < 0) return error("%s", reg_errmsg(r));
    if (vendor_is_template(w->tmpl))
        printf("  the vendor itself (cuBLASLt): no template beat it here, so libaitune and emit call cuBLASLt\n");
    else if (hv && w->median_us > 0)
        printf("  %.2fx the vendor (cuBLASLt: %.2f us at the same shape, timed the same way)\n", vus / w->median_us, vus);
    printf("  tuned at shape %s (bucket %s..%s of %s)\n", cli_shown(w->shape), cli_shown(w->lo), cli_shown(w->hi),
           cli_shown(w->dims));
    printf("the race (finalists re-timed interleaved; times from it):\n");
    race_ctx rc = { 0, w->median_us };
    race_row(w->tmpl, w->config, w->median_us, &rc);
    if (reg_winner_race(r, w->op, w->arch, w->dtype, w->bucket, race_row, &rc)) return error("%s", reg_errmsg(r));
    return 0;
}

int cmd_why(int argc, char **argv)
{
    opt opts[] = { { "--dtype", 1, 0, 0 }, { "--shape", 1, 0, 0 }, { "--bucket", 1, 0, 0 }, { "--arch", 1, 0, 0 },
                   { "--db", 1, 0, 0 },    { "--all", 0, 0, 0 },   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("why", why_usage, why_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return cli_usage_error("why", why_usage, "which op? (e.g. axpy)");
    if (!opts[0].value) return cli_usage_error("why", why_usage, "--dtype is required (e.g. --dtype bf16)");
    if (!!opts[1].value == !!opts[2].value)
        return cli_usage_error("why", why_usage, "give one of --shape or --bucket");
    want w = { .op = pos[0], .dtype = opts[0].value, .bucket = opts[2].value };
    const char *db = cli_db_path(opts[4].value);
    if ((rc = cli_check_op(cli_root(), db, w.op, w.dtype))) return rc;
    char arch[16] = "";
    if (opts[3].value) arch_base(opts[3].value, arch);
    if (opts[1].value) {
        /* The dims' names come from the op; the sizes from --shape. */
        tmpl *T = tmpl_open(cli_root());
        int ndt;
        char dts[32][16];
        int bad = tmpl_op_info(T, w.op, &w.nd, w.dims, &ndt, dts, 32);
        tmpl_close(T);
        if (bad) return cli_usage_error("why", why_usage, "op '%s' has no templates here: give --bucket", w.op);
        int n = 0;
        for (const char *p = opts[1].value; *p;) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p || v < 1 || (*end && *end != ',') || n == TMPL_MAXDIMS)
                return cli_usage_error("why", why_usage, "--shape '%s' is not like 4096 or 4096,1024", opts[1].value);
            w.shape[n++] = v;
            p = *end ? end + 1 : end;
        }
        if (n != w.nd)
            return cli_usage_error("why", why_usage, "op '%s' has %d dim%s; --shape gives %d", w.op, w.nd,
                                   w.nd == 1 ? "" : "s", n);
    }
    reg *r;
    if (!file_exists(db) || reg_open(db, 1, &r)) {
        if (!file_exists(db)) error("no registry at '%s' (run `aitune sweep SPEC`, or give --db)", db);
        else error("%s", reg_errmsg(r)), reg_close(r);
        return EXIT_INPUT;
    }
    if (reg_buckets(r, w.op, arch[0] ? arch : NULL, w.dtype, pick_bucket, &w)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    if (!w.n) {
        strbuf have = STRBUF_INIT;
        reg_buckets(r, w.op, arch[0] ? arch : NULL, w.dtype, list_bucket, &have);
        error("nothing recorded for %s %s in the bucket of %s%s (recorded: %s)", w.op, w.dtype,
              opts[1].value ? "shape " : "", opts[1].value ? opts[1].value : w.bucket,
              have.len ? sb_str(&have) : "none");
        sb_free(&have);
        reg_close(r);
        return EXIT_FAIL;
    }
    for (int i = 0; i < w.n && !rc; i++) {
        if (i) printf("\n");
        if (explain(r, w.op, w.arch[i], w.dtype, w.key[i], opts[5].set, &w)) rc = EXIT_INPUT;
    }
    reg_close(r);
    return rc;
}
