/* jit.c: see jit.h. */
#define _GNU_SOURCE
#include "jit.h"
#include "child.h"
#include "util.h"
#include <nvrtc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

const char *jit_nvrtc_version(void)
{
    static char v[16];
    if (!v[0]) {
        int major = 0, minor = 0;
        nvrtcVersion(&major, &minor);
        snprintf(v, sizeof v, "%d.%d", major, minor);
    }
    return v;
}

/* -lineinfo keeps profiler source views useful and does not change code. */
#define OPTS_FMT "--gpu-architecture=%s -std=c++17 -lineinfo --ptxas-options=-v"

const char *jit_options(const char *arch)
{
    static __thread char buf[128];
    snprintf(buf, sizeof buf, OPTS_FMT, arch);
    return buf;
}

void jit_key_options(const char *source, const char *name, const char *options, char out[17])
{
    uint64_t h = hash_str(HASH_INIT, source);
    h = hash_str(h, name);
    h = hash_str(h, options);
    h = hash_str(h, jit_nvrtc_version());
    hash_hex(h, out);
}

void jit_key(const char *source, const char *name, const char *arch, char out[17])
{
    jit_key_options(source, name, jit_options(arch), out);
}

void jit_hash(const void *cubin, size_t len, char out[17])
{
    hash_hex(hash_bytes(HASH_INIT, cubin, len), out);
}

/* Sum of every "<number><unit>" in the log (a report has one per function). */
static int grab(const char *log, const char *unit, int *out)
{
    const char *p = log;
    int found = 0, total = 0;
    while ((p = strstr(p, unit))) {
        const char *q = p;
        while (q > log && q[-1] == ' ') q--;
        const char *e = q;
        while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
        if (q < e) {
            total += atoi(q);
            found = 1;
        }
        p += strlen(unit);
    }
    if (found) *out = total;
    return found;
}

int jit_parse_report(const char *log, jit_job *j)
{
    const char *u = strstr(log, "Used ");
    if (!u) return -1;
    j->registers = atoi(u + 5);
    int st = 0, ld = 0;
    grab(log, " bytes spill stores", &st);
    grab(log, " bytes spill loads", &ld);
    j->spills = st + ld;
    j->smem = 0;
    grab(log, " bytes smem", &j->smem);
    j->stack = 0;
    grab(log, " bytes stack frame", &j->stack);
    return 0;
}

/* ptxas warnings that mean the kernel is not what was asked for: setmaxnreg
** ignored (C7508), wgmma serialized (C7515, C7517). */
static const char *fatal_warning(const char *log)
{
    static const char *codes[] = { "C7508", "C7515", "C7517", NULL };
    for (const char **c = codes; *c; c++)
        if (strstr(log, *c)) return *c;
    return NULL;
}

char *jit_check_log(jit_job *j)
{
    /* Some tools (compute-sanitizer) keep ptxas from reporting at all: the
    ** kernel is fine, its registers and spills are unknown. */
    if (!strstr(j->log, "ptxas")) {
        j->registers = -1;
        j->spills = j->smem = j->stack = 0;
        return NULL;
    }
    /* The report drives pruning, so it must be this kernel's. */
    char entry[96];
    snprintf(entry, sizeof entry, "entry function '%s'", j->name);
    const char *w = fatal_warning(j->log);
    if (jit_parse_report(j->log, j) || !strstr(j->log, entry))
        return xstrfmt("the ptxas report does not describe kernel '%s'", j->name);
    if (w) return xstrfmt("ptxas warning %s (treated as a failure)", w);
    return NULL;
}

/* Compile j, all but marking it done: the pool hands the result to the
** jobs of the same key first (their owners may free j once it is done). */
static void compile_job(jit_job *j)
{
    double t0 = now_s();
    nvrtcProgram prog;
    j->ok = 0;
    j->t_start = t0;
    /* The arch is pasted into the options: nothing but a known target. */
    if (!arch_known(j->arch)) {
        j->error = xstrfmt("no cubin for unknown arch '%.32s' (known: %s)", j->arch, arch_list());
        return;
    }
    if (nvrtcCreateProgram(&prog, j->source, "candidate.cu", 0, NULL, NULL) != NVRTC_SUCCESS) {
        j->error = xstrdup("nvrtcCreateProgram failed");
        return;
    }
    /* jit_options(), split into words. */
    char buf[128], *opts[8], *save = NULL;
    int nopts = 0;
    snprintf(buf, sizeof buf, "%s", jit_options(j->arch));
    for (char *w = strtok_r(buf, " ", &save); w && nopts < 8; w = strtok_r(NULL, " ", &save)) opts[nopts++] = w;
    nvrtcResult rc = nvrtcCompileProgram(prog, nopts, (const char *const *)opts);
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    j->log = xmalloc(n + 1);
    j->log[0] = 0;
    if (n) nvrtcGetProgramLog(prog, j->log);
    if (rc != NVRTC_SUCCESS) {
        /* The first line that names an error is the one line to show. */
        const char *e = strstr(j->log, "error");
        const char *line = e ? e : j->log;
        while (e && line > j->log && line[-1] != '\n') line--;
        size_t len = strcspn(line, "\n");
        j->error = len ? xstrfmt("%.*s", (int)len, line) : xstrdup(nvrtcGetErrorString(rc));
    } else if (nvrtcGetCUBINSize(prog, &j->cubin_len) != NVRTC_SUCCESS || !j->cubin_len) {
        j->error = xstrfmt("no cubin for %s (is it a real arch, like sm_90a?)", j->arch);
    } else {
        j->cubin = xmalloc(j->cubin_len);
        nvrtcGetCUBIN(prog, (char *)j->cubin);
        j->error = jit_check_log(j);
        j->ok = !j->error;
    }
    nvrtcDestroyProgram(&prog);
    j->ms = (now_s() - t0) * 1e3;
}

void jit_compile(jit_job *j)
{
    compile_job(j);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
}

void jit_job_clear(jit_job *j)
{
    free(j->source);
    free(j->cubin);
    free(j->log);
    free(j->error);
    memset(j, 0, sizeof *j);
}

/* ---- compiling in a helper process ---- */

/* A request is cmd=compile, name, arch and the source as the blob. The reply
** has ok, error, the report's numbers and log_len; its blob is the log,
** then the cubin. */

static const char *helper_cmd;      /* jit_use_helpers: the subcommand, or NULL */

void jit_use_helpers(const char *subcommand) { helper_cmd = subcommand; }

int jit_helper_main(void)
{
    /* stdout carries the replies; nothing else may write to it. */
    int out = dup(1);
    dup2(2, 1);
    /* A crash is the parent's to report, as one line: no core file. */
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    const char *crash = getenv("AITUNE_NVRTC_CRASH");
    const char *hang = getenv("AITUNE_NVRTC_HANG");
    conn in = { 0, STRBUF_INIT };
    msg m;
    while (!msg_read(&in, &m, -1)) {
        strbuf h = STRBUF_INIT;
        jit_job j;
        memset(&j, 0, sizeof j);
        j.source = xmalloc(m.blob_len + 1);
        if (m.blob_len) memcpy(j.source, m.blob, m.blob_len);
        j.source[m.blob_len] = 0;
        snprintf(j.name, sizeof j.name, "%s", msg_get(&m, "name") ? msg_get(&m, "name") : "");
        snprintf(j.arch, sizeof j.arch, "%s", msg_get(&m, "arch") ? msg_get(&m, "arch") : "");
        if (strcmp(msg_get(&m, "cmd") ? msg_get(&m, "cmd") : "", "compile")) {
            j.error = xstrfmt("unknown command '%s'", msg_get(&m, "cmd") ? msg_get(&m, "cmd") : "");
        } else {
            if (crash && *crash && strstr(j.source, crash)) {
                signal(SIGSEGV, SIG_DFL);
                raise(SIGSEGV);
            }
            if (hang && *hang && strstr(j.source, hang))
                for (;;) pause();
            compile_job(&j);
        }
        size_t log_len = j.log ? strlen(j.log) : 0;
        msg_kv(&h, "ok", "%d", j.ok);
        if (j.error) msg_kv(&h, "error", "%s", j.error);
        msg_kv(&h, "registers", "%d", j.registers);
        msg_kv(&h, "spills", "%d", j.spills);
        msg_kv(&h, "smem", "%d", j.smem);
        msg_kv(&h, "stack", "%d", j.stack);
        msg_kv(&h, "log_len", "%zu", log_len);
        unsigned char *blob = xmalloc(log_len + j.cubin_len + 1);
        if (log_len) memcpy(blob, j.log, log_len);
        if (j.cubin_len) memcpy(blob + log_len, j.cubin, j.cubin_len);
        int rc = msg_send(out, &h, blob, log_len + j.cubin_len);
        free(blob);
        sb_free(&h);
        jit_job_clear(&j);
        msg_free(&m);
        if (rc) break;
    }
    sb_free(&in.in);
    return 0;
}

/* A pool thread's own helper. */
typedef struct helper {
    jit_pool *pool;
    child proc;
} helper;

static int helper_start(helper *h, char *err, size_t cap)
{
    char *argv[] = { "aitune", (char *)helper_cmd, NULL };
    return child_spawn(&h->proc, "/proc/self/exe", argv, err, cap);
}

/* Close its stdin: it exits at end of file, or is killed after a while. */
static void helper_stop(helper *h)
{
    if (h->proc.pid < 0) return;
    close(h->proc.to);
    h->proc.to = -1;
    child_reap(&h->proc, 2);
}

/* The one line for a helper that ended (wait status) while compiling. */
static char *died_error(int status)
{
    if (status != -1 && WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = child_signame(sig);
        if (sig == SIGKILL || sig == SIGTERM)
            return xstrfmt("the NVRTC helper was killed (signal %d%s%s) compiling this candidate", sig, *name ? ", " : "", name);
        return xstrfmt("NVRTC crashed (signal %d%s%s) compiling this candidate", sig, *name ? ", " : "", name);
    }
    if (status != -1 && WIFEXITED(status))
        return xstrfmt("the NVRTC helper exited with code %d compiling this candidate", WEXITSTATUS(status));
    return xstrdup("the NVRTC helper ended while compiling this candidate");
}

/* How long a helper may take over one job (jit.h): AITUNE_COMPILE_TIMEOUT
** seconds, else 600. A value that is not a number of seconds in (0, 86400]
** is said once on stderr and not used. */
static double timeout_s = 600;
static pthread_once_t timeout_once = PTHREAD_ONCE_INIT;

static void read_timeout(void)
{
    const char *v = getenv("AITUNE_COMPILE_TIMEOUT");
    if (!v || !*v) return;
    char *end;
    double t = strtod(v, &end);
    if (*end || !(t > 0 && t <= 86400))
        fprintf(stderr, "aitune: AITUNE_COMPILE_TIMEOUT='%.32s' is not a number of seconds in (0, 86400]; using %g\n", v,
                timeout_s);
    else
        timeout_s = t;
}

static double compile_timeout_s(void)
{
    pthread_once(&timeout_once, read_timeout);
    return timeout_s;
}

static int pool_aborted(jit_pool *p);

/* The helper's reply to a request sent at t0: msg_read's 0, -1 or -2 (late:
** past compile_timeout_s), or -3 when the pool was aborted meanwhile. Read
** in slices of 0.1 s, so an abort is seen at once; a slice that ends in the
** middle of a reply keeps what came (proto.h: the connection's buffer). */
static int read_reply(helper *h, msg *r, double t0)
{
    for (;;) {
        if (pool_aborted(h->pool)) return -3;
        double left = t0 + compile_timeout_s() - now_s();
        int rc = msg_read(&h->proc.from, r, left < 0.1 ? (left > 0 ? left : 0) : 0.1);
        if (rc != -2 || left <= 0.1) return rc;
    }
}

/* Compile j in h's process, started if it is not running: as compile_job,
** and a helper that dies on j, or takes longer than compile_timeout_s(),
** makes j a compile error that names how (the late one is killed). */
static void compile_in_helper(helper *h, jit_job *j)
{
    strbuf req = STRBUF_INIT;
    msg_kv(&req, "cmd", "compile");
    msg_kv(&req, "name", "%s", j->name);
    msg_kv(&req, "arch", "%s", j->arch);
    j->ok = 0;
    j->registers = j->spills = j->smem = j->stack = 0;
    msg r;
    int rc = -1;
    double t0 = now_s();
    if (pool_aborted(h->pool)) {    /* a queued job after jit_pool_abort: no helper started for it */
        sb_free(&req);
        j->cancelled = 1;
        j->error = xstrdup("cancelled");
        return;
    }
    /* Two tries: a helper killed from outside (SIGKILL, SIGTERM: the OOM
    ** killer, a user), while idle or on j, gets j again on a fresh helper.
    ** A crash is j's own (NVRTC fails the same way again): not retried. */
    for (int attempt = 0; attempt < 2; attempt++) {
        char err[256];
        if (h->proc.pid > 0 && child_ended(&h->proc)) child_reap(&h->proc, 0);   /* died idle */
        if (h->proc.pid < 0 && helper_start(h, err, sizeof err)) {
            j->error = xstrfmt("cannot start the NVRTC helper: %s", err);
            break;
        }
        t0 = now_s();
        rc = msg_send(h->proc.to, &req, j->source, strlen(j->source)) ? -1 : read_reply(h, &r, t0);
        if (!rc) break;
        if (rc == -3) {   /* jit_pool_abort: the helper is killed, the job given up */
            child_reap(&h->proc, 0);
            j->cancelled = 1;
            j->error = xstrdup("cancelled");
            break;
        }
        if (rc == -2) {   /* late: killed, not retried (it would hang again) */
            child_reap(&h->proc, 0);
            j->error = xstrfmt("NVRTC did not finish in %g s compiling this candidate (its helper was killed; "
                               "AITUNE_COMPILE_TIMEOUT sets the limit)", compile_timeout_s());
            break;
        }
        int status = child_reap(&h->proc, 5);
        int killed = status != -1 && WIFSIGNALED(status) && (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM);
        if (attempt == 0 && killed) continue;
        j->error = died_error(status);
        break;
    }
    sb_free(&req);
    j->t_start = t0;
    j->ms = (now_s() - t0) * 1e3;
    if (rc) return;
    size_t log_len = (size_t)msg_int(&r, "log_len", 0);
    if (log_len > r.blob_len) log_len = r.blob_len;
    j->log = xmalloc(log_len + 1);
    if (log_len) memcpy(j->log, r.blob, log_len);
    j->log[log_len] = 0;
    j->cubin_len = r.blob_len - log_len;
    if (j->cubin_len) j->cubin = memcpy(xmalloc(j->cubin_len), r.blob + log_len, j->cubin_len);
    const char *e = msg_get(&r, "error");
    j->ok = msg_int(&r, "ok", 0) == 1 && j->cubin_len > 0 && !e;
    if (!j->ok) j->error = xstrdup(e ? e : "the NVRTC helper sent no cubin");
    j->registers = (int)msg_int(&r, "registers", 0);
    j->spills = (int)msg_int(&r, "spills", 0);
    j->smem = (int)msg_int(&r, "smem", 0);
    j->stack = (int)msg_int(&r, "stack", 0);
    msg_free(&r);
}

/* ---- the pool: a FIFO of job pointers served by worker threads ---- */

/* A job is idle (not in the pool, or done), queued, being compiled, or
** following a queued or compiling job of the same key (its leader). */
enum { JOB_IDLE, JOB_QUEUED, JOB_RUNNING, JOB_FOLLOWING };

struct jit_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    jit_job **queue;        /* [head, tail) mod cap; NULL: a cancelled job's place */
    int head, tail, cap;
    int stop, nthreads;
    pthread_t *threads;
    jit_job **running;      /* the jobs being compiled, a place per thread */
    int isolate;            /* compile in helper processes (jit_use_helpers) */
    helper *helpers;        /* one per thread, started on its first job */
    int aborted;            /* jit_pool_abort: helpers give their jobs up (atomic) */
    int (*stop_fn)(void);   /* jit_pool_stop_when */
};

static void mark_done(jit_job *j)
{
    j->state = JOB_IDLE;
    j->leader = j->next = NULL;
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
}

static void mark_cancelled(jit_job *j)
{
    j->ok = 0;
    j->cancelled = 1;
    free(j->error);
    j->error = xstrdup("cancelled");
    mark_done(j);
}

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

/* j's result into its followers (copies they own), then j done: all
** under the lock, before any owner can see j done and free it. */
static void finish(jit_job *j)
{
    for (jit_job *f = j->followers, *next; f; f = next) {
        next = f->next;
        f->ok = j->ok;
        if (j->cubin) {
            f->cubin = xmalloc(j->cubin_len);
            memcpy(f->cubin, j->cubin, j->cubin_len);
        }
        f->cubin_len = j->cubin_len;
        f->log = dup_or_null(j->log);
        f->error = dup_or_null(j->error);
        f->registers = j->registers;
        f->spills = j->spills;
        f->smem = j->smem;
        f->stack = j->stack;
        f->ms = j->ms;
        f->t_start = j->t_start;
        f->cancelled = j->cancelled;    /* jit_pool_abort gave the leader up */
        f->shared = 1;
        mark_done(f);
    }
    j->followers = NULL;
    mark_done(j);
}

static int same_kernel(const jit_job *q, const jit_job *j)
{
    /* Same key and text: a hash collision compiles on its own. */
    return q && !strcmp(q->key, j->key) && !strcmp(q->name, j->name) && !strcmp(q->arch, j->arch) &&
           !strcmp(q->source, j->source);
}

/* A queued or compiling job that j can wait on instead of compiling. */
static jit_job *in_flight(jit_pool *p, const jit_job *j)
{
    if (!j->key[0]) return NULL;
    for (int i = p->head; i < p->tail; i++)
        if (same_kernel(p->queue[i % p->cap], j)) return p->queue[i % p->cap];
    for (int i = 0; i < p->nthreads; i++)
        if (same_kernel(p->running[i], j)) return p->running[i];
    return NULL;
}

static void *serve(void *arg)
{
    helper *h = arg;
    jit_pool *p = h->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == p->tail && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->head == p->tail) break;
        jit_job *j = p->queue[p->head++ % p->cap];
        if (!j) continue;
        int slot = 0;
        while (p->running[slot]) slot++;
        p->running[slot] = j;
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&p->mu);
        if (p->isolate) compile_in_helper(h, j);
        else compile_job(j);
        pthread_mutex_lock(&p->mu);
        p->running[slot] = NULL;
        finish(j);
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    /* Before this thread ends: its end would kill the helper (child.h). */
    helper_stop(h);
    return NULL;
}

jit_pool *jit_pool_new(int threads)
{
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    jit_pool *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->cap = 1024;
    p->queue = xcalloc((size_t)p->cap, sizeof *p->queue);
    p->nthreads = threads;
    p->threads = xcalloc((size_t)threads, sizeof *p->threads);
    p->running = xcalloc((size_t)threads, sizeof *p->running);
    p->isolate = helper_cmd != NULL;
    /* A helper that dies while being written to must cost an EPIPE only. */
    if (p->isolate) signal(SIGPIPE, SIG_IGN);
    p->helpers = xcalloc((size_t)threads, sizeof *p->helpers);
    for (int i = 0; i < threads; i++) {
        p->helpers[i].pool = p;
        p->helpers[i].proc = (child)CHILD_INIT;
        pthread_create(&p->threads[i], NULL, serve, &p->helpers[i]);
    }
    return p;
}

int jit_pool_threads(const jit_pool *p) { return p->nthreads; }

void jit_pool_free(jit_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p->helpers);
    free(p->running);
    free(p->queue);
    free(p);
}

void jit_submit(jit_pool *p, jit_job *j)
{
    pthread_mutex_lock(&p->mu);
    j->followers = j->next = j->leader = NULL;
    if (pool_aborted(p)) {   /* the pool compiles nothing more */
        mark_cancelled(j);
        pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
        return;
    }
    jit_job *lead = in_flight(p, j);
    if (lead) {
        /* Last in its leader's list: a cancelled leader hands its place to the first. */
        jit_job **at = &lead->followers;
        while (*at) at = &(*at)->next;
        *at = j;
        j->leader = lead;
        j->state = JOB_FOLLOWING;
        pthread_mutex_unlock(&p->mu);
        return;
    }
    if (p->tail - p->head == p->cap) {
        /* Grow the ring, keeping order. */
        jit_job **q = xcalloc((size_t)p->cap * 2, sizeof *q);
        for (int i = p->head; i < p->tail; i++) q[i - p->head] = p->queue[i % p->cap];
        p->tail -= p->head;
        p->head = 0;
        free(p->queue);
        p->queue = q;
        p->cap *= 2;
    }
    j->state = JOB_QUEUED;
    p->queue[p->tail++ % p->cap] = j;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

static int pool_aborted(jit_pool *p)
{
    if (!__atomic_load_n(&p->aborted, __ATOMIC_ACQUIRE) && p->stop_fn && p->stop_fn())
        __atomic_store_n(&p->aborted, 1, __ATOMIC_RELEASE);
    return __atomic_load_n(&p->aborted, __ATOMIC_ACQUIRE);
}

void jit_pool_stop_when(jit_pool *p, int (*stop)(void)) { p->stop_fn = stop; }

void jit_pool_abort(jit_pool *p)
{
    __atomic_store_n(&p->aborted, 1, __ATOMIC_RELEASE);
    jit_pool_cancel(p);
}

void jit_pool_cancel(jit_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->head != p->tail) {
        jit_job *j = p->queue[p->head++ % p->cap];
        if (!j) continue;
        for (jit_job *f = j->followers, *next; f; f = next) {
            next = f->next;
            mark_cancelled(f);
        }
        j->followers = NULL;
        mark_cancelled(j);
    }
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

int jit_cancel(jit_pool *p, jit_job *j)
{
    int cancelled = 0;
    pthread_mutex_lock(&p->mu);
    if (j->state == JOB_FOLLOWING) {
        jit_job **at = &j->leader->followers;
        while (*at != j) at = &(*at)->next;
        *at = j->next;
        mark_cancelled(j);
        cancelled = 1;
    } else if (j->state == JOB_IDLE && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
        mark_cancelled(j);      /* never submitted: nothing to wait for */
        cancelled = 1;
    } else if (j->state == JOB_QUEUED) {
        int i = p->head;
        while (p->queue[i % p->cap] != j) i++;
        /* Its first follower compiles in its place; the others follow that one. */
        jit_job *f = j->followers;
        if (f) {
            f->followers = f->next;
            for (jit_job *g = f->followers; g; g = g->next) g->leader = f;
            f->next = f->leader = NULL;
            f->state = JOB_QUEUED;
        }
        p->queue[i % p->cap] = f;
        j->followers = NULL;
        mark_cancelled(j);
        cancelled = 1;
    }
    if (cancelled) pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
    return cancelled;
}

void jit_wait(jit_pool *p, jit_job *j)
{
    pthread_mutex_lock(&p->mu);
    while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
