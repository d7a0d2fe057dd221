/* sweep.c: see sweep.h. */
#define _GNU_SOURCE
#include "sweep.h"
#include "peers.h"
#include "identity.h"
#include "jit.h"
#include "align.h"
#include "json.h"
#include "progress.h"
#include "registry.h"
#include "search.h"
#include "spec.h"
#include "tmpl.h"
#include "worker.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    if (interrupted) {
        /* A second signal: abandon the candidate in flight at once. The
        ** worker dies with us; the registry is consistent after each write. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    interrupted = 1;
}

/* One candidate on its way: instantiated, compiling or compiled. */
typedef struct cand {
    char tmpl[64];
    char *config;
    char config_hash[17];
    kernel_src k;
    jit_job job;
    char key[17];
    int cached;
    char *error;            /* set when instantiation failed */
    char *joined;           /* a joint search's form of the config (search_new_bucket), or NULL */
    measurement m;          /* the result */
    /* on its way in a search (flow) */
    int batch;              /* the search's batch that asked for it (the trace's) */
    int extra;              /* a template default, measured first, not asked for */
    char **also;            /* forms of it the search asked for while it was on its way */
    int nalso;
} cand;

struct hub;

/* One lane of a sweep: the state of the work on one GPU. A sweep on one GPU
** has one; on several, each lane runs on a thread of its own with its own
** worker, template state and registry connection (lanes share only the
** spec, the compile pool, the progress line and the hub's bucket queue). */
typedef struct sw {
    const sweep_opts *o;
    peers peers;                /* --peers: figures to compare winners with */
    spec sp;
    tmpl *T;
    reg *R;
    worker *W;
    jit_pool *pool;
    device dev;
    long long dev_id, run_id;
    char arch[16];          /* the registry key: sm_90 (no 'a') */
    double t0, budget_s, copy_gbps;
    int budget_hit;
    /* counts for the summary */
    int evaluated, resumed, compiled, cache_hits, by_status[8], rejected, winners;
    int retuned, escalated; /* retune: buckets re-raced, and searched again */
    int checked, regressed; /* check: winners re-timed, and slower or failing */
    int hold;               /* the task in hand asks for buckets that hold (spec `hold: true`) */
    int held, moved;        /* hold: buckets probed, and whose winner changed */
    double hold_before, hold_after;   /* hold: the worst loss over the probed buckets, before and after */
    double split_at;        /* the task in hand's (spec `split_at`); 0: no splits */
    int split_depth;        /* the task in hand's (spec `split_depth`): levels of parts below a bucket */
    const spec_task *task;  /* the task in hand: a part's own search is the bucket's (search_part) */
    int split, parts;       /* hold: buckets split, and their parts stored (those not split again) */
    int resplit;            /* hold: parts split again */
    int searched, searched_evals;     /* hold: parts searched (research_part), and their candidates */
    double hold_final;      /* hold: the worst loss of the winners stored, parts' included */
    int broken_before, broken_after;  /* hold: winners wrong or failing at a probed shape, before and after */
    reg_trim_stats trimmed; /* losers' cubins dropped (sweep.h) */
    /* wall time per op, for the summary */
    int nops;
    char op_name[32][32];
    double op_s[32];
    progress *P;            /* NULL when quiet */
    /* the lane */
    struct hub *hub;        /* NULL: compile */
    int gpu;                /* the GPU's ordinal */
    char tag[16];           /* " [GPU 1]" on its lines when there are several */
    strbuf env;             /* the run's environment, from the worker */
    worker_stats ws;        /* the worker's counts, kept when it is freed */
    int code;               /* the lane's exit code */
    int searches;           /* searches started by the lane (the trace's numbers) */
} sw;

/* One bucket of the queue: the spec's task, dtype and bucket. */
typedef struct slot {
    int task, dtype;
    bucket b;
} slot;

/* What the lanes of one sweep share. The buckets are handed out one at a
** time to whichever lane asks first, so a slow bucket on one GPU never
** idles another, and each bucket is measured and raced on one GPU. The
** lock also serializes o->want, whose context is the caller's, not the
** lanes'. Compiles go through the one jit pool (its -j is the whole
** host's budget); the registry is one file with a connection per lane (WAL,
** busy timeout: each write commits on its own, so a kill loses nothing
** committed and leaves nothing half-written). */
typedef struct hub {
    pthread_mutex_t mu;
    slot *q;
    int nq, next;
    int nlanes;
    sw *lanes[SWEEP_MAX_GPUS];  /* lanes[0] is the sweep's own state */
} hub;

static void add_op_time(sw *S, const char *op, double s)
{
    int i = 0;
    while (i < S->nops && strcmp(S->op_name[i], op)) i++;
    if (i == S->nops) {
        if (S->nops == 32) return;
        snprintf(S->op_name[S->nops++], sizeof S->op_name[0], "%s", op);
    }
    S->op_s[i] += s;
}

static const char *statuses[] = { "ok", "constraint", "compile", "runtime", "timeout", "wrong", NULL };

static void count_status(sw *S, const char *st)
{
    for (int i = 0; statuses[i]; i++)
        if (!strcmp(statuses[i], st)) S->by_status[i]++;
}

static void cand_free(cand *c)
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

/* AITUNE_TRACE=FILE: the sweep appends what its searches do as it
** happens (batches asked, compiles, timings; times in seconds since the
** run began), for tests and for seeing the compiles run ahead of timing. */
static FILE *trace_out;

static void trace(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trace(sw *S, const char *fmt, ...)
{
    if (!trace_out) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(trace_out, "%.4f gpu=%d %s\n", now_s() - S->t0, S->gpu, line);
}

static int out_of_budget(sw *S)
{
    if (S->budget_s > 0 && now_s() - S->t0 > S->budget_s) S->budget_hit = 1;
    return S->budget_hit || interrupted;
}

/* Compile through the cache: on return c->job is done or submitted. */
static int start_compile(sw *S, cand *c, const char *arch)
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

/* Drop the losers' cubins of the buckets this run decided, but those of
** t's (op, dtype) when t is given: see sweep.h. */
static int trim_cubins(sw *S, const op_task *t)
{
    if (S->o->keep_cubins || !S->run_id) return 0;
    /* On several GPUs another lane may be using, from the cache, a kernel
    ** that lost in this lane's bucket of the same (op, dtype): trim only at
    ** the end of the run, when no lane is working. */
    if (t && S->hub && S->hub->nlanes > 1) return 0;
    if (reg_cubin_trim(S->R, S->run_id, t ? t->op : NULL, t ? t->dtype : NULL, &S->trimmed))
        return error("%s", reg_errmsg(S->R));
    return 0;
}

static int finish_compile(sw *S, cand *c)
{
    if (c->cached) return 0;
    jit_wait(S->pool, &c->job);
    /* Another lane's compile of the same kernel is a cache hit; it is
    ** stored here too, as that lane may stop before it stores it. */
    if (c->job.shared) S->cache_hits++;
    else S->compiled++;
    if (c->job.ok && reg_cubin_put(S->R, c->key, &c->job)) return error("%s", reg_errmsg(S->R));
    return 0;
}

/* The kernel's launch plan as the registry and the worker hold it. */
static char *plan_json(const kernel_src *k, char *err, int errcap)
{
    if (!k->plan) {
        snprintf(err, (size_t)errcap, "no launch plan");
        return NULL;
    }
    return plan_encode(k->plan, err, errcap);
}

static void set_status(cand *c, const char *status, const char *err)
{
    snprintf(c->m.status, sizeof c->m.status, "%s", status);
    free(c->m.error);
    c->m.error = err ? xstrdup(err) : NULL;
}

/* Send a request; map a dead or hung worker to a candidate status. Returns
** 1 if the reply says ok, 0 if the candidate failed (status set). */
static int ask_worker(sw *S, cand *c, const strbuf *h, const void *blob, size_t len, double timeout, msg *r)
{
    int rc = worker_request(S->W, h, blob, len, r, timeout);
    if (rc == WORKER_TIMEOUT) { set_status(c, "timeout", worker_errmsg(S->W)); return 0; }
    if (rc == WORKER_DIED) { set_status(c, "runtime", worker_errmsg(S->W)); return 0; }
    const char *st = msg_get(r, "status") ? msg_get(r, "status") : "error";
    if (!strcmp(st, "ok")) return 1;
    set_status(c, !strcmp(st, "wrong") ? "wrong" : "runtime", msg_get(r, "error") ? msg_get(r, "error") : st);
    msg_free(r);
    return 0;
}

static int load_slot(sw *S, cand *c, const op_task *t, int slot)
{
    plan_geom g;
    char err[512];
    char *pj = NULL;
    if (kernel_geometry(&c->k, t, &g, err, sizeof err) || !(pj = plan_json(&c->k, err, sizeof err))) {
        char *e = xstrfmt("template '%s' launch(): %s", c->tmpl, err);
        set_status(c, "compile", e);
        free(e);
        return 0;
    }
    /* The plan, not evaluated numbers: the worker binds it at the task's
    ** shape exactly as the runtime and emitted code do. */
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "load");
    msg_kv(&h, "slot", "%d", slot);
    msg_kv(&h, "name", "%s", c->k.name);
    msg_kv(&h, "plan", "%s", pj);
    free(pj);
    msg r;
    int ok = ask_worker(S, c, &h, c->job.cubin, c->job.cubin_len, 60, &r);
    sb_free(&h);
    if (ok) msg_free(&r);
    return ok;
}

static int fill_stats(cand *c, const char *t, const op_task *task)
{
    if (!t || sscanf(t, "%lf %lf %lf %lf %d", &c->m.median_us, &c->m.min_us, &c->m.max_us, &c->m.spread, &c->m.samples) != 5 ||
        !(c->m.median_us > 0) || !isfinite(c->m.median_us))
        return -1;
    c->m.gbps = c->m.median_us > 0 ? task->bytes / c->m.median_us / 1e3 : 0;
    c->m.tflops = c->m.median_us > 0 ? task->flops / c->m.median_us / 1e6 : 0;
    return 0;
}

/* Verify and time a compiled candidate in slot 0; fills c->m. */
/* Verify the kernel loaded in slot against the task's reference: 1 when it
** is right (else c's status says why). */
static int verify_slot(sw *S, cand *c, int slot)
{
    strbuf h = STRBUF_INIT;
    msg r;
    msg_kv(&h, "cmd", "verify");
    msg_kv(&h, "slot", "%d", slot);
    int ok = ask_worker(S, c, &h, NULL, 0, S->o->kernel_timeout, &r);
    sb_free(&h);
    if (ok) msg_free(&r);
    return ok;
}

static void evaluate(sw *S, cand *c, const op_task *t)
{
    if (!load_slot(S, c, t, 0) || !verify_slot(S, c, 0)) return;
    strbuf h = STRBUF_INIT;
    msg r;
    msg_kv(&h, "cmd", "time");
    msg_kv(&h, "slots", "0");
    msg_kv(&h, "max_s", "1.5");
    int ok = ask_worker(S, c, &h, NULL, 0, 60 + 20 * S->o->kernel_timeout, &r);
    sb_free(&h);
    if (!ok) return;
    if (fill_stats(c, msg_get(&r, "t0"), t)) {
        char *e = xstrfmt("the worker's time reply does not parse: t0='%s'", msg_get(&r, "t0") ? msg_get(&r, "t0") : "(missing)");
        c->m.median_us = c->m.min_us = c->m.max_us = c->m.spread = 0;
        c->m.samples = 0;
        msg_free(&r);
        set_status(c, "runtime", e);
        free(e);
        return;
    }
    msg_free(&r);
    set_status(c, "ok", NULL);
}

static void shape_json(const op_task *t, char *out, int cap)
{
    int at = snprintf(out, (size_t)cap, "{");
    for (int d = 0; d < t->ndims; d++)
        at += snprintf(out + at, (size_t)(cap - at), "%s\"%s\":%lld", d ? "," : "", t->dims[d], t->shape[d]);
    snprintf(out + at, (size_t)(cap - at), "}");
}

/* The fields that name the task's bucket on this device and run. */
static void bucket_fields(sw *S, measurement *m, const op_task *t, const bucket *b)
{
    snprintf(m->op, sizeof m->op, "%s", t->op);
    snprintf(m->arch, sizeof m->arch, "%s", S->arch);
    snprintf(m->dtype, sizeof m->dtype, "%s", t->dtype);
    snprintf(m->bucket, sizeof m->bucket, "%s", b->key);
    shape_json(t, m->shape, sizeof m->shape);
    m->device = S->dev_id;
    m->run = S->run_id;
    m->stream = t->stream;
}

/* Fill the measurement key fields of c. */
static void key_fields(sw *S, cand *c, const op_task *t, const bucket *b)
{
    measurement *m = &c->m;
    _Static_assert(sizeof m->tmpl == sizeof c->tmpl, "template names fit both");
    memcpy(m->tmpl, c->tmpl, sizeof m->tmpl);
    bucket_fields(S, m, t, b);
    m->config = xstrdup(c->config);
    snprintf(m->config_hash, sizeof m->config_hash, "%s", c->config_hash);
}

static void note(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(sw *S, const char *fmt, ...)
{
    char note[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof note, fmt, ap);
    va_end(ap);
    /* An empty note makes room for a line on stdout. */
    if (note[0]) progress_note(S->P, note);
    else progress_clear(S->P);
}

/* A line (or lines) on stdout, the progress line out of its way: lanes on
** other GPUs print too. With several GPUs each line names its GPU. */
static void say(sw *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(sw *S, const char *fmt, ...)
{
    strbuf b = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    if (S->tag[0] && b.len && b.buf[b.len - 1] == '\n') {
        b.buf[--b.len] = 0;
        sb_printf(&b, "%s\n", S->tag);
    }
    progress_print(S->P, stdout, sb_str(&b));
    sb_free(&b);
}

/* A stored race, as retune reads it back. */
typedef struct retune_final {
    struct { char tmpl[64]; char *config; double median_us; } f[16];
    int n;
} retune_final;

/* The finalists of a bucket. */
typedef struct final {
    char tmpl[64];
    char *config;
    double median_us, spread;
    int is_default;
} final;

typedef struct bucket_state {
    final *f;
    int nf;
    double default_us;
    int exhaustive;
    const char *keep_tmpl, *keep_config;   /* retune: the standing winner */
    const winner *parts;                    /* retune: a split bucket's stored winners (its parts'), */
    int nparts;                             /* each raced by hold whatever its time at the bucket's size */
    const char *default_tmpl;               /* a joint search: the template whose default is the bucket's */
} bucket_state;

static void keep_final(bucket_state *bs, const cand *c, int is_default)
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

/* Instantiate one config of template tname as candidate c. */
static void instantiate(sw *S, cand *c, const char *tname, const char *config, const op_task *t)
{
    snprintf(c->tmpl, sizeof c->tmpl, "%s", tname);
    c->config = xstrdup(config);
    hash_hex(hash_str(hash_str(HASH_INIT, tname), config), c->config_hash);
    char kname[64];
    snprintf(kname, sizeof kname, "aitune_%s_%.8s", t->op, c->config_hash);
    if (tmpl_instantiate(S->T, tname, config, t, &S->dev, kname, &c->k)) c->error = xstrdup(tmpl_errmsg(S->T));
}

/* Before cs[0, n) are freed: their compiles no thread has started leave
** the pool, and those running are waited for, so the pool writes into no
** freed candidate (a search stops early on a budget or Ctrl-C). Dropped
** from the back: the pool takes from the front, and would start the next
** one each time one ended. */
static void drain(sw *S, cand *const *cs, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (cs[i]->job.source && cs[i]->cached == 0) jit_cancel(S->pool, &cs[i]->job);
    for (int i = 0; i < n; i++)
        if (cs[i]->job.source && cs[i]->cached == 0) jit_wait(S->pool, &cs[i]->job);
}

/* A candidate sets off: the registry's measurement when it has one (resume:
** nothing to do), else its compile through the cache. -1: a tool failure. */
static int cand_start(sw *S, cand *c, const op_task *t, const bucket *b)
{
    key_fields(S, c, t, b);
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
    return start_compile(S, c, S->sp.arch);
}

/* A candidate lands: its compile waited for, then (unless compile-only or
** Ctrl-C came first) verified and timed, recorded, and told to se. Its
** status stays empty when nothing was recorded. -1: a tool failure. */
static int cand_land(sw *S, cand *c, const op_task *t, const bucket *b, search *se, bucket_state *bs,
                     const char *default_cfg, int search_id)
{
    int is_default = default_cfg && !strcmp(c->config, default_cfg) && (!c->joined || !strcmp(c->tmpl, bs->default_tmpl));
    if (c->cached == -1) {
        S->resumed++;
        if (se) search_tell_measured(se, c->joined ? c->joined : c->config, &c->m);
        keep_final(bs, c, is_default);
        progress_done(S->P, strcmp(c->m.status, "ok") ? 0 : c->m.median_us, is_default);
        return 0;
    }
    if (c->error) {
        set_status(c, "compile", c->error);
    } else {
        if (finish_compile(S, c)) return -1;
        if (!c->cached && trace_out)
            trace(S, "compiled search=%d batch=%d %s start=%.4f end=%.4f%s", search_id, c->batch, c->k.name,
                  c->job.t_start - S->t0, c->job.t_start + c->job.ms / 1e3 - S->t0, c->job.shared ? " shared" : "");
        c->m.registers = c->job.registers;
        c->m.spills = c->job.spills;
        c->m.smem = c->job.smem;
        c->m.compile_ms = c->job.ms;
        if (c->job.ok) snprintf(c->m.cubin, sizeof c->m.cubin, "%s", c->key);
        if (!c->job.ok) {
            set_status(c, "compile", c->job.error);
        } else if (c->job.spills > 0 && !S->o->compile_only) {
            /* The ptxas report prunes: a kernel that spills is not worth GPU time. */
            char *e = xstrfmt("pruned: %d bytes of register spills", c->job.spills);
            set_status(c, "compile", e);
            free(e);
        } else {
            if (S->o->compile_only || interrupted) return 0;
            note(S, "%s %s %s: %s %s", t->op, t->dtype, b->key, c->tmpl, c->config);
            double t0 = now_s();
            evaluate(S, c, t);
            trace(S, "timed search=%d batch=%d %s start=%.4f end=%.4f", search_id, c->batch, c->k.name, t0 - S->t0,
                  now_s() - S->t0);
        }
    }
    if (S->o->compile_only) {
        c->m.status[0] = 0;
        return 0;
    }
    S->evaluated++;
    count_status(S, c->m.status);
    if (reg_measure_put(S->R, &c->m)) return error("%s", reg_errmsg(S->R));
    if (se) search_tell_measured(se, c->joined ? c->joined : c->config, &c->m);
    keep_final(bs, c, is_default);
    progress_done(S->P, strcmp(c->m.status, "ok") ? 0 : c->m.median_us, is_default);
    return 0;
}

/* Run candidates [0, n) through compile and (unless compile-only) the GPU,
** all compiles first; stops early on a budget or Ctrl-C. Returns -1 only
** for tool failures (registry). */
static int run_batch(sw *S, cand *cs, int n, const op_task *t, const bucket *b, search *se, bucket_state *bs,
                     const char *default_cfg)
{
    int rc = 0, started = 0;
    while (started < n && !rc) rc = cand_start(S, &cs[started++], t, b);
    for (int i = 0; i < started && !rc && !out_of_budget(S); i++) rc = cand_land(S, &cs[i], t, b, se, bs, default_cfg, 0);
    cand **on = xcalloc((size_t)started + 1, sizeof *on);
    for (int i = 0; i < started; i++) on[i] = &cs[i];
    drain(S, on, started);
    free(on);
    return rc;
}

static int put_default(sw *S, const op_task *t, const char *tname, const char *config, const cand *c);

/* ---- a search's candidates on their way (issue 12) ----
**
** The candidates a search asked for and has not been told about, in the
** order it asked: the first one is verified and timed while the ones
** behind it compile. Before the first one is timed the strategy is asked
** for batches until `ahead` candidates wait behind it, so NVRTC's pool
** keeps compiling across batch boundaries rather than idling while the
** GPU waits for the first compile of the next batch; ahead 0 asks for a
** batch only when the last one has landed, as sweeps did before. A
** strategy asking ahead knows fewer results when it asks: the configs a
** model-guided one picks depend on the depth (deterministic for a seed and
** a depth). Candidates asked ahead that a budget or Ctrl-C leaves untimed
** are not recorded or told; their compiles not yet started are dropped. */
typedef struct flow {
    sw *S;
    const op_task *t;
    const bucket *b;
    search *se;
    bucket_state *bs;
    const char *tname;          /* the search's template; NULL: a joint search (its configs name theirs) */
    const char *default_cfg;    /* the bucket's default, for the race (cand_land) */
    const char *store_tmpl, *store_cfg;   /* a default whose kernel goes to the registry once compiled, or NULL */
    int batch, ahead;           /* configs per ask; candidates kept on their way behind the one being timed */
    int evals;                  /* the most configs the search will ask for (its budget) */
    int nasked, done;           /* batches asked; the strategy has no more */
    int id;                     /* the lane's search number (the trace's) */
    cand **q;                   /* on their way: q[0] lands next */
    int n, cap;
    cand **kept;                /* defaults that landed: a search that asks for one is told its result */
    int nkept;
} flow;

/* How many candidates a search keeps on its way behind the one being
** timed: --ahead, else twice the pool's threads shared by the lanes (the
** pool stays busy while the GPU works through what it compiled), but no
** more than an eighth of the search's budget, and at least a batch. The
** cap: a model-guided strategy picks the configs asked ahead without their
** results, and on replayed GEMM landscapes (bench/RESULTS.md) it loses
** little at depths up to an eighth of its budget and much beyond (32 ahead
** of 68 evaluations: the gap it closes by the end, 0.61-0.98 -> 0.40-0.75). */
static int ahead_depth(sw *S, int batch, int evals)
{
    if (S->o->ahead < 0) return 0;
    if (S->o->ahead > 0) return S->o->ahead;
    int lanes = S->hub && S->hub->nlanes > 1 ? S->hub->nlanes : 1;
    int d = 2 * jit_pool_threads(S->pool) / lanes;
    if (d > evals / 8) d = evals / 8;
    return d < batch ? batch : d;
}

/* Tell the search the result of c, which it asked for as form. */
static void tell_also(flow *f, const cand *c, const char *form)
{
    if (f->se) search_tell_measured(f->se, form, &c->m);
    progress_done(f->S->P, 0, 0);
}

/* Config of template tname sets off (config and joined are taken). A
** config on its way already (a default the search asks for) is measured
** once: the search is told its result as it lands, or now if it has. */
static int flow_put(flow *f, const char *tname, char *config, char *joined, int extra)
{
    char h[17];
    hash_hex(hash_str(hash_str(HASH_INIT, tname), config), h);
    const char *form = joined ? joined : config;
    cand *same = NULL;
    for (int i = 0; i < f->n && !same; i++) if (!strcmp(f->q[i]->config_hash, h)) same = f->q[i];
    for (int i = 0; i < f->nkept && !same; i++) if (!strcmp(f->kept[i]->config_hash, h)) same = f->kept[i];
    if (same) {
        if (same->m.status[0]) {
            tell_also(f, same, form);
        } else {
            same->also = xrealloc(same->also, sizeof *same->also * (size_t)(same->nalso + 1));
            same->also[same->nalso++] = xstrdup(form);
        }
        free(config);
        free(joined);
        return 0;
    }
    cand *c = xcalloc(1, sizeof *c);
    instantiate(f->S, c, tname, config, f->t);
    free(config);
    c->joined = joined;
    c->extra = extra;
    c->batch = f->nasked + extra;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->q = xrealloc(f->q, sizeof *f->q * (size_t)f->cap);
    }
    f->q[f->n++] = c;
    return cand_start(f->S, c, f->t, f->b);
}

/* One batch from the strategy, set off. */
static int flow_ask(flow *f)
{
    sw *S = f->S;
    char **cfgs = NULL;
    int got = 0, rc = 0;
    if (search_ask(f->se, f->batch, &cfgs, &got)) return error("%s", tmpl_errmsg(S->T));
    f->nasked++;
    f->done = !got;
    trace(S, "ask search=%d batch=%d n=%d", f->id, f->nasked, got);
    for (int i = 0; i < got; i++) {
        char tname[64], *own;
        if (rc) {
            free(cfgs[i]);
        } else if (f->tname) {
            rc = flow_put(f, f->tname, cfgs[i], NULL, 0);
        } else if (search_split(S->T, cfgs[i], tname, sizeof tname, &own)) {
            rc = error("%s", tmpl_errmsg(S->T));
            free(cfgs[i]);
        } else {
            rc = flow_put(f, tname, own, cfgs[i], 0);
        }
    }
    free(cfgs);
    return rc;
}

/* The first candidate lands; the search learns it under every form it
** asked for it, and a default's kernel is stored once it has one. */
static int flow_land(flow *f)
{
    sw *S = f->S;
    cand *c = f->q[0];
    memmove(f->q, f->q + 1, sizeof *f->q * (size_t)--f->n);
    int rc = cand_land(S, c, f->t, f->b, f->se, f->bs, f->default_cfg, f->id);
    for (int i = 0; i < c->nalso && !rc && c->m.status[0]; i++) tell_also(f, c, c->also[i]);
    if (!rc && f->store_cfg && c->m.status[0] && c->job.cubin && !strcmp(c->tmpl, f->store_tmpl) &&
        !strcmp(c->config, f->store_cfg)) {
        rc = put_default(S, f->t, f->store_tmpl, f->store_cfg, c);
        f->store_cfg = NULL;
    }
    if (c->extra) {
        f->kept = xrealloc(f->kept, sizeof *f->kept * (size_t)(f->nkept + 1));
        f->kept[f->nkept++] = c;
    } else {
        cand_free(c);
        free(c);
    }
    return rc;
}

/* A search from its defaults (defaults[i] of template names[i], measured
** first, those valid; NULL: none) to its end, a budget or Ctrl-C. */
static int flow_run(flow *f, char *const *names, char *const *defaults, int nd)
{
    sw *S = f->S;
    int rc = 0;
    f->ahead = ahead_depth(S, f->batch, f->evals);
    f->id = ++S->searches;
    for (int i = 0; i < nd && !rc; i++) {
        int valid = 0;
        char why[256];
        if (defaults[i] && !tmpl_valid(S->T, names[i], defaults[i], f->t, &S->dev, &valid, why, sizeof why) && valid)
            rc = flow_put(f, names[i], xstrdup(defaults[i]), NULL, 1);
    }
    /* The defaults go with the first batch. */
    if (!rc) rc = flow_ask(f);
    while (!rc) {
        while (!rc && !f->done && (f->n == 0 || f->n - 1 < f->ahead) && !out_of_budget(S)) rc = flow_ask(f);
        if (rc || !f->n || out_of_budget(S)) break;
        rc = flow_land(f);
    }
    if (f->n) trace(S, "stop search=%d on_their_way=%d", f->id, f->n);
    drain(S, f->q, f->n);
    for (int i = 0; i < f->n; i++) {
        cand_free(f->q[i]);
        free(f->q[i]);
    }
    for (int i = 0; i < f->nkept; i++) {
        cand_free(f->kept[i]);
        free(f->kept[i]);
    }
    free(f->q);
    free(f->kept);
    return rc;
}

static int cmp_final(const void *a, const void *b)
{
    const final *x = a, *y = b;
    return x->median_us < y->median_us ? -1 : x->median_us > y->median_us;
}

/* Re-time the top K interleaved and store the winner. */
/* Time the candidates loaded in slots [0, k) interleaved, 30 rounds: each
** f[i] gets its median and spread (left as they were when a time is
** missing). A winner's recorded time comes from this race, so check times
** it the same way. */
static void race(sw *S, cand *cs, int k, final *f)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "time");
    strbuf slots = STRBUF_INIT;
    for (int i = 0; i < k; i++) sb_printf(&slots, "%s%d", i ? "," : "", i);
    msg_kv(&h, "slots", "%s", sb_str(&slots));
    msg_kv(&h, "rounds", "%d", 30);
    sb_free(&slots);
    msg r;
    if (ask_worker(S, &cs[0], &h, NULL, 0, 120 + 60 * S->o->kernel_timeout, &r)) {
        for (int i = 0; i < k; i++) {
            char key[16];
            snprintf(key, sizeof key, "t%d", i);
            double med = 0, mn, mx, spread = 0;
            int n;
            if (msg_get(&r, key) && sscanf(msg_get(&r, key), "%lf %lf %lf %lf %d", &med, &mn, &mx, &spread, &n) >= 4 &&
                med > 0 && isfinite(med)) {
                f[i].median_us = med;
                f[i].spread = spread;
            }
        }
        msg_free(&r);
    }
    sb_free(&h);
}

static int send_task(sw *S, const op_task *t);

/* Task t at another shape (a part's, a probe's), timed the same way. */
static int sub_task(sw *S, const op_task *t, const long long *shape, op_task *out)
{
    if (tmpl_task(S->T, t->op, t->dtype, shape, out)) return -1;
    out->stream = t->stream;
    return 0;
}

/* Buckets that hold (spec `hold: true`). A winner is chosen at the
** bucket's representative size and then answers every shape of the bucket,
** up to twice as large in every dim. So the bucket's best HOLD_FINALISTS
** (the race's, and the next ones by their search times; cs[0, *kp) holds
** the race's, compiled and loaded, and gets the others) are verified and
** raced at three shapes of the bucket: its representative, its geometric
** middle and its upper edge (the last two rounded down to a multiple of 64:
** kernels' fast paths want aligned sizes, and so do real workloads; plus
** the bucket's alignment class in a bucket tuned at an unaligned size, whose
** winner must run sizes of that class: probe_size). A
** finalist's loss at a shape is its time over the fastest finalist's there,
** minus one (a finalist wrong or failing there loses everything). The
** winner becomes the finalist with the smallest worst loss, the race's
** winner when it is within the noise margin of that. The finalists' stored
** times become those of the race at the representative.
**
** A bucket whose winner still loses more than the task's split_at somewhere
** is split (split_box): its parts (spec.h: bucket_split) get winners of
** their own from the same finalists, raced at each part's size and upper
** edge too. A part whose winner still loses more than split_at gets a
** search of its own where it loses most (research_part), and a bucket that
** no part's winner among the finalists would change is split on trial, kept
** only if such a search changes a part's winner. A part whose winner still
** loses more than split_at after that is split again the same way among its
** own candidates (settle_part), down to the task's split_depth. */
#define HOLD_FINALISTS 8
#define HOLD_PROBES 48

/* The sizes a bucket's finalists were raced at: slot i's time there, 0
** when it failed (load, verification) or had no time. */
typedef struct probe {
    long long shape[TMPL_MAXDIMS];
    double us[16], spread[16];
} probe;

typedef struct probes {
    probe p[HOLD_PROBES];
    int n;
    int m;                  /* slots raced: cs[0, m) */
} probes;

/* A part of a split bucket, at any level: the candidates raced in it (the
** hold race's slots, its parent part's candidates, and the finalists of its
** own search when it had one), each one's time at the part's size, its
** winner and the winner's worst loss in it. A part split again keeps its
** record (its parts point at its candidates) but is not stored. */
#define PART_OWN (-2)           /* fi of a finalist of a part's own search (the part's or a parent's) */
#define SPLIT_MAXPARTS 64       /* parts of every level of one bucket: bounds a split's memory and races */
typedef struct part {
    bucket b;
    int depth;              /* 1: a part of the bucket, 2: a part of a part, ... */
    int up;                 /* its parent's index in split.p; -1: the bucket */
    int nkids;              /* split again into that many parts (those whose up is it); 0: stored */
    int n, w;               /* the candidates c[0, n); the winner c[w] */
    cand *c[16];
    int fi[16];             /* c[i]'s index in bs->f (-1: out of the race), or PART_OWN */
    double us[16];
    double worst;
    char where[96];
    char whole[96];         /* why a part that still loses more than split_at was not split again */
    probes *q;              /* the probes inside it, of c[0, n) (owned): where its own parts are chosen */
    int searched;           /* its own search ran, at searched_at */
    long long searched_at[TMPL_MAXDIMS];
    cand *own;              /* its own search's finalists, owned: own[0, nown) */
    int nown;
    int capped;             /* its own search was cut by its budget */
} part;

/* What hold_probe decided beyond the winner: n > 0 parts when the bucket
** is split, p[0, n) of every level (the bucket's own parts first, each
** part's parts after their parent); fi maps the race's slots to bs->f. */
typedef struct split {
    int n;
    int trial;              /* no part changes the winner among the slots: split only if a part's search does */
    part p[SPLIT_MAXPARTS];
    int fi[16];
    int rc;                 /* -1: a tool failed in a part's search (said); 1: Ctrl-C cut one */
} split;

static void part_clear(part *p)
{
    for (int j = 0; j < p->nown; j++) cand_free(&p->own[j]);
    free(p->own);
    free(p->q);
    memset(p, 0, sizeof *p);
}

static void split_free(split *sp)
{
    for (int i = 0; i < SPLIT_MAXPARTS; i++) part_clear(&sp->p[i]);
    free(sp);
}

static void shape_text(const long long *shape, int ndims, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int d = 0; d < ndims && n < cap; d++) n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? "x" : "", shape[d]);
}

/* The probe at shape, or -1. */
static int probe_find(const probes *P, const long long *shape, int ndims)
{
    for (int i = 0; i < P->n; i++)
        if (!memcmp(P->p[i].shape, shape, sizeof *shape * (size_t)ndims)) return i;
    return -1;
}

/* Race slots cs[0, P->m) (fi[i] == -1: out of the race) at shape, each
** verified there first, but at the task's own shape where the bucket's
** search verified it (every slot but a part's own finalist, PART_OWN: its
** search ran at another size); their times become a probe of P. Returns 1
** raced (or raced already), 0 skipped (no such task, too large for the
** GPU, none verified), -1 a tool failure. */
static int probe_race(sw *S, const op_task *t, cand *const *cs, const int *fi, const long long *shape, probes *P)
{
    if (probe_find(P, shape, t->ndims) >= 0) return 1;
    if (P->n == HOLD_PROBES) return 0;
    int rep = !memcmp(shape, t->shape, sizeof *shape * (size_t)t->ndims), m = P->m;
    op_task tp;
    if (sub_task(S, t, shape, &tp)) return 0;
    if (!rep && S->dev.mem > 0 && tmpl_task_bytes(&tp) > S->dev.mem / 2) return 0;
    if (send_task(S, &tp)) return -1;
    int ok[16];
    for (int i = 0; i < m; i++) {
        ok[i] = 0;
        if (fi[i] == -1 || !load_slot(S, cs[i], &tp, i)) continue;
        ok[i] = (rep && fi[i] != PART_OWN) || verify_slot(S, cs[i], i);
    }
    /* The race wants every slot loaded: a failed one is raced with a
    ** verified stand-in and its time ignored. */
    int stand = -1;
    for (int i = 0; i < m; i++) if (ok[i]) { stand = i; break; }
    if (stand < 0) return 0;
    for (int i = 0; i < m; i++) if (!ok[i]) load_slot(S, cs[stand], &tp, i);
    final pf[16];
    memset(pf, 0, sizeof pf);
    race(S, cs[0], m, pf);
    probe *p = &P->p[P->n++];
    memset(p, 0, sizeof *p);
    memcpy(p->shape, shape, sizeof *shape * (size_t)t->ndims);
    for (int i = 0; i < m; i++)
        if (ok[i] && pf[i].median_us > 0) {
            p->us[i] = pf[i].median_us;
            p->spread[i] = pf[i].spread;
        }
    return 1;
}

/* Slot i's loss at probe p: its time over the fastest's, minus one. */
static double probe_loss(const probe *p, int i, int m)
{
    double best = INFINITY;
    for (int j = 0; j < m; j++) if (p->us[j] > 0 && p->us[j] < best) best = p->us[j];
    return p->us[i] > 0 && isfinite(best) ? p->us[i] / best - 1 : INFINITY;
}

static int in_box(const bucket *box, const long long *shape)
{
    for (int d = 0; d < box->ndims; d++)
        if (shape[d] < box->lo[d] || shape[d] >= box->hi[d]) return 0;
    return 1;
}

/* Slot i's worst loss over the probes inside box (0 with none), and the
** first probe where it is that (-1: none). */
static double worst_in(const probes *P, const bucket *box, int i, int *at)
{
    double worst = 0;
    *at = -1;
    for (int k = 0; k < P->n; k++) {
        if (!in_box(box, P->p[k].shape)) continue;
        double loss = probe_loss(&P->p[k], i, P->m);
        if (*at < 0 || loss > worst) {
            *at = k;
            worst = loss;
        }
    }
    return worst;
}

/* A size of b's dim d to probe near x: x rounded down to a multiple of 64
** (kernels' fast paths want aligned sizes, and so do real workloads), plus
** the bucket's alignment class where that is not 8 (align.h), so the probe
** keeps the class the bucket is tuned at: the upper edge of [4096, 8192)
** is 8129 in an odd bucket, whose winner must run odd sizes, 8128 in an
** aligned one. fallback where that leaves the bucket. */
static long long probe_size(const bucket *b, int d, long long x, long long fallback)
{
    int c = bucket_align(b, d);
    long long v = x / 64 * 64 + (c < ALIGN_FULL ? c : 0);
    return v < b->lo[d] || v >= b->hi[d] || v < 1 ? fallback : v;
}

/* The upper edge of a bucket: each dim's last size rounded down to a
** multiple of 64 (in the bucket's class: probe_size), its representative
** where that leaves the bucket. */
static void upper_edge(const bucket *b, long long *shape)
{
    for (int d = 0; d < b->ndims; d++) shape[d] = probe_size(b, d, b->hi[d] - 1, b->rep[d]);
}

/* The winner of box among slots [0, P->m): the smallest worst loss over
** the probes inside it, the preferred slot when within the noise margin
** of that. */
static int box_winner(sw *S, const probes *P, const bucket *box, int prefer, double *worst, int *at)
{
    int best = -1, ab = -1, ap = -1;
    double wb = INFINITY, wp = INFINITY;
    for (int i = 0; i < P->m; i++) {
        int a;
        double x = worst_in(P, box, i, &a);
        if (best < 0 || x < wb) { best = i; wb = x; ab = a; }
        if (i == prefer) { wp = x; ap = a; }
    }
    if (prefer >= 0 && !(wb < wp - S->o->noise)) { best = prefer; wb = wp; ab = ap; }
    *worst = wb;
    *at = ab;
    return best;
}

/* Whether a part that still loses more than split_at may get a search of
** its own (research_part): spec split_evals, and budget left. */
static int part_searched(sw *S)
{
    return S->task && S->task->split_evals && !out_of_budget(S);
}

/* The probes of Q inside box, as a probes set of their own (the same
** candidates): a part's parts are raced into it, not into its parent's. */
static probes *probes_in(const probes *Q, const bucket *box)
{
    probes *R = xcalloc(1, sizeof *R);
    R->m = Q->m;
    for (int k = 0; k < Q->n; k++)
        if (in_box(box, Q->p[k].shape)) R->p[R->n++] = Q->p[k];
    return R;
}

/* Split box (the bucket, or part up of sp; -1: the bucket) among the
** candidates cs[0, Q->m) (fi: their indices in bs->f, or -1, or PART_OWN)
** raced at the probes Q, whose winner cs[cw] loses more than the task's
** split_at there: its parts along every dim that can be split are raced at
** their sizes and upper edges, and each part's winner chosen among the
** candidates as box_winner does. A dim whose halves keep the same winners
** in every part is joined again, until each split dim changes a winner
** somewhere; split along none, the box stays whole, unless a part may get a
** search of its own (part_searched): the winner still loses more than
** split_at somewhere, and only a config that is not a candidate can change
** that. Then the parts of the last split tried are kept on trial (*trial):
** their searches decide (hold_probe for the bucket, settle_part for a part).
** The parts are added to sp->p after those there, at up's depth plus one,
** with the candidates and, each, the probes of Q inside it; a part whose
** winner still loses more than split_at is split again by settle_part.
** Returns how many; 0 when not split, with the reason in *why. */
static int split_box(sw *S, const op_task *t, const bucket *box, cand *const *cs, const int *fi, int cw, probes *Q,
                     split *sp, int up, int *trial, const char **why)
{
    *trial = 0;
    *why = "it cannot be split (one size per dim)";
    unsigned mask = 0;
    long long at;
    for (int d = 0; d < box->ndims; d++)
        if (bucket_split_point(box->lo[d], box->hi[d], &at)) mask |= 1u << d;
    bucket parts[1 << SPEC_MAXDIMS];
    int n = mask ? bucket_split(box, mask, parts) : 0;
    if (n <= 1) return 0;
    for (int i = 0; i < n; i++) {
        long long hi[TMPL_MAXDIMS];
        upper_edge(&parts[i], hi);
        if (probe_race(S, t, cs, fi, parts[i].rep, Q) < 0 || probe_race(S, t, cs, fi, hi, Q) < 0) {
            *why = "the worker could not take a part's size";
            return 0;
        }
    }
    *why = "no part would change it";
    int w[1 << SPEC_MAXDIMS], on_trial = 0;
    for (;;) {
        n = mask ? bucket_split(box, mask, parts) : 0;
        if (n <= 1) return 0;
        for (int i = 0; i < n; i++) {
            double worst;
            int a;
            w[i] = box_winner(S, Q, &parts[i], cw, &worst, &a);
        }
        /* A dim is kept when some pair of parts that differ in it alone
        ** differ in their winners. */
        unsigned keep = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int differ = -1, many = 0;
                for (int d = 0; d < box->ndims; d++)
                    if (parts[i].lo[d] != parts[j].lo[d]) many += differ >= 0, differ = d;
                if (differ >= 0 && !many && w[i] != w[j]) keep |= 1u << differ;
            }
        if (keep == mask) break;
        if (!keep) {
            if (!part_searched(S)) return 0;
            on_trial = 1;
            break;
        }
        mask = keep;
    }
    if (sp->n + n > SPLIT_MAXPARTS) {
        *why = "the bucket has too many parts already";
        return 0;
    }
    int depth = up < 0 ? 1 : sp->p[up].depth + 1;
    for (int i = 0; i < n; i++) {
        part *p = &sp->p[sp->n + i];
        memset(p, 0, sizeof *p);
        p->b = parts[i];
        p->depth = depth;
        p->up = up;
        p->capped = up >= 0 && sp->p[up].capped;   /* its candidates came from a capped search */
        int a, k = probe_find(Q, parts[i].rep, box->ndims);
        p->w = box_winner(S, Q, &parts[i], cw, &p->worst, &a);
        if (k < 0 || !(Q->p[k].us[p->w] > 0)) {   /* every part needs its winner's time at its size */
            *why = "a part's winner has no time at its size";
            return 0;
        }
        memcpy(p->us, Q->p[k].us, sizeof p->us);
        if (a >= 0) shape_text(Q->p[a].shape, box->ndims, p->where, sizeof p->where);
        p->n = Q->m;
        for (int j = 0; j < Q->m; j++) {
            p->c[j] = cs[j];
            p->fi[j] = fi[j];
        }
    }
    for (int i = 0; i < n; i++) sp->p[sp->n + i].q = probes_in(Q, &parts[i]);
    sp->n += n;
    *trial = on_trial;
    return n;
}

static int template_usable(sw *S, const spec_task *st, const char *tname, const op_task *t);
static void record_rejected(sw *S, search *se, const char *tname, const op_task *t, const bucket *b);
static int add_stored(const char *tmpl, const char *config, double median_us, void *ctx);
static void bucket_state_free(bucket_state *bs);

/* The candidates a search will ask for: its cap, or the whole (lazy) space's
** valid configs when uncapped. */
static int search_capped(search *se, int max_evals)
{
    return max_evals > 0 && max_evals < search_size(se);   /* size: a bound until the walk is complete */
}

static int search_budget(search *se, int max_evals)
{
    return search_capped(se, max_evals) ? max_evals : search_count(se);
}

/* The candidates a part's own search may take (spec split_evals; 0 there:
** none): by default a quarter of the bucket's cap, at least 8, and never
** more than that cap. 0: no cap (the bucket had none either). */
static int part_evals(const sw *S)
{
    int cap = S->o->max_evals > 0 ? S->o->max_evals : S->task->max_evals, n = S->task->split_evals;
    if (n < 0) n = cap / 4 > 8 ? cap / 4 : cap > 0 ? 8 : 0;
    return cap > 0 && (n == 0 || n > cap) ? cap : n;
}

/* A part's own search: the bucket's strategy over the bucket's templates
** (a search each, or one joint search), at the part's size tp, within
** part_evals. Its measurements are keyed by the part, not by the bucket:
** they are taken at another size (as check's of a part are), and a resumed
** sweep finds them there. It is seeded by seed (research_part: the spec's
** seed and the part's key), so it tries other configs than the bucket's
** search did. Its finalists land in pbs; *evals counts its candidates,
** *capped says whether a cap or the budget cut it. */
static int search_part(sw *S, const op_task *tp, const bucket *pb, unsigned long long seed, bucket_state *pbs, int *evals,
                       int *capped)
{
    const spec_task *st = S->task;
    char **tn;
    int ntn, nuse = 0, rc = 0;
    if (tmpl_templates(S->T, tp->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    char **use = xcalloc((size_t)ntn + 1, sizeof *use);
    for (int i = 0; i < ntn; i++)
        if (template_usable(S, st, tn[i], tp)) use[nuse++] = tn[i];
    int max_evals = part_evals(S);
    for (int s = 0; s < (st->joint ? nuse > 0 : nuse) && !rc && !out_of_budget(S); s++) {
        const char *tname = st->joint ? NULL : use[s];
        search *se = tname ? search_new(S->T, st->search, tname, tp, &S->dev, seed, max_evals)
                           : search_new_bucket(S->T, st->search, use, nuse, tp, &S->dev, seed, max_evals, NULL, 0);
        if (!se) {
            rc = error("%s", tmpl_errmsg(S->T));
            break;
        }
        int before = S->evaluated + S->resumed;
        progress_plan(S->P, search_budget(se, max_evals));
        flow f = { .S = S, .t = tp, .b = pb, .se = se, .bs = pbs, .tname = tname, .batch = 8,
                   .evals = search_budget(se, max_evals) };
        rc = flow_run(&f, NULL, NULL, 0);
        *evals += S->evaluated + S->resumed - before;
        /* The space is lazy: what it rejected is known once the search ends. */
        record_rejected(S, se, tname, tp, pb);
        *capped |= search_capped(se, max_evals);
        search_free(se);
    }
    *capped |= S->budget_hit || interrupted;
    free(use);
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    return rc;
}

/* retune: a part's search is not run again; the part's stored finalists
** (the winner and runners-up its sweep stored) stand in for it. */
static int stored_part(sw *S, const op_task *t, const bucket *pb, bucket_state *pbs)
{
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    retune_final rf = { 0 };
    int rc = 0;
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, pb->key, hw, add_stored, &rf)) rc = error("%s", reg_errmsg(S->R));
    for (int i = 0; i < rf.n; i++) {
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", rf.f[i].tmpl);
        c.config = rf.f[i].config;
        c.m.median_us = rf.f[i].median_us;
        snprintf(c.m.status, sizeof c.m.status, "ok");
        keep_final(pbs, &c, 0);
        free(rf.f[i].config);
    }
    return rc;
}

/* Whether a search of the bucket (at its own size) or of one of part p's
** parents ran at shape: p's candidates hold its best configs already. */
static int searched_at(const op_task *t, const split *sp, const part *p, const long long *shape)
{
    size_t sz = sizeof *shape * (size_t)t->ndims;
    if (!memcmp(shape, t->shape, sz)) return 1;
    for (int u = p->up; u >= 0; u = sp->p[u].up)
        if (sp->p[u].searched && !memcmp(shape, sp->p[u].searched_at, sz)) return 1;
    return 0;
}

/* Where part p is searched (research_part): the probe inside it where its
** winner loses most, leaving out the sizes where a search ran already (the
** bucket's, its parents': searched_at). Ties go to the probe where the
** candidate fastest at the bucket's size loses most (the other side of the
** trade-off when the winner loses most at the bucket's size), then to the
** part's own size. -1: none (the part holds no other probe). */
static int search_probe(const op_task *t, const split *sp, const part *p)
{
    const probes *P = p->q;
    size_t sz = sizeof *t->shape * (size_t)t->ndims;
    int home = in_box(&p->b, t->shape) ? probe_find(P, t->shape, t->ndims) : -1, f = -1, at = -1;
    for (int i = 0; home >= 0 && i < P->m; i++)
        if (P->p[home].us[i] > 0 && (f < 0 || P->p[home].us[i] < P->p[home].us[f])) f = i;
    double lw = 0, lf = 0;
    for (int k = 0; k < P->n; k++) {
        if (searched_at(t, sp, p, P->p[k].shape)) continue;
        double w = probe_loss(&P->p[k], p->w, P->m), x = f >= 0 ? probe_loss(&P->p[k], f, P->m) : 0;
        int own = !memcmp(P->p[k].shape, p->b.rep, sz);
        if (at < 0 || w > lw || (w == lw && (x > lf || (x == lf && own)))) {
            at = k;
            lw = w;
            lf = x;
        }
    }
    return at;
}

/* A box's edges on a line: "rows [1024, 1408), cols [5760, 8192)". */
static size_t box_text(const op_task *t, const bucket *b, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int d = 0; d < b->ndims && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s [%lld, %lld)", d ? ", " : "", t->dims[d], b->lo[d], b->hi[d]);
    return at < cap ? at : cap - 1;
}

/* A part's name on its lines: its key, with its edges where asked or
** where it is a part of a part (whose key it may share), and then its
** level and its parent's edges. */
static void part_name(const op_task *t, const split *sp, const part *p, int edges, char *out, size_t cap)
{
    size_t at = (size_t)snprintf(out, cap, "%s", p->b.key);
    if ((edges || p->depth > 1) && at + 2 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ": ");
        at += box_text(t, &p->b, out + at, cap - at);
    }
    if (p->depth > 1 && at + 32 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ", level %d in ", p->depth);
        box_text(t, &sp->p[p->up].b, out + at, cap - at);
    }
}

/* A part whose winner among its candidates (the hold race's slots, or its
** parent's candidates) still loses more than split_at: its best config is
** not among them, all found by searches elsewhere (the bucket's at its
** size, its parents' where they lost). So it gets a search of its own
** (search_part; retune races the part's stored finalists instead:
** stored_part) where it loses: at the probe inside the part where its
** winner loses most, among the sizes no search has covered (search_probe).
** A search finds the configs that are fast where it runs, and those are
** what the candidates lack where the part loses; often that is the part's
** own size, but a part may lose most at its upper edge or at the bucket's
** middle, and a search at its own size would look where it has no loss.
** The part that holds the bucket's own size is not searched there again
** (its best configs are slots already): it is searched at its worst probe
** elsewhere, and when its winner loses most at the bucket's size (a trade:
** the slots fastest there lose more at another probe), at the probe where
** the slot fastest at the bucket's size loses most, usually the part's
** upper edge. The fastest finalists of that search that are not candidates
** already (top_k of them) race with the candidates at every probe inside
** the part, each verified there first (the search verified them at its
** size only; the candidates that lose most there make room when the
** worker's slots run short): the smallest worst loss wins, the candidates'
** winner when within the noise margin of that. The part's winner is stored
** with its time at the part's own size, wherever its search ran; the
** search's measurements are the part's, under its key, at the size they
** were taken (a resumed sweep finds them only there). The search is seeded
** by the part's key and, below the first level, its depth (a part's first
** part shares its key). Returns 1 when Ctrl-C cut the search (the part is
** not decided), -1 for a tool failure. */
static int research_part(sw *S, const op_task *t, const split *sp, part *p)
{
    op_task tp;
    const probes *P = p->q;
    int at = part_searched(S) ? search_probe(t, sp, p) : -1;
    if (at < 0 || sub_task(S, t, P->p[at].shape, &tp)) return 0;
    if (send_task(S, &tp)) return -1;
    p->searched = 1;
    memcpy(p->searched_at, P->p[at].shape, sizeof p->searched_at);
    unsigned long long seed = hash_str(HASH_INIT, p->b.key);
    if (p->depth > 1) {
        char level[16];
        snprintf(level, sizeof level, "/%d", p->depth);
        seed = hash_str(seed, level);
    }
    bucket_state pbs = { .exhaustive = 1 };
    int evals = 0, rc = S->o->retune ? stored_part(S, t, &p->b, &pbs)
                                     : search_part(S, &tp, &p->b, S->sp.seed ^ seed, &pbs, &evals, &p->capped);
    if (!S->o->retune) {
        S->searched++;
        S->searched_evals += evals;
    }
    if (rc || interrupted) {
        bucket_state_free(&pbs);
        return rc ? -1 : 1;
    }
    qsort(pbs.f, (size_t)pbs.nf, sizeof *pbs.f, cmp_final);
    p->own = xcalloc(8, sizeof *p->own);
    for (int i = 0; i < pbs.nf && p->nown < S->sp.top_k && p->nown < 8; i++) {
        int slot = 0;
        for (int j = 0; j < p->n && !slot; j++)
            slot = p->c[j]->config && !strcmp(p->c[j]->tmpl, pbs.f[i].tmpl) && !strcmp(p->c[j]->config, pbs.f[i].config);
        cand *c = &p->own[p->nown];
        if (slot) continue;
        instantiate(S, c, pbs.f[i].tmpl, pbs.f[i].config, &tp);
        if (c->error || start_compile(S, c, S->sp.arch) || finish_compile(S, c) || !c->job.ok) cand_free(c);
        else p->nown++;
    }
    bucket_state_free(&pbs);
    if (S->o->retune && !p->nown) return 0;
    char name[512], size[96], what[160];
    part_name(t, sp, p, 0, name, sizeof name);
    shape_text(P->p[at].shape, t->ndims, size, sizeof size);
    if (S->o->retune) snprintf(what, sizeof what, "%d of its stored finalists raced again", p->nown);
    else if (p->nown) snprintf(what, sizeof what, "searched at %s, %d candidate%s; %d new finalist%s raced", size, evals,
                               evals == 1 ? "" : "s", p->nown, p->nown == 1 ? "" : "s");
    else snprintf(what, sizeof what, "searched at %s, %d candidate%s; none new", size, evals, evals == 1 ? "" : "s");
    say(S, "split      %s %s %s: its winner loses %s%.1f%% (at %s): %s\n", t->op, t->dtype, name,
        isfinite(p->worst) ? "" : "everything ", isfinite(p->worst) ? 100 * p->worst : 100.0,
        p->where[0] ? p->where : "its size", what);
    if (!p->nown) return 0;
    /* The candidates that race beside the new ones: the winner, and the
    ** others but those that lose most in the part when the worker runs
    ** short. */
    int drop[16] = { 0 }, nslots = 0;
    double loss[16];
    for (int j = 0; j < p->n; j++) {
        int a;
        loss[j] = p->fi[j] != -1 ? worst_in(P, &p->b, j, &a) : INFINITY;
        nslots += p->fi[j] != -1;
    }
    for (; nslots > 16 - p->nown; nslots--) {
        int x = -1;
        for (int j = 0; j < p->n; j++)
            if (p->fi[j] != -1 && !drop[j] && j != p->w && (x < 0 || loss[j] > loss[x])) x = j;
        drop[x] = 1;
    }
    cand *c[16];
    int fi[16], n = 0, w = 0;
    for (int j = 0; j < p->n; j++) {
        if (p->fi[j] == -1 || drop[j]) continue;
        if (j == p->w) w = n;
        c[n] = p->c[j];
        fi[n++] = p->fi[j];
    }
    for (int i = 0; i < p->nown; i++) {
        c[n] = &p->own[i];
        fi[n++] = PART_OWN;
    }
    probes *Q = xcalloc(1, sizeof *Q);
    Q->m = n;
    for (int k = 0; k < P->n && !rc; k++)
        if (probe_race(S, t, c, fi, P->p[k].shape, Q) < 0) rc = -1;
    int a, k = probe_find(Q, p->b.rep, t->ndims);
    double worst;
    w = box_winner(S, Q, &p->b, w, &worst, &a);
    if (!rc && k >= 0 && Q->p[k].us[w] > 0) {   /* else the candidates' winner stays */
        p->n = n;
        memcpy(p->c, c, sizeof c);
        memcpy(p->fi, fi, sizeof fi);
        memcpy(p->us, Q->p[k].us, sizeof p->us);
        p->w = w;
        p->worst = worst;
        p->where[0] = 0;
        if (a >= 0) shape_text(Q->p[a].shape, t->ndims, p->where, sizeof p->where);
        free(p->q);
        p->q = Q;
    } else {
        free(Q);
    }
    return rc;
}

/* The line of a split: the bucket b (i < 0, its winner losing loss) or
** part i of sp, where it is split, and why. */
static void say_split(sw *S, const op_task *t, const bucket *b, const split *sp, int i, double loss)
{
    const bucket *box = i < 0 ? b : &sp->p[i].b;
    int n = 0, last = -1;
    for (int j = i + 1; j < sp->n; j++)
        if (sp->p[j].up == i) n++, last = j;
    strbuf along = STRBUF_INIT;
    for (int d = 0; d < box->ndims; d++)
        if (sp->p[last].b.lo[d] != box->lo[d])
            sb_printf(&along, "%s%s at %lld", along.len ? ", " : "", t->dims[d], sp->p[last].b.lo[d]);
    if (i < 0) {
        say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%: %d parts, split along %s\n", t->op,
            t->dtype, b->key, 100 * loss, 100 * S->split_at, n, sb_str(&along));
    } else {
        char name[512];
        part_name(t, sp, &sp->p[i], 1, name, sizeof name);
        say(S, "split      %s %s %s: its winner loses %.1f%%, more than %.1f%%: %d parts of level %d, split along %s\n",
            t->op, t->dtype, name, 100 * sp->p[i].worst, 100 * S->split_at, n, sp->p[i].depth + 1, sb_str(&along));
    }
    sb_free(&along);
}

/* The lines of part i of sp: a stored part's edges, its winner and the
** winner's worst loss (and why it was not split again where that is more
** than split_at); a part split again, its split's line, then its parts'. */
static void say_part(sw *S, const op_task *t, const split *sp, int i)
{
    const part *p = &sp->p[i];
    if (p->nkids) {
        say_split(S, t, NULL, sp, i, p->worst);
        for (int j = i + 1; j < sp->n; j++)
            if (sp->p[j].up == i) say_part(S, t, sp, j);
        return;
    }
    char name[512];
    part_name(t, sp, p, 1, name, sizeof name);
    say(S, "split      %s %s %s: %s %s, worst loss %s%.1f%% (at %s)%s%s\n", t->op, t->dtype, name, p->c[p->w]->tmpl,
        p->c[p->w]->config, isfinite(p->worst) ? "" : "everything ", isfinite(p->worst) ? 100 * p->worst : 100.0,
        p->where[0] ? p->where : "its size", p->whole[0] ? "; not split again: " : "", p->whole);
}

/* Whether a split on trial is kept: a stored part of it, sp->p[first, n)
** (the parts of the split, and theirs), has a winner other than x, the
** winner all of the split's parts had among their candidates. */
static int trial_kept(const split *sp, int first, const cand *x)
{
    for (int j = first; j < sp->n; j++)
        if (!sp->p[j].nkids && sp->p[j].c[sp->p[j].w] != x) return 1;
    return 0;
}

/* Part i of sp decided: when its winner loses more than split_at, it gets a
** search of its own (research_part); when its winner still does after that
** (or no search could run), it is split again among its candidates
** (split_box, its new finalists included), and its parts are decided the
** same way, down to the task's split_depth. A split on trial (its parts'
** winners among the candidates all the same) is kept only where a search
** below it changed a winner; else its parts are dropped, and the part's
** winner is chosen again over every size raced in it, its parts' included,
** as a bucket left whole is (hold_probe). A part that still loses more than
** split_at says why it was not split again (p->whole). Returns 0, 1 when
** Ctrl-C cut a search in it or came before it was split again (the bucket
** is not decided), -1 when a tool failed. */
static int settle_part(sw *S, const op_task *t, split *sp, int i)
{
    part *p = &sp->p[i];
    int rc = 0;
    if (p->worst > S->split_at && (rc = research_part(S, t, sp, p))) return rc;
    if (!(p->worst > S->split_at)) return 0;
    if (p->depth >= S->split_depth) {
        snprintf(p->whole, sizeof p->whole, "split_depth %d reached", S->split_depth);
        return 0;
    }
    if (interrupted) return 1;   /* Ctrl-C: no more races; the resume splits it */
    const char *why;
    int trial, first = sp->n, n = split_box(S, t, &p->b, p->c, p->fi, p->w, p->q, sp, i, &trial, &why);
    if (!n) {
        snprintf(p->whole, sizeof p->whole, "%s", why);
        return 0;
    }
    p->nkids = n;
    const cand *x = sp->p[first].c[sp->p[first].w];
    for (int j = first; j < first + n && !rc; j++) rc = settle_part(S, t, sp, j);
    if (rc || !trial || trial_kept(sp, first, x)) return rc;
    for (int j = first; j < sp->n; j++) part_clear(&sp->p[j]);
    sp->n = first;
    p->nkids = 0;
    snprintf(p->whole, sizeof p->whole, "no part would change its winner, nor did a part's own search");
    int a, k = probe_find(p->q, p->b.rep, t->ndims);
    double worst;
    int w = box_winner(S, p->q, &p->b, p->w, &worst, &a);
    if (k < 0 || !(p->q->p[k].us[w] > 0)) worst = worst_in(p->q, &p->b, w = p->w, &a);
    p->w = w;
    p->worst = worst;
    p->where[0] = 0;
    if (a >= 0) shape_text(p->q->p[a].shape, t->ndims, p->where, sizeof p->where);
    return 0;
}

/* Returns the winner's index in bs->f; sp->n > 0 when the bucket is split.
** A worker that cannot be given a probe's task (said already) ends the
** probes: the winner is chosen from those raced. */
static int hold_probe(sw *S, const op_task *t, const bucket *b, bucket_state *bs, cand *cs, int *kp, int w, split *sp)
{
    int k = *kp, m = bs->nf < HOLD_FINALISTS ? bs->nf : HOLD_FINALISTS;
    if (m < k) m = k;
    /* retune: the stored parts' winners are slots, next after the race's:
    ** a part's winner may be slow at the bucket's size (a config fast only
    ** in its part, found by the part's own search), and a bucket raced
    ** without it would seem to hold, or its part would lose it. */
    for (int i = 0, at = k; i < bs->nparts && at < 16; i++)
        for (int j = at; j < bs->nf; j++)
            if (!strcmp(bs->f[j].tmpl, bs->parts[i].tmpl) && !strcmp(bs->f[j].config, bs->parts[i].config)) {
                final x = bs->f[j];
                memmove(&bs->f[at + 1], &bs->f[at], sizeof *bs->f * (size_t)(j - at));
                bs->f[at++] = x;
                if (m < at) m = at;
                break;
            }
    int *fi = sp->fi;         /* cs[i]'s index in bs->f */
    sp->n = 0;
    for (int i = 0; i < k; i++) {
        fi[i] = -1;
        for (int j = 0; j < k; j++)
            if (!strcmp(bs->f[j].tmpl, cs[i].tmpl) && cs[i].config && !strcmp(bs->f[j].config, cs[i].config)) fi[i] = j;
    }
    for (int i = k; i < m; i++) {
        fi[i] = i;
        instantiate(S, &cs[i], bs->f[i].tmpl, bs->f[i].config, t);
        if (cs[i].error || start_compile(S, &cs[i], S->sp.arch) || finish_compile(S, &cs[i]) || !cs[i].job.ok) fi[i] = -1;
    }
    *kp = m;
    cand *ps[16];
    for (int i = 0; i < 16; i++) ps[i] = &cs[i];
    probes *P = xcalloc(1, sizeof *P);
    P->m = m;
    int probed = 0, failed = 0;
    for (int pass = 0; pass < 3 && !failed; pass++) {
        long long shape[TMPL_MAXDIMS];
        int same = 1;
        for (int d = 0; d < b->ndims; d++) {
            long long x = pass == 1 ? (long long)sqrt((double)(b->lo[d] > 1 ? b->lo[d] : 1) * (double)b->hi[d]) : b->hi[d] - 1;
            long long v = pass == 0 ? t->shape[d] : probe_size(b, d, x, t->shape[d]);
            shape[d] = v;
            same &= v == t->shape[d];
        }
        if (pass > 0 && same) continue;
        int n0 = P->n, rc = probe_race(S, t, ps, fi, shape, P);
        if (rc < 0) failed = 1;
        if (rc <= 0 || P->n == n0) continue;
        /* The finalists' stored times: the race at the representative. */
        for (int i = 0; i < m && pass == 0; i++)
            if (P->p[n0].us[i] > 0) {
                bs->f[fi[i]].median_us = P->p[n0].us[i];
                bs->f[fi[i]].spread = P->p[n0].spread[i];
            }
        probed |= pass > 0;
    }
    int cw = -1, cb = 0;
    double worst[16];
    char where[16][96];
    for (int i = 0; i < m; i++) {
        int a;
        worst[i] = fi[i] >= 0 ? worst_in(P, b, i, &a) : INFINITY;
        if (fi[i] < 0 || a < 0 || !memcmp(P->p[a].shape, t->shape, sizeof *t->shape * (size_t)b->ndims))
            snprintf(where[i], sizeof where[i], "the representative");
        else
            shape_text(P->p[a].shape, b->ndims, where[i], sizeof where[i]);
        if (fi[i] == w) cw = i;
        if (worst[i] < worst[cb]) cb = i;
    }
    if (!probed || cw < 0 || fi[cb] < 0) {
        /* The worker's task goes back to the bucket's own shape. */
        send_task(S, t);
        free(P);
        return w;
    }
    int nw = worst[cb] < worst[cw] - S->o->noise ? fi[cb] : w;
    S->held++;
    S->moved += nw != w;
    double after = nw != w ? worst[cb] : worst[cw];
    if (isfinite(worst[cw]) && worst[cw] > S->hold_before) S->hold_before = worst[cw];
    if (isfinite(after) && after > S->hold_after) S->hold_after = after;
    S->broken_before += !isfinite(worst[cw]);
    say(S, "hold       %s %s %s: the race's winner loses %s%.1f%% (at %s); %s\n", t->op, t->dtype, b->key,
        isfinite(worst[cw]) ? "" : "everything ", isfinite(worst[cw]) ? 100 * worst[cw] : 100.0, where[cw],
        nw != w ? "another finalist, worst loss smaller, wins" : "it stays");
    if (nw != w)
        say(S, "hold       %s %s %s: %s %s, worst loss %.1f%% (at %s)\n", t->op, t->dtype, b->key, bs->f[nw].tmpl,
            bs->f[nw].config, 100 * worst[cb], where[cb]);
    int hw = nw != w ? cb : cw;   /* the hold winner's slot */
    int nheld = P->n;             /* the probes hold raced; splitting adds the parts' */
    if (S->split_at > 0 && after > S->split_at && !failed) {
        const char *why;
        if (!split_box(S, t, b, ps, fi, hw, P, sp, -1, &sp->trial, &why))
            say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%, but %s; not split\n", t->op, t->dtype,
                b->key, 100 * after, 100 * S->split_at, why);
    }
    double final_worst = after;
    int broken = !isfinite(after), n1 = sp->n;   /* the bucket's own parts: p[0, n1) */
    const cand *x = n1 ? sp->p[0].c[sp->p[0].w] : NULL;
    if (sp->n && !sp->trial) say_split(S, t, b, sp, -1, after);
    for (int i = 0; i < n1 && !sp->rc; i++) {
        sp->rc = settle_part(S, t, sp, i);
        if (!sp->rc && !sp->trial) say_part(S, t, sp, i);
    }
    if (sp->n && sp->trial && !sp->rc) {
        /* On trial: split only where a part's own search changed a winner. */
        if (trial_kept(sp, 0, x)) {
            say_split(S, t, b, sp, -1, after);
            for (int i = 0; i < n1; i++) say_part(S, t, sp, i);
        } else {
            say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%, but no part would change it, "
                "nor did a part's own search; not split\n", t->op, t->dtype, b->key, 100 * after, 100 * S->split_at);
            sp->n = 0;
        }
    }
    if (!sp->n && !sp->rc && P->n > nheld) {
        /* Whole after its parts' sizes were raced too: its winner is the slot
        ** with the smallest worst loss over all of them (the parts all agree
        ** on one, which may not be hold's: hold saw three sizes), and the
        ** line gives that loss. */
        double bw_worst;
        int a, bw = box_winner(S, P, b, hw, &bw_worst, &a);
        if (bw != hw && fi[bw] >= 0) {
            S->moved += (fi[bw] != w) - (nw != w);
            nw = fi[bw];
        }
        char at[96] = "the representative";
        if (a >= 0 && memcmp(P->p[a].shape, t->shape, sizeof *t->shape * (size_t)b->ndims))
            shape_text(P->p[a].shape, b->ndims, at, sizeof at);
        say(S, "hold       %s %s %s: %s %s, worst loss %s%.1f%% (at %s), the parts' sizes raced too\n", t->op, t->dtype,
            b->key, bs->f[nw].tmpl, bs->f[nw].config, isfinite(bw_worst) ? "" : "everything ",
            isfinite(bw_worst) ? 100 * bw_worst : 100.0, at);
        final_worst = bw_worst;
        broken = !isfinite(bw_worst);
    }
    if (sp->n && !(sp->trial && sp->rc)) {   /* a split on trial that Ctrl-C cut is not decided */
        final_worst = 0;
        broken = 0;
        for (int i = 0; i < sp->n; i++) {
            if (sp->p[i].nkids) {
                S->resplit++;
                continue;
            }
            if (sp->p[i].worst > final_worst) final_worst = sp->p[i].worst;
            broken += !isfinite(sp->p[i].worst);
            S->parts++;
        }
        S->split++;
    }
    S->broken_after += broken;
    if (isfinite(final_worst) && final_worst > S->hold_final) S->hold_final = final_worst;
    send_task(S, t);
    free(P);
    return nw;
}

/* The winner row of bucket b (timed at t's shape): f[w] of the finalists
** f[0, k), its kernel that of the candidate in cs[0, ncs) with its template
** and config. W's runners_up and launch are malloc'd (winner_row_free). */
static int winner_row(sw *S, const op_task *t, const bucket *b, const final *f, int k, int w, double default_us,
                      int exhaustive, cand *cs, int ncs, winner *W)
{
    const final *win = &f[w];
    int rc = 0;
    memset(W, 0, sizeof *W);
    snprintf(W->op, sizeof W->op, "%s", t->op);
    snprintf(W->arch, sizeof W->arch, "%s", S->arch);
    snprintf(W->dtype, sizeof W->dtype, "%s", t->dtype);
    snprintf(W->bucket, sizeof W->bucket, "%s", b->key);
    int at = 0, al = 0, ah = 0;
    for (int d = 0; d < b->ndims; d++) {
        at += snprintf(W->dims + at, sizeof W->dims - (size_t)at, "%s%s", d ? "," : "", t->dims[d]);
        al += snprintf(W->lo + al, sizeof W->lo - (size_t)al, "%s%lld", d ? "," : "", b->lo[d]);
        ah += snprintf(W->hi + ah, sizeof W->hi - (size_t)ah, "%s%lld", d ? "," : "", b->hi[d]);
    }
    shape_json(t, W->shape, sizeof W->shape);
    snprintf(W->tmpl, sizeof W->tmpl, "%s", win->tmpl);
    W->config = win->config;
    W->median_us = win->median_us;
    W->gbps = t->bytes / win->median_us / 1e3;
    W->tflops = t->flops / win->median_us / 1e6;
    W->default_us = default_us;
    double second = 0;
    for (int i = 0; i < k; i++)
        if (i != w && (!second || f[i].median_us < second)) second = f[i].median_us;
    W->margin = second > 0 ? second / win->median_us - 1 : -1;
    W->exhaustive = exhaustive;
    strbuf ru = STRBUF_INIT;
    sb_puts(&ru, "[");
    for (int i = 0, n = 0; i < k; i++) {
        if (i == w) continue;
        sb_printf(&ru, "%s{\"template\":", n++ ? "," : "");
        sb_json_str(&ru, f[i].tmpl);
        sb_printf(&ru, ",\"config\":%s,\"median_us\":%.3f}", f[i].config, f[i].median_us);
    }
    sb_puts(&ru, "]");
    W->runners_up = ru.buf;
    /* The winner's kernel: find its candidate to get the cubin and launch. */
    cand *wc = NULL;
    for (int i = 0; i < ncs; i++)
        if (!strcmp(cs[i].tmpl, win->tmpl) && cs[i].config && !strcmp(cs[i].config, win->config)) wc = &cs[i];
    char *pj = NULL;
    if (wc) {
        char perr_[512];
        snprintf(W->cubin, sizeof W->cubin, "%s", wc->key);
        if (!(pj = plan_json(&wc->k, perr_, sizeof perr_))) rc = error("%s %s %s: %s", t->op, t->dtype, b->key, perr_);
    }
    /* A winner with no plan is still a lookup answer; it cannot be launched. */
    W->launch = pj ? pj : xstrdup("{}");
    W->device = S->dev_id;
    W->run = S->run_id;
    return rc;
}

static void winner_row_free(winner *W)
{
    free(W->runners_up);
    free(W->launch);
    W->runners_up = W->launch = NULL;
}

/* A stored winner's line. */
static void say_winner(sw *S, const op_task *t, const winner *W)
{
    /* Compute-bound ops (matrix products: well over 100 flops per byte that
    ** must move) are judged in TFLOP/s; the rest in GB/s against the copy
    ** ceiling. */
    char rate[48], pct[64] = "";
    if (t->flops > 100 * t->bytes) {
        snprintf(rate, sizeof rate, "%8.1f TFLOP/s", W->tflops);
    } else {
        snprintf(rate, sizeof rate, "%8.1f GB/s", W->gbps);
        if (S->copy_gbps > 0) snprintf(pct, sizeof pct, "%5.1f%%", 100 * W->gbps / S->copy_gbps);
    }
    char vs[48] = "   (default not timed)";
    if (W->default_us > 0) snprintf(vs, sizeof vs, "%6.2fx vs default %.1f us", W->default_us / W->median_us, W->default_us);
    /* A peer figure in the bucket (--peers): the ratio on the same metric. */
    int tf = t->flops > 100 * t->bytes;
    const peer *pr = peers_find(&S->peers, t->op, t->dtype, W->lo, W->hi, tf);
    if (pr) {
        size_t at = strlen(pct);
        snprintf(pct + at, sizeof pct - at, "%s%.3fx %s", at ? " " : "", (tf ? W->tflops : W->gbps) / pr->value, pr->name);
    }
    say(S, "%-10s %-9s %-14s %10.2f us %s %s  %s  %s %s%s\n", t->op, t->dtype, W->bucket, W->median_us, rate, pct, vs,
        W->tmpl, W->config, W->exhaustive ? "" : " (not exhaustive)");
}

/* The parts of a split bucket as winner rows, stored in one transaction in
** place of the bucket's: those not split again, at every level (they
** partition the bucket). Each part's finalists are the candidates raced in
** it (the hold race's slots, its parents' searches' and its own search's)
** that ran at its size, timed there. */
static int put_parts(sw *S, const op_task *t, const bucket *b, const bucket_state *bs, const split *sp)
{
    winner *W = xcalloc(SPLIT_MAXPARTS, sizeof *W);
    op_task *tp = xcalloc(SPLIT_MAXPARTS, sizeof *tp);
    int rc = 0, n = 0;
    for (int i = 0; i < sp->n && !rc; i++) {
        const part *p = &sp->p[i];
        if (p->nkids) continue;
        if (sub_task(S, t, p->b.rep, &tp[n])) { rc = error("%s", tmpl_errmsg(S->T)); break; }
        final f[16];
        int k = 0, w = -1;
        double default_us = 0;
        for (int j = 0; j < p->n; j++) {
            if (p->fi[j] == -1 || !(p->us[j] > 0)) continue;
            if (p->fi[j] >= 0) {
                f[k] = bs->f[p->fi[j]];
            } else {
                memset(&f[k], 0, sizeof f[k]);
                snprintf(f[k].tmpl, sizeof f[k].tmpl, "%s", p->c[j]->tmpl);
                f[k].config = p->c[j]->config;
            }
            f[k].median_us = p->us[j];
            if (f[k].is_default) default_us = p->us[j];
            if (j == p->w) w = k;
            k++;
        }
        if (w < 0) { rc = error("%s %s %s: its winner has no time there", t->op, t->dtype, p->b.key); break; }
        for (int x = 1; x < k; x++)     /* fastest first, as a race leaves them */
            for (int y = x; y > 0 && f[y].median_us < f[y - 1].median_us; y--) {
                final tmp = f[y];
                f[y] = f[y - 1];
                f[y - 1] = tmp;
                w = w == y ? y - 1 : w == y - 1 ? y : w;
            }
        rc = winner_row(S, &tp[n], &p->b, f, k, w, default_us, bs->exhaustive && !p->capped, p->c[p->w], 1, &W[n]);
        n++;
    }
    if (!rc && reg_winners_put(S->R, b->key, W, n)) rc = error("%s", reg_errmsg(S->R));
    for (int i = 0; i < n; i++) {
        if (!rc) {
            S->winners++;
            say_winner(S, &tp[i], &W[i]);
        }
        winner_row_free(&W[i]);
    }
    free(W);
    free(tp);
    return rc;
}

/* A bucket holds one winner per hardware (and is tuned at one size per
** alignment class: spec.h, bucket_key; a registry written before classes
** were keyed may hold a winner tuned at an odd size under an aligned
** bucket's key). When W replaces this GPU's winner
** tuned at another shape of the bucket, and W's template refuses W's config at
** that shape (it needs another kernel there: rows TMA cannot read in place,
** say), that shape is left without a kernel that runs it: say so. The old
** shape comes from the registry: anything unexpected in it skips the check. */
static int part_of_row(const winner *w, const op_task *t, bucket *pb);

static void warn_displaced(sw *S, const op_task *t, const bucket *b, const winner *W)
{
    winner old;
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    if (reg_winner_get_hw(S->R, t->op, S->arch, t->dtype, b->key, hw, &old) != 1) return;
    bucket ob;
    op_task ot;
    char why[256] = "";
    int valid = 1;
    if (!part_of_row(&old, t, &ob) && memcmp(ob.rep, t->shape, sizeof *t->shape * (size_t)t->ndims) &&
        !sub_task(S, t, ob.rep, &ot) && !tmpl_valid(S->T, W->tmpl, W->config, &ot, &S->dev, &valid, why, sizeof why) &&
        !valid) {
        char was[160], now[160];
        shape_text(ob.rep, t->ndims, was, sizeof was);
        shape_text(t->shape, t->ndims, now, sizeof now);
        warning("%s %s %s: the winner tuned at %s is replaced by one tuned at %s, which %s refuses at %s (%s); "
                "a bucket holds one winner per alignment class, so tune shapes of one class that need different kernels "
                "into separate registries (--db)",
                t->op, t->dtype, b->key, was, now, W->tmpl, was, why);
    }
    winner_free(&old);
}

static int confirm(sw *S, const op_task *t, const bucket *b, bucket_state *bs)
{
    if (!bs->nf) {
        say(S, "%-10s %-9s %-18s no correct candidate\n", t->op, t->dtype, b->key);
        return 0;
    }
    qsort(bs->f, (size_t)bs->nf, sizeof *bs->f, cmp_final);
    int k = bs->nf < S->sp.top_k ? bs->nf : S->sp.top_k;
    /* The default goes into the race too, so the comparison is same-run. */
    int def = -1;
    for (int i = 0; i < bs->nf; i++)
        if (bs->f[i].is_default) def = i;
    if (def >= k && k < 16) {
        final tmp = bs->f[k];
        bs->f[k] = bs->f[def];
        bs->f[def] = tmp;
        def = k++;
    }
    cand cs[16];
    memset(cs, 0, sizeof cs);
    int rc = 0;
    for (int i = 0; i < k;) {
        instantiate(S, &cs[i], bs->f[i].tmpl, bs->f[i].config, t);
        if (cs[i].error || start_compile(S, &cs[i], S->sp.arch) || finish_compile(S, &cs[i]) || !cs[i].job.ok ||
            !load_slot(S, &cs[i], t, i)) {
            /* A finalist that no longer builds (an earlier run's config of a
            ** template since changed) leaves the race; the next one moves up. */
            warning("%s %s %s: finalist %s %s dropped: %s", t->op, t->dtype, b->key, bs->f[i].tmpl, bs->f[i].config,
                    cs[i].error ? cs[i].error : cs[i].job.error ? cs[i].job.error : "it does not load");
            cand_free(&cs[i]);
            free(bs->f[i].config);
            memmove(&bs->f[i], &bs->f[i + 1], sizeof *bs->f * (size_t)(bs->nf - i - 1));
            bs->nf--;
            if (k > bs->nf) k = bs->nf;
            continue;
        }
        i++;
    }
    if (!k) {
        say(S, "%-10s %-9s %-18s no finalist builds\n", t->op, t->dtype, b->key);
        return 0;
    }
    if (k > 1) race(S, cs, k, bs->f);
    for (int i = 0; i < k; i++) if (bs->f[i].is_default) bs->default_us = bs->f[i].median_us;
    qsort(bs->f, (size_t)k, sizeof *bs->f, cmp_final);
    /* Ties: within 0.5% of the fastest, the steadier (smaller spread) wins,
    ** then the lower canonical config, so the choice is repeatable. */
    int w = 0;
    for (int i = 1; i < k; i++) {
        if (bs->f[i].median_us > bs->f[0].median_us * 1.005) break;
        if (bs->f[i].spread < bs->f[w].spread ||
            (bs->f[i].spread == bs->f[w].spread && strcmp(bs->f[i].config, bs->f[w].config) < 0))
            w = i;
    }
    /* retune: the standing winner stays while it is within the noise margin
    ** of the fastest. */
    for (int i = 0; i < k && bs->keep_config; i++)
        if (!strcmp(bs->f[i].tmpl, bs->keep_tmpl) && !strcmp(bs->f[i].config, bs->keep_config) &&
            bs->f[i].median_us <= bs->f[0].median_us * (1 + S->o->noise))
            w = i;
    split *sp = xcalloc(1, sizeof *sp);
    if (S->hold && k > 1) w = hold_probe(S, t, b, bs, cs, &k, w, sp);
    if (sp->rc) {
        /* A tool failed (said), or Ctrl-C cut a part's search: the resume
        ** decides the bucket, its measurements kept. */
        rc = sp->rc < 0 ? -1 : 0;
    } else if (sp->n) {
        rc = put_parts(S, t, b, bs, sp);
    } else {
        winner W;
        rc = winner_row(S, t, b, bs->f, k, w, bs->default_us, bs->exhaustive, cs, k, &W);
        warn_displaced(S, t, b, &W);
        if (reg_winner_put(S->R, &W)) rc = error("%s", reg_errmsg(S->R));
        else S->winners++;
        say_winner(S, t, &W);
        winner_row_free(&W);
    }
    split_free(sp);
    for (int i = 0; i < 16; i++) cand_free(&cs[i]);
    return rc;
}

static void bucket_state_free(bucket_state *bs)
{
    for (int i = 0; i < bs->nf; i++) free(bs->f[i].config);
    free(bs->f);
    memset(bs, 0, sizeof *bs);
}

/* The bucket's fastest measurements from earlier tasks and runs on this
** device join the finalists: a task that tries a few templates must not
** replace a faster winner another task found. */
static int add_earlier(sw *S, const op_task *t, const bucket *b, bucket_state *bs)
{
    measurement key = { 0 }, best[16];
    bucket_fields(S, &key, t, b);
    int n = reg_measure_best(S->R, &key, S->sp.top_k < 16 ? S->sp.top_k : 16, best);
    if (n < 0) return error("%s", reg_errmsg(S->R));
    for (int i = 0; i < n; i++) {
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", best[i].tmpl);
        c.config = best[i].config;
        c.m = best[i];
        keep_final(bs, &c, 0);
        measurement_free(&best[i]);
    }
    return 0;
}

/* The default of (op, arch, dtype) with its kernel (cubin and launch plan)
** when candidate c (instantiated, compiled) has one, so libaitune can launch
** at the default level; without, a stored kernel of the same config stays. */
static int put_default(sw *S, const op_task *t, const char *tname, const char *config, const cand *c)
{
    char *pj = NULL, err[512];
    if (c && !c->error && c->job.ok && c->job.cubin) pj = plan_json(&c->k, err, sizeof err);
    int rc = 0;
    if (reg_default_put(S->R, t->op, S->arch, t->dtype, tname, config, pj ? c->key : NULL, pj)) rc = error("%s", reg_errmsg(S->R));
    free(pj);
    return rc;
}

/* compile: the default's kernel is in the cache by now. */
static int store_default(sw *S, const op_task *t, const char *tname, const char *config)
{
    cand c = { 0 };
    instantiate(S, &c, tname, config, t);
    if (!c.error && (start_compile(S, &c, S->sp.arch) || finish_compile(S, &c))) {
        cand_free(&c);
        return -1;
    }
    int rc = put_default(S, t, tname, config, &c);
    cand_free(&c);
    return rc;
}

/* Every (template, config) of one (task, dtype, bucket). */
/* Template errors in constraints() are recorded results, once. tname: the
** search's template, or NULL for a joint search (its configs say theirs). */
static void record_rejected(sw *S, search *se, const char *tname, const op_task *t, const bucket *b)
{
    for (int i = 0; i < search_nrejected(se) && !S->o->compile_only; i++) {
        char *cfg, whyr[512], tn[64];
        int is_err;
        if (search_rejected(se, i, &cfg, whyr, sizeof whyr, &is_err)) continue;
        if (!is_err) { free(cfg); continue; }
        if (!tname) {
            char *own;
            if (search_split(S->T, cfg, tn, sizeof tn, &own)) { free(cfg); continue; }
            free(cfg);
            cfg = own;
        } else {
            snprintf(tn, sizeof tn, "%s", tname);
        }
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", tn);
        c.config = cfg;
        hash_hex(hash_str(hash_str(HASH_INIT, tn), cfg), c.config_hash);
        key_fields(S, &c, t, b);
        set_status(&c, "constraint", whyr);
        measurement old;
        if (reg_measure_find(S->R, &c.m, &old) == 0) {
            count_status(S, "constraint");
            reg_measure_put(S->R, &c.m);
        } else {
            measurement_free(&old);
        }
        cand_free(&c);
    }
}

/* Whether the task uses template tname and it handles t on this GPU (a
** template that errors in supports() is warned about and counted). */
static int template_usable(sw *S, const spec_task *st, const char *tname, const op_task *t)
{
    int ok;
    char why[256];
    if (!spec_task_uses(st, tname)) return 0;
    if (tmpl_supports(S->T, tname, t, &S->dev, &ok, why, sizeof why)) {
        warning("%s", tmpl_errmsg(S->T));
        S->by_status[2]++;
        return 0;
    }
    return ok;
}

/* The most configs se will ask for: max_evals (> 0), or its whole space. */
static int tune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, t->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    bucket_state bs = { .exhaustive = 1 };
    int rc = 0, stored_default = 0;
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    int batch = S->o->compile_only ? 64 : 8;
    for (int ti = 0; ti < ntn && !rc && !out_of_budget(S); ti++) {
        if (!template_usable(S, st, tn[ti], t)) continue;
        char *dflt = NULL;
        if (tmpl_default(S->T, tn[ti], t, &S->dev, &dflt)) warning("%s", tmpl_errmsg(S->T));
        /* The config now; its kernel once the first batch compiled it. */
        int default_kernel = 0;
        if (dflt && !stored_default && !S->o->compile_only) {
            rc = put_default(S, t, tn[ti], dflt, NULL);
            stored_default = default_kernel = 1;
        }
        const char *strategy = S->o->compile_only ? "exhaustive" : st->search;
        int max_evals = S->o->compile_only ? 0 : (S->o->max_evals > 0 ? S->o->max_evals : st->max_evals);
        search *se = search_new(S->T, strategy, tn[ti], t, &S->dev, S->sp.seed, max_evals);
        if (!se) {
            rc = error("%s", tmpl_errmsg(S->T));
            free(dflt);
            break;
        }
        int evals = search_budget(se, max_evals);
        progress_plan(S->P, evals + (dflt != NULL));
        /* The default first: every bucket reports how far tuning got from it. */
        flow f = { .S = S, .t = t, .b = b, .se = se, .bs = &bs, .tname = tn[ti], .default_cfg = dflt, .batch = batch,
                   .evals = evals };
        if (default_kernel) {
            f.store_tmpl = tn[ti];
            f.store_cfg = dflt;
        }
        if (!rc && !out_of_budget(S)) rc = flow_run(&f, &tn[ti], &dflt, S->o->compile_only ? 0 : 1);
        /* The space is lazy: what it rejected, and whether the cap left some of it, are known now. */
        S->rejected += search_nrejected(se);
        record_rejected(S, se, tn[ti], t, b);
        if (search_capped(se, max_evals)) bs.exhaustive = 0;
        if (S->budget_hit || interrupted) bs.exhaustive = 0;
        search_free(se);
        free(dflt);
    }
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    if (!rc && !S->o->compile_only && !interrupted) rc = add_earlier(S, t, b, &bs);
    if (!rc && !S->o->compile_only && !interrupted) rc = confirm(S, t, b, &bs);
    if (!rc) rc = trim_cubins(S, t);
    bucket_state_free(&bs);
    return rc;
}

/* A joint search (spec `joint: true`): one search over the union of the
** bucket's templates' spaces, so its budget (max_evals for the bucket, not
** per template) goes to the family that pays. Each template's default is
** measured first; the first template's is the bucket's default. The
** search learns the defaults' results when it asks for them, without a
** second run (flow_put). */
static int tune_bucket_joint(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, t->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    char **use = xcalloc((size_t)ntn + 1, sizeof *use), **dflt = xcalloc((size_t)ntn + 1, sizeof *dflt);
    int nuse = 0, rc = 0;
    for (int ti = 0; ti < ntn; ti++) {
        if (!template_usable(S, st, tn[ti], t)) continue;
        if (tmpl_default(S->T, tn[ti], t, &S->dev, &dflt[nuse])) warning("%s", tmpl_errmsg(S->T));
        use[nuse++] = tn[ti];
    }
    bucket_state bs = { .exhaustive = 1 };
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    search *se = NULL;
    int max_evals = S->o->max_evals > 0 ? S->o->max_evals : st->max_evals;
    if (nuse) {
        bs.default_tmpl = use[0];
        se = search_new_bucket(S->T, st->search, use, nuse, t, &S->dev, S->sp.seed, max_evals, NULL, 0);
        if (!se) rc = error("%s", tmpl_errmsg(S->T));
        else {
            int ndefaults = 0;
            for (int i = 0; i < nuse; i++) ndefaults += dflt[i] != NULL;
            progress_plan(S->P, search_budget(se, max_evals) + ndefaults);
        }
        if (!rc && dflt[0]) rc = put_default(S, t, use[0], dflt[0], NULL);
    }
    if (se && !rc && !out_of_budget(S)) {
        flow f = { .S = S, .t = t, .b = b, .se = se, .bs = &bs, .default_cfg = dflt[0], .batch = 8,
                   .evals = search_budget(se, max_evals), .store_tmpl = use[0], .store_cfg = dflt[0] };
        rc = flow_run(&f, use, dflt, nuse);
    }
    if (se) {   /* the space is lazy: see tune_bucket */
        S->rejected += search_nrejected(se);
        record_rejected(S, se, NULL, t, b);
        if (search_capped(se, max_evals)) bs.exhaustive = 0;
    }
    if (S->budget_hit || interrupted) bs.exhaustive = 0;
    search_free(se);
    for (int i = 0; i < nuse; i++) free(dflt[i]);
    free(dflt);
    free(use);
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    if (!rc && !interrupted) rc = add_earlier(S, t, b, &bs);
    if (!rc && !interrupted) rc = confirm(S, t, b, &bs);
    if (!rc) rc = trim_cubins(S, t);
    bucket_state_free(&bs);
    return rc;
}

/* retune: the stored finalists of a stale bucket (its winner and runners-up,
** as the registry has them) are measured again on this GPU and toolchain,
** each verified and timed, then raced. The winner stays when it is still
** the fastest within the noise margin; when another finalist now beats it by
** more, or a finalist fails (compile, verify, fault), the bucket is searched
** again as a sweep would. A split bucket (its parts' winners stored, spec.h:
** bucket_split) races its parts' finalists, each once, at its own size and,
** when they all still pass, holds and splits again as a sweep with hold
** would (retune_split); a finalist that fails sends it to a search. */
static int add_stored(const char *tmpl, const char *config, double median_us, void *ctx)
{
    retune_final *rf = ctx;
    if (rf->n == (int)(sizeof rf->f / sizeof rf->f[0])) return 0;
    for (int i = 0; i < rf->n; i++)      /* a split bucket's parts share their finalists */
        if (!strcmp(rf->f[i].tmpl, tmpl) && !strcmp(rf->f[i].config, config)) return 0;
    snprintf(rf->f[rf->n].tmpl, sizeof rf->f[rf->n].tmpl, "%s", tmpl);
    rf->f[rf->n].config = xstrdup(config);
    rf->f[rf->n].median_us = median_us;
    rf->n++;
    return 0;
}

/* The stored winners of b and its parts (this GPU's when it has any), and
** whether b is split: some are its parts'. */
static int stored_family(sw *S, const op_task *t, const bucket *b, const char *hw, winner **fam, int *n, int *split)
{
    if (reg_winner_family(S->R, t->op, S->arch, t->dtype, b->key, hw, fam, n)) return error("%s", reg_errmsg(S->R));
    *split = 0;
    for (int i = 0; i < *n; i++) *split |= strcmp((*fam)[i].bucket, b->key) != 0;
    return 0;
}

static void family_free(winner *fam, int n)
{
    for (int i = 0; i < n; i++) winner_free(&fam[i]);
    free(fam);
}

/* retune: the stored finalists rf, measured again at b's size into bs;
** *failed counts those that no longer pass. */
static int remeasure(sw *S, const op_task *t, const bucket *b, const retune_final *rf, bucket_state *bs, int *failed)
{
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    progress_plan(S->P, rf->n);
    cand cs[16];
    memset(cs, 0, sizeof cs);
    for (int i = 0; i < rf->n; i++) instantiate(S, &cs[i], rf->f[i].tmpl, rf->f[i].config, t);
    int rc = run_batch(S, cs, rf->n, t, b, NULL, bs, NULL);
    *failed = 0;
    for (int i = 0; i < rf->n; i++) *failed += strcmp(cs[i].m.status, "ok") != 0;
    for (int i = 0; i < rf->n; i++) cand_free(&cs[i]);
    return rc;
}

static int retune_split(sw *S, const spec_task *st, const op_task *t, const bucket *b, const char *hw, winner *fam, int nfam)
{
    retune_final rf = { 0 };
    int rc = 0;
    for (int i = 0; i < nfam && !rc; i++)
        if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, fam[i].bucket, hw, add_stored, &rf))
            rc = error("%s", reg_errmsg(S->R));
    bucket_state bs = { .exhaustive = 1, .parts = fam, .nparts = nfam };
    int failed = 0;
    if (!rc) rc = remeasure(S, t, b, &rf, &bs, &failed);
    /* Held and split as the sweep did, whatever retune does elsewhere. */
    int hold = S->hold;
    S->hold = 1;
    if (!rc && !failed) rc = confirm(S, t, b, &bs);
    winner *now = NULL;
    int nnow = 0, kept = 0, split;
    if (!rc && !failed && !stored_family(S, t, b, hw, &now, &nnow, &split))
        for (int i = 0; i < nnow; i++)
            for (int j = 0; j < nfam; j++)
                kept += !strcmp(now[i].bucket, fam[j].bucket) && !strcmp(now[i].tmpl, fam[j].tmpl) &&
                        !strcmp(now[i].config, fam[j].config);
    note(S, "%s", "");
    if (!rc && !failed)
        printf("retune %s %s %s: split in %d parts, %d finalists raced again: now %d part%s, %d winner%s kept\n", t->op,
               t->dtype, b->key, nfam, rf.n, nnow, nnow == 1 ? "" : "s", kept, kept == 1 ? "" : "s");
    else if (!rc)
        printf("retune %s %s %s: split in %d parts: a finalist failed; searching the bucket again\n", t->op, t->dtype, b->key,
               nfam);
    fflush(stdout);
    S->retuned++;
    if (!rc && failed) {
        S->escalated++;
        rc = tune_bucket(S, st, t, b);
    }
    S->hold = hold;
    family_free(now, nnow);
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

static int retune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    retune_final rf = { 0 };
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    winner *fam;
    int nfam, split;
    if (stored_family(S, t, b, hw, &fam, &nfam, &split)) return -1;
    if (split) {
        int rc = retune_split(S, st, t, b, hw, fam, nfam);
        family_free(fam, nfam);
        return rc;
    }
    family_free(fam, nfam);
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, b->key, hw, add_stored, &rf))
        return error("%s", reg_errmsg(S->R));
    if (!rf.n) return 0;
    bucket_state bs = { .exhaustive = 1 };
    int failed;
    int rc = remeasure(S, t, b, &rf, &bs, &failed);
    double old_us = rf.f[0].median_us;     /* the stored winner comes first */
    bs.keep_tmpl = rf.f[0].tmpl;
    bs.keep_config = rf.f[0].config;
    if (!rc && !failed) rc = confirm(S, t, b, &bs);
    /* The old winner's new time against the new fastest. */
    double now_old = -1, best = bs.nf ? bs.f[0].median_us : -1;
    for (int i = 0; i < bs.nf; i++)
        if (!strcmp(bs.f[i].tmpl, rf.f[0].tmpl) && !strcmp(bs.f[i].config, rf.f[0].config)) now_old = bs.f[i].median_us;
    int moved = !failed && (now_old < 0 || now_old > best * (1 + S->o->noise));
    note(S, "%s", "");
    if (!rc && !failed && !moved)
        printf("retune %s %s %s: %.2f us -> %.2f us, winner kept (%s %s)\n", t->op, t->dtype, b->key, old_us, now_old,
               rf.f[0].tmpl, rf.f[0].config);
    else if (!rc)
        printf("retune %s %s %s: %.2f us -> %s; searching the bucket again\n", t->op, t->dtype, b->key, old_us,
               failed ? "a finalist failed" : "the ranking changed beyond the noise margin");
    fflush(stdout);
    S->retuned++;
    if (!rc && (failed || moved)) {
        S->escalated++;
        rc = tune_bucket(S, st, t, b);
    }
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

/* check: the winner of this GPU, verified and timed again, against the time
** it was recorded with. Nothing is stored but the measurement. A split
** bucket's parts are checked each at its own size (check_bucket). */
static int check_winner(sw *S, const op_task *t0, const bucket *b, const char *hw)
{
    /* Compared with the time it was recorded with, so timed the way it was
    ** recorded: a spec whose timing changed since the sweep would otherwise
    ** compare a stream time with a flush time (that change is retune's). */
    int was_stream = reg_winner_stream(S->R, t0->op, S->arch, t0->dtype, b->key, hw);
    if (was_stream == -2) return error("%s", reg_errmsg(S->R));
    op_task tt = *t0;
    const op_task *t = t0;
    char how[96] = "";
    if (was_stream >= 0 && was_stream != t0->stream) {
        tt.stream = was_stream;
        t = &tt;
        snprintf(how, sizeof how, " [timed %s as recorded; the spec says %s]", reg_timing_name(was_stream),
                 reg_timing_name(t0->stream));
        if (send_task(S, t)) return -1;
    }
    retune_final rf = { 0 };
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, b->key, hw, add_stored, &rf))
        return error("%s", reg_errmsg(S->R));
    if (!rf.n) return 0;
    cand c;
    memset(&c, 0, sizeof c);
    instantiate(S, &c, rf.f[0].tmpl, rf.f[0].config, t);
    bucket_state bs = { .exhaustive = 1 };
    int rc = run_batch(S, &c, 1, t, b, NULL, &bs, NULL);
    double was = rf.f[0].median_us, now = c.m.median_us;
    /* The recorded time is the winner's in the race of its bucket's
    ** finalists (confirm): a kernel timed alone may run a few percent off
    ** it (clocks, the caches' state between samples). So the verified
    ** winner is timed again in the same race, against its stored
    ** finalists, and that time is the one compared. */
    if (!rc && !strcmp(c.m.status, "ok") && rf.n > 1 && !S->o->compile_only) {
        cand fs[16];
        final ff[16];
        int k = 0;
        memset(fs, 0, sizeof fs);
        memset(ff, 0, sizeof ff);
        for (int i = 0; i < rf.n && i < 16; i++) {
            instantiate(S, &fs[k], rf.f[i].tmpl, rf.f[i].config, t);
            if (fs[k].error || start_compile(S, &fs[k], S->sp.arch) || finish_compile(S, &fs[k]) || !fs[k].job.ok ||
                !load_slot(S, &fs[k], t, k)) {
                if (i == 0) k = -1;   /* the winner must be in the race */
                cand_free(&fs[k < 0 ? 0 : k]);
                if (k < 0) break;
                continue;
            }
            k++;
        }
        if (k > 1) {
            ff[0].median_us = -1;
            race(S, fs, k, ff);
            if (ff[0].median_us > 0) now = ff[0].median_us;
        }
        for (int i = 0; i < (k > 0 ? k : 0); i++) cand_free(&fs[i]);
    }
    note(S, "%s", "");
    S->checked++;
    if (rc) {
        /* a tool failure, said already */
    } else if (strcmp(c.m.status, "ok")) {
        S->regressed++;
        printf("FAILED     %s %s %s: %s %s: %s%s%s\n", t->op, t->dtype, b->key, rf.f[0].tmpl, rf.f[0].config, c.m.status,
               c.m.error ? ": " : "", c.m.error ? c.m.error : "");
    } else if (now > was * (1 + S->o->noise)) {
        S->regressed++;
        printf("REGRESSED  %s %s %s: %.2f us -> %.2f us (+%.1f%%, margin %.1f%%)%s\n", t->op, t->dtype, b->key, was, now,
               100 * (now / was - 1), 100 * S->o->noise, how);
    } else {
        printf("ok         %s %s %s: %.2f us -> %.2f us (%+.1f%%)%s\n", t->op, t->dtype, b->key, was, now, 100 * (now / was - 1),
               how);
    }
    fflush(stdout);
    cand_free(&c);
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

/* A stored part as a bucket: edges from the row, its size from the row's
** shape (JSON, dim -> size). */
static int part_of_row(const winner *w, const op_task *t, bucket *pb)
{
    memset(pb, 0, sizeof *pb);
    pb->ndims = t->ndims;
    snprintf(pb->key, sizeof pb->key, "%s", w->bucket);
    const char *lo = w->lo, *hi = w->hi;
    json *sh = NULL;
    char err[128];
    if (json_parse(w->shape, &sh, err, sizeof err)) return -1;
    int bad = 0;
    for (int d = 0; d < t->ndims && !bad; d++) {
        char *e1, *e2;
        pb->lo[d] = strtoll(lo, &e1, 10);
        pb->hi[d] = strtoll(hi, &e2, 10);
        const json *v = json_get(sh, t->dims[d]);
        bad = e1 == lo || e2 == hi || !v || v->type != JSON_NUM || !v->is_int;
        if (!bad) pb->rep[d] = v->i;
        if (!bad && pb->rep[d] >= 1) pb->align[d] = align_class(pb->rep[d]);
        bad = bad || pb->rep[d] < pb->lo[d] || pb->rep[d] >= pb->hi[d] || pb->rep[d] < 1;
        lo = *e1 ? e1 + 1 : e1;
        hi = *e2 ? e2 + 1 : e2;
    }
    json_free(sh);
    return bad ? -1 : 0;
}

static int check_bucket(sw *S, const op_task *t, const bucket *b)
{
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    winner *fam;
    int nfam, split, rc = 0;
    if (stored_family(S, t, b, hw, &fam, &nfam, &split)) return -1;
    if (!split) rc = check_winner(S, t, b, hw);
    for (int i = 0; i < nfam && split && !rc; i++) {
        bucket pb;
        op_task tp;
        if (part_of_row(&fam[i], t, &pb)) {
            warning("%s %s %s: the stored part's edges or size do not parse; not checked", t->op, t->dtype, fam[i].bucket);
            continue;
        }
        if (sub_task(S, t, pb.rep, &tp)) rc = error("%s", tmpl_errmsg(S->T));
        else if (!(rc = send_task(S, &tp))) rc = check_winner(S, &tp, &pb, hw);
    }
    family_free(fam, nfam);
    return rc;
}

/* The op's dims must be the spec task's dims. A spec may list them in any
** order; everything stored (bucket key, edges, shape) is in the op's order,
** the order lookup and the runtime get shapes in. This is the one place a
** bucket is put in that order: ob gets the bucket with edges, sizes and key
** in op order, shape its representative sizes. */
static int task_bucket(sw *S, const spec_task *st, const bucket *b, long long *shape, bucket *ob)
{
    int nd, ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(S->T, st->op, &nd, dims, &ndt, dts, 32)) return -1;
    if (nd != st->ndims) {
        tmpl_seterr(S->T, "op '%s' has %d dims, the task gives %d", st->op, nd, st->ndims);
        return -1;
    }
    memset(ob, 0, sizeof *ob);
    ob->ndims = nd;
    for (int d = 0; d < nd; d++) {
        int k = -1;
        for (int j = 0; j < st->ndims; j++)
            if (!strcmp(st->dims[j].name, dims[d])) k = j;
        if (k < 0) {
            tmpl_seterr(S->T, "op '%s' has no dim '%s' in the task (its dims: %s%s%s)", st->op, dims[d], dims[0],
                        nd > 1 ? ", " : "", nd > 1 ? dims[1] : "");
            return -1;
        }
        shape[d] = ob->rep[d] = b->rep[k];
        ob->align[d] = bucket_align(b, k);
        ob->lo[d] = b->lo[k];
        ob->hi[d] = b->hi[k];
    }
    if (bucket_key(nd, dims, ob->lo, ob->rep, ob->key, sizeof ob->key)) {
        tmpl_seterr(S->T, "op '%s': a bucket key of the task is longer than %d characters", st->op, (int)sizeof ob->key - 1);
        return -1;
    }
    return 0;
}

/* Every template a task names must be one of its op's. */
static int check_templates(sw *S, const spec_task *st)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, st->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    int rc = 0;
    for (int k = 0; k < st->ntemplates && !rc; k++) {
        int found = 0;
        strbuf have = { 0 };
        for (int i = 0; i < ntn; i++) {
            sb_printf(&have, "%s%s", i ? ", " : "", strchr(tn[i], '/') + 1);
            if (!strcmp(strchr(tn[i], '/') + 1, st->templates[k])) found = 1;
        }
        if (!found)
            rc = error("spec '%s' line %d: op '%s' has no template '%s' (it has: %s)", S->sp.path, st->templates_line,
                       st->op, st->templates[k], sb_str(&have));
        sb_free(&have);
    }
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    return rc;
}

/* Check every task against the templates before any work starts. */
static int check_spec(sw *S)
{
    for (int i = 0; i < S->sp.ntasks; i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        spec_buckets(st, &bs);
        long long shape[TMPL_MAXDIMS];
        bucket ob;
        int bad = task_bucket(S, st, &bs[0], shape, &ob);
        for (int d = 0; d < st->ndtypes && !bad; d++) {
            op_task t;
            bad = tmpl_task(S->T, st->op, st->dtypes[d], shape, &t);
        }
        free(bs);
        if (bad || !search_exists(S->T, st->search)) {
            error("spec '%s' line %d: %s", S->sp.path, st->line, tmpl_errmsg(S->T));
            return -1;
        }
        if (st->ntemplates && check_templates(S, st)) return -1;
    }
    return 0;
}

/* The device and run records, the engine's kernels, the copy ceiling. */
static int start_gpu(sw *S, const strbuf *env)
{
    if (reg_device(S->R, &S->dev, &S->dev_id) ||
        reg_run_begin(S->R, S->o->command, S->sp.hash, S->sp.seed, S->dev_id, sb_str(env), &S->run_id))
        return error("%s", reg_errmsg(S->R));
    /* The engine's own kernels, through the cache like any other. */
    cand c = { 0 };
    if (tmpl_support(S->T, &c.k.source)) return error("%s", tmpl_errmsg(S->T));
    snprintf(c.k.name, sizeof c.k.name, "fill_f32");
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d", S->dev.cc);
    if (start_compile(S, &c, arch) || finish_compile(S, &c)) { cand_free(&c); return -1; }
    int rc = 0;
    if (!c.job.ok) rc = error("the engine's kernels do not compile: %s", c.job.error ? c.job.error : "?");
    else if (worker_set_support(S->W, c.job.cubin, c.job.cubin_len)) rc = error("%s", worker_errmsg(S->W));
    cand_free(&c);
    if (rc) return rc;
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "copy");
    msg_kv(&h, "bytes", "%lld", S->dev.mem > (8LL << 30) ? (1LL << 30) : S->dev.mem / 8);
    msg r;
    if (worker_request(S->W, &h, NULL, 0, &r, 120) == WORKER_OK) {
        S->copy_gbps = msg_num(&r, "gbps", 0);
        msg_free(&r);
    }
    sb_free(&h);
    say(S, "device: %s (sm_%d, %d SMs, %.0f GB, L2 %.0f MB), driver %s, NVRTC %s; copy ceiling %.0f GB/s\n", S->dev.name,
        S->dev.cc, S->dev.sms, S->dev.mem / 1e9, S->dev.l2 / 1048576.0, S->dev.driver, S->dev.nvrtc, S->copy_gbps);
    return 0;
}

/* The task message the worker sets buffers up from. */
static int send_task(sw *S, const op_task *t)
{
    cand c = { 0 };
    if (tmpl_reference(S->T, t, "aitune_reference", &c.k)) return error("%s", tmpl_errmsg(S->T));
    snprintf(c.tmpl, sizeof c.tmpl, "%s/reference", t->op);
    int rc = start_compile(S, &c, S->sp.arch) || finish_compile(S, &c);
    if (!rc && !c.job.ok) rc = error("op '%s' reference does not compile: %s", t->op, c.job.error);
    plan_geom g;
    char err[512];
    char *pj = NULL;
    if (!rc && (kernel_geometry(&c.k, t, &g, err, sizeof err) || !(pj = plan_json(&c.k, err, sizeof err))))
        rc = error("op '%s' reference launch: %s", t->op, err);
    if (!rc) {
        static const char *roles[] = { "in", "out", "inout", "scalar", "dim" };
        strbuf h = STRBUF_INIT;
        msg_kv(&h, "cmd", "task");
        msg_kv(&h, "seed", "%llu", S->sp.seed);
        msg_kv(&h, "nargs", "%d", t->nargs);
        for (int i = 0; i < t->nargs; i++) {
            const op_arg *a = &t->args[i];
            char key[16];
            snprintf(key, sizeof key, "arg%d", i);
            msg_kv(&h, key, "%s %s %s %d %lld %s %.17g", a->name, roles[a->role], a->dtype[0] ? a->dtype : "-", a->esize,
                   a->count, a->init == INIT_UNIFORM ? "uniform" : "normal", a->value);
        }
        msg_kv(&h, "rtol", "%.9g", t->rtol);
        msg_kv(&h, "atol", "%.9g", t->atol);
        msg_kv(&h, "name", "%s", c.k.name);
        strbuf shape = STRBUF_INIT;
        for (int d = 0; d < t->ndims; d++) sb_printf(&shape, "%s%lld", d ? "," : "", t->shape[d]);
        msg_kv(&h, "shape", "%s", sb_str(&shape));
        sb_free(&shape);
        msg_kv(&h, "plan", "%s", pj);
        if (t->stream) msg_kv(&h, "timing", "stream");
        if (worker_set_task(S->W, &h, c.job.cubin, c.job.cubin_len))
            rc = error("%s %s: cannot set the task up: %s", t->op, t->dtype, worker_errmsg(S->W));
        sb_free(&h);
    }
    free(pj);
    cand_free(&c);
    return rc ? -1 : 0;
}

static void summary(sw *S)
{
    worker_stats ws = S->ws;
    fprintf(stderr, "%s: %d candidates evaluated", S->o->compile_only ? "compile" : "sweep", S->evaluated);
    if (S->resumed) fprintf(stderr, " (%d already in the registry)", S->resumed);
    for (int i = 0; statuses[i]; i++)
        if (S->by_status[i]) fprintf(stderr, ", %d %s", S->by_status[i], statuses[i]);
    fprintf(stderr, "; %d compiled, %d from the cache; %d rejected by constraints; %d winners; %.1f s\n", S->compiled,
            S->cache_hits, S->rejected, S->winners, now_s() - S->t0);
    if (S->nops > 1) {
        fprintf(stderr, "time per op:");
        for (int i = 0; i < S->nops; i++) fprintf(stderr, "%s %s %.1f s", i ? "," : "", S->op_name[i], S->op_s[i]);
        fprintf(stderr, "\n");
    }
    /* A part's own search may run for a bucket that stays whole (a split on
    ** trial); the worst loss after is the stored winners' over every size
    ** raced, the parts' included. */
    char searched[96] = "";
    if (S->searched)
        snprintf(searched, sizeof searched, ", %d part%s searched (%d candidate%s)", S->searched,
                 S->searched == 1 ? "" : "s", S->searched_evals, S->searched_evals == 1 ? "" : "s");
    if (S->held && !S->split)
        fprintf(stderr, "hold: %d bucket%s probed at their middle and upper edge, %d winner%s changed%s; the worst loss "
                "of a winner against the fastest finalist there: %.1f%% before, %.1f%% after\n", S->held,
                S->held == 1 ? "" : "s", S->moved, S->moved == 1 ? "" : "s", searched, 100 * S->hold_before,
                100 * S->hold_final);
    char again[48] = "";
    if (S->resplit) snprintf(again, sizeof again, ", %d part%s split again", S->resplit, S->resplit == 1 ? "" : "s");
    if (S->held && S->split)
        fprintf(stderr, "hold: %d bucket%s probed at their middle and upper edge, %d winner%s changed, %d bucket%s split "
                "in %d parts%s%s; the worst loss of a winner against the fastest finalist there: %.1f%% before, %.1f%% "
                "after hold, %.1f%% after splitting\n", S->held, S->held == 1 ? "" : "s", S->moved,
                S->moved == 1 ? "" : "s", S->split, S->split == 1 ? "" : "s", S->parts, again, searched,
                100 * S->hold_before, 100 * S->hold_after, 100 * S->hold_final);
    if (S->broken_before || S->broken_after)
        fprintf(stderr, "hold: winners wrong or failing at a probed shape: %d before, %d after\n", S->broken_before,
                S->broken_after);
    if (S->trimmed.cubins)
        fprintf(stderr, "registry: %.1f MB, after dropping %lld cubins of candidates that lost (%.1f MB; "
                "--keep-cubins keeps them)\n", reg_disk_bytes(S->R, 1) / 1048576.0, S->trimmed.cubins,
                S->trimmed.bytes / 1048576.0);
    int workers = S->hub && S->hub->nlanes > 1 ? S->hub->nlanes : 1;   /* one per GPU */
    if (ws.starts > workers || ws.crashes || ws.timeouts || ws.sticky)
        fprintf(stderr, "worker%s: %d restarts (%d crashes, %d hung kernels killed, %d lost contexts)\n",
                workers > 1 ? "s" : "", ws.starts - workers, ws.crashes, ws.timeouts, ws.sticky);
}

/* ---- compile-only ---- */

typedef struct compiled_row {
    cand c;
    char label[160];
    int stored;     /* its cubin is in the registry (or there is none to store) */
} compiled_row;

/* Store the cubins of rows[*next, n) whose compiles are done, as they land:
** a compile killed later keeps them. *next moves past the stored prefix. */
static int store_landed(sw *S, compiled_row **rows, int n, int *next)
{
    for (int r = *next; r < n; r++) {
        compiled_row *row = rows[r];
        if (row->stored) continue;
        if (!row->c.error && !row->c.cached && !__atomic_load_n(&row->c.job.done, __ATOMIC_ACQUIRE)) continue;
        row->stored = 1;
        if (!row->c.error && finish_compile(S, &row->c)) return -1;
    }
    while (*next < n && rows[*next]->stored) (*next)++;
    return 0;
}

static int compile_all(sw *S)
{
    /* Unique kernels across every bucket and dtype: sources that do not depend
    ** on the shape are compiled once. */
    compiled_row **rows = NULL;   /* pointers: jobs in flight must not move */
    int nrows = 0, rc = 0, landed = 0;
    struct { op_task t; char tname[64]; char *config; } *defs = NULL;
    int ndefs = 0;
    for (int i = 0; i < S->sp.ntasks && !rc && !interrupted; i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes && !rc; d++)
            for (int bi = 0; bi < nb && !rc; bi++) {
                long long shape[TMPL_MAXDIMS];
                op_task t;
                bucket ob;
                if (task_bucket(S, st, &bs[bi], shape, &ob) || tmpl_task(S->T, st->op, st->dtypes[d], shape, &t)) {
                    rc = error("%s", tmpl_errmsg(S->T));
                    break;
                }
                note(S, "instantiating %s %s %s", st->op, st->dtypes[d], bs[bi].key);
                char **tn;
                int ntn;
                if (tmpl_templates(S->T, t.op, &tn, &ntn)) { rc = error("%s", tmpl_errmsg(S->T)); break; }
                int stored_default = bi > 0;   /* once per (op, dtype): its first bucket */
                for (int ti = 0; ti < ntn && !rc; ti++) {
                    int ok;
                    char why[256];
                    if (!spec_task_uses(st, tn[ti])) continue;
                    if (tmpl_supports(S->T, tn[ti], &t, &S->dev, &ok, why, sizeof why)) {
                        warning("%s", tmpl_errmsg(S->T));
                        continue;
                    }
                    if (!ok) continue;
                    /* The default, so lookup and emit answer without a sweep:
                    ** stored once its kernel is compiled, after the table. */
                    char *dflt = NULL;
                    if (!stored_default && !tmpl_default(S->T, tn[ti], &t, &S->dev, &dflt) && dflt) {
                        defs = xrealloc(defs, sizeof *defs * (size_t)(ndefs + 1));
                        defs[ndefs].t = t;
                        snprintf(defs[ndefs].tname, sizeof defs[ndefs].tname, "%s", tn[ti]);
                        defs[ndefs++].config = dflt;
                        stored_default = 1;
                    } else {
                        free(dflt);
                    }
                    /* Every config, or with --max-evals a seeded sample of each space. */
                    search *se = S->o->max_evals > 0
                        ? search_new(S->T, "random", tn[ti], &t, &S->dev, S->sp.seed, S->o->max_evals)
                        : search_new(S->T, "exhaustive", tn[ti], &t, &S->dev, S->sp.seed, 0);
                    if (!se) { rc = error("%s", tmpl_errmsg(S->T)); break; }
                    char **cfgs;
                    int got;
                    while (!search_ask(se, 256, &cfgs, &got)) {
                        if (!got) { free(cfgs); break; }
                        for (int k = 0; k < got; k++) {
                            cand c = { 0 };
                            instantiate(S, &c, tn[ti], cfgs[k], &t);
                            free(cfgs[k]);
                            plan_geom g;
                            char gerr[512];
                            if (!c.error && kernel_geometry(&c.k, &t, &g, gerr, sizeof gerr))
                                c.error = xstrfmt("template '%s' launch() at %s: %s", tn[ti], ob.key, gerr);
                            char key[17] = "";
                            if (!c.error) jit_key(c.k.source, c.k.name, S->sp.arch, key);
                            int dup = 0;
                            for (int r = 0; r < nrows && !dup && key[0]; r++) dup = !strcmp(rows[r]->c.key, key);
                            if (dup) { cand_free(&c); continue; }
                            rows = xrealloc(rows, sizeof *rows * (size_t)(nrows + 1));
                            compiled_row *row = rows[nrows++] = xcalloc(1, sizeof *row);
                            row->c = c;
                            snprintf(row->label, sizeof row->label, "%s %s", t.dtype, tn[ti]);
                            if (!c.error && start_compile(S, &row->c, S->sp.arch)) {
                                rc = -1;
                                row->stored = 1;    /* never submitted: nothing to wait for */
                            }
                            if (!rc && store_landed(S, rows, nrows, &landed)) rc = -1;
                            progress_plan(S->P, 1);
                        }
                        free(cfgs);
                    }
                    S->rejected += search_nrejected(se);
                    search_free(se);
                }
                for (int ti = 0; ti < ntn; ti++) free(tn[ti]);
                free(tn);
            }
        free(bs);
    }
    /* The table with -v; by default a summary (progress.h). */
    char line[1024];
    compile_tally tally = { 0 };
    progress_note(S->P, "compiling");
    progress_clear(S->P);
    if (S->o->verbose) {
        snprintf(line, sizeof line, "%-24s %-44s %5s %6s %6s %9s  %s", "kernel", "config", "regs", "spills", "smem", "ms",
                 "ptxas warnings / errors");
        progress_put_line(stdout, line);
    }
    int failed = 0;
    for (int r = 0; r < nrows; r++) {
        cand *c = &rows[r]->c;
        if (interrupted) jit_pool_cancel(S->pool);   /* Ctrl-C: the queue is dropped */
        /* A cubin the registry refuses stops the compile (exit 1): the
        ** rest are waited for, not stored, and not reported again. */
        if (!c->error && !rc && !rows[r]->stored) {
            if (finish_compile(S, c)) rc = -1;
        } else if (!c->error && !rows[r]->stored) {
            jit_wait(S->pool, &c->job);
        }
        const char *note = c->error ? c->error : !c->job.ok ? c->job.error : "";
        char warn[160] = "";
        if (c->job.ok && c->job.log) {
            const char *w = strstr(c->job.log, "warning");
            if (w) snprintf(warn, sizeof warn, "%.*s", (int)strcspn(w, "\n"), w);
        }
        if (interrupted && c->job.error && !strcmp(c->job.error, "cancelled")) { cand_free(c); free(rows[r]); continue; }
        failed += c->error || !c->job.ok;
        snprintf(line, sizeof line, "%s %s", rows[r]->label, c->config);
        compile_tally_add(&tally, line, c->job.spills, c->job.ms, c->cached, c->error || !c->job.ok, warn[0] != 0);
        progress_done(S->P, 0, 0);
        if (S->o->verbose || c->error || !c->job.ok) {
            progress_clear(S->P);
            snprintf(line, sizeof line, "%-24s %-44s %5d %6d %6d %9.1f%s  %s%s", rows[r]->label, c->config,
                     c->job.registers, c->job.spills, c->job.smem, c->job.ms, c->cached ? "*" : " ", note, warn);
            progress_put_line(stdout, line);
        }
        cand_free(c);
        free(rows[r]);
    }
    free(rows);
    progress_clear(S->P);
    if (S->o->verbose) printf("(* from the cubin cache)\n");
    else compile_tally_print(&tally, stdout);
    S->evaluated = nrows;
    /* Defaults last: their kernels are in the cache by now (not counted again). */
    int compiled = S->compiled, hits = S->cache_hits;
    for (int i = 0; i < ndefs; i++) {
        if (!rc && !interrupted) rc = store_default(S, &defs[i].t, defs[i].tname, defs[i].config);
        free(defs[i].config);
    }
    free(defs);
    S->compiled = compiled;
    S->cache_hits = hits;
    if (failed) {
        fprintf(stderr, "aitune: %d of %d kernels failed to compile\n", failed, nrows);
        return rc ? rc : 1;
    }
    return rc;
}

/* reg_signature_fn over the templates: the op's dims and arguments. */
static int op_signature(void *ctx, const char *op, const char *dtype, int *ndims, char dims[][64], int *nargs,
                        struct plan_arg *args)
{
    tmpl *T = ctx;
    long long shape[TMPL_MAXDIMS] = { 1, 1, 1, 1 };
    op_task t;
    if (tmpl_task(T, op, dtype, shape, &t)) return -1;
    *ndims = t.ndims;
    for (int d = 0; d < t.ndims; d++) snprintf(dims[d], 64, "%s", t.dims[d]);
    *nargs = t.nargs;
    for (int i = 0; i < t.nargs; i++) {
        memset(&args[i], 0, sizeof args[i]);
        snprintf(args[i].name, sizeof args[i].name, "%s", t.args[i].name);
        args[i].role = t.args[i].role;
        if (args[i].role <= PLAN_INOUT) {
            snprintf(args[i].dtype, sizeof args[i].dtype, "%s", t.args[i].dtype);
            args[i].esize = t.args[i].esize;
        }
    }
    return 0;
}

/* ---- the sweep ---- */

/* --shard i/n: the buckets of the spec, in its order (task, dtype, bucket),
** dealt round-robin, so every shard of the same spec gets a fixed share. */
int sweep_parse_shard(const char *s, int *i, int *n)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || *end != '/') return -1;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end || b < 1 || b > 100000 || a < 0 || a >= b) return -1;
    *i = (int)a;
    *n = (int)b;
    return 0;
}

static int in_shard(const sweep_opts *o, int slot)
{
    return o->shard_n <= 1 || slot % o->shard_n == o->shard_i;
}

/* The run's toolchain identity beyond the device row: the hash of each
** op's template sources (identity.h), for `aitune status`. */
static int record_sources(sw *S)
{
    strbuf j = STRBUF_INIT;
    sb_puts(&j, "{");
    int n = 0;
    for (int i = 0; i < S->sp.ntasks; i++) {
        const char *op = S->sp.tasks[i].op;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(S->sp.tasks[k].op, op);
        char h[17];
        if (seen || identity_sources(S->o->root, op, h)) continue;
        if (n++) sb_puts(&j, ",");
        sb_json_str(&j, op);
        sb_puts(&j, ":");
        sb_json_str(&j, h);
    }
    sb_puts(&j, "}");
    int rc = reg_run_sources(S->R, S->run_id, sb_str(&j));
    sb_free(&j);
    return rc ? error("%s", reg_errmsg(S->R)) : 0;
}

/* --gpus: "all", a count N (GPUs 0..N-1), or a list of two or more
** ordinals "0,2,3" (one GPU alone is --gpu I). */
int sweep_parse_gpus(const char *s, sweep_gpus *g)
{
    memset(g, 0, sizeof *g);
    if (!strcmp(s, "all")) {
        g->all = 1;
        return 0;
    }
    char *end;
    if (!strchr(s, ',')) {
        long n = strtol(s, &end, 10);
        if (end == s || *end || n < 1 || n > SWEEP_MAX_GPUS) return -1;
        g->first = (int)n;
        return 0;
    }
    for (const char *p = s;; p = end + 1) {
        long i = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || i < 0 || i > 63 || g->n == SWEEP_MAX_GPUS) return -1;
        for (int k = 0; k < g->n; k++)
            if (g->list[k] == i) return -1;    /* one worker per GPU: a GPU twice would time two at once */
        g->list[g->n++] = (int)i;
        if (!*end) break;
    }
    /* Ascending, so the lowest ordinal says hello first and tells the count. */
    for (int i = 1; i < g->n; i++)
        for (int k = i; k > 0 && g->list[k - 1] > g->list[k]; k--) {
            int x = g->list[k];
            g->list[k] = g->list[k - 1];
            g->list[k - 1] = x;
        }
    return 0;
}

static int wanted(sw *S, const op_task *t, const bucket *ob)
{
    const sweep_opts *o = S->o;
    if (!o->want) return 1;
    pthread_mutex_lock(&S->hub->mu);
    int w = o->want(o->want_ctx, &S->dev, t->op, S->arch, t->dtype, ob);
    pthread_mutex_unlock(&S->hub->mu);
    return w;
}

/* One bucket, start to winner, on the lane's GPU. */
static void sweep_slot(sw *S, const slot *q)
{
    const sweep_opts *o = S->o;
    spec_task *st = &S->sp.tasks[q->task];
    long long shape[TMPL_MAXDIMS];
    op_task t;
    bucket ob;
    if (task_bucket(S, st, &q->b, shape, &ob) || tmpl_task(S->T, st->op, st->dtypes[q->dtype], shape, &t)) {
        error("%s", tmpl_errmsg(S->T));
        S->code = EXIT_INPUT;
        return;
    }
    t.stream = st->stream;
    if (!wanted(S, &t, &ob)) return;
    /* Refused here, not by a failed allocation in the worker. */
    if (S->dev.mem > 0 && tmpl_task_bytes(&t) > S->dev.mem) {
        error("spec '%s' line %d: %s %s %s needs %lld bytes of buffers; the GPU has %lld", S->sp.path, st->line, t.op,
              t.dtype, q->b.key, tmpl_task_bytes(&t), S->dev.mem);
        S->code = EXIT_INPUT;
        return;
    }
    double t_task = now_s();
    S->hold = st->hold && !o->retune && !o->check && !o->compile_only;
    S->split_at = st->split_at;
    S->split_depth = st->split_depth;
    S->task = st;
    if (send_task(S, &t)) { S->code = EXIT_FAIL; return; }
    if ((o->check ? check_bucket(S, &t, &ob) : o->retune ? retune_bucket(S, st, &t, &ob)
         : st->joint && !o->compile_only ? tune_bucket_joint(S, st, &t, &ob) : tune_bucket(S, st, &t, &ob)))
        S->code = EXIT_FAIL;
    add_op_time(S, t.op, now_s() - t_task);
}

/* A lane: buckets from the queue until it is empty, the budget is spent or
** Ctrl-C. Its worker goes when it is done: a worker the lane's thread
** restarted dies with that thread (PR_SET_PDEATHSIG). */
static void *lane_main(void *arg)
{
    sw *S = arg;
    hub *H = S->hub;
    while (!interrupted && !S->budget_hit) {
        pthread_mutex_lock(&H->mu);
        int k = H->next < H->nq ? H->next++ : -1;
        pthread_mutex_unlock(&H->mu);
        if (k < 0) break;
        sweep_slot(S, &H->q[k]);
    }
    S->ws = worker_counts(S->W);
    worker_free(S->W);
    S->W = NULL;
    return NULL;
}

/* The buckets of the spec in its order (task, dtype, bucket): this shard's. */
static void queue_buckets(sw *S, hub *H)
{
    int n = 0;      /* the bucket's place in the spec's order, for --shard */
    for (int i = 0; i < S->sp.ntasks; i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes; d++)
            for (int bi = 0; bi < nb; bi++) {
                if (!in_shard(S->o, n++)) continue;
                H->q = xrealloc(H->q, sizeof *H->q * (size_t)(H->nq + 1));
                H->q[H->nq++] = (slot){ i, d, bs[bi] };
            }
        free(bs);
    }
}

/* A lane for GPU ordinal gpu, as S is but for its own worker, templates
** and (later) registry connection. */
static sw *lane_new(sw *S, int gpu)
{
    sw *L = xcalloc(1, sizeof *L);
    L->o = S->o;
    L->sp = S->sp;          /* shared, read-only; S frees it */
    L->peers = S->peers;
    L->t0 = S->t0;
    L->budget_s = S->budget_s;
    memcpy(L->arch, S->arch, sizeof L->arch);
    L->T = tmpl_open(S->o->root);
    L->hub = S->hub;
    L->gpu = gpu;
    return L;
}

static void lane_free(sw *L)
{
    if (L->W) worker_free(L->W);
    reg_close(L->R);
    tmpl_close(L->T);
    sb_free(&L->env);
    free(L);
}

/* The lane's counts into the sweep's, for one summary. */
static void add_counts(sw *S, const sw *L)
{
    S->evaluated += L->evaluated;
    S->resumed += L->resumed;
    S->compiled += L->compiled;
    S->cache_hits += L->cache_hits;
    for (int i = 0; i < 8; i++) S->by_status[i] += L->by_status[i];
    S->rejected += L->rejected;
    S->winners += L->winners;
    S->retuned += L->retuned;
    S->escalated += L->escalated;
    S->checked += L->checked;
    S->regressed += L->regressed;
    S->held += L->held;
    S->moved += L->moved;
    S->split += L->split;
    S->parts += L->parts;
    S->resplit += L->resplit;
    S->searched += L->searched;
    S->searched_evals += L->searched_evals;
    if (L->hold_final > S->hold_final) S->hold_final = L->hold_final;
    if (L->hold_before > S->hold_before) S->hold_before = L->hold_before;
    if (L->hold_after > S->hold_after) S->hold_after = L->hold_after;
    S->broken_before += L->broken_before;
    S->broken_after += L->broken_after;
    for (int i = 0; i < L->nops; i++) add_op_time(S, L->op_name[i], L->op_s[i]);
    S->budget_hit |= L->budget_hit;
    S->ws.starts += L->ws.starts;
    S->ws.crashes += L->ws.crashes;
    S->ws.timeouts += L->ws.timeouts;
    S->ws.sticky += L->ws.sticky;
    if (!S->code) S->code = L->code;
}

/* The workers and their device facts, before the registry is touched:
** without a GPU a sweep leaves no file behind. o->gpus (else o->gpu alone)
** says which; each becomes a lane of H. Returns 0 or the exit code. */
static int start_lanes(sw *S, hub *H)
{
    const sweep_gpus *g = &S->o->gpus;
    int want[SWEEP_MAX_GPUS], n = 1, count = 0;
    want[0] = g->n ? g->list[0] : g->all || g->first ? 0 : S->o->gpu;
    if (g->n) {
        memcpy(want, g->list, sizeof *want * (size_t)g->n);
        n = g->n;
    }
    for (int i = 0; i < n; i++) {
        /* The lowest ordinal answered first: it says how many there are. */
        if (count && want[i] >= count) {
            error("--gpus names GPU %d; this host has %d (0 to %d)", want[i], count, count - 1);
            return EXIT_USAGE;
        }
        sw *L = i ? lane_new(S, want[i]) : S;
        L->gpu = want[i];
        H->lanes[H->nlanes++] = L;
        L->W = worker_new(want[i]);
        if (worker_hello(L->W, &L->dev, &L->env)) {
            if (i) error("GPU %d: %s", want[i], worker_errmsg(L->W));
            else error("sweep needs a GPU to time candidates: %s", worker_errmsg(L->W));
            fprintf(stderr, "hint: without a GPU, `aitune compile %s` compiles every candidate, and `aitune emit` writes kernels\n",
                    S->sp.path);
            return EXIT_FAIL;
        }
        if (!i) count = L->dev.count > 0 ? L->dev.count : 1;
        if (!i && (g->all || g->first)) {
            int total = g->all ? count : g->first;
            if (total > count) {
                error("--gpus %d: this host has %d GPU%s", total, count, count == 1 ? "" : "s");
                return EXIT_USAGE;
            }
            for (; n < total; n++) want[n] = n;
        }
    }
    /* One model per sweep, unless the GPUs are named: a bucket lands on
    ** whichever GPU is free, and the registry would hold a patchwork of
    ** winners, each of one model. Named, each winner is keyed by the
    ** hardware that measured it (the registry's winners are per hw). */
    char hw0[256], hw[256];
    identity_hw(&S->dev, hw0, sizeof hw0);
    for (int i = 1; i < H->nlanes && !g->n; i++) {
        identity_hw(&H->lanes[i]->dev, hw, sizeof hw);
        if (strcmp(hw, hw0)) {
            error("GPUs %d (%s) and %d (%s) are different models: name the ones to sweep with --gpus (e.g. --gpus %d,%d)",
                  S->gpu, S->dev.name, H->lanes[i]->gpu, H->lanes[i]->dev.name, S->gpu, H->lanes[i]->gpu);
            return EXIT_USAGE;
        }
    }
    if (H->nlanes > 1)
        for (int i = 0; i < H->nlanes; i++) snprintf(H->lanes[i]->tag, sizeof H->lanes[i]->tag, " [GPU %d]", H->lanes[i]->gpu);
    return 0;
}

int sweep_run(const sweep_opts *o)
{
    sw S0, *S = &S0;
    hub H0, *H = &H0;
    progress *P = NULL;     /* the run's line; with several GPUs the lanes' are views */
    memset(S, 0, sizeof *S);
    memset(H, 0, sizeof *H);
    pthread_mutex_init(&H->mu, NULL);
    S->o = o;
    S->t0 = now_s();
    char err[768];
    if (spec_load(o->spec_path, &S->sp, err, sizeof err)) {
        fprintf(stderr, "aitune: error: %s\n", err);
        pthread_mutex_destroy(&H->mu);
        return EXIT_INPUT;
    }
    if (o->peers_path && peers_load(o->peers_path, &S->peers, err, sizeof err)) {
        fprintf(stderr, "aitune: error: %s\n", err);
        spec_free(&S->sp);
        peers_free(&S->peers);
        pthread_mutex_destroy(&H->mu);
        return EXIT_INPUT;
    }
    S->budget_s = o->budget_s > 0 ? o->budget_s : S->sp.budget_s;
    arch_base(S->sp.arch, S->arch);
    S->T = tmpl_open(o->root);
    int code = EXIT_OK;
    if (check_spec(S)) { code = EXIT_INPUT; goto out; }
    if (!o->compile_only) {
        S->hub = H;
        if ((code = start_lanes(S, H))) goto out;
    }
    int orc = reg_open(o->db_path, 0, &S->R);
    if (orc) {
        error("%s", reg_errmsg(S->R));
        code = orc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
        goto out;
    }
    /* Launch plans of a registry written by 0.1 become version-2 plans. */
    int converted, unconverted;
    if (reg_migrate_plans(S->R, op_signature, S->T, &converted, &unconverted)) {
        error("%s", reg_errmsg(S->R));
        code = EXIT_FAIL;
        goto out;
    }
    if (converted || unconverted)
        fprintf(stderr, "registry: %d launch plans from aitune 0.1 migrated%s\n", converted,
                unconverted ? "; some could not be (their ops are gone): emit and libaitune refuse those" : "");
    for (int i = 1; i < H->nlanes; i++)
        if (reg_open(o->db_path, 0, &H->lanes[i]->R)) {
            error("%s", reg_errmsg(H->lanes[i]->R));
            code = EXIT_FAIL;
            goto out;
        }
    /* One pool for every GPU's compiles: -j is the host's budget. */
    S->pool = jit_pool_new(o->threads);
    for (int i = 1; i < H->nlanes; i++) H->lanes[i]->pool = S->pool;
    if (!o->quiet) {
        S->P = P = progress_new(stderr, o->compile_only ? "compile" : "sweep");
        int nbuckets = 0, nslots = 0;
        for (int i = 0; i < S->sp.ntasks && !o->compile_only; i++) {
            bucket *bs;
            int nb = spec_buckets(&S->sp.tasks[i], &bs) * S->sp.tasks[i].ndtypes;
            for (int k = 0; k < nb; k++) nbuckets += in_shard(o, nslots++);
            free(bs);
        }
        progress_buckets(P, nbuckets);
        for (int i = 0; i < H->nlanes && H->nlanes > 1; i++) {
            char name[16];
            snprintf(name, sizeof name, "GPU %d", H->lanes[i]->gpu);
            H->lanes[i]->P = progress_lane(P, name);
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    const char *tp = getenv("AITUNE_TRACE");
    if (tp && *tp && !(trace_out = fopen(tp, "a"))) warning("AITUNE_TRACE '%s': %s", tp, strerror(errno));
    if (trace_out) setvbuf(trace_out, NULL, _IOLBF, 0);
    if (o->compile_only) {
        if (device_assume(S->arch, &S->dev)) {
            error("spec '%s': no device facts for arch '%s' (known: sm_80, sm_90)", o->spec_path, S->sp.arch);
            code = EXIT_INPUT;
            goto out;
        }
        snprintf(S->dev.nvrtc, sizeof S->dev.nvrtc, "%s", jit_nvrtc_version());
        int rc = compile_all(S);
        code = rc < 0 ? EXIT_FAIL : rc;
        summary(S);
        if (interrupted) {
            fprintf(stderr, "aitune: interrupted; what was compiled is cached: run the same command again to go on\n");
            code = 130;
        }
        goto out;
    }
    /* plan_only: the worker said which GPU this is; nothing is recorded. */
    for (int i = 0; i < H->nlanes && !o->plan_only; i++)
        if (start_gpu(H->lanes[i], &H->lanes[i]->env) || record_sources(H->lanes[i])) { code = EXIT_FAIL; goto out; }
    /* Lane 0 works on this thread, the others on their own. */
    queue_buckets(S, H);
    pthread_t th[SWEEP_MAX_GPUS];
    int started[SWEEP_MAX_GPUS] = { 0 };
    for (int i = 1; i < H->nlanes; i++) {
        started[i] = !pthread_create(&th[i], NULL, lane_main, H->lanes[i]);
        if (!started[i]) warning("GPU %d: no thread for it; the other GPUs take its share", H->lanes[i]->gpu);
    }
    lane_main(S);
    for (int i = 1; i < H->nlanes; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        add_counts(S, H->lanes[i]);
    }
    code = S->code;
    if (o->plan_only) goto out;
    /* Interrupted, the (op, dtype) in hand stays whole: its next buckets
    ** may share the kernels its decided ones lost with. */
    for (int i = 0; i < H->nlanes && !interrupted; i++)
        if (H->lanes[i]->run_id && !o->keep_cubins &&
            reg_cubin_trim(S->R, H->lanes[i]->run_id, NULL, NULL, &S->trimmed)) {
            error("%s", reg_errmsg(S->R));
            code = EXIT_FAIL;
            break;
        }
    note(S, "%s", "");
    summary(S);
    if (o->check) {
        printf("check: %d winner%s re-timed, %d regressed or failed\n", S->checked, S->checked == 1 ? "" : "s",
               S->regressed);
        if (S->regressed && !code) code = EXIT_FAIL;
    } else if (o->retune)
        printf("retune: %d stale bucket%s re-raced, %d searched again\n", S->retuned, S->retuned == 1 ? "" : "s",
               S->escalated);
    const char *outcome = interrupted ? "interrupted" : code ? "failed" : S->budget_hit ? "budget" : "ok";
    for (int i = 0; i < H->nlanes; i++) reg_run_end(H->lanes[i]->R, H->lanes[i]->run_id, outcome);
    if (S->budget_hit) fprintf(stderr, "aitune: the budget ran out; winners so far are stored, marked not exhaustive\n");
    if (interrupted) {
        fprintf(stderr, "aitune: interrupted; what was measured is kept: run the same command again to resume\n");
        code = 130;
    }
out:
    if (trace_out) fclose(trace_out);
    trace_out = NULL;
    progress_free(P);
    for (int i = 1; i < H->nlanes; i++) lane_free(H->lanes[i]);
    free(H->q);
    pthread_mutex_destroy(&H->mu);
    sb_free(&S->env);
    if (S->W) worker_free(S->W);
    jit_pool_free(S->pool);
    reg_close(S->R);
    tmpl_close(S->T);
    spec_free(&S->sp);
    peers_free(&S->peers);
    return code;
}
