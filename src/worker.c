/* worker.c: see worker.h. Both ends of the pipe live here: the parent's
** side (restarts, replays; the process itself is a child.h) and the
** worker's request loop. */
#define _GNU_SOURCE
#include "worker.h"
#include "bench.h"
#include "child.h"
#include "vendor.h"
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
        wire_reply r;
        wire_get_reply(reply, &r);
        if (r.sticky) {
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

/* Whether a setup request's reply is ok (else worker_errmsg says why). */
static int setup_ok(worker *w, const msg *r)
{
    wire_reply rp;
    wire_get_reply(r, &rp);
    if (rp.status == WIRE_OK) return 1;
    fail(w, "%s", rp.error ? rp.error : "setup failed");
    return 0;
}

static int ensure(worker *w, msg *hello)
{
    if (w->proc.pid > 0) return 0;
    if (spawn(w)) return -1;
    strbuf h = STRBUF_INIT;
    /* The real worker has the ordinal in argv; a command in AITUNE_WORKER
    ** (a fake playing several GPUs) reads it here. */
    wire_put_hello(&h, w->ordinal);
    msg r;
    int rc = exchange(w, &h, NULL, 0, &r, 120);
    sb_free(&h);
    if (rc) {
        char how[sizeof w->err];
        snprintf(how, sizeof how, "%s", w->err);   /* fail writes w->err */
        return fail(w, "the worker did not start: %s", how);
    }
    wire_reply rp;
    wire_get_reply(&r, &rp);
    if (rp.status != WIRE_OK) {
        fail(w, "%s", rp.error ? rp.error : "the worker refused to start");
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
        int ok = setup_ok(w, &rr);
        msg_free(&rr);
        if (!ok) { msg_free(&r); reap(w, 1, NULL, 0); return -1; }
    }
    if (hello) *hello = r;
    else msg_free(&r);
    return 0;
}

int worker_hello(worker *w, device *d, strbuf *env)
{
    msg r;
    if (w->proc.pid > 0) reap(w, 1, NULL, 0);   /* a fresh hello: facts as of now */
    if (ensure(w, &r)) return -1;
    wire_get_device(&r, d, env);
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
    int ok = setup_ok(w, &rep);
    msg_free(&rep);
    return ok ? 0 : -1;
}

int worker_set_support(worker *w, const void *cubin, size_t len)
{
    strbuf h = STRBUF_INIT;
    wire_put_cmd(&h, WIRE_SUPPORT);
    int rc = setup(w, &w->support, &h, cubin, len);
    sb_free(&h);
    return rc;
}

int worker_task(worker *w, const wire_task *t, const void *cubin, size_t len)
{
    strbuf h = STRBUF_INIT;
    wire_put_task(&h, t);
    int rc = setup(w, &w->task, &h, cubin, len);
    sb_free(&h);
    return rc;
}

int worker_request(worker *w, const strbuf *h, const void *blob, size_t len, msg *reply, double timeout_s)
{
    memset(reply, 0, sizeof *reply);
    if (ensure(w, NULL)) return WORKER_DIED;
    return exchange(w, h, blob, len, reply, timeout_s);
}

/* A typed request: worker_request, its reply's status as the result
** (WORKER_ERROR and WORKER_WRONG with the worker's text in worker_errmsg).
** The reply is kept in *r when the result is WORKER_OK and r is given. */
static int ask(worker *w, const strbuf *h, const void *blob, size_t len, double timeout_s, msg *r)
{
    msg reply;
    int rc = worker_request(w, h, blob, len, &reply, timeout_s);
    if (rc != WORKER_OK) return rc;
    wire_reply rp;
    wire_get_reply(&reply, &rp);
    if (rp.status != WIRE_OK) {
        fail(w, "%s", rp.error ? rp.error : rp.text);
        rc = rp.status == WIRE_WRONG ? WORKER_WRONG : WORKER_ERROR;
    }
    if (rc == WORKER_OK && r) *r = reply;
    else msg_free(&reply);
    return rc;
}

int worker_load(worker *w, const wire_load *l, const void *cubin, size_t len, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_load(&h, l);
    int rc = ask(w, &h, cubin, len, timeout_s, NULL);
    sb_free(&h);
    return rc;
}

int worker_verify(worker *w, int slot, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_slot(&h, WIRE_VERIFY, slot);
    int rc = ask(w, &h, NULL, 0, timeout_s, NULL);
    sb_free(&h);
    return rc;
}

int worker_time(worker *w, const wire_time *q, stats *out, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_time(&h, q);
    msg r;
    int rc = ask(w, &h, NULL, 0, timeout_s, &r);
    sb_free(&h);
    if (rc != WORKER_OK) return rc;
    int said = 0;
    for (int i = 0; i < q->nslots; i++) {
        if (!wire_get_times(&r, i, &out[i]) || said++) continue;
        char key[16];
        snprintf(key, sizeof key, "t%d", i);
        fail(w, "the worker's time reply does not parse: %s='%s'", key, msg_get(&r, key) ? msg_get(&r, key) : "(missing)");
    }
    msg_free(&r);
    return rc;
}

int worker_copy(worker *w, long long bytes, double *gbps, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_copy(&h, bytes);
    msg r;
    int rc = ask(w, &h, NULL, 0, timeout_s, &r);
    sb_free(&h);
    if (rc == WORKER_OK) {
        *gbps = wire_get_gbps(&r);
        msg_free(&r);
    }
    return rc;
}

int worker_vendor(worker *w, const wire_vendor *v, char *library, char *algo, int cap, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_vendor(&h, v);
    msg r;
    int rc = ask(w, &h, NULL, 0, timeout_s, &r);
    sb_free(&h);
    if (rc == WORKER_OK) {
        const char *lib, *al;
        wire_get_vendor_ok(&r, &lib, &al);
        if (library) snprintf(library, (size_t)cap, "%s", lib);
        if (algo) snprintf(algo, (size_t)cap, "%s", al);
        msg_free(&r);
    }
    return rc;
}

int worker_unload(worker *w, int slot, double timeout_s)
{
    strbuf h = STRBUF_INIT;
    wire_put_slot(&h, WIRE_UNLOAD, slot);
    int rc = ask(w, &h, NULL, 0, timeout_s, NULL);
    sb_free(&h);
    return rc;
}

void worker_free(worker *w)
{
    if (!w) return;
    if (w->proc.pid > 0) {
        strbuf h = STRBUF_INIT;
        wire_put_cmd(&h, WIRE_QUIT);
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
    wire_put_reply(&h, rc == BENCH_OK ? WIRE_OK : rc == BENCH_WRONG ? WIRE_WRONG : WIRE_ERROR, rc != BENCH_OK ? bench_err(b) : NULL,
                   rc == BENCH_FAIL && bench_sticky(b));
    msg_send(fd, &h, NULL, 0);
    sb_free(&h);
}

static void reply_error(int fd, const char *err)
{
    strbuf h = STRBUF_INIT;
    wire_put_reply(&h, WIRE_ERROR, err, 0);
    msg_send(fd, &h, NULL, 0);
    sb_free(&h);
}

/* One request m answered on fd (bench b is open). */
static void serve(int fd, bench *b, const msg *m)
{
    strbuf h = STRBUF_INIT;
    char err[512];
    switch (wire_cmd(m)) {
    case WIRE_HELLO: {
        device d;
        bench_device(b, &d);
        strbuf env = STRBUF_INIT;
        bench_env(b, &env);
        wire_put_device(&h, &d, sb_str(&env));
        sb_free(&env);
        msg_send(fd, &h, NULL, 0);
        break;
    }
    case WIRE_SUPPORT:
        reply_status(fd, b, bench_support(b, m->blob, m->blob_len));
        break;
    case WIRE_TASK: {
        wire_task t;
        if (wire_get_task(m, &t, err, sizeof err)) reply_error(fd, err);
        else reply_status(fd, b, bench_task(b, &t, m->blob, m->blob_len));
        break;
    }
    case WIRE_LOAD: {
        wire_load l;
        wire_get_load(m, &l);
        reply_status(fd, b, bench_load(b, &l, m->blob, m->blob_len));
        break;
    }
    case WIRE_UNLOAD:
        reply_status(fd, b, bench_unload(b, wire_get_slot(m)));
        break;
    case WIRE_VENDOR: {
        wire_vendor v;
        wire_get_vendor(m, &v);
        char desc[256] = "", lib[64];
        int rc = bench_vendor(b, &v, desc, sizeof desc);
        if (rc) {
            reply_status(fd, b, rc);
        } else {
            vendor_library(lib, sizeof lib);
            wire_put_vendor_ok(&h, lib, desc);
            msg_send(fd, &h, NULL, 0);
        }
        break;
    }
    case WIRE_VERIFY:
        reply_status(fd, b, bench_verify(b, wire_get_slot(m)));
        break;
    case WIRE_COPY: {
        double gbps = 0;
        int rc = bench_copy(b, (size_t)wire_get_copy(m), &gbps);
        if (rc) {
            reply_status(fd, b, rc);
        } else {
            wire_put_gbps(&h, gbps);
            msg_send(fd, &h, NULL, 0);
        }
        break;
    }
    case WIRE_TIME: {
        wire_time q;
        wire_get_time(m, &q);
        stats st[WIRE_SLOTS];
        int rc = bench_time(b, &q, st);
        if (rc) {
            reply_status(fd, b, rc);
        } else {
            wire_put_times(&h, st, q.nslots);
            msg_send(fd, &h, NULL, 0);
        }
        break;
    }
    default:
        snprintf(err, sizeof err, "unknown command '%s'", wire_cmd_text(m));
        reply_error(fd, err);
    }
    sb_free(&h);
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
        if (wire_cmd(&m) == WIRE_QUIT) { msg_free(&m); break; }
        if (!b && !(b = bench_open(ordinal, err, sizeof err))) reply_error(out, err);
        else serve(out, b, &m);
        msg_free(&m);
        /* A context that saw a sticky error is useless: exit, the parent restarts us. */
        if (b && bench_sticky(b)) _exit(3);
    }
    bench_close(b);
    return 0;
}
