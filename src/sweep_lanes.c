/* sweep_lanes.c: see sweep_lanes.h. */
#define _GNU_SOURCE
#include "sweep_lanes.h"
#include "identity.h"
#include "json.h"
#include "sweep_resume.h"
#include "sweep_task.h"
#include "sweep_tune.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (cand_compile(S, &c, arch) || cand_finish(S, &c)) { cand_free(&c); return -1; }
    int rc = 0;
    if (!c.job.ok) rc = error("the engine's kernels do not compile: %s", c.job.error ? c.job.error : "?");
    else if (worker_set_support(S->W, c.job.cubin, c.job.cubin_len)) rc = error("%s", worker_errmsg(S->W));
    cand_free(&c);
    if (rc) return rc;
    worker_copy(S->W, S->dev.mem > (8LL << 30) ? (1LL << 30) : S->dev.mem / 8, &S->copy_gbps, 120);
    sw_say(S, "device: %s (sm_%d, %d SMs, %.0f GB, L2 %.0f MB), driver %s, NVRTC %s; copy ceiling %.0f GB/s\n", S->dev.name,
        S->dev.cc, S->dev.sms, S->dev.mem / 1e9, S->dev.l2 / 1048576.0, S->dev.driver, S->dev.nvrtc, S->copy_gbps);
    return 0;
}

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

int lanes_in_shard(const sweep_opts *o, int slot)
{
    return o->shard_n <= 1 || slot % o->shard_n == o->shard_i;
}

/* The run's toolchain identity beyond the device row: the hash of each
** op's template sources (identity.h), for `aitune status`. */
static int record_sources(sw *S)
{
    jw j = { 0 };
    jw_obj(&j);
    for (int i = 0; i < S->sp.ntasks; i++) {
        const char *op = S->sp.tasks[i].op;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(S->sp.tasks[k].op, op);
        char h[17];
        if (seen || identity_sources(S->o->root, op, h)) continue;
        jw_key(&j, op);
        jw_str(&j, h);
    }
    jw_end(&j);
    int rc = reg_run_sources(S->R, S->run_id, jw_text(&j));
    jw_free(&j);
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

static int wanted(hub *H, sw *S, const op_task *t, const bucket *ob)
{
    const sweep_opts *o = S->o;
    if (!o->want) return 1;
    pthread_mutex_lock(&H->mu);
    int w = o->want(o->want_ctx, &S->dev, t->op, S->arch, t->dtype, ob);
    pthread_mutex_unlock(&H->mu);
    return w;
}

/* One bucket, start to winner, on the lane's GPU. */
static void sweep_slot(hub *H, sw *S, const slot *q)
{
    const sweep_opts *o = S->o;
    if (q->decided) return;     /* an earlier run's decision stands (sweep_resume.h) */
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
    if (!wanted(H, S, &t, &ob)) return;
    /* Refused here, not by a failed allocation in the worker. */
    if (S->dev.mem > 0 && tmpl_task_bytes(&t) > S->dev.mem) {
        error("spec '%s' line %d: %s %s %s needs %lld bytes of buffers; the GPU has %lld", S->sp.path, st->line, t.op,
              t.dtype, q->b.key, tmpl_task_bytes(&t), S->dev.mem);
        S->code = EXIT_INPUT;
        return;
    }
    double t_task = now_s();
    /* A range bucket promises every size of its range: it holds, always. */
    S->hold = (st->hold || ob.ranged) && !o->retune && !o->check && !o->compile_only;
    /* A bucket that holds leaves hold the rest of its share after its
    ** search's part: on an H100 a 200 s budget for 36 buckets left the
    ** [128, 256) bucket of a 4096^2 range none of its 5 sizes raced
    ** (bench/RESULTS.md, ninth session). */
    S->search_end = S->hold && S->share_end > 0 ? t_task + (S->share_end - t_task) * HOLD_SEARCH_SHARE : 0;
    sw_trace(S, "bucket start %s %s %s share=%.2f search=%.2f", t.op, t.dtype, ob.key,
             S->share_end > 0 ? S->share_end - t_task : 0.0, S->search_end > 0 ? S->search_end - t_task : 0.0);
    S->split_at = st->split_at;
    S->split_depth = st->split_depth;
    S->task = st;
    snprintf(S->home, sizeof S->home, "%s", ob.key);
    if (task_send(S, &t)) { S->code = EXIT_FAIL; return; }
    /* The vendor at the bucket's shape, timed as the candidates are; a
    ** retune times it again (a new driver or library), a sweep resumes. */
    sweep_vendor_bind(&S->V, o->vendor, S->W, S->R, S->dev_id, S->run_id, S->arch, o->kernel_timeout);
    reg_vendor vrow;
    double t_vendor = now_s();
    if (!o->check && !o->compile_only &&
        (o->retune ? sweep_vendor_measure : sweep_vendor_time)(&S->V, &t, ob.key, &vrow) < 0) {
        S->code = EXIT_FAIL;
        return;
    }
    sw_trace(S, "vendor %s %s %s %.4f", t.op, t.dtype, ob.key, now_s() - t_vendor);
    if ((o->check ? check_bucket(S, &t, &ob) : o->retune ? retune_bucket(S, st, &t, &ob)
         : st->joint && !o->compile_only ? tune_joint(S, st, &t, &ob) : tune_bucket(S, st, &t, &ob)))
        S->code = EXIT_FAIL;
    /* Decided whole: no Ctrl-C, no budget cut a step of it (a cut bucket
    ** is decided again by the next run, its search going on). */
    else if (resume_applies(o) && !sw_bucket_cut(S) &&
             resume_record(S, &t, &ob, S->hold))
        S->code = EXIT_FAIL;
    sw_op_time(S, t.op, now_s() - t_task);
    sw_trace(S, "bucket end %s %s %s %.4f", t.op, t.dtype, ob.key, now_s() - t_task);
}

/* A lane: buckets from the queue until it is empty, the budget is spent or
** Ctrl-C. Its worker goes when it is done: a worker the lane's thread
** restarted dies with that thread (PR_SET_PDEATHSIG). */
typedef struct lane_arg { hub *H; sw *S; } lane_arg;

/* Bucket k's share of a budget: the time left less a reserve for each
** bucket after it (those after k, spread over the lanes), so a bucket that
** holds and splits cannot spend what the buckets after it need (a 170 s
** budget once went to one bucket's 43 parts while 11 got nothing). The
** reserve of a bucket is what this lane's finished buckets took on
** average, at least half of an equal share and at most one; before any
** finished, the share is that equal share. An equal share is the time
** left over this lane's buckets: the one in hand, and its part of those
** after it (buckets - 1 over the lanes; the other lanes' buckets in hand
** are no longer counted in buckets). So buckets that all want more split the budget evenly, and
** where the early ones finish in a fraction of their shares (a range's
** small m), a later one that holds and splits gets the time they left: the
** ranges suite's 400 s sweep took 160-176 s while two buckets' splits were
** cut at their equal shares (bench/RESULTS.md, eleventh session). The cap
** keeps early buckets that spent more than an equal share from taking it
** from the later ones: without it (twenty-fourth session) a 300 s sweep of
** m 256..8192 gave its first two buckets 47 and 67 s and the third 23 s,
** which stopped after 6 of its 9 hold sizes. The share is never below half
** of the equal share. A window (o->want) has no shares: its order is its
** priority, the first bucket the one that gains most. */
double sweep_share(double left, int buckets, int lanes, double done_s, int done_n)
{
    if (lanes < 1) lanes = 1;
    if (left <= 0) return 0;
    if (buckets <= lanes) return left;
    double after = (double)(buckets - 1) / lanes;   /* this lane's part of the buckets after this one */
    double equal = left / (1 + after);
    double reserve = done_n > 0 ? done_s / done_n : equal;
    if (reserve < equal / 2) reserve = equal / 2;
    if (reserve > equal) reserve = equal;
    double share = left - reserve * after;
    return share < equal / 2 ? equal / 2 : share;
}

static void share_of(hub *H, sw *S, int k)
{
    if (S->budget_s <= 0 || S->o->want) return;
    double t = now_s();
    S->share_end = t + sweep_share(S->budget_s - (t - S->t0), H->nq - k, H->nlanes, S->done_s, S->done_n);
}

static void *lane_main(void *arg)
{
    hub *H = ((lane_arg *)arg)->H;
    sw *S = ((lane_arg *)arg)->S;
    while (!sw_interrupted() && !S->budget_hit) {
        pthread_mutex_lock(&H->mu);
        int k = H->next < H->nq ? H->next++ : -1;
        pthread_mutex_unlock(&H->mu);
        if (k < 0) break;
        share_of(H, S, k);
        double t_slot = now_s();
        sweep_slot(H, S, &H->q[k]);
        S->done_s += now_s() - t_slot;
        S->done_n++;
        if ((S->share_hit || S->search_hit) && !S->budget_hit && !sw_interrupted()) S->shares_cut++;
        S->share_end = S->search_end = 0;
        S->share_hit = S->search_hit = 0;
    }
    S->ws = worker_counts(S->W);
    worker_free(S->W);
    S->W = NULL;
    return NULL;
}

void lanes_queue(sw *S, hub *H)
{
    if (H->queued) return;
    H->queued = 1;
    int n = 0;      /* the bucket's place in the spec's order, for --shard */
    for (int i = 0; i < S->sp.ntasks; i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes; d++)
            for (int bi = 0; bi < nb; bi++) {
                if (!lanes_in_shard(S->o, n++)) continue;
                H->q = xrealloc(H->q, sizeof *H->q * (size_t)(H->nq + 1));
                H->q[H->nq++] = (slot){ .task = i, .dtype = d, .b = bs[bi] };
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

/* The workers and their device facts, before the registry is touched:
** without a GPU a sweep leaves no file behind. o->gpus (else o->gpu alone)
** says which; each becomes a lane of H. Returns 0 or the exit code. */
int lanes_start(sw *S, hub *H)
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
            else {
                char v[16];
                sw_verb(S->o, v);
                error("%s needs a GPU to time candidates: %s", v, worker_errmsg(L->W));
            }
            fprintf(stderr, "hint: without a GPU, `aitune compile %s` compiles every candidate, `aitune status` says which "
                    "winners are stale, and `aitune emit` writes kernels\n", S->sp.path);
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
    for (int i = 0; i < H->nlanes; i++) {
        H->lanes[i]->nlanes = H->nlanes;
        if (H->nlanes > 1) snprintf(H->lanes[i]->tag, sizeof H->lanes[i]->tag, " [GPU %d]", H->lanes[i]->gpu);
    }
    return 0;
}

int lanes_begin(hub *H)
{
    for (int i = 0; i < H->nlanes; i++)
        if (start_gpu(H->lanes[i], &H->lanes[i]->env) || record_sources(H->lanes[i])) return -1;
    return 0;
}

int lanes_decided(sw *S, hub *H, reg *R)
{
    lanes_queue(S, H);
    H->nwanted = H->nkept = H->kept_winners = 0;
    int left = 0;
    for (int k = 0; k < H->nq; k++) {
        slot *q = &H->q[k];
        q->decided = 0;
        q->winners = 0;
        if (!resume_applies(S->o)) continue;
        spec_task *st = &S->sp.tasks[q->task];
        long long shape[TMPL_MAXDIMS];
        op_task t;
        bucket ob;
        if (task_bucket(S, st, &q->b, shape, &ob) || tmpl_task(S->T, st->op, st->dtypes[q->dtype], shape, &t)) {
            H->nwanted++;   /* to do: its lane says what is wrong */
            left++;
            continue;
        }
        t.stream = st->stream;
        if (!wanted(H, S, &t, &ob)) continue;
        H->nwanted++;
        /* As sweep_slot holds it: a range bucket always. */
        int hold = st->hold || ob.ranged;
        for (int i = 0; i < (H->nlanes > 0 ? H->nlanes : 1) && !q->decided; i++)
            if (resume_decided(H->nlanes > 0 ? H->lanes[i] : S, R, &t, &ob, hold, &q->decided, &q->winners) < 0)
                return -1;
        if (q->decided) {
            H->nkept++;
            H->kept_winners += q->winners;
        } else {
            left++;
        }
    }
    return left;
}

int lanes_trim_kept(sw *S, hub *H)
{
    if (S->o->keep_cubins) return 0;
    for (int k = 0; k < H->nq; k++) {
        long long run = H->q[k].decided;
        int seen = 0;
        for (int j = 0; j < k && !seen && run; j++) seen = H->q[j].decided == run;
        if (run && !seen && reg_cubin_trim(S->R, run, NULL, NULL, &S->trimmed)) return error("%s", reg_errmsg(S->R));
    }
    return 0;
}

void lanes_run(sw *S, hub *H)
{
    /* Lane 0 works on this thread, the others on their own. */
    lanes_queue(S, H);
    if (H->nkept)
        sw_say(S, "resume: %d of %d bucket%s decided by earlier runs (%d winner%s) left as they were; %d to decide\n",
               H->nkept, H->nwanted, H->nwanted == 1 ? "" : "s", H->kept_winners, H->kept_winners == 1 ? "" : "s",
               H->nwanted - H->nkept);
    pthread_t th[SWEEP_MAX_GPUS];
    int started[SWEEP_MAX_GPUS] = { 0 };
    lane_arg args[SWEEP_MAX_GPUS];
    for (int i = 0; i < H->nlanes; i++) args[i] = (lane_arg){ H, H->lanes[i] };
    for (int i = 1; i < H->nlanes; i++) {
        started[i] = !pthread_create(&th[i], NULL, lane_main, &args[i]);
        if (!started[i]) warning("GPU %d: no thread for it; the other GPUs take its share", H->lanes[i]->gpu);
    }
    lane_main(&args[0]);
    for (int i = 1; i < H->nlanes; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        sw_add_counts(S, H->lanes[i]);
    }
}

int lanes_buckets(const sw *S)
{
    int nbuckets = 0, nslots = 0;
    for (int i = 0; i < S->sp.ntasks; i++) {
        bucket *bs;
        int nb = spec_buckets(&S->sp.tasks[i], &bs) * S->sp.tasks[i].ndtypes;
        for (int k = 0; k < nb; k++) nbuckets += lanes_in_shard(S->o, nslots++);
        free(bs);
    }
    return nbuckets;
}

void lanes_free(hub *H)
{
    for (int i = 1; i < H->nlanes; i++) lane_free(H->lanes[i]);
    free(H->q);
    pthread_mutex_destroy(&H->mu);
}
