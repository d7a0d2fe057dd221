/*
** fake_worker: plays `aitune __worker` over stdin/stdout (proto.h) without a
** GPU, so that the worker's process management and a whole sweep can be
** tested on any machine. Selected with AITUNE_WORKER=build/tests/fake_worker.
**
** Environment:
**   FAKE_MODE   comma-separated faults (default "ok"):
**     crash_verify:K   the K-th verify request: exit(1) without replying
**     hang_verify:K    the K-th verify request: never answer (sleeps, then
**                      gives up after FAKE_HANG_S seconds, default 30, so a
**                      leaked process cleans itself up)
**     segv_verify:K    the K-th verify request: raise SIGSEGV
**     wrong_verify:K   the K-th verify request: status=wrong
**     sticky_verify:K  the K-th verify request: status=error sticky=1, exit 3
**     lie              time replies are garbage (t0=abc) or lack the keys
**     nogpu            hello answers status=error "cuInit failed: no GPU"
**     slow_time:MS     sleep MS milliseconds in each time request
**     shape_time       a kernel's time depends on the task's shape too, so
**                      rankings differ between shapes of one bucket
**     flip_at:N        rankings flip at size N of dim flip_dim (default 0):
**                      below it times as in "ok", from N on each kernel's
**                      time is 120 us minus that, so the fastest is slowest
**     flip_at:N1/N2/.. rankings flip at each size listed (ascending): as
**                      "ok" below N1, flipped in [N1, N2), as "ok" again in
**                      [N2, N3), ...: a part whose corners lie on both sides
**                      of a flip has no config that holds it
**     flip_dim:D       the dim flip_at (and late) looks at
**     flip2_at:M1/..   sizes of dim flip2_dim (default 1) where rankings
**                      flip too: a kernel's time is flipped where an odd
**                      number of the sizes of both lists lie at or below
**                      the task's shape
**     late:N           a third of the kernels (their names' hash 0 mod 3)
**                      are the slowest below size N of flip_dim (200 us
**                      more) and the fastest from N on (a twentieth of
**                      their time in "ok", whatever the shape): a search
**                      below N keeps none of them as finalists, one from N
**                      on finds them
**     ace:M            kernels whose names' hash is 1 mod M (a few of
**                      them, for M well above 3) take 9 us at every size:
**                      faster than any other ("ok" times are 10 us and
**                      more), so a search that draws one keeps it, and one
**                      that does not (a capped search) misses it
**   K counts verify requests across restarts (1-based); K=0 means every one.
**   FAKE_GPU_NAME, FAKE_UUID, FAKE_SMS, FAKE_DRIVER, FAKE_NVRTC: what hello
**               reports instead of the Fake GPU's facts (another GPU, an
**               upgraded driver or NVRTC).
**   FAKE_GPUS   how many GPUs the fake host has (default 1): hello reports
**               the count, and GPU i (the ordinal hello carries) answers with
**               uuid GPU-fake-000i; an ordinal past the count is refused as
**               the real worker refuses it.
**   FAKE_GPU_NAME_<i>  GPU i's name (a host with two GPU models).
**   FAKE_STATE  a file that keeps the verify count across restarts; the pid
**               of the running fake is written to FAKE_STATE.pid, and each
**               request is appended to FAKE_STATE.log as "pid cmd gpu=I",
**               time requests with the task's shape and dtype (its first
**               argument's): "pid time gpu=I task=4096,1024/f32".
**
** Whatever the mode, a verify or time request before any task was set up in
** this process is answered status=error, so tests can see that the parent
** replays support and task after a restart.
**
** Task and load requests must carry a launch plan (plan.h) that decodes and
** binds at the task's shape, as the real worker's would: a plan the parent
** encodes wrongly fails here too. Tensor maps are bound with a fake encoder.
*/
#define _GNU_SOURCE
#include "plan.h"
#include "proto.h"
#include "util.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXSLOTS 16

static char slot_name[MAXSLOTS][64];
static const char *state_path;
static int have_support, have_task;

/* The mode's value for fault `name` ("crash_verify"): -1 if absent. */
static long mode_arg(const char *mode, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = mode; p && *p;) {
        if (!strncmp(p, name, n) && (p[n] == ':' || p[n] == ',' || p[n] == 0))
            return p[n] == ':' ? strtol(p + n + 1, NULL, 10) : 0;
        p = strchr(p, ',');
        if (p) p++;
    }
    return -1;
}

static long bump_verify_count(void)
{
    static long local;
    if (!state_path) return ++local;
    long n = 0;
    FILE *f = fopen(state_path, "r");
    if (f) {
        if (fscanf(f, "%ld", &n) != 1) n = 0;
        fclose(f);
    }
    n++;
    f = fopen(state_path, "w");
    if (f) {
        fprintf(f, "%ld\n", n);
        fclose(f);
    }
    return n;
}

static int gpu;                 /* the ordinal hello gave */
static char task_shape_text[128];

static void note(const char *what)
{
    if (!state_path) return;
    char path[600];
    snprintf(path, sizeof path, "%s.log", state_path);
    FILE *f = fopen(path, "a");
    if (f) {
        if (!strcmp(what, "time")) fprintf(f, "%d %s gpu=%d task=%s\n", (int)getpid(), what, gpu, task_shape_text);
        else fprintf(f, "%d %s gpu=%d\n", (int)getpid(), what, gpu);
        fclose(f);
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
}

static void reply(int fd, const char *status, const char *err)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "status", "%s", status);
    if (err) msg_kv(&h, "error", "%s", err);
    msg_send(fd, &h, NULL, 0);
    sb_free(&h);
}

static long long task_shape[PLAN_MAXDIMS];
static int task_ndims;

static CUresult fake_encode(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                            const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                            CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)dt, (void)strides, (void)es, (void)il, (void)sw, (void)l2, (void)oob;
    memset(m, 0, sizeof *m);
    unsigned long long v[3] = { (unsigned long long)(uintptr_t)addr, dims[0], (unsigned long long)rank * 1000 + box[0] };
    memcpy(m, v, sizeof v);
    return CUDA_SUCCESS;
}

/* Decode and bind the request's plan with fake buffers: 0, or -1 with err. */
static int check_plan(const msg *m, char *err, int errcap)
{
    plan *p;
    if (!msg_get(m, "plan")) { snprintf(err, (size_t)errcap, "fake: no launch plan"); return -1; }
    if (plan_decode(msg_get(m, "plan"), &p, err, errcap)) return -1;
    int rc = 0;
    if (p->ndims != task_ndims) {
        snprintf(err, (size_t)errcap, "fake: the plan has %d dims, the task %d", p->ndims, task_ndims);
        rc = -1;
    }
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < PLAN_MAXARGS; i++) { v[i].ptr = 0x100000ULL * (unsigned)(i + 1); v[i].f32 = 1; }
    plan_launch L;
    if (!rc && plan_bind(p, task_shape, v, 0x7000000ULL, fake_encode, &L, err, errcap)) rc = -1;
    plan_free(p);
    return rc;
}

/* How many of the sizes a flip list ("flip_at:N1/N2/...", key "flip_at:")
** gives are at or below v. */
static int flips_below(const char *mode, const char *key, long long v)
{
    int n = 0;
    size_t len = strlen(key);
    for (const char *p = strstr(mode, key); p && *p && *p != ',';) {
        const char *q = p + (p[0] == '/' ? 1 : len);
        char *end;
        long long at = strtoll(q, &end, 10);
        if (end == q) break;
        n += at > 0 && v >= at;
        p = end;
    }
    return n;
}

/* Is the count the K-th of fault `name`? */
static int hits(const char *mode, const char *name, long count)
{
    long k = mode_arg(mode, name);
    return k == 0 || (k > 0 && k == count);
}

int main(void)
{
    const char *mode = getenv("FAKE_MODE");
    if (!mode || !*mode) mode = "ok";
    state_path = getenv("FAKE_STATE");
    if (state_path && !*state_path) state_path = NULL;
    if (state_path) {
        char path[600];
        snprintf(path, sizeof path, "%s.pid", state_path);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
    }
    long hang_s = getenv("FAKE_HANG_S") ? strtol(getenv("FAKE_HANG_S"), NULL, 10) : 30;
    int out = 1;
    conn in = { 0, STRBUF_INIT };
    long times = 0;
    for (;;) {
        msg m;
        if (msg_read(&in, &m, -1)) break;
        const char *cmd = msg_get(&m, "cmd") ? msg_get(&m, "cmd") : "";
        if (!strcmp(cmd, "hello")) gpu = (int)msg_int(&m, "gpu", 0);
        note(cmd);
        strbuf h = STRBUF_INIT;
        if (!strcmp(cmd, "quit")) {
            msg_free(&m);
            break;
        } else if (!strcmp(cmd, "hello")) {
            long ngpus = getenv("FAKE_GPUS") ? strtol(getenv("FAKE_GPUS"), NULL, 10) : 1;
            char name_var[32], uuid[32], none[64];
            snprintf(name_var, sizeof name_var, "FAKE_GPU_NAME_%d", gpu);
            snprintf(uuid, sizeof uuid, "GPU-fake-%04d", gpu);
            const char *name = getenv(name_var) ? getenv(name_var) : getenv("FAKE_GPU_NAME") ? getenv("FAKE_GPU_NAME") : "Fake GPU";
            if (mode_arg(mode, "nogpu") >= 0) {
                reply(out, "error", "cuInit failed: no GPU");
            } else if (gpu < 0 || gpu >= ngpus) {
                snprintf(none, sizeof none, "no GPU %d (this machine has %ld)", gpu, ngpus);
                reply(out, "error", none);
            } else {
                msg_kv(&h, "status", "ok");
                msg_kv(&h, "name", "%s", name);
                msg_kv(&h, "uuid", "%s", getenv("FAKE_UUID") ? getenv("FAKE_UUID") : uuid);
                msg_kv(&h, "cc", "90");
                msg_kv(&h, "sms", "%s", getenv("FAKE_SMS") ? getenv("FAKE_SMS") : "132");
                msg_kv(&h, "mem", "85899345920");
                msg_kv(&h, "l2", "52428800");
                msg_kv(&h, "smem_optin", "232448");
                msg_kv(&h, "smem_per_sm", "233472");
                msg_kv(&h, "regs_per_sm", "65536");
                msg_kv(&h, "max_threads_per_sm", "2048");
                msg_kv(&h, "clock_khz", "1980000");
                msg_kv(&h, "mem_clock_khz", "2619000");
                msg_kv(&h, "driver", "%s", getenv("FAKE_DRIVER") ? getenv("FAKE_DRIVER") : "fake");
                msg_kv(&h, "cuda_driver", "13000");
                msg_kv(&h, "nvrtc", "%s", getenv("FAKE_NVRTC") ? getenv("FAKE_NVRTC") : "13.0");
                msg_kv(&h, "count", "%ld", ngpus);
                msg_kv(&h, "env", "{\"fake\":true}");
                msg_send(out, &h, NULL, 0);
            }
        } else if (!strcmp(cmd, "support")) {
            have_support = m.blob_len > 0;
            reply(out, have_support ? "ok" : "error", have_support ? NULL : "fake: support without a cubin");
        } else if (!strcmp(cmd, "task")) {
            char err[512];
            task_ndims = 0;
            /* The bucket, as a log reader tells them apart: shape and dtype (arg0's). */
            char dt[16] = "-";
            if (msg_get(&m, "arg0")) sscanf(msg_get(&m, "arg0"), "%*s %*s %15s", dt);
            /* ... and how it is timed (stream timing only is named). */
            const char *timing = msg_get(&m, "timing");
            snprintf(task_shape_text, sizeof task_shape_text, "%s/%s%s", msg_get(&m, "shape") ? msg_get(&m, "shape") : "", dt,
                     timing && !strcmp(timing, "stream") ? " timing=stream" : "");
            for (const char *q = msg_get(&m, "shape"); q && *q && task_ndims < PLAN_MAXDIMS;) {
                char *end;
                task_shape[task_ndims++] = strtoll(q, &end, 10);
                q = *end == ',' ? end + 1 : end + (*end != 0);
            }
            if (check_plan(&m, err, sizeof err)) {
                reply(out, "error", err);
            } else {
                have_task = 1;
                reply(out, "ok", NULL);
            }
        } else if (!strcmp(cmd, "load")) {
            long slot = msg_int(&m, "slot", -1);
            char err[512];
            if (slot < 0 || slot >= MAXSLOTS || !msg_get(&m, "name")) {
                reply(out, "error", "fake: bad load");
            } else if (check_plan(&m, err, sizeof err)) {
                reply(out, "error", err);
            } else {
                snprintf(slot_name[slot], sizeof slot_name[slot], "%s", msg_get(&m, "name"));
                reply(out, "ok", NULL);
            }
        } else if (!strcmp(cmd, "unload")) {
            long slot = msg_int(&m, "slot", -1);
            if (slot >= 0 && slot < MAXSLOTS) slot_name[slot][0] = 0;
            reply(out, "ok", NULL);
        } else if (!strcmp(cmd, "verify")) {
            long k = bump_verify_count();
            long slot = msg_int(&m, "slot", -1);
            if (!have_task || !have_support) {
                reply(out, "error", "fake: verify without support and task set up since start");
            } else if (slot < 0 || slot >= MAXSLOTS || !slot_name[slot][0]) {
                reply(out, "error", "fake: verify of an empty slot");
            } else if (hits(mode, "crash_verify", k)) {
                exit(1);
            } else if (hits(mode, "hang_verify", k)) {
                for (long i = 0; i < hang_s * 10; i++) sleep_ms(100);
                exit(4);
            } else if (hits(mode, "segv_verify", k)) {
                signal(SIGSEGV, SIG_DFL);
                raise(SIGSEGV);
            } else if (hits(mode, "wrong_verify", k)) {
                reply(out, "wrong", "fake: 12 of 64 elements differ (max rel err 0.5)");
            } else if (hits(mode, "sticky_verify", k)) {
                msg_kv(&h, "status", "error");
                msg_kv(&h, "error", "fake: CUDA_ERROR_ILLEGAL_ADDRESS");
                msg_kv(&h, "sticky", "1");
                msg_send(out, &h, NULL, 0);
                sb_free(&h);
                msg_free(&m);
                exit(3);
            } else {
                reply(out, "ok", NULL);
            }
        } else if (!strcmp(cmd, "time")) {
            long ms = mode_arg(mode, "slow_time");
            if (ms > 0) sleep_ms(ms);
            times++;
            if (!have_task || !have_support) {
                reply(out, "error", "fake: time without support and task set up since start");
            } else if (mode_arg(mode, "lie") >= 0) {
                msg_kv(&h, "status", "ok");
                if (times % 2) msg_kv(&h, "t0", "abc");
                msg_send(out, &h, NULL, 0);
            } else {
                msg_kv(&h, "status", "ok");
                const char *s = msg_get(&m, "slots") ? msg_get(&m, "slots") : "0";
                if (strchr(s, ',')) note("race");   /* several slots timed interleaved */
                for (int i = 0; s && *s && i < MAXSLOTS; i++) {
                    int slot = atoi(s);
                    const char *name = slot >= 0 && slot < MAXSLOTS ? slot_name[slot] : "";
                    uint64_t hv = hash_str(HASH_INIT, name);
                    if (mode_arg(mode, "shape_time") >= 0) hv = hash_str(hv, task_shape_text);
                    double med = 10 + (double)(hv % 1000) / 10.0;
                    long flip = mode_arg(mode, "flip_at"), fd = mode_arg(mode, "flip_dim");
                    long flip2 = mode_arg(mode, "flip2_at"), fd2 = mode_arg(mode, "flip2_dim");
                    if (fd < 0) fd = 0;
                    if (fd2 < 0) fd2 = 1;
                    int flips = flip > 0 && fd < task_ndims ? flips_below(mode, "flip_at:", task_shape[fd]) : 0;
                    if (flip2 > 0 && fd2 < task_ndims) flips += flips_below(mode, "flip2_at:", task_shape[fd2]);
                    if (flips % 2) med = 120 - med;
                    long late = mode_arg(mode, "late");
                    uint64_t own = hash_str(HASH_INIT, name);
                    if (late > 0 && fd < task_ndims && own % 3 == 0)
                        med = task_shape[fd] >= late ? (10 + (double)(own % 1000) / 10.0) / 20 : med + 200;
                    long ace = mode_arg(mode, "ace");
                    if (ace > 1 && own % (uint64_t)ace == 1) med = 9;
                    char key[16];
                    snprintf(key, sizeof key, "t%d", i);
                    msg_kv(&h, key, "%.4f %.4f %.4f %.5f %d", med, med * 0.98, med * 1.05, 0.01, 20);
                    s = strchr(s, ',');
                    if (s) s++;
                }
                msg_send(out, &h, NULL, 0);
            }
        } else if (!strcmp(cmd, "copy")) {
            msg_kv(&h, "status", "ok");
            msg_kv(&h, "gbps", "3000.0");
            msg_send(out, &h, NULL, 0);
        } else {
            char e[128];
            snprintf(e, sizeof e, "unknown command '%s'", cmd);
            reply(out, "error", e);
        }
        sb_free(&h);
        msg_free(&m);
    }
    sb_free(&in.in);
    return 0;
}
