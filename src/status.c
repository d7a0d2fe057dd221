/* status.c: `aitune status`: is each winner still fresh on this GPU and
** toolchain? A winner is stale when the hardware it was measured on is not
** this GPU's and no winner of this GPU covers its bucket, or when the driver,
** CUDA driver API, NVRTC, aitune version or its op's template sources differ
** from what measured it. The exit code makes it an alert for cron or CI. */
#define _GNU_SOURCE
#include "cli.h"
#include "spec.h"
#include "identity.h"
#include "jit.h"
#include "json.h"
#include "registry_winner.h"
#include "vendor.h"
#include "worker.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char status_summary[] =
    "Say, per winner, whether it is fresh or stale on this GPU and toolchain, and why. Stale means the\n"
    "GPU differs (and no winner of this GPU covers the bucket), or the driver, CUDA driver API, NVRTC,\n"
    "aitune version or the op's template sources changed since it was measured. Winners of another GPU\n"
    "whose bucket this GPU has its own winner for are listed as other. Also shows each winner's age and\n"
    "the misses recorded per op (shapes applications asked for that no bucket holds), and how many\n"
    "buckets or parts the vendor library (cuBLASLt) holds, where no template beat it.\n"
    "The GPU's facts come from the worker; without a GPU, only the toolchain parts this machine knows\n"
    "(NVRTC, aitune, templates) are compared, and the output says so.\n\n"
    "  --json     one JSON object: current identity, winners with state and reasons, misses\n"
    "  --gpu N    the GPU to compare with (default 0)\n"
    "  --db PATH  the registry (read only; an older one is read as it is)\n\n"
    "Exit: 0 when every winner is fresh, 1 when something is stale, 2 usage, 3 when the registry does\n"
    "not open.";
const char status_usage[] = "aitune status [--json] [--gpu N] [--db PATH]";

/* What this machine runs now. */
typedef struct current {
    int gpu_known;
    char gpu_why[256];          /* why the GPU was not asked, when not */
    device dev;
    char hw[256];
} current;

typedef struct winner_row {
    char *op, *arch, *dtype, *bucket, *hw, *tmpl, *config, *when;
    double median_us, age_s;
    char reasons[512];
    const char *state;          /* fresh | stale | other */
} winner_row;

typedef struct status_ctx {
    const current *cur;
    const char *root;
    winner_row *rows;
    int n, cap;
} status_ctx;

static int collect(const reg_winner_identity *w, void *vctx)
{
    status_ctx *c = vctx;
    if (c->n == c->cap) c->rows = xrealloc(c->rows, (size_t)(c->cap = c->cap ? 2 * c->cap : 32) * sizeof *c->rows);
    winner_row *o = &c->rows[c->n++];
    memset(o, 0, sizeof *o);
    o->op = xstrdup(w->op); o->arch = xstrdup(w->arch); o->dtype = xstrdup(w->dtype); o->bucket = xstrdup(w->bucket);
    o->hw = xstrdup(w->hw); o->tmpl = xstrdup(w->tmpl); o->config = xstrdup(w->config); o->when = xstrdup(w->when);
    o->median_us = w->median_us;
    o->age_s = w->age_s;
    identity_stale(w, c->cur->gpu_known ? &c->cur->dev : NULL, c->cur->dev.nvrtc, c->root, o->reasons,
                   sizeof o->reasons);
    o->state = o->reasons[0] ? "stale" : "fresh";
    return 0;
}

/* A winner measured on other hardware is not stale when this GPU has its
** own winner for the same bucket (or a part of it, or the bucket a part is
** of), fresh or not: it is another GPU's. */
static int same_home(const char *a, const char *b)
{
    char ha[96], hb[96];
    bucket_home(a, ha, sizeof ha);
    bucket_home(b, hb, sizeof hb);
    return !strcmp(ha, hb);
}

static void mark_other(status_ctx *c)
{
    if (!c->cur->gpu_known) return;
    for (int i = 0; i < c->n; i++) {
        winner_row *w = &c->rows[i];
        if (!strcmp(w->hw, c->cur->hw)) continue;
        for (int j = 0; j < c->n; j++) {
            winner_row *m = &c->rows[j];
            if (!strcmp(m->hw, c->cur->hw) && !strcmp(m->op, w->op) && !strcmp(m->arch, w->arch) &&
                !strcmp(m->dtype, w->dtype) && same_home(m->bucket, w->bucket)) {
                w->state = "other";
                break;
            }
        }
    }
}

static void age_text(double s, char *out, size_t cap)
{
    if (s < 0) snprintf(out, cap, "age ?");
    else if (s < 3600) snprintf(out, cap, "%.0f min old", s / 60);
    else if (s < 2 * 86400) snprintf(out, cap, "%.0f h old", s / 3600);
    else snprintf(out, cap, "%.0f days old", s / 86400);
}

typedef struct miss_ctx { jw *json; int n; } miss_ctx;

static int show_miss(const char *op, const char *arch, const char *dtype, long long shapes, long long calls, void *vctx)
{
    miss_ctx *m = vctx;
    if (m->json) {
        jw *w = m->json;
        jw_space(w, "\n  ");
        jw_obj(w);
        jw_key(w, "op");
        jw_str(w, op);
        jw_key(w, "arch");
        jw_str(w, arch);
        jw_key(w, "dtype");
        jw_str(w, dtype);
        jw_key(w, "shapes");
        jw_int(w, shapes);
        jw_key(w, "calls");
        jw_int(w, calls);
        jw_end(w);
    } else {
        strbuf s = STRBUF_INIT;
        sb_printable(&s, op);
        printf("misses  %-12s %-6s %-6s %lld shape%s, %lld call%s\n", sb_str(&s), arch, dtype, shapes,
               shapes == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
        sb_free(&s);
    }
    m->n++;
    return 0;
}

/* --json: what this machine runs. */
static void json_current(jw *w, const current *cur)
{
    jw_key(w, "current");
    jw_obj(w);
    jw_key(w, "gpu_checked");
    jw_bool(w, cur->gpu_known);
    jw_key(w, "hw");
    jw_str(w, cur->gpu_known ? cur->hw : NULL);
    jw_key(w, "driver");
    jw_str(w, cur->gpu_known ? cur->dev.driver : NULL);
    jw_key(w, "cuda_driver");
    if (cur->gpu_known) jw_int(w, cur->dev.cuda_driver);
    else jw_null(w);
    jw_key(w, "nvrtc");
    jw_str(w, cur->dev.nvrtc);
    jw_key(w, "aitune");
    jw_str(w, AITUNE_TOOL_VERSION);
    if (!cur->gpu_known) {
        jw_key(w, "gpu_error");
        jw_str(w, cur->gpu_why);
    }
    jw_end(w);
}

/* --json: one winner, its reasons a list. */
static void json_winner(jw *j, const winner_row *w)
{
    const char *keys[] = { "op", "arch", "dtype", "bucket", "hw", "template", "config" };
    const char *vals[] = { w->op, w->arch, w->dtype, w->bucket, w->hw, w->tmpl, w->config };
    jw_space(j, "\n  ");
    jw_obj(j);
    for (int i = 0; i < 7; i++) {
        jw_key(j, keys[i]);
        jw_str(j, vals[i]);
    }
    jw_key(j, "median_us");
    jw_num(j, w->median_us, 3);
    jw_key(j, "measured");
    jw_str(j, w->when);
    jw_key(j, "age_s");
    if (w->age_s < 0) jw_null(j);
    else jw_num(j, w->age_s, 0);
    jw_key(j, "state");
    jw_str(j, w->state);
    jw_key(j, "reasons");
    jw_arr(j);
    /* reasons are "; "-joined text of this file's making */
    char *save = NULL, *copy = xstrdup(w->reasons);
    for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        while (*t == ' ') t++;
        jw_str(j, t);
    }
    free(copy);
    jw_end(j);
    jw_end(j);
}

/* A winner's line. */
static void print_winner(const winner_row *w)
{
    char age[32];
    age_text(w->age_s, age, sizeof age);
    strbuf s = STRBUF_INIT;
    sb_printable(&s, w->op);
    sb_puts(&s, " ");
    sb_printable(&s, w->dtype);
    sb_puts(&s, " ");
    sb_printable(&s, w->bucket);
    printf("%-6s  %-28s %-6s %-14s %s", w->state, sb_str(&s), w->arch, age, w->tmpl);
    sb_reset(&s);
    if (w->reasons[0] && strcmp(w->state, "other")) {
        sb_printable(&s, w->reasons);
        printf(": %s", sb_str(&s));
    } else if (!strcmp(w->state, "other")) {
        sb_printable(&s, w->hw);
        printf(" (on %s)", sb_str(&s));
    }
    printf("\n");
    sb_free(&s);
}

static void current_identity(int gpu, current *cur)
{
    memset(cur, 0, sizeof *cur);
    worker *w = worker_new(gpu);
    strbuf env = STRBUF_INIT;
    if (worker_hello(w, &cur->dev, &env) == 0) {
        cur->gpu_known = 1;
        identity_hw(&cur->dev, cur->hw, sizeof cur->hw);
    } else {
        snprintf(cur->gpu_why, sizeof cur->gpu_why, "%s", worker_errmsg(w));
        memset(&cur->dev, 0, sizeof cur->dev);
    }
    sb_free(&env);
    worker_free(w);
    /* The worker reports the NVRTC the sweep would compile with; without
    ** one, this process's. */
    if (!cur->dev.nvrtc[0]) snprintf(cur->dev.nvrtc, sizeof cur->dev.nvrtc, "%s", jit_nvrtc_version());
}

int cmd_status(int argc, char **argv)
{
    opt opts[] = { { "--json", 0, 0, 0 }, { "--gpu", 1, 0, 0 }, { "--db", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("status", status_usage, status_summary, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    int gpu = 0;
    if (opts[1].set) {
        long long v;
        if ((rc = cli_count("status", status_usage, "--gpu", opts[1].value, 0, 63, &v))) return rc;
        gpu = (int)v;
    }
    const char *db = cli_db_path(opts[2].value);
    if (!file_exists(db)) {
        error("no registry at '%s' (give --db)", db);
        return EXIT_INPUT;
    }
    reg *r;
    if (reg_open(db, 1, &r)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    current cur;
    current_identity(gpu, &cur);
    status_ctx c = { .cur = &cur, .root = cli_root() };
    if (reg_winner_identities(r, collect, &c)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    mark_other(&c);
    int stale = 0, fresh = 0, other = 0, vendor = 0;
    for (int i = 0; i < c.n; i++) {
        vendor += vendor_is_template(c.rows[i].tmpl);
        if (!strcmp(c.rows[i].state, "stale")) stale++;
        else if (!strcmp(c.rows[i].state, "fresh")) fresh++;
        else other++;
    }
    jw js = { 0 };
    int json = opts[0].set;
    miss_ctx mc = { .json = json ? &js : NULL };
    if (json) {
        jw_obj(&js);
        json_current(&js, &cur);
        const char *counts[] = { "fresh", "stale", "other", "vendor" };
        int nums[] = { fresh, stale, other, vendor };
        for (int i = 0; i < 4; i++) {
            if (i == 0) jw_space(&js, "\n");
            jw_key(&js, counts[i]);
            jw_int(&js, nums[i]);
        }
        jw_space(&js, "\n");
        jw_key(&js, "winners");
        jw_arr(&js);
        for (int i = 0; i < c.n; i++) json_winner(&js, &c.rows[i]);
        jw_end(&js);
        jw_space(&js, "\n");
        jw_key(&js, "misses");
        jw_arr(&js);
    } else {
        if (cur.gpu_known)
            printf("this GPU: %s; driver %s, CUDA %d, NVRTC %s, aitune %s\n", cur.hw, cur.dev.driver,
                   cur.dev.cuda_driver, cur.dev.nvrtc, AITUNE_TOOL_VERSION);
        else
            printf("this GPU: not checked (%s); NVRTC %s, aitune %s\n", cur.gpu_why, cur.dev.nvrtc, AITUNE_TOOL_VERSION);
        for (int i = 0; i < c.n; i++) print_winner(&c.rows[i]);
    }
    if (reg_misses_by_op(r, show_miss, &mc)) {
        error("%s", reg_errmsg(r));
        rc = EXIT_INPUT;
    }
    if (json) {
        if (mc.n) jw_space(&js, "\n");
        jw_end(&js);
        jw_end(&js);
        printf("%s\n", jw_text(&js));
    } else {
        if (!c.n) printf("no winners in %s\n", db);
        else printf("%d winner%s: %d fresh, %d stale%s", c.n, c.n == 1 ? "" : "s", fresh, stale, other ? "" : "\n");
        if (other) printf(", %d of another GPU\n", other);
        if (vendor)
            printf("the vendor (cuBLASLt) holds %d bucket%s or part%s: no template beat it there\n", vendor,
                   vendor == 1 ? "" : "s", vendor == 1 ? "" : "s");
        if (stale) printf("hint: `aitune retune SPEC` re-measures the stale buckets' finalists\n");
    }
    jw_free(&js);
    for (int i = 0; i < c.n; i++) {
        winner_row *w = &c.rows[i];
        free(w->op); free(w->arch); free(w->dtype); free(w->bucket); free(w->hw); free(w->tmpl); free(w->config);
        free(w->when);
    }
    free(c.rows);
    reg_close(r);
    if (rc) return rc;
    return stale ? EXIT_FAIL : EXIT_OK;
}
