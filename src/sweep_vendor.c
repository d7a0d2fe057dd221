/* sweep_vendor.c: see sweep_vendor.h. */
#define _GNU_SOURCE
#include "sweep_vendor.h"
#include "vendor.h"
#include "json.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sweep_vendor_parse(const char *s, int *mode)
{
    static const char *const names[] = { "win", "time", "off" };
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, names[i])) {
            *mode = i;
            return 0;
        }
    return -1;
}

void sweep_vendor_bind(sweep_vendor *V, int mode, worker *W, reg *R, long long dev_id, long long run_id,
                       const char *arch, double kernel_timeout)
{
    V->mode = mode;
    V->W = W;
    V->R = R;
    V->dev_id = dev_id;
    V->run_id = run_id;
    snprintf(V->arch, sizeof V->arch, "%s", arch);
    V->kernel_timeout = kernel_timeout;
}

void sweep_vendor_add(sweep_vendor *V, const sweep_vendor *L)
{
    V->timed += L->timed;
    V->resumed += L->resumed;
    V->failed += L->failed;
    V->raced += L->raced;
    V->held += L->held;
    V->log_x += L->log_x;
    if (L->nx && (!V->nx || L->worst_x < V->worst_x)) V->worst_x = L->worst_x;
    V->nx += L->nx;
    V->said += L->said;
}

int sweep_vendor_serves(const sweep_vendor *V, const op_task *t)
{
    return V && V->mode != SWEEP_VENDOR_OFF && V->W && vendor_kind(t->op, t->dtype) >= 0;
}

static void row_init(const sweep_vendor *V, const op_task *t, const char *home, reg_vendor *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->op, sizeof v->op, "%s", t->op);
    snprintf(v->arch, sizeof v->arch, "%s", V->arch);
    snprintf(v->dtype, sizeof v->dtype, "%s", t->dtype);
    snprintf(v->bucket, sizeof v->bucket, "%s", home);
    tmpl_shape_json(t, v->shape, sizeof v->shape);
    v->stream = t->stream;
    snprintf(v->library, sizeof v->library, "cuBLASLt");
    v->device = V->dev_id;
    v->run = V->run_id;
}

static void row_fail(reg_vendor *v, const char *status, const char *why)
{
    snprintf(v->status, sizeof v->status, "%s", status);
    snprintf(v->error, sizeof v->error, "%s", why ? why : "(no reason given)");
    v->median_us = v->min_us = v->max_us = v->spread = 0;
    v->samples = 0;
}

/* A request's result as v's status: a dead or hung worker, an error or a
** wrong answer is the vendor's. 1 when it went well. */
static int said(sweep_vendor *V, reg_vendor *v, int rc)
{
    if (rc == WORKER_OK) return 1;
    row_fail(v, rc == WORKER_WRONG ? "wrong" : "runtime", worker_errmsg(V->W));
    return 0;
}

/* cuBLASLt's product for t into slot, verified: 1, else 0 (v says why). */
static int load(sweep_vendor *V, const op_task *t, int slot, reg_vendor *v)
{
    wire_vendor q = { .slot = slot, .op = t->op, .dtype = t->dtype };
    char lib[64] = "", algo[128] = "";
    /* The first request loads cuBLASLt (hundreds of MB) and runs the heuristic. */
    if (!said(V, v, worker_vendor(V->W, &q, lib, algo, (int)sizeof lib, 120))) return 0;
    if (lib[0]) snprintf(v->library, sizeof v->library, "%s", lib);
    snprintf(v->algo, sizeof v->algo, "%s", algo);
    return said(V, v, worker_verify(V->W, slot, V->kernel_timeout > 0 ? V->kernel_timeout : 30));
}

/* A time's statistics into v (ok), or -1 when it has none. */
static int stats_into(const stats *st, reg_vendor *v)
{
    if (!(st->median > 0) || !isfinite(st->median)) return -1;
    v->median_us = st->median;
    v->min_us = st->min;
    v->max_us = st->max;
    v->spread = st->spread;
    v->samples = st->n;
    snprintf(v->status, sizeof v->status, "ok");
    v->error[0] = 0;
    return 0;
}

/* Store v; a failure is said once per sweep (the next ones are in the registry). */
static int store(sweep_vendor *V, const reg_vendor *v)
{
    if (strcmp(v->status, "ok")) {
        V->failed++;
        if (!V->said++)
            warning("%s %s at %s: the vendor (cuBLASLt) is not timed: %s: %s (the sweep goes on without it; "
                    "`aitune why` shows each shape's)", v->op, v->dtype, v->shape, v->status, v->error);
    }
    if (reg_vendor_put(V->R, v)) return error("%s", reg_errmsg(V->R));
    return 0;
}

/* t's row: the registry's on this GPU's hardware (counted as resumed
** where count says), else measured and stored. */
static int time_row(sweep_vendor *V, const op_task *t, const char *home, reg_vendor *out, int count)
{
    if (!sweep_vendor_serves(V, t)) return 0;
    row_init(V, t, home, out);
    int had = reg_vendor_get(V->R, t->op, V->arch, t->dtype, out->shape, t->stream, V->dev_id, out);
    if (had < 0) return error("%s", reg_errmsg(V->R));
    if (had) {
        V->resumed += count;
        return !strcmp(out->status, "ok");
    }
    return sweep_vendor_measure(V, t, home, out);
}

int sweep_vendor_time(sweep_vendor *V, const op_task *t, const char *home, reg_vendor *out)
{
    return time_row(V, t, home, out, 1);
}

int sweep_vendor_bar(sweep_vendor *V, const op_task *t, const char *home, double *us)
{
    reg_vendor v;
    int got = time_row(V, t, home, &v, 0);
    *us = got > 0 ? v.median_us : 0;
    return got;
}

/* The vendor's product for t into SWEEP_VENDOR_SLOT, verified, as V->bar's
** row (row_init'd by the caller): 1, else 0 with the row saying why and the
** slot emptied. */
static int slot_load(sweep_vendor *V, const op_task *t)
{
    if (load(V, t, SWEEP_VENDOR_SLOT, &V->bar)) return 1;
    worker_unload(V->W, SWEEP_VENDOR_SLOT, 30);
    return 0;
}

/* The slot's statistics from a race as V->bar's time, stored, the slot
** emptied: 1 stored, 0 no time (a race that failed, maybe the other slots'
** doing: nothing stored), -1 the registry failed (said). */
static int slot_record(sweep_vendor *V, const stats *st)
{
    worker_unload(V->W, SWEEP_VENDOR_SLOT, 30);
    if (stats_into(st, &V->bar)) return 0;
    return store(V, &V->bar) ? -1 : 1;
}

int sweep_vendor_bar_load(sweep_vendor *V, const op_task *t, const char *home)
{
    if (!sweep_vendor_serves(V, t)) return 0;
    reg_vendor had_row;
    row_init(V, t, home, &V->bar);
    int had = reg_vendor_get(V->R, t->op, V->arch, t->dtype, V->bar.shape, t->stream, V->dev_id, &had_row);
    if (had < 0) return error("%s", reg_errmsg(V->R));
    if (had && strcmp(had_row.status, "ok")) return 0;   /* its failure there is recorded: not tried again */
    V->bar_new = !had;
    if (slot_load(V, t)) return 1;
    if (had) return 0;   /* a time there already: it stays the bar (sweep_vendor_bar) */
    return store(V, &V->bar) ? -1 : 0;
}

int sweep_vendor_bar_raced(sweep_vendor *V, const stats *st, double *us)
{
    int got = slot_record(V, st);
    *us = got > 0 ? V->bar.median_us : 0;
    if (got > 0 && V->bar_new) V->timed++;
    V->bar_new = 0;
    return got;
}

int sweep_vendor_measure(sweep_vendor *V, const op_task *t, const char *home, reg_vendor *out)
{
    if (!sweep_vendor_serves(V, t)) return 0;
    row_init(V, t, home, out);
    int slot = 0;
    if (load(V, t, slot, out)) {
        wire_time q;
        wire_time_init(&q);
        q.nslots = 1;
        q.slots[0] = slot;
        q.max_seconds = 1.5;
        stats st;
        if (said(V, out, worker_time(V->W, &q, &st, 60 + 20 * V->kernel_timeout)) && stats_into(&st, out))
            row_fail(out, "runtime", worker_errmsg(V->W));
        worker_unload(V->W, slot, 30);
    }
    if (!strcmp(out->status, "ok")) V->timed++;
    if (store(V, out)) return -1;
    return !strcmp(out->status, "ok");
}

int sweep_vendor_race(sweep_vendor *V, const op_task *t, const char *home, int slot, double *cand_us,
                      double *vendor_us)
{
    *cand_us = *vendor_us = 0;
    if (!sweep_vendor_serves(V, t) || slot == SWEEP_VENDOR_SLOT) return 0;
    row_init(V, t, home, &V->bar);
    if (!slot_load(V, t)) return store(V, &V->bar) ? -1 : 0;   /* the vendor's own failure */
    /* A race that fails may be the candidate's doing (its slot, the worker
    ** restarted): the vendor's row stays as it was. */
    wire_time q;
    wire_race_init(&q);
    q.nslots = 2;
    q.slots[0] = slot;
    q.slots[1] = SWEEP_VENDOR_SLOT;
    stats st[2];
    memset(st, 0, sizeof st);
    if (worker_time(V->W, &q, st, 120 + 60 * V->kernel_timeout) != WORKER_OK || !(st[0].median > 0))
        memset(&st[1], 0, sizeof st[1]);
    int got = slot_record(V, &st[1]);
    if (got <= 0) return got;
    *cand_us = st[0].median;
    *vendor_us = V->bar.median_us;
    V->raced++;
    return 1;
}

void sweep_vendor_count(sweep_vendor *V, double winner_us, double vendor_us)
{
    if (!(winner_us > 0) || !(vendor_us > 0)) return;
    double x = vendor_us / winner_us;
    V->log_x += log(x);
    if (!V->nx++ || x < V->worst_x) V->worst_x = x;
}

int sweep_vendor_winner(const sweep_vendor *V, const op_task *t, const bucket *b, double us, const char *beaten_tmpl,
                        const char *beaten_config, double beaten_us, double default_us, int exhaustive, winner *W)
{
    char err[512];
    char *plan = reg_vendor_plan(t, err, sizeof err);
    if (!plan) return -1;
    memset(W, 0, sizeof *W);
    snprintf(W->op, sizeof W->op, "%s", t->op);
    snprintf(W->arch, sizeof W->arch, "%s", V->arch);
    snprintf(W->dtype, sizeof W->dtype, "%s", t->dtype);
    snprintf(W->bucket, sizeof W->bucket, "%s", b->key);
    size_t at = 0, al = 0, ah = 0;
    for (int d = 0; d < b->ndims; d++) {
        at += (size_t)snprintf(W->dims + at, sizeof W->dims - at, "%s%s", d ? "," : "", t->dims[d]);
        al += (size_t)snprintf(W->lo + al, sizeof W->lo - al, "%s%lld", d ? "," : "", b->lo[d]);
        ah += (size_t)snprintf(W->hi + ah, sizeof W->hi - ah, "%s%lld", d ? "," : "", b->hi[d]);
    }
    tmpl_shape_json(t, W->shape, sizeof W->shape);
    snprintf(W->tmpl, sizeof W->tmpl, "%s", VENDOR_TEMPLATE);
    W->config = (char *)"{}";
    W->median_us = us;
    W->gbps = t->bytes / us / 1e3;
    W->tflops = t->flops / us / 1e6;
    W->default_us = default_us;
    W->margin = beaten_us > 0 ? beaten_us / us - 1 : -1;
    W->exhaustive = exhaustive;
    jw ru = { 0 };
    jw_arr(&ru);
    if (beaten_tmpl && beaten_config) {
        jw_obj(&ru);
        jw_key(&ru, "template");
        jw_str(&ru, beaten_tmpl);
        jw_key(&ru, "config");
        jw_raw(&ru, beaten_config);
        jw_key(&ru, "median_us");
        jw_num(&ru, beaten_us, 3);
        jw_end(&ru);
    }
    jw_end(&ru);
    W->runners_up = xstrdup(jw_text(&ru));
    jw_free(&ru);
    W->launch = plan;
    W->device = V->dev_id;
    W->run = V->run_id;
    return 0;
}

void sweep_vendor_summary(const sweep_vendor *V, char *out, int cap)
{
    out[0] = 0;
    if (!V || (!V->timed && !V->resumed && !V->failed && !V->raced)) return;
    size_t n = (size_t)cap, at = 0;
    at += (size_t)snprintf(out + at, n - at, "vendor: cuBLASLt timed at %d shape%s", V->timed, V->timed == 1 ? "" : "s");
    if (V->resumed && at < n) at += (size_t)snprintf(out + at, n - at, " (%d already in the registry)", V->resumed);
    if (V->raced && at < n)
        at += (size_t)snprintf(out + at, n - at, ", raced against %d winner%s", V->raced, V->raced == 1 ? "" : "s");
    if (V->failed && at < n) at += (size_t)snprintf(out + at, n - at, ", %d failed", V->failed);
    if (V->nx && at < n)
        at += (size_t)snprintf(out + at, n - at, "; winners %.2fx the vendor (geometric mean of %d), worst %.2fx",
                               exp(V->log_x / V->nx), V->nx, V->worst_x);
    if (at < n)
        snprintf(out + at, n - at, "; the vendor holds %d bucket%s or part%s\n", V->held, V->held == 1 ? "" : "s",
                 V->held == 1 ? "" : "s");
}
