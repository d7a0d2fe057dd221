/* sweep_cand.c: see sweep_cand.h. */
#define _GNU_SOURCE
#include "sweep_cand.h"
#include "json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cand_free(cand *c)
{
    for (int i = 0; i < c->nalso; i++) free(c->also[i]);
    free(c->also);
    free(c->config);
    free(c->joined);
    free(c->error);
    kernel_src_free(&c->k);
    jit_job_clear(&c->job);
    measurement_free(&c->m);
    memset(c, 0, sizeof *c);
}

/* Compile through the cache: on return c->job is done or submitted. */
int cand_compile(sw *S, cand *c, const char *arch)
{
    c->job.source = xstrdup(c->k.source);
    snprintf(c->job.name, sizeof c->job.name, "%s", c->k.name);
    snprintf(c->job.arch, sizeof c->job.arch, "%s", arch);
    jit_key(c->job.source, c->job.name, c->job.arch, c->key);
    /* Lanes on several GPUs may want one kernel at once: the pool compiles
    ** it once. compile dedups its list itself. */
    if (!S->o->compile_only) memcpy(c->job.key, c->key, sizeof c->key);
    int hit = reg_cubin_get(S->R, c->key, &c->job);
    if (hit < 0) return error("%s", reg_errmsg(S->R));
    if (hit) {
        c->cached = 1;
        S->cache_hits++;
        return 0;
    }
    jit_submit(S->pool, &c->job);
    return 0;
}

int cand_finish(sw *S, cand *c)
{
    if (c->cached) return 0;
    jit_wait(S->pool, &c->job);
    if (c->job.cancelled) return -1;    /* Ctrl-C gave it up: no result, nothing to say */
    /* Another lane's compile of the same kernel is a cache hit; it is
    ** stored here too, as that lane may stop before it stores it. */
    if (c->job.shared) S->cache_hits++;
    else S->compiled++;
    if (c->job.ok && reg_cubin_put(S->R, c->key, &c->job)) return error("%s", reg_errmsg(S->R));
    return 0;
}

/* The kernel's launch plan as the registry and the worker hold it. */
char *cand_plan_json(const kernel_src *k, char *err, int errcap)
{
    if (!k->plan) {
        snprintf(err, (size_t)errcap, "no launch plan");
        return NULL;
    }
    return plan_encode(k->plan, err, errcap);
}

void cand_set_status(cand *c, const char *status, const char *err)
{
    snprintf(c->m.status, sizeof c->m.status, "%s", status);
    free(c->m.error);
    c->m.error = err ? xstrdup(err) : NULL;
}

/* A request's result as c's status: a dead or hung worker, an error or a
** wrong answer is the candidate's. Returns 1 when it went well. */
static int worker_said(sw *S, cand *c, int rc)
{
    if (rc == WORKER_OK) return 1;
    cand_set_status(c, rc == WORKER_TIMEOUT ? "timeout" : rc == WORKER_WRONG ? "wrong" : "runtime", worker_errmsg(S->W));
    return 0;
}

int cand_load(sw *S, cand *c, const op_task *t, int slot)
{
    plan_geom g;
    char err[512];
    char *pj = NULL;
    if (kernel_geometry(&c->k, t, &g, err, sizeof err) || !(pj = cand_plan_json(&c->k, err, sizeof err))) {
        char *e = xstrfmt("template '%s' launch(): %s", c->tmpl, err);
        cand_set_status(c, "compile", e);
        free(e);
        return 0;
    }
    /* The plan, not evaluated numbers: the worker binds it at the task's
    ** shape exactly as the runtime and emitted code do. */
    wire_load l = { .slot = slot, .name = c->k.name, .plan = pj };
    int ok = worker_said(S, c, worker_load(S->W, &l, c->job.cubin, c->job.cubin_len, 60));
    free(pj);
    return ok;
}

int cand_verify(sw *S, cand *c, int slot)
{
    return worker_said(S, c, worker_verify(S->W, slot, S->o->kernel_timeout));
}

/* Verify and time a compiled candidate in slot 0; fills c->m. */
static void evaluate(sw *S, cand *c, const op_task *t)
{
    if (!cand_load(S, c, t, 0) || !cand_verify(S, c, 0)) return;
    wire_time q;
    wire_time_init(&q);
    q.nslots = 1;
    q.max_seconds = 1.5;
    stats st;
    if (!worker_said(S, c, worker_time(S->W, &q, &st, 60 + 20 * S->o->kernel_timeout))) return;
    c->m.median_us = st.median;
    c->m.min_us = st.min;
    c->m.max_us = st.max;
    c->m.spread = st.spread;
    c->m.samples = st.n;
    if (!(st.median > 0)) {
        cand_set_status(c, "runtime", worker_errmsg(S->W));
        return;
    }
    c->m.gbps = t->bytes / st.median / 1e3;
    c->m.tflops = t->flops / st.median / 1e6;
    cand_set_status(c, "ok", NULL);
}


/* The fields that name the task's bucket on this device and run. */
void cand_bucket_fields(sw *S, measurement *m, const op_task *t, const bucket *b)
{
    snprintf(m->op, sizeof m->op, "%s", t->op);
    snprintf(m->arch, sizeof m->arch, "%s", S->arch);
    snprintf(m->dtype, sizeof m->dtype, "%s", t->dtype);
    snprintf(m->bucket, sizeof m->bucket, "%s", b->key);
    tmpl_shape_json(t, m->shape, sizeof m->shape);
    m->device = S->dev_id;
    m->run = S->run_id;
    m->stream = t->stream;
}

/* Fill the measurement key fields of c. */
void cand_key_fields(sw *S, cand *c, const op_task *t, const bucket *b)
{
    measurement *m = &c->m;
    _Static_assert(sizeof m->tmpl == sizeof c->tmpl, "template names fit both");
    memcpy(m->tmpl, c->tmpl, sizeof m->tmpl);
    cand_bucket_fields(S, m, t, b);
    m->config = xstrdup(c->config);
    snprintf(m->config_hash, sizeof m->config_hash, "%s", c->config_hash);
}

void bucket_state_keep(bucket_state *bs, const cand *c, int is_default)
{
    if (strcmp(c->m.status, "ok")) return;
    for (int i = 0; i < bs->nf; i++)
        if (!strcmp(bs->f[i].tmpl, c->tmpl) && !strcmp(bs->f[i].config, c->config)) return;
    bs->f = xrealloc(bs->f, sizeof *bs->f * (size_t)(bs->nf + 1));
    final *f = &bs->f[bs->nf++];
    snprintf(f->tmpl, sizeof f->tmpl, "%s", c->tmpl);
    f->config = xstrdup(c->config);
    f->median_us = c->m.median_us;
    f->spread = c->m.spread;
    f->is_default = is_default;
    if (is_default) bs->default_us = c->m.median_us;
}

void cand_instantiate(sw *S, cand *c, const char *tname, const char *config, const op_task *t)
{
    snprintf(c->tmpl, sizeof c->tmpl, "%s", tname);
    c->config = xstrdup(config);
    hash_hex(hash_str(hash_str(HASH_INIT, tname), config), c->config_hash);
    char kname[64];
    snprintf(kname, sizeof kname, "aitune_%s_%.8s", t->op, c->config_hash);
    if (tmpl_instantiate(S->T, tname, config, t, &S->dev, kname, &c->k)) c->error = xstrdup(tmpl_errmsg(S->T));
}

int cand_build(sw *S, cand *c, const char *tname, const char *config, const op_task *t)
{
    cand_instantiate(S, c, tname, config, t);
    return c->error || cand_compile(S, c, S->sp.arch) || cand_finish(S, c) || !c->job.ok ? -1 : 0;
}

/* Before cs[0, n) are freed: their compiles no thread has started leave
** the pool, and those running are waited for, so the pool writes into no
** freed candidate (a search stops early on a budget or Ctrl-C). Dropped
** from the back: the pool takes from the front, and would start the next
** one each time one ended. */
void cand_drain(sw *S, cand *const *cs, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (cs[i]->job.source && cs[i]->cached == 0) jit_cancel(S->pool, &cs[i]->job);
    for (int i = 0; i < n; i++)
        if (cs[i]->job.source && cs[i]->cached == 0) jit_wait(S->pool, &cs[i]->job);
}

/* A candidate sets off: the registry's measurement when it has one (resume:
** nothing to do), else its compile through the cache. -1: a tool failure. */
int cand_start(sw *S, cand *c, const op_task *t, const bucket *b)
{
    cand_key_fields(S, c, t, b);
    /* retune measures again what the registry has: the toolchain or the
    ** templates may have changed under the same device row. */
    if (!S->o->compile_only && !S->o->retune && !S->o->check) {
        measurement old;
        int found = reg_measure_find(S->R, &c->m, &old);
        if (found < 0) return error("%s", reg_errmsg(S->R));
        if (found) {
            measurement_free(&c->m);
            c->m = old;
            c->cached = -1;   /* resumed: nothing to do */
            return 0;
        }
    }
    if (c->error) return 0;
    return cand_compile(S, c, S->sp.arch);
}

/* A candidate lands: its compile waited for, then (unless compile-only or
** Ctrl-C came first) verified and timed, recorded, and told to se. Its
** status stays empty when nothing was recorded. -1: a tool failure. */
int cand_land(sw *S, cand *c, const op_task *t, const bucket *b, search *se, bucket_state *bs,
                     const char *default_cfg, int search_id)
{
    int is_default = default_cfg && !strcmp(c->config, default_cfg) && (!c->joined || !strcmp(c->tmpl, bs->default_tmpl));
    if (c->cached == -1) {
        S->resumed++;
        if (se) search_tell_measured(se, c->joined ? c->joined : c->config, &c->m);
        bucket_state_keep(bs, c, is_default);
        progress_done(S->P, strcmp(c->m.status, "ok") ? 0 : c->m.median_us, is_default);
        return 0;
    }
    if (c->error) {
        cand_set_status(c, "compile", c->error);
    } else {
        /* A compile Ctrl-C gave up is no result: nothing recorded or told. */
        if (cand_finish(S, c)) return c->job.cancelled ? 0 : -1;
        if (!c->cached && sw_tracing())
            sw_trace(S, "compiled search=%d batch=%d %s start=%.4f end=%.4f%s", search_id, c->batch, c->k.name,
                  c->job.t_start - S->t0, c->job.t_start + c->job.ms / 1e3 - S->t0, c->job.shared ? " shared" : "");
        c->m.registers = c->job.registers;
        c->m.spills = c->job.spills;
        c->m.smem = c->job.smem;
        c->m.compile_ms = c->job.ms;
        if (c->job.ok) snprintf(c->m.cubin, sizeof c->m.cubin, "%s", c->key);
        if (!c->job.ok) {
            cand_set_status(c, "compile", c->job.error);
        } else if (c->job.spills > 0 && !S->o->compile_only) {
            /* The ptxas report prunes: a kernel that spills is not worth GPU time. */
            char *e = xstrfmt("pruned: %d bytes of register spills", c->job.spills);
            cand_set_status(c, "compile", e);
            free(e);
        } else {
            if (S->o->compile_only || sw_interrupted()) return 0;
            sw_note(S, "%s %s %s: %s %s", t->op, t->dtype, b->key, c->tmpl, c->config);
            double t0 = now_s();
            evaluate(S, c, t);
            sw_trace(S, "timed search=%d batch=%d %s start=%.4f end=%.4f", search_id, c->batch, c->k.name, t0 - S->t0,
                  now_s() - S->t0);
        }
    }
    if (S->o->compile_only) {
        c->m.status[0] = 0;
        return 0;
    }
    S->evaluated++;
    sw_count_status(S, c->m.status);
    if (reg_measure_put(S->R, &c->m)) return error("%s", reg_errmsg(S->R));
    if (se) search_tell_measured(se, c->joined ? c->joined : c->config, &c->m);
    bucket_state_keep(bs, c, is_default);
    progress_done(S->P, strcmp(c->m.status, "ok") ? 0 : c->m.median_us, is_default);
    return 0;
}

/* Run candidates [0, n) through compile and (unless compile-only) the GPU,
** all compiles first; stops early on a budget or Ctrl-C. Returns -1 only
** for tool failures (registry). */
int cand_run_batch(sw *S, cand *cs, int n, const op_task *t, const bucket *b, search *se, bucket_state *bs,
                     const char *default_cfg)
{
    int rc = 0, started = 0;
    while (started < n && !rc) rc = cand_start(S, &cs[started++], t, b);
    for (int i = 0; i < started && !rc && !sw_out_of_budget(S); i++) rc = cand_land(S, &cs[i], t, b, se, bs, default_cfg, 0);
    cand **on = xcalloc((size_t)started + 1, sizeof *on);
    for (int i = 0; i < started; i++) on[i] = &cs[i];
    cand_drain(S, on, started);
    free(on);
    return rc;
}

int final_cmp(const void *a, const void *b)
{
    const final *x = a, *y = b;
    return x->median_us < y->median_us ? -1 : x->median_us > y->median_us;
}

/* A winner's recorded time comes from this race, so check times it the
** same way. */
void cand_race_beside(sw *S, cand *cs, int k, int extra, final *f, stats *extra_st)
{
    wire_time q;
    wire_race_init(&q);
    q.nslots = k;
    for (int i = 0; i < k; i++) q.slots[i] = i;
    if (extra >= 0) q.slots[q.nslots++] = extra;
    stats st[WIRE_SLOTS];
    if (extra_st) memset(extra_st, 0, sizeof *extra_st);
    if (!worker_said(S, &cs[0], worker_time(S->W, &q, st, 120 + 60 * S->o->kernel_timeout))) return;
    for (int i = 0; i < k; i++)
        if (st[i].median > 0) {
            f[i].median_us = st[i].median;
            f[i].spread = st[i].spread;
        }
    if (extra >= 0 && extra_st) *extra_st = st[k];
}

void cand_race(sw *S, cand *cs, int k, final *f)
{
    cand_race_beside(S, cs, k, -1, f, NULL);
}

void bucket_state_free(bucket_state *bs)
{
    for (int i = 0; i < bs->nf; i++) free(bs->f[i].config);
    free(bs->f);
    memset(bs, 0, sizeof *bs);
}
