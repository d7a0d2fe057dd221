/* jit.c: see jit.h. */
#define _GNU_SOURCE
#include "jit.h"
#include "util.h"
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void jit_key(const char *source, const char *name, const char *arch, char out[17])
{
    uint64_t h = hash_str(HASH_INIT, source);
    h = hash_str(h, name);
    h = hash_str(h, jit_options(arch));
    h = hash_str(h, jit_nvrtc_version());
    hash_hex(h, out);
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

void jit_compile(jit_job *j)
{
    double t0 = now_s();
    nvrtcProgram prog;
    j->ok = 0;
    /* The arch is pasted into the options: nothing but a known target. */
    if (!arch_known(j->arch)) {
        j->error = xstrfmt("no cubin for unknown arch '%.32s' (known: %s)", j->arch, arch_list());
        __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
        return;
    }
    if (nvrtcCreateProgram(&prog, j->source, "candidate.cu", 0, NULL, NULL) != NVRTC_SUCCESS) {
        j->error = xstrdup("nvrtcCreateProgram failed");
        j->done = 1;
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

/* ---- the pool: a FIFO of job pointers served by worker threads ---- */

struct jit_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    jit_job **queue;
    int head, tail, cap;
    int stop, nthreads;
    pthread_t *threads;
};

static void *serve(void *arg)
{
    jit_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == p->tail && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->head == p->tail) break;
        jit_job *j = p->queue[p->head++ % p->cap];
        pthread_mutex_unlock(&p->mu);
        jit_compile(j);
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
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
    for (int i = 0; i < threads; i++) pthread_create(&p->threads[i], NULL, serve, p);
    return p;
}

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
    free(p->queue);
    free(p);
}

void jit_submit(jit_pool *p, jit_job *j)
{
    pthread_mutex_lock(&p->mu);
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
    p->queue[p->tail++ % p->cap] = j;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void jit_pool_cancel(jit_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->head != p->tail) {
        jit_job *j = p->queue[p->head++ % p->cap];
        j->ok = 0;
        j->error = xstrdup("cancelled");
        __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    }
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

void jit_wait(jit_pool *p, jit_job *j)
{
    pthread_mutex_lock(&p->mu);
    while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
