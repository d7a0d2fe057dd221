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
**     novendor         vendor requests answer status=error (no cuBLASLt)
**     vendor_wrong     verify of a vendor slot answers status=wrong
**     ace:M            kernels whose names' hash is 1 mod M (a few of
**                      them, for M well above 3) take 9 us at every size:
**                      faster than any other ("ok" times are 10 us and
**                      more), so a search that draws one keeps it, and one
**                      that does not (a capped search) misses it
**   K counts verify requests across restarts (1-based); K=0 means every one.
**   FAKE_GPU_NAME, FAKE_UUID, FAKE_SMS, FAKE_DRIVER, FAKE_NVRTC: what hello
**               reports instead of the Fake GPU's facts (another GPU, an
**               upgraded driver or NVRTC).
**   FAKE_VENDOR_US  the vendor's time (a vendor slot, cmd=vendor), default
**               1000 us (slower than any kernel of any mode, so sweeps of
**               GEMM ops keep their template winners): "US", or entries
**               "US@N" (from size N of flip_dim on), comma separated, the
**               last that applies winning: "50,5@64" is 50 us below 64, 5
**               from 64 on. Deterministic, so CLI tests can make the vendor
**               lose everywhere, win everywhere, or win part of a range.
**   FAKE_VENDOR_ALONE_US  the vendor's time where it is timed alone (one
**               slot), in FAKE_VENDOR_US's form; raced beside other slots it
**               takes FAKE_VENDOR_US's (a GPU whose state between timing
**               windows moves a time: the sweep's bars are raced).
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
#include "util.h"
#include "wire.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXSLOTS WIRE_SLOTS

static char slot_name[MAXSLOTS][64];
#define VENDOR_NAME "vendor/cublaslt"   /* a vendor slot's name (vendor.h: VENDOR_TEMPLATE) */
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

static void reply(int fd, int status, const char *err)
{
    strbuf h = STRBUF_INIT;
    wire_put_reply(&h, status, err, 0);
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

/* Decode and bind a request's plan with fake buffers: 0, or -1 with err. */
static int check_plan(const char *text, char *err, int errcap)
{
    plan *p;
    if (!text) { snprintf(err, (size_t)errcap, "fake: no launch plan"); return -1; }
    if (plan_decode(text, &p, err, errcap)) return -1;
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

static const char *mode;
static int out = 1;

/* hello: the fake host's GPU at ordinal gpu, or a refusal. */
static void do_hello(void)
{
    long ngpus = getenv("FAKE_GPUS") ? strtol(getenv("FAKE_GPUS"), NULL, 10) : 1;
    char name_var[32], uuid[32], none[64];
    snprintf(name_var, sizeof name_var, "FAKE_GPU_NAME_%d", gpu);
    snprintf(uuid, sizeof uuid, "GPU-fake-%04d", gpu);
    const char *name = getenv(name_var) ? getenv(name_var) : getenv("FAKE_GPU_NAME") ? getenv("FAKE_GPU_NAME") : "Fake GPU";
    if (mode_arg(mode, "nogpu") >= 0) {
        reply(out, WIRE_ERROR, "cuInit failed: no GPU");
        return;
    }
    if (gpu < 0 || gpu >= ngpus) {
        snprintf(none, sizeof none, "no GPU %d (this machine has %ld)", gpu, ngpus);
        reply(out, WIRE_ERROR, none);
        return;
    }
    device d = { .cc = 90, .mem = 85899345920LL, .l2 = 52428800, .smem_optin = 232448, .smem_per_sm = 233472,
                 .regs_per_sm = 65536, .max_threads_per_sm = 2048, .clock_khz = 1980000, .mem_clock_khz = 2619000,
                 .cuda_driver = 13000, .count = (int)ngpus };
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.uuid, sizeof d.uuid, "%s", getenv("FAKE_UUID") ? getenv("FAKE_UUID") : uuid);
    d.sms = getenv("FAKE_SMS") ? atoi(getenv("FAKE_SMS")) : 132;
    snprintf(d.driver, sizeof d.driver, "%s", getenv("FAKE_DRIVER") ? getenv("FAKE_DRIVER") : "fake");
    snprintf(d.nvrtc, sizeof d.nvrtc, "%s", getenv("FAKE_NVRTC") ? getenv("FAKE_NVRTC") : "13.0");
    strbuf h = STRBUF_INIT;
    wire_put_device(&h, &d, "{\"fake\":true}");
    msg_send(out, &h, NULL, 0);
    sb_free(&h);
}

/* task: read as the real worker reads it; its plan must bind. */
static void do_task(const msg *m)
{
    char err[512];
    wire_task t;
    task_ndims = 0;
    if (wire_get_task(m, &t, err, sizeof err)) {
        reply(out, WIRE_ERROR, err);
        return;
    }
    /* The bucket, as a log reader tells them apart: shape, dtype (the first
    ** argument's) and how it is timed (a chained timing only is named). */
    strbuf shape = STRBUF_INIT;
    for (int d = 0; d < t.ndims; d++) sb_printf(&shape, "%s%lld", d ? "," : "", t.shape[d]);
    snprintf(task_shape_text, sizeof task_shape_text, "%s/%s%s%s", sb_str(&shape), t.args[0].dtype[0] ? t.args[0].dtype : "-",
             t.stream ? " timing=" : "", t.stream ? timing_name(t.stream) : "");
    sb_free(&shape);
    task_ndims = t.ndims;
    memcpy(task_shape, t.shape, sizeof *task_shape * (size_t)t.ndims);
    if (check_plan(t.plan, err, sizeof err)) {
        reply(out, WIRE_ERROR, err);
    } else {
        have_task = 1;
        reply(out, WIRE_OK, NULL);
    }
}

static void do_load(const msg *m)
{
    wire_load l;
    wire_get_load(m, &l);
    char err[512];
    if (l.slot < 0 || l.slot >= MAXSLOTS || !l.name) {
        reply(out, WIRE_ERROR, "fake: bad load");
    } else if (check_plan(l.plan, err, sizeof err)) {
        reply(out, WIRE_ERROR, err);
    } else {
        snprintf(slot_name[l.slot], sizeof slot_name[l.slot], "%s", l.name);
        reply(out, WIRE_OK, NULL);
    }
}

/* vendor: the vendor's product into a slot, for a GEMM task. */
static void do_vendor(const msg *m)
{
    wire_vendor v;
    wire_get_vendor(m, &v);
    if (!have_task) {
        reply(out, WIRE_ERROR, "fake: vendor without a task set up since start");
    } else if (v.slot < 0 || v.slot >= MAXSLOTS || !v.op || !v.dtype || strncmp(v.op, "gemm_", 5) || task_ndims != 3) {
        reply(out, WIRE_ERROR, "fake: bad vendor request");
    } else if (mode_arg(mode, "novendor") >= 0) {
        reply(out, WIRE_ERROR, "cannot open cuBLASLt (tried libcublasLt.so.13: fake): install the CUDA toolkit's cuBLAS");
    } else {
        snprintf(slot_name[v.slot], sizeof slot_name[v.slot], "%s", VENDOR_NAME);
        strbuf h = STRBUF_INIT;
        wire_put_vendor_ok(&h, "cuBLASLt fake", "algo 0 tile 0 stages 0 splitk 1 ws 0");
        msg_send(out, &h, NULL, 0);
        sb_free(&h);
    }
}

/* The vendor's time at size v of flip_dim (FAKE_VENDOR_US; alone: timed
** in one slot, FAKE_VENDOR_ALONE_US where it is set). */
static double vendor_us(long long v, int alone)
{
    const char *e = alone && getenv("FAKE_VENDOR_ALONE_US") ? getenv("FAKE_VENDOR_ALONE_US") : getenv("FAKE_VENDOR_US");
    double us = 1000;
    for (const char *p = e; p && *p;) {
        char *end;
        double t = strtod(p, &end);
        if (end == p) break;
        long long from = 0;
        if (*end == '@') from = strtoll(end + 1, &end, 10);
        if (v >= from) us = t;
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return us;
}

/* verify: the faults of FAKE_MODE, counted across restarts. */
static void do_verify(const msg *m, long hang_s)
{
    long k = bump_verify_count();
    int slot = wire_get_slot(m);
    if (!have_task || !have_support) {
        reply(out, WIRE_ERROR, "fake: verify without support and task set up since start");
    } else if (slot < 0 || slot >= MAXSLOTS || !slot_name[slot][0]) {
        reply(out, WIRE_ERROR, "fake: verify of an empty slot");
    } else if (hits(mode, "crash_verify", k)) {
        exit(1);
    } else if (hits(mode, "hang_verify", k)) {
        for (long i = 0; i < hang_s * 10; i++) sleep_ms(100);
        exit(4);
    } else if (hits(mode, "segv_verify", k)) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    } else if (!strcmp(slot_name[slot], VENDOR_NAME) && mode_arg(mode, "vendor_wrong") >= 0) {
        reply(out, WIRE_WRONG, "fake: the vendor's D: 3 of 64 elements differ");
    } else if (hits(mode, "wrong_verify", k)) {
        reply(out, WIRE_WRONG, "fake: 12 of 64 elements differ (max rel err 0.5)");
    } else if (hits(mode, "sticky_verify", k)) {
        strbuf h = STRBUF_INIT;
        wire_put_reply(&h, WIRE_ERROR, "fake: CUDA_ERROR_ILLEGAL_ADDRESS", 1);
        msg_send(out, &h, NULL, 0);
        exit(3);
    } else {
        reply(out, WIRE_OK, NULL);
    }
}

/* A kernel's time: a hash of its name (and, with shape_time, the task's
** shape), changed by the modes that flip rankings across sizes. */
static double fake_time(const char *name, int alone)
{
    if (!strcmp(name, VENDOR_NAME)) {
        long fd = mode_arg(mode, "flip_dim");
        if (fd < 0) fd = 0;
        return vendor_us(fd < task_ndims ? task_shape[fd] : 0, alone);
    }
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
    return med;
}

static void do_time(const msg *m, long times)
{
    long ms = mode_arg(mode, "slow_time");
    if (ms > 0) sleep_ms(ms);
    strbuf h = STRBUF_INIT;
    wire_time q;
    wire_get_time(m, &q);
    if (!have_task || !have_support) {
        reply(out, WIRE_ERROR, "fake: time without support and task set up since start");
    } else if (mode_arg(mode, "lie") >= 0) {
        /* Off the wire on purpose: a time that does not parse, or none. */
        wire_put_reply(&h, WIRE_OK, NULL, 0);
        if (times % 2) msg_kv(&h, "t0", "abc");
        msg_send(out, &h, NULL, 0);
    } else {
        if (q.nslots > 1) note("race");   /* several slots timed interleaved */
        stats st[MAXSLOTS];
        for (int i = 0; i < q.nslots; i++) {
            int slot = q.slots[i];
            double med = fake_time(slot >= 0 && slot < MAXSLOTS ? slot_name[slot] : "", q.nslots == 1);
            st[i] = (stats){ med, med * 0.98, med * 1.05, 0.01, 20 };
        }
        wire_put_times(&h, st, q.nslots);
        msg_send(out, &h, NULL, 0);
    }
    sb_free(&h);
}

int main(void)
{
    mode = getenv("FAKE_MODE");
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
    conn in = { 0, STRBUF_INIT };
    long times = 0;
    for (;;) {
        msg m;
        if (msg_read(&in, &m, -1)) break;
        int cmd = wire_cmd(&m);
        if (cmd == WIRE_HELLO) gpu = wire_get_hello(&m);
        note(wire_cmd_text(&m));
        if (cmd == WIRE_QUIT) {
            msg_free(&m);
            break;
        }
        strbuf h = STRBUF_INIT;
        char e[128];
        switch (cmd) {
        case WIRE_HELLO: do_hello(); break;
        case WIRE_SUPPORT:
            have_support = m.blob_len > 0;
            reply(out, have_support ? WIRE_OK : WIRE_ERROR, have_support ? NULL : "fake: support without a cubin");
            break;
        case WIRE_TASK: do_task(&m); break;
        case WIRE_LOAD: do_load(&m); break;
        case WIRE_VENDOR: do_vendor(&m); break;
        case WIRE_UNLOAD: {
            int slot = wire_get_slot(&m);
            if (slot >= 0 && slot < MAXSLOTS) slot_name[slot][0] = 0;
            reply(out, WIRE_OK, NULL);
            break;
        }
        case WIRE_VERIFY: do_verify(&m, hang_s); break;
        case WIRE_TIME: do_time(&m, ++times); break;
        case WIRE_COPY:
            wire_put_gbps(&h, 3000.0);
            msg_send(out, &h, NULL, 0);
            break;
        default:
            snprintf(e, sizeof e, "unknown command '%s'", wire_cmd_text(&m));
            reply(out, WIRE_ERROR, e);
        }
        sb_free(&h);
        msg_free(&m);
    }
    sb_free(&in.in);
    return 0;
}
