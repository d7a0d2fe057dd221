/* worker.c: see worker.h. Both ends of the pipe live here: the parent's
** side (restarts, replays; the process itself is a child.h) and the
** worker's request loop. */
#define _GNU_SOURCE
#include "worker.h"
#include "bench.h"
#include "child.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct replay {
    strbuf header;
    unsigned char *blob;
    size_t len;
    int set;
} replay;

struct worker {
    int ordinal;
    child proc;             /* its stdin and stdout carry the requests */
    replay support, task;
    worker_stats stats;
    char err[1024];
};

static int fail(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *worker_errmsg(worker *w) { return w->err[0] ? w->err : "not an error"; }
worker_stats worker_counts(worker *w) { return w->stats; }

worker *worker_new(int ordinal)
{
    worker *w = xcalloc(1, sizeof *w);
    w->ordinal = ordinal;
    w->proc = (child)CHILD_INIT;
    /* A worker that dies mid-write must not take the parent with it. */
    signal(SIGPIPE, SIG_IGN);
    return w;
}

/* Reap the process (killed first, or waited for); describe how it ended. */
static void reap(worker *w, int kill_it, char *how, size_t cap)
{
    if (w->proc.pid < 0) return;
    int status = child_reap(&w->proc, kill_it ? 0 : -1);
    if (how) child_describe(status, how, cap);
}

static int spawn(worker *w)
{
    char ord[16], err[256];
    snprintf(ord, sizeof ord, "%d", w->ordinal);
    const char *fake = getenv("AITUNE_WORKER");
    int rc;
    if (fake && *fake) {
        char *argv[] = { "sh", "-c", (char *)fake, "aitune-worker", ord, NULL };
        rc = child_spawn(&w->proc, "/bin/sh", argv, err, sizeof err);
    } else {
        char *argv[] = { "aitune", "__worker", ord, NULL };
        rc = child_spawn(&w->proc, "/proc/self/exe", argv, err, sizeof err);
    }
    if (rc) return fail(w, "%s", err);
    w->stats.starts++;
    return 0;
}

/* One request on a running worker. */
static int exchange(worker *w, const strbuf *h, const void *blob, size_t len, msg *reply, double timeout_s)
{
    memset(reply, 0, sizeof *reply);
    int rc = msg_send(w->proc.to, h, blob, len) ? -1 : msg_read(&w->proc.from, reply, timeout_s);
    if (rc == 0) {
        if (msg_int(reply, "sticky", 0)) {
            w->stats.sticky++;
            reap(w, 1, NULL, 0);
        }
        return WORKER_OK;
    }
    char how[128] = "";
    if (rc == -2) {
        w->stats.timeouts++;
        reap(w, 1, how, sizeof how);
        fail(w, "no answer within %.0f s: the worker was killed", timeout_s);
        return WORKER_TIMEOUT;
    }
    w->stats.crashes++;
    reap(w, 0, how, sizeof how);
    fail(w, "the worker %s", how);
    return WORKER_DIED;
}

static int ensure(worker *w, msg *hello)
{
    if (w->proc.pid > 0) return 0;
    if (spawn(w)) return -1;
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "hello");
    /* The real worker has the ordinal in argv; a command in AITUNE_WORKER
    ** (a fake playing several GPUs) reads it here. */
    msg_kv(&h, "gpu", "%d", w->ordinal);
    msg r;
    int rc = exchange(w, &h, NULL, 0, &r, 120);
    sb_free(&h);
    if (rc) return fail(w, "the worker did not start: %s", worker_errmsg(w));
    if (strcmp(msg_get(&r, "status") ? msg_get(&r, "status") : "", "ok")) {
        fail(w, "%s", msg_get(&r, "error") ? msg_get(&r, "error") : "the worker refused to start");
        msg_free(&r);
        reap(w, 1, NULL, 0);
        return -1;
    }
    /* Replay what the last worker had. */
    replay *rs[] = { &w->support, &w->task };
    for (int i = 0; i < 2; i++) {
        if (!rs[i]->set) continue;
        msg rr;
        rc = exchange(w, &rs[i]->header, rs[i]->blob, rs[i]->len, &rr, 600);
        if (rc) { msg_free(&r); return -1; }
        int ok = !strcmp(msg_get(&rr, "status") ? msg_get(&rr, "status") : "", "ok");
        if (!ok) fail(w, "%s", msg_get(&rr, "error") ? msg_get(&rr, "error") : "setup failed");
        msg_free(&rr);
        if (!ok) { msg_free(&r); reap(w, 1, NULL, 0); return -1; }
    }
    if (hello) *hello = r;
    else msg_free(&r);
    return 0;
}

static void copy3(char *dst, size_t cap, const msg *m, const char *key)
{
    snprintf(dst, cap, "%s", msg_get(m, key) ? msg_get(m, key) : "");
}

int worker_hello(worker *w, device *d, strbuf *env)
{
    msg r;
    if (w->proc.pid > 0) reap(w, 1, NULL, 0);   /* a fresh hello: facts as of now */
    if (ensure(w, &r)) return -1;
    memset(d, 0, sizeof *d);
    copy3(d->name, sizeof d->name, &r, "name");
    copy3(d->uuid, sizeof d->uuid, &r, "uuid");
    copy3(d->driver, sizeof d->driver, &r, "driver");
    copy3(d->nvrtc, sizeof d->nvrtc, &r, "nvrtc");
    d->cc = (int)msg_int(&r, "cc", 0);
    d->sms = (int)msg_int(&r, "sms", 0);
    d->mem = msg_int(&r, "mem", 0);
    d->l2 = msg_int(&r, "l2", 0);
    d->smem_optin = (int)msg_int(&r, "smem_optin", 0);
    d->smem_per_sm = (int)msg_int(&r, "smem_per_sm", 0);
    d->regs_per_sm = (int)msg_int(&r, "regs_per_sm", 0);
    d->max_threads_per_sm = (int)msg_int(&r, "max_threads_per_sm", 0);
    d->clock_khz = (int)msg_int(&r, "clock_khz", 0);
    d->mem_clock_khz = (int)msg_int(&r, "mem_clock_khz", 0);
    d->cuda_driver = (int)msg_int(&r, "cuda_driver", 0);
    d->real = 1;
    d->count = (int)msg_int(&r, "count", 1);
    if (env) sb_puts(env, msg_get(&r, "env") ? msg_get(&r, "env") : "{}");
    msg_free(&r);
    return 0;
}

static void keep(replay *r, const strbuf *h, const void *blob, size_t len)
{
    sb_reset(&r->header);
    sb_add(&r->header, sb_str(h), h->len);
    free(r->blob);
    r->blob = len ? memcpy(xmalloc(len), blob, len) : NULL;
    r->len = len;
    r->set = 1;
}

static int setup(worker *w, replay *r, const strbuf *h, const void *blob, size_t len)
{
    keep(r, h, blob, len);
    if (ensure(w, NULL)) return -1;
    msg rep;
    int rc = exchange(w, h, blob, len, &rep, 600);
    if (rc) return -1;
    int ok = !strcmp(msg_get(&rep, "status") ? msg_get(&rep, "status") : "", "ok");
    if (!ok) fail(w, "%s", msg_get(&rep, "error") ? msg_get(&rep, "error") : "setup failed");
    msg_free(&rep);
    return ok ? 0 : -1;
}

int worker_set_support(worker *w, const void *cubin, size_t len)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "support");
    int rc = setup(w, &w->support, &h, cubin, len);
    sb_free(&h);
    return rc;
}

int worker_set_task(worker *w, const strbuf *header, const void *cubin, size_t len)
{
    return setup(w, &w->task, header, cubin, len);
}

int worker_request(worker *w, const strbuf *h, const void *blob, size_t len, msg *reply, double timeout_s)
{
    memset(reply, 0, sizeof *reply);
    if (ensure(w, NULL)) return WORKER_DIED;
    return exchange(w, h, blob, len, reply, timeout_s);
}

void worker_free(worker *w)
{
    if (!w) return;
    if (w->proc.pid > 0) {
        strbuf h = STRBUF_INIT;
        msg_kv(&h, "cmd", "quit");
        msg_send(w->proc.to, &h, NULL, 0);
        sb_free(&h);
        /* Give it a moment to free the GPU cleanly, then make sure. */
        child_reap(&w->proc, 2);
    }
    sb_free(&w->support.header);
    sb_free(&w->task.header);
    free(w->support.blob);
    free(w->task.blob);
    free(w);
}

/* ---- the worker process ---- */

static void reply_status(int fd, bench *b, int rc)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "status", "%s", rc == BENCH_OK ? "ok" : rc == BENCH_WRONG ? "wrong" : "error");
    if (rc != BENCH_OK) msg_kv(&h, "error", "%s", bench_err(b));
    if (rc == BENCH_FAIL && bench_sticky(b)) msg_kv(&h, "sticky", "1");
    msg_send(fd, &h, NULL, 0);
    sb_free(&h);
}

static int parse_slots(const char *s, int *slots)
{
    int n = 0;
    while (s && *s && n < BENCH_SLOTS) {
        slots[n++] = atoi(s);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

int worker_main(int argc, char **argv)
{
    int ordinal = argc > 2 ? atoi(argv[2]) : 0;
    /* stdout carries the protocol; nothing else may write to it. */
    int out = dup(1);
    dup2(2, 1);
    conn in = { 0, STRBUF_INIT };
    bench *b = NULL;
    char err[512] = "";
    for (;;) {
        msg m;
        if (msg_read(&in, &m, -1)) break;
        const char *cmd = msg_get(&m, "cmd") ? msg_get(&m, "cmd") : "";
        strbuf h = STRBUF_INIT;
        if (!strcmp(cmd, "quit")) { msg_free(&m); break; }
        if (!b && !(b = bench_open(ordinal, err, sizeof err))) {
            msg_kv(&h, "status", "error");
            msg_kv(&h, "error", "%s", err);
            msg_send(out, &h, NULL, 0);
        } else if (!strcmp(cmd, "hello")) {
            device d;
            bench_device(b, &d);
            msg_kv(&h, "status", "ok");
            msg_kv(&h, "name", "%s", d.name);
            msg_kv(&h, "uuid", "%s", d.uuid);
            msg_kv(&h, "cc", "%d", d.cc);
            msg_kv(&h, "sms", "%d", d.sms);
            msg_kv(&h, "mem", "%lld", d.mem);
            msg_kv(&h, "l2", "%lld", d.l2);
            msg_kv(&h, "smem_optin", "%d", d.smem_optin);
            msg_kv(&h, "smem_per_sm", "%d", d.smem_per_sm);
            msg_kv(&h, "regs_per_sm", "%d", d.regs_per_sm);
            msg_kv(&h, "max_threads_per_sm", "%d", d.max_threads_per_sm);
            msg_kv(&h, "clock_khz", "%d", d.clock_khz);
            msg_kv(&h, "mem_clock_khz", "%d", d.mem_clock_khz);
            msg_kv(&h, "driver", "%s", d.driver);
            msg_kv(&h, "cuda_driver", "%d", d.cuda_driver);
            msg_kv(&h, "nvrtc", "%s", d.nvrtc);
            msg_kv(&h, "count", "%d", d.count);
            strbuf env = STRBUF_INIT;
            bench_env(b, &env);
            msg_kv(&h, "env", "%s", sb_str(&env));
            sb_free(&env);
            msg_send(out, &h, NULL, 0);
        } else if (!strcmp(cmd, "support")) {
            reply_status(out, b, bench_support(b, m.blob, m.blob_len));
        } else if (!strcmp(cmd, "task")) {
            reply_status(out, b, bench_task(b, &m));
        } else if (!strcmp(cmd, "load")) {
            reply_status(out, b, bench_load(b, &m));
        } else if (!strcmp(cmd, "unload")) {
            reply_status(out, b, bench_unload(b, (int)msg_int(&m, "slot", -1)));
        } else if (!strcmp(cmd, "verify")) {
            reply_status(out, b, bench_verify(b, (int)msg_int(&m, "slot", -1)));
        } else if (!strcmp(cmd, "copy")) {
            double gbps = 0;
            int rc = bench_copy(b, (size_t)msg_int(&m, "bytes", 1LL << 30), &gbps);
            if (rc) reply_status(out, b, rc);
            else {
                msg_kv(&h, "status", "ok");
                msg_kv(&h, "gbps", "%.1f", gbps);
                msg_send(out, &h, NULL, 0);
            }
        } else if (!strcmp(cmd, "time")) {
            int slots[BENCH_SLOTS];
            int n = parse_slots(msg_get(&m, "slots"), slots);
            bench_opts o = {
                .warmup = (int)msg_int(&m, "warmup", 3),
                .min_samples = (int)msg_int(&m, "min", 10),
                .max_samples = (int)msg_int(&m, "max", 200),
                .max_seconds = msg_num(&m, "max_s", 2),
                .settle = msg_num(&m, "settle", 0.005),
                .rounds = (int)msg_int(&m, "rounds", 0),
            };
            stats st[BENCH_SLOTS];
            int rc = bench_time(b, slots, n, &o, st);
            if (rc) {
                reply_status(out, b, rc);
            } else {
                msg_kv(&h, "status", "ok");
                for (int i = 0; i < n; i++) {
                    char key[16];
                    snprintf(key, sizeof key, "t%d", i);
                    msg_kv(&h, key, "%.4f %.4f %.4f %.5f %d", st[i].median, st[i].min, st[i].max, st[i].spread, st[i].n);
                }
                msg_send(out, &h, NULL, 0);
            }
        } else {
            msg_kv(&h, "status", "error");
            msg_kv(&h, "error", "unknown command '%s'", cmd);
            msg_send(out, &h, NULL, 0);
        }
        sb_free(&h);
        msg_free(&m);
        /* A context that saw a sticky error is useless: exit, the parent restarts us. */
        if (b && bench_sticky(b)) _exit(3);
    }
    bench_close(b);
    return 0;
}
