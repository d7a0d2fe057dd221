/* bench.c: see bench.h. */
#define _GNU_SOURCE
#include "bench.h"
#include "cu.h"
#include "jit.h"
#include "json.h"
#include "plan.h"
#include "tmpl.h"
#include "vendor.h"
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1) return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

void stats_of(const double *x, int n, stats *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0) return;
    double *s = xmalloc(sizeof *s * (size_t)n);
    memcpy(s, x, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = quantile(s, n, 0.5);
    out->spread = out->median > 0 ? (quantile(s, n, 0.75) - quantile(s, n, 0.25)) / out->median : 0;
    free(s);
}

int stats_settled(const double *x, int n, int batch, double tol)
{
    if (n <= batch) return 0;
    stats all, before;
    stats_of(x, n, &all);
    stats_of(x, n - batch, &before);
    return fabs(all.median - before.median) <= tol * all.median;
}

int bench_race_done(const int *n, int nslots, int minn, double elapsed, double max_seconds)
{
    if (max_seconds <= 0 || elapsed < max_seconds) return 0;
    for (int i = 0; i < nslots; i++)
        if (n[i] < minn) return 0;
    return 1;
}

/* ---- NVML, for the driver version, clocks and temperature; optional ---- */

typedef struct nvml {
    int (*init)(void);
    int (*driver)(char *, unsigned);
    int (*by_uuid)(const char *, void **);
    int (*temp)(void *, int, unsigned *);
    int (*clock)(void *, int, unsigned *);
    int (*power)(void *, unsigned *);
    void *dev;
} nvml;

static int nvml_open(nvml *n, const char *uuid)
{
    memset(n, 0, sizeof *n);
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return -1;
    n->init = (int (*)(void))dlsym(h, "nvmlInit_v2");
    n->driver = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
    n->by_uuid = (int (*)(const char *, void **))dlsym(h, "nvmlDeviceGetHandleByUUID");
    n->temp = (int (*)(void *, int, unsigned *))dlsym(h, "nvmlDeviceGetTemperature");
    n->clock = (int (*)(void *, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
    n->power = (int (*)(void *, unsigned *))dlsym(h, "nvmlDeviceGetPowerUsage");
    if (!n->init || n->init() != 0) return -1;
    if (n->by_uuid && n->by_uuid(uuid, &n->dev) != 0) n->dev = NULL;
    return 0;
}

/* ---- the engine ---- */

typedef struct buf {
    CUdeviceptr live, pristine, ref;
    CUdeviceptr copy[BENCH_MAXCOPIES];   /* stream timing: an input's copies 1.. (copy 0 is live) */
    size_t bytes;
} buf;

typedef struct slot {
    int used;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr ws;
    size_t ws_bytes, ws_zero;   /* the workspace, and its first bytes zeroed before each run */
    plan_launch L;          /* bound once at load: the task's buffers stay put */
    plan_launch *Lr;        /* stream timing: bound over each input copy (Lr[0] like L) */
    int vendor;             /* the vendor library's product (bench_vendor), not a cubin */
    int vkind;              /* its vendor_kind */
} slot;

struct bench {
    const cu_api *cu;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUevent ev[2 * BENCH_BATCH];
    device info;
    nvml nv;
    int nvml_ok;
    CUmodule support;
    CUfunction flush_fn;
    CUdeviceptr flush, res;
    size_t flush_bytes;
    /* the task */
    int ntask;
    op_arg args[TMPL_MAXARGS];
    buf bufs[TMPL_MAXARGS];
    int ndims;
    long long shape[PLAN_MAXDIMS];
    double rtol, atol;
    int streaming;          /* stream or neighbour timing: a chain over `copies` input copies */
    int neighbour;          /* neighbour timing: another kernel before each launch of the chain */
    double nb_us;           /* neighbour timing: what the neighbour adds to each launch */
    int copies, chain;      /* stream: copies of the inputs; launches per sample */
    slot slots[BENCH_SLOTS];
    vendor *vend;           /* cuBLASLt in this context, opened by the first vendor slot */
    CUdeviceptr vend_ws;    /* its VENDOR_WORKSPACE bytes */
    int va, vb, vd;         /* the task's arguments A, B and D (vendor slots) */
    int sticky;
    char err[1024];
};

static int fail(bench *b, CUresult rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(bench *b, CUresult rc, const char *fmt, ...)
{
    va_list ap;
    char what[512];
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (rc != CUDA_SUCCESS) {
        snprintf(b->err, sizeof b->err, "%s: %s", what, cu_errstr(rc));
        b->sticky |= cu_sticky(rc);
    } else {
        snprintf(b->err, sizeof b->err, "%s", what);
    }
    return BENCH_FAIL;
}

#define CK(call, ...) do { CUresult rc_ = (call); if (rc_ != CUDA_SUCCESS) return fail(b, rc_, __VA_ARGS__); } while (0)

int bench_sticky(const bench *b) { return b->sticky; }
const char *bench_err(const bench *b) { return b->err; }
void bench_device(const bench *b, device *out) { *out = b->info; }

static int attr(bench *b, CUdevice_attribute a)
{
    int v = 0;
    b->cu->DeviceGetAttribute(&v, a, b->dev);
    return v;
}

/* Zeroed memory aligned to align (a power of two): the state and the stream
** bindings hold plan_launch, whose CUtensorMaps cuda.h aligns to 128 bytes,
** more than calloc's 16. NULL when out of memory. */
static void *zalloc_aligned(size_t align, size_t n)
{
    const size_t size = (n + align - 1) / align * align;   /* aligned_alloc wants a multiple */
    void *p = aligned_alloc(align, size ? size : align);
    if (p) memset(p, 0, size);
    return p;
}

bench *bench_open(int ordinal, char *err, int errcap)
{
    const char *why = NULL;
    const cu_api *cu = cu_load(&why);
    if (!cu) { snprintf(err, (size_t)errcap, "%s", why); return NULL; }
    CUresult rc = cu->Init(0);
    if (rc != CUDA_SUCCESS) {
        snprintf(err, (size_t)errcap, "cuInit failed (%s): no usable GPU", cu_errstr(rc));
        return NULL;
    }
    int count = 0;
    cu->DeviceGetCount(&count);
    if (ordinal < 0 || ordinal >= count) {
        snprintf(err, (size_t)errcap, "no GPU %d (this machine has %d)", ordinal, count);
        return NULL;
    }
    bench *b = zalloc_aligned(_Alignof(bench), sizeof *b);
    if (!b) {
        snprintf(err, (size_t)errcap, "out of memory");
        return NULL;
    }
    b->cu = cu;
    device *d = &b->info;
    if ((rc = cu->DeviceGet(&b->dev, ordinal)) || (rc = cu->DevicePrimaryCtxRetain(&b->ctx, b->dev)) ||
        (rc = cu->CtxSetCurrent(b->ctx)) || (rc = cu->StreamCreate(&b->stream, CU_STREAM_NON_BLOCKING))) {
        snprintf(err, (size_t)errcap, "cannot set GPU %d up: %s", ordinal, cu_errstr(rc));
        free(b);
        return NULL;
    }
    for (int i = 0; i < 2 * BENCH_BATCH; i++) cu->EventCreate(&b->ev[i], CU_EVENT_DEFAULT);
    cu->DeviceGetName(d->name, sizeof d->name, b->dev);
    CUuuid u;
    cu->DeviceGetUuid(&u, b->dev);
    const unsigned char *x = (const unsigned char *)u.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
    size_t mem = 0;
    cu->DeviceTotalMem(&mem, b->dev);
    d->mem = (long long)mem;
    d->cc = attr(b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 + attr(b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->sms = attr(b, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->l2 = attr(b, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d->smem_optin = attr(b, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->smem_per_sm = attr(b, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d->regs_per_sm = attr(b, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d->max_threads_per_sm = attr(b, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d->clock_khz = attr(b, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d->mem_clock_khz = attr(b, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    cu->DriverGetVersion(&d->cuda_driver);
    snprintf(d->nvrtc, sizeof d->nvrtc, "%s", jit_nvrtc_version());
    d->real = 1;
    d->count = count;
    b->nvml_ok = nvml_open(&b->nv, d->uuid) == 0;
    if (b->nvml_ok && b->nv.driver) b->nv.driver(d->driver, sizeof d->driver);
    if (!d->driver[0]) snprintf(d->driver, sizeof d->driver, "cuda-%d", d->cuda_driver);
    /* Twice the L2, so a flush leaves none of the previous run's lines. */
    b->flush_bytes = (size_t)(d->l2 > 0 ? 2 * d->l2 : 64 << 20);
    if ((rc = cu->MemAlloc(&b->flush, b->flush_bytes)) || (rc = cu->MemAlloc(&b->res, 16))) {
        snprintf(err, (size_t)errcap, "cannot allocate the L2 flush buffer: %s", cu_errstr(rc));
        bench_close(b);
        return NULL;
    }
    return b;
}

void bench_env(const bench *b, strbuf *json)
{
    const device *d = &b->info;
    jw w = { 0 };
    jw_obj(&w);
    const char *keys[] = { "gpu", "uuid" }, *vals[] = { d->name, d->uuid };
    for (int i = 0; i < 2; i++) {
        jw_key(&w, keys[i]);
        jw_str(&w, vals[i]);
    }
    jw_key(&w, "cc");
    jw_int(&w, d->cc);
    jw_key(&w, "sms");
    jw_int(&w, d->sms);
    jw_key(&w, "driver");
    jw_str(&w, d->driver);
    jw_key(&w, "cuda_driver");
    jw_int(&w, d->cuda_driver);
    jw_key(&w, "nvrtc");
    jw_str(&w, d->nvrtc);
    unsigned v;
    if (b->nvml_ok && b->nv.dev) {
        /* NVML's clocks 1 (SM) and 2 (memory), temperature sensor 0. */
        if (b->nv.clock && !b->nv.clock(b->nv.dev, 1, &v)) jw_key(&w, "sm_clock_mhz"), jw_int(&w, v);
        if (b->nv.clock && !b->nv.clock(b->nv.dev, 2, &v)) jw_key(&w, "mem_clock_mhz"), jw_int(&w, v);
        if (b->nv.temp && !b->nv.temp(b->nv.dev, 0, &v)) jw_key(&w, "temp_c"), jw_int(&w, v);
        if (b->nv.power && !b->nv.power(b->nv.dev, &v)) jw_key(&w, "power_w"), jw_num(&w, v / 1000.0, 1);
    } else {
        jw_key(&w, "nvml");
        jw_bool(&w, 0);
    }
    jw_end(&w);
    sb_puts(json, jw_text(&w));
    jw_free(&w);
}

static void free_task(bench *b)
{
    for (int i = 0; i < b->ntask; i++) {
        buf *x = &b->bufs[i];
        if (x->live) b->cu->MemFree(x->live);
        if (x->pristine) b->cu->MemFree(x->pristine);
        if (x->ref) b->cu->MemFree(x->ref);
        for (int c = 1; c < BENCH_MAXCOPIES; c++)
            if (x->copy[c]) b->cu->MemFree(x->copy[c]);
    }
    memset(b->bufs, 0, sizeof b->bufs);
    b->ntask = 0;
}

void bench_close(bench *b)
{
    if (!b) return;
    for (int i = 0; i < BENCH_SLOTS; i++) bench_unload(b, i);
    free_task(b);
    vendor_close(b->vend);
    if (b->vend_ws) b->cu->MemFree(b->vend_ws);
    if (b->support) b->cu->ModuleUnload(b->support);
    if (b->flush) b->cu->MemFree(b->flush);
    if (b->res) b->cu->MemFree(b->res);
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        if (b->ev[i]) b->cu->EventDestroy(b->ev[i]);
    if (b->stream) b->cu->StreamDestroy(b->stream);
    if (b->ctx) b->cu->DevicePrimaryCtxRelease(b->dev);
    free(b);
}

int bench_support(bench *b, const void *cubin, size_t len)
{
    (void)len;
    if (b->support) return BENCH_OK;
    CK(b->cu->ModuleLoadData(&b->support, cubin), "cannot load the engine's kernels");
    CK(b->cu->ModuleGetFunction(&b->flush_fn, b->support, "flush_l2"), "engine kernel flush_l2");
    CK(b->cu->MemsetD32Async(b->flush, 0x3f800000u, b->flush_bytes / 4, b->stream), "fill the flush buffer");
    return BENCH_OK;
}

static int support_fn(bench *b, const char *name, CUfunction *fn)
{
    if (!b->support) return fail(b, CUDA_SUCCESS, "the engine's kernels are not loaded (cmd=support first)");
    CK(b->cu->ModuleGetFunction(fn, b->support, name), "engine kernel '%s'", name);
    return BENCH_OK;
}

/* A grid-stride launch of an engine kernel. */
static int run_support(bench *b, const char *name, void **params)
{
    CUfunction fn;
    if (support_fn(b, name, &fn)) return BENCH_FAIL;
    unsigned grid = (unsigned)b->info.sms * 8;
    CK(b->cu->LaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, b->stream, params, NULL), "launch %s", name);
    return BENCH_OK;
}

/* The op's arguments as plan values: live buffers (inputs: their copy
** `copy`, 0 being live), or (ref) the reference's view (pristine inputs,
** reference outputs). */
static void values(bench *b, int ref, int copy, plan_value *v)
{
    memset(v, 0, sizeof *v * TMPL_MAXARGS);
    for (int a = 0; a < b->ntask; a++) {
        const op_arg *x = &b->args[a];
        if (x->role == ROLE_SCALAR) v[a].f32 = (float)x->value;
        else if (x->role <= ROLE_INOUT) {
            const buf *B = &b->bufs[a];
            v[a].ptr = ref ? (x->role == ROLE_IN ? B->pristine : B->ref)
                           : x->role == ROLE_IN && copy > 0 ? B->copy[copy] : B->live;
        }
    }
}

/* Decode a request's plan and check it against the task's arguments. */
static int task_plan(bench *b, const char *text, plan **out)
{
    char err[512];
    *out = NULL;
    if (!text) return fail(b, CUDA_SUCCESS, "no launch plan");
    if (plan_decode(text, out, err, sizeof err)) return fail(b, CUDA_SUCCESS, "%s", err);
    plan *p = *out;
    int ok = p->nargs == b->ntask && p->ndims == b->ndims;
    for (int i = 0; ok && i < p->nargs; i++) ok = !strcmp(p->args[i].name, b->args[i].name) && p->args[i].role == b->args[i].role;
    if (!ok) {
        plan_free(p);
        *out = NULL;
        return fail(b, CUDA_SUCCESS, "the launch plan's arguments are not the task's");
    }
    return BENCH_OK;
}

/* Bind p over the task's buffers; a bind error is the candidate's. */
static int bind(bench *b, const plan *p, int ref, int copy, CUdeviceptr ws, plan_launch *L)
{
    plan_value v[TMPL_MAXARGS];
    values(b, ref, copy, v);
    char err[512];
    if (plan_bind(p, b->shape, v, ws, b->cu->TensorMapEncodeTiled, L, err, sizeof err))
        return fail(b, CUDA_SUCCESS, "bind: %s", err);
    return BENCH_OK;
}

/* Past 48 KB of static plus dynamic shared memory a kernel must opt in:
** always allowing the dynamic size is simplest and costs nothing. */
static int allow_smem(bench *b, CUfunction fn, unsigned smem)
{
    if (smem > 0)
        CK(b->cu->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
           "allow %u bytes of shared memory", smem);
    return BENCH_OK;
}

/* Neighbour timing: the kernel launched before each of the chain's
** launches. It reads BENCH_NEIGHBOUR_BYTES (in L2 after the first) on every
** SM, as a model's norm or activation between two GEMMs does, and never
** signals a dependent launch: a kernel with pdl cannot start its weight
** prefetch under it, as it cannot under an Inductor kernel in a graph. */
static int launch_neighbour(bench *b)
{
    long long n16 = BENCH_NEIGHBOUR_BYTES / 16;
    void *p[] = { &b->flush, &n16, &b->res };
    CK(b->cu->LaunchKernel(b->flush_fn, (unsigned)b->info.sms, 1, 1, 256, 1, 1, 0, b->stream, p, NULL), "neighbour");
    return BENCH_OK;
}

/* What the neighbour adds to each launch of a chain: the median over a few
** chains of neighbours alone, per launch (its own time and the gap a
** launch after it waits). Subtracted from each sample. */
static int time_neighbour(bench *b)
{
    double x[5];
    for (int k = 0; k < 5; k++) {
        float ms = 0;
        CK(b->cu->EventRecord(b->ev[0], b->stream), "event");
        for (int i = 0; i < b->chain; i++)
            if (launch_neighbour(b)) return BENCH_FAIL;
        CK(b->cu->EventRecord(b->ev[1], b->stream), "event");
        CK(b->cu->EventSynchronize(b->ev[1]), "the neighbour kernel failed");
        CK(b->cu->EventElapsedTime(&ms, b->ev[0], b->ev[1]), "elapsed time");
        x[k] = ms * 1e3 / b->chain;
    }
    stats s;
    stats_of(x, 5, &s);
    b->nb_us = s.median;
    return BENCH_OK;
}

int bench_task(bench *b, const wire_task *t, const void *blob, size_t len)
{
    (void)len;
    for (int i = 0; i < BENCH_SLOTS; i++) bench_unload(b, i);
    free_task(b);
    int n = t->nargs;
    unsigned long long seed = t->seed;
    b->rtol = t->rtol;
    b->atol = t->atol;
    b->streaming = t->stream != TIMING_FLUSH_ID;
    b->neighbour = t->stream == TIMING_NEIGHBOUR_ID;
    b->nb_us = 0;
    b->copies = 1;
    b->ndims = t->ndims;
    memcpy(b->shape, t->shape, sizeof *b->shape * (size_t)t->ndims);
    size_t need = 0;
    for (int i = 0; i < n; i++) {
        b->args[i] = t->args[i];
        if (b->args[i].role <= ROLE_INOUT) need += 3 * (size_t)b->args[i].count * (size_t)b->args[i].esize;
    }
    /* Stream timing: enough copies of the inputs that the one a launch reads
    ** was last read two L2s of traffic ago. */
    size_t in_bytes = 0;
    for (int i = 0; i < n; i++)
        if (b->args[i].role == ROLE_IN) in_bytes += (size_t)b->args[i].count * (size_t)b->args[i].esize;
    if (b->streaming && in_bytes) {
        size_t c = b->flush_bytes / in_bytes + 2;
        b->copies = (int)(c > BENCH_MAXCOPIES ? BENCH_MAXCOPIES : c);
        need += (size_t)(b->copies - 1) * in_bytes;
    }
    b->chain = b->copies * ((BENCH_CHAIN + b->copies - 1) / b->copies);
    size_t freeb = 0, total = 0;
    b->cu->MemGetInfo(&freeb, &total);
    if (need > freeb)
        return fail(b, CUDA_SUCCESS, "task needs %.1f GB of GPU memory; %.1f GB are free", need / 1e9, freeb / 1e9);
    b->ntask = n;
    for (int i = 0; i < n; i++) {
        op_arg *a = &b->args[i];
        if (a->role > ROLE_INOUT) continue;
        buf *B = &b->bufs[i];
        B->bytes = (size_t)a->count * (size_t)a->esize;
        CK(b->cu->MemAlloc(&B->live, B->bytes), "allocate %s (%zu bytes)", a->name, B->bytes);
        if (a->role != ROLE_OUT) {
            CK(b->cu->MemAlloc(&B->pristine, B->bytes), "allocate %s", a->name);
            char fill[32];
            snprintf(fill, sizeof fill, "fill_%s", a->dtype);
            unsigned long long s = seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)i;
            long long cnt = a->count;
            int kind = a->init;
            void *p[] = { &B->pristine, &cnt, &s, &kind };
            if (run_support(b, fill, p)) return BENCH_FAIL;
            CK(b->cu->MemcpyDtoDAsync(B->live, B->pristine, B->bytes, b->stream), "copy %s", a->name);
            for (int c = 1; a->role == ROLE_IN && c < b->copies; c++) {
                CK(b->cu->MemAlloc(&B->copy[c], B->bytes), "allocate copy %d of %s", c, a->name);
                CK(b->cu->MemcpyDtoDAsync(B->copy[c], B->pristine, B->bytes, b->stream), "copy %s", a->name);
            }
        }
        if (a->role != ROLE_IN) {
            CK(b->cu->MemAlloc(&B->ref, B->bytes), "allocate reference %s", a->name);
            if (a->role == ROLE_INOUT)
                CK(b->cu->MemcpyDtoDAsync(B->ref, B->pristine, B->bytes, b->stream), "copy %s", a->name);
            else
                CK(b->cu->MemsetD8Async(B->ref, 0xFF, B->bytes, b->stream), "poison reference %s", a->name);
        }
    }
    /* The reference writes the ref buffers once. */
    if (!blob) return fail(b, CUDA_SUCCESS, "task: no reference cubin");
    CUmodule mod;
    CUfunction fn;
    CK(b->cu->ModuleLoadData(&mod, blob), "load the reference");
    CUresult rc = b->cu->ModuleGetFunction(&fn, mod, t->name[0] ? t->name : "reference");
    if (rc) { b->cu->ModuleUnload(mod); return fail(b, rc, "reference entry"); }
    plan *p;
    plan_launch L;
    int st = task_plan(b, t->plan, &p);
    if (!st) st = bind(b, p, 1, 0, 0, &L);
    if (!st && t->name[0] && strcmp(p->kernel, t->name))
        st = fail(b, CUDA_SUCCESS, "the reference's plan names kernel '%s'", p->kernel);
    if (!st) st = allow_smem(b, fn, L.g.smem);
    if (!st && (rc = plan_launch_kernel(b->cu->LaunchKernel, b->cu->LaunchKernelEx, fn, b->stream, &L)))
        st = fail(b, rc, "launch the reference");
    if (!st && (rc = b->cu->StreamSynchronize(b->stream))) st = fail(b, rc, "the reference kernel failed");
    plan_free(p);
    b->cu->ModuleUnload(mod);
    if (!st && b->neighbour) st = time_neighbour(b);
    return st;
}

int bench_load(bench *b, const wire_load *l, const void *blob, size_t len)
{
    (void)len;
    int k = l->slot;
    if (k < 0 || k >= BENCH_SLOTS) return fail(b, CUDA_SUCCESS, "load: bad slot");
    if (!blob) return fail(b, CUDA_SUCCESS, "load: no cubin");
    bench_unload(b, k);
    slot *s = &b->slots[k];
    CK(b->cu->ModuleLoadData(&s->mod, blob), "load the cubin");
    s->used = 1;
    plan *p;
    if (task_plan(b, l->plan, &p)) return BENCH_FAIL;
    CUresult rc = b->cu->ModuleGetFunction(&s->fn, s->mod, p->kernel);
    int st = rc ? fail(b, rc, "find kernel '%s'", p->kernel) : BENCH_OK;
    char err[512];
    if (!st && plan_geometry(p, b->shape, &s->L.g, err, sizeof err)) st = fail(b, CUDA_SUCCESS, "%s", err);
    if (!st) st = allow_smem(b, s->fn, s->L.g.smem);
    s->ws_bytes = (size_t)s->L.g.ws_bytes;
    s->ws_zero = (size_t)s->L.g.ws_zero;
    if (!st && s->ws_bytes && (rc = b->cu->MemAlloc(&s->ws, s->ws_bytes)))
        st = fail(b, rc, "allocate the workspace (%zu bytes)", s->ws_bytes);
    if (!st) st = bind(b, p, 0, 0, s->ws, &s->L);
    if (!st && b->streaming) {
        s->Lr = zalloc_aligned(_Alignof(plan_launch), (size_t)b->copies * sizeof *s->Lr);
        if (!s->Lr) st = fail(b, CUDA_SUCCESS, "out of memory");
        for (int c = 0; c < b->copies && !st; c++) st = bind(b, p, 0, c, s->ws, &s->Lr[c]);
    }
    plan_free(p);
    return st;
}

/* The task's argument named name with role role, or -1. */
static int task_arg(const bench *b, const char *name, int role)
{
    for (int i = 0; i < b->ntask; i++)
        if (!strcmp(b->args[i].name, name) && b->args[i].role == role) return i;
    return -1;
}

int bench_vendor(bench *b, const wire_vendor *v, char *desc, int desccap)
{
    int k = v->slot;
    if (k < 0 || k >= BENCH_SLOTS) return fail(b, CUDA_SUCCESS, "vendor: bad slot");
    const char *op = v->op, *dtype = v->dtype;
    int kind = vendor_kind(op, dtype);
    if (kind < 0)
        return fail(b, CUDA_SUCCESS, "vendor: cuBLASLt serves no %s %s here", op ? op : "(no op)", dtype ? dtype : "(no dtype)");
    if (!b->ntask) return fail(b, CUDA_SUCCESS, "vendor: no task (cmd=task first)");
    /* The GEMM ops' arguments (templates/lib/gemm.lua), their types the
    ** dtype's: the vendor reads the task's buffers as the dtype says. */
    b->va = task_arg(b, "A", ROLE_IN);
    b->vb = task_arg(b, "B", ROLE_IN);
    b->vd = task_arg(b, "D", ROLE_OUT);
    char in[8], out[8];
    const char *gt = strchr(dtype, '>');
    snprintf(in, sizeof in, "%.*s", gt ? (int)(gt - dtype) : (int)strlen(dtype), dtype);
    snprintf(out, sizeof out, "%s", gt ? gt + 1 : dtype);
    if (b->ndims != 3 || b->va < 0 || b->vb < 0 || b->vd < 0 || strcmp(b->args[b->va].dtype, in) ||
        strcmp(b->args[b->vb].dtype, in) || strcmp(b->args[b->vd].dtype, out))
        return fail(b, CUDA_SUCCESS, "vendor: the task is not %s %s (A and B in, D out; m, n, k)", op, dtype);
    bench_unload(b, k);
    char err[768];
    if (!b->vend && vendor_open(&b->vend, err, sizeof err)) return fail(b, CUDA_SUCCESS, "%s", err);
    if (!b->vend_ws) CK(b->cu->MemAlloc(&b->vend_ws, VENDOR_WORKSPACE), "allocate the vendor's workspace");
    /* The heuristic runs here, not in the first timed launch. */
    if (vendor_describe(b->vend, kind, b->shape, b->bufs[b->va].live, b->bufs[b->vb].live, b->bufs[b->vd].live, desc,
                        desccap, err, sizeof err))
        return fail(b, CUDA_SUCCESS, "%s", err);
    slot *s = &b->slots[k];
    s->used = 1;
    s->vendor = 1;
    s->vkind = kind;
    return BENCH_OK;
}

int bench_unload(bench *b, int k)
{
    if (k < 0 || k >= BENCH_SLOTS || !b->slots[k].used) return BENCH_OK;
    slot *s = &b->slots[k];
    if (s->ws) b->cu->MemFree(s->ws);
    if (s->mod) b->cu->ModuleUnload(s->mod);
    free(s->Lr);
    memset(s, 0, sizeof *s);
    return BENCH_OK;
}

/* Before every run: in-place inputs restored, workspace zeroed. */
static int prepare(bench *b, slot *s)
{
    for (int i = 0; i < b->ntask; i++)
        if (b->args[i].role == ROLE_INOUT)
            CK(b->cu->MemcpyDtoDAsync(b->bufs[i].live, b->bufs[i].pristine, b->bufs[i].bytes, b->stream), "restore");
    if (s->ws && s->ws_zero) CK(b->cu->MemsetD8Async(s->ws, 0, s->ws_zero, b->stream), "zero the workspace");
    return BENCH_OK;
}

/* One launch of slot s over input copy `copy` (0: the live buffers). */
static int launch_slot(bench *b, slot *s, int copy)
{
    if (s->vendor) {
        char err[512];
        const buf *A = &b->bufs[b->va], *B = &b->bufs[b->vb];
        CUdeviceptr a = copy > 0 ? A->copy[copy] : A->live, bb = copy > 0 ? B->copy[copy] : B->live;
        if (vendor_gemm(b->vend, s->vkind, b->shape, a, bb, b->bufs[b->vd].live, b->vend_ws, b->stream, err, sizeof err))
            return fail(b, CUDA_SUCCESS, "%s", err);
        return BENCH_OK;
    }
    CK(plan_launch_kernel(b->cu->LaunchKernel, b->cu->LaunchKernelEx, s->fn, b->stream, copy > 0 ? &s->Lr[copy] : &s->L),
       "launch");
    return BENCH_OK;
}

static int run_slot(bench *b, slot *s) { return launch_slot(b, s, 0); }

static float host_float(const char *dt, const unsigned char *p)
{
    if (!strcmp(dt, "f32")) { float f; memcpy(&f, p, 4); return f; }
    unsigned short h;
    memcpy(&h, p, 2);
    if (!strcmp(dt, "bf16")) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; }
    int e = (h >> 10) & 31, mant = h & 1023;
    float v = e == 0 ? ldexpf((float)mant, -24) : e == 31 ? (mant ? NAN : INFINITY) : ldexpf((float)(mant | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* res[0] = count, res[1] = first index, read back after the check kernel. */
static int check(bench *b, const char *kernel, void **p, unsigned long long out[2])
{
    CK(b->cu->MemsetD8Async(b->res, 0, 8, b->stream), "reset");
    CK(b->cu->MemsetD8Async(b->res + 8, 0xFF, 8, b->stream), "reset");
    if (run_support(b, kernel, p)) return BENCH_FAIL;
    CK(b->cu->StreamSynchronize(b->stream), "%s", kernel);
    CK(b->cu->MemcpyDtoH(out, b->res, 16), "read the check");
    return BENCH_OK;
}

int bench_verify(bench *b, int k)
{
    if (k < 0 || k >= BENCH_SLOTS || !b->slots[k].used) return fail(b, CUDA_SUCCESS, "verify: slot %d is empty", k);
    slot *s = &b->slots[k];
    if (prepare(b, s)) return BENCH_FAIL;
    for (int i = 0; i < b->ntask; i++)
        if (b->args[i].role == ROLE_OUT)
            CK(b->cu->MemsetD8Async(b->bufs[i].live, 0xFF, b->bufs[i].bytes, b->stream), "poison"); /* NaN in every dtype */
    if (run_slot(b, s)) return BENCH_FAIL;
    CK(b->cu->StreamSynchronize(b->stream), "the kernel failed");
    int verdict = BENCH_OK;
    for (int i = 0; i < b->ntask && verdict == BENCH_OK; i++) {
        op_arg *a = &b->args[i];
        buf *B = &b->bufs[i];
        unsigned long long r[2];
        if (a->role == ROLE_IN) {
            long long n = (long long)B->bytes;
            void *p[] = { &B->live, &B->pristine, &n, &b->res };
            if (check(b, "same_bytes", p, r)) return BENCH_FAIL;
            if (r[0]) {
                snprintf(b->err, sizeof b->err, "the kernel wrote to its input '%s' (%llu bytes changed, first at byte %llu)",
                         a->name, r[0], r[1]);
                CK(b->cu->MemcpyDtoDAsync(B->live, B->pristine, B->bytes, b->stream), "restore");
                CK(b->cu->StreamSynchronize(b->stream), "restore");
                verdict = BENCH_WRONG;
            }
        } else if (a->role == ROLE_OUT || a->role == ROLE_INOUT) {
            char kernel[32];
            snprintf(kernel, sizeof kernel, "compare_%s", a->dtype);
            long long n = a->count;
            float rtol = (float)b->rtol, atol = (float)b->atol;
            void *p[] = { &B->live, &B->ref, &n, &rtol, &atol, &b->res };
            if (check(b, kernel, p, r)) return BENCH_FAIL;
            if (r[0]) {
                unsigned char got[4] = { 0 }, want[4] = { 0 };
                size_t off = (size_t)r[1] * (size_t)a->esize;
                b->cu->MemcpyDtoH(got, B->live + off, (size_t)a->esize);
                b->cu->MemcpyDtoH(want, B->ref + off, (size_t)a->esize);
                snprintf(b->err, sizeof b->err, "%s: %llu of %lld elements wrong, first at %llu (got %g, want %g; rtol %g, atol %g)",
                         a->name, r[0], a->count, r[1], host_float(a->dtype, got), host_float(a->dtype, want), b->rtol, b->atol);
                verdict = BENCH_WRONG;
            }
        }
    }
    return verdict;
}

/* Queue one timed sample of slot s using event pair e: flush, then one
** launch (flush timing) or a chain of launches over the input copies in
** turn (stream timing; in-place inputs restored and the workspace zeroed
** before each, where the kernel needs it). */
static int sample(bench *b, slot *s, int e)
{
    if (!b->streaming && prepare(b, s)) return BENCH_FAIL;
    long long n16 = (long long)(b->flush_bytes / 16);
    void *fp[] = { &b->flush, &n16, &b->res };
    CK(b->cu->LaunchKernel(b->flush_fn, (unsigned)b->info.sms * 4, 1, 1, 512, 1, 1, 0, b->stream, fp, NULL), "flush L2");
    CK(b->cu->EventRecord(b->ev[2 * e], b->stream), "event");
    if (!b->streaming) {
        if (run_slot(b, s)) return BENCH_FAIL;
    } else {
        for (int i = 0; i < b->chain; i++)
            if ((b->neighbour && launch_neighbour(b)) || prepare(b, s) || launch_slot(b, s, i % b->copies))
                return BENCH_FAIL;
    }
    CK(b->cu->EventRecord(b->ev[2 * e + 1], b->stream), "event");
    return BENCH_OK;
}

/* Sample e's time per launch, in microseconds. */
static int collect(bench *b, int e, double *us)
{
    float ms = 0;
    CK(b->cu->EventSynchronize(b->ev[2 * e + 1]), "the kernel failed");
    CK(b->cu->EventElapsedTime(&ms, b->ev[2 * e], b->ev[2 * e + 1]), "elapsed time");
    *us = ms * 1e3 / (b->streaming ? b->chain : 1);
    /* Neighbour timing: the launch's own share. A sample at or below the
    ** neighbour's (noise on a kernel far shorter than it) counts as 0.01 us. */
    if (b->neighbour) *us = *us - b->nb_us > 0.01 ? *us - b->nb_us : 0.01;
    return BENCH_OK;
}

int bench_time(bench *b, const wire_time *o, stats *out)
{
    const int *slots = o->slots, nslots = o->nslots;
    if (nslots < 1 || nslots > BENCH_SLOTS) return fail(b, CUDA_SUCCESS, "time: 1 to %d slots", BENCH_SLOTS);
    for (int j = 0; j < nslots; j++)
        if (slots[j] < 0 || slots[j] >= BENCH_SLOTS || !b->slots[slots[j]].used)
            return fail(b, CUDA_SUCCESS, "time: slot %d is empty", slots[j]);
    int cap = o->rounds > 0 ? o->rounds : (o->max_samples > 0 ? o->max_samples : 200);
    double **x = xcalloc((size_t)nslots, sizeof *x);
    int *n = xcalloc((size_t)nslots, sizeof *n);
    for (int j = 0; j < nslots; j++) x[j] = xcalloc((size_t)cap, sizeof **x);
    int rc = BENCH_OK;
    for (int j = 0; j < nslots && !rc; j++)
        for (int w = 0; w < o->warmup && !rc; w++) {
            rc = prepare(b, &b->slots[slots[j]]);
            if (!rc) rc = run_slot(b, &b->slots[slots[j]]);
        }
    if (!rc) {
        CUresult crc = b->cu->StreamSynchronize(b->stream);
        if (crc) rc = fail(b, crc, "the kernel failed");
    }
    double t0 = now_s();
    int minn = o->min_samples > 0 ? o->min_samples : 10;
    if (o->rounds > 0) {
        /* A race: each round times every slot once, starting from a
        ** different slot each round, so drift hits all alike. */
        int per = BENCH_BATCH / nslots > 0 ? BENCH_BATCH / nslots : 1;
        for (int r = 0; r < o->rounds && !rc; r += per) {
            int q = 0, who[BENCH_BATCH * BENCH_SLOTS];
            for (int rr = r; rr < r + per && rr < o->rounds && !rc; rr++)
                for (int j = 0; j < nslots && !rc && q < BENCH_BATCH; j++) {
                    int s = (j + rr) % nslots;
                    who[q] = s;
                    rc = sample(b, &b->slots[slots[s]], q++);
                }
            for (int e = 0; e < q && !rc; e++) {
                double us;
                rc = collect(b, e, &us);
                if (!rc && n[who[e]] < cap) x[who[e]][n[who[e]]++] = us;
            }
            if (!rc && bench_race_done(n, nslots, minn, now_s() - t0, o->max_seconds)) break;
        }
    } else {
        slot *s = &b->slots[slots[0]];
        while (!rc && n[0] < cap) {
            int q = 0;
            for (; q < BENCH_BATCH && n[0] + q < cap && !rc; q++) rc = sample(b, s, q);
            for (int e = 0; e < q && !rc; e++) rc = collect(b, e, &x[0][n[0]++]);
            if (rc) break;
            if (n[0] >= minn && stats_settled(x[0], n[0], BENCH_BATCH, o->settle > 0 ? o->settle : 0.005)) break;
            if (o->max_seconds > 0 && now_s() - t0 > o->max_seconds && n[0] >= 3) break;
        }
    }
    for (int j = 0; j < nslots; j++) {
        if (!rc) stats_of(x[j], n[j], &out[j]);
        free(x[j]);
    }
    free(x);
    free(n);
    return rc;
}

int bench_copy(bench *b, size_t bytes, double *gbps)
{
    CUdeviceptr src = 0, dst = 0;
    CUresult rc;
    if ((rc = b->cu->MemAlloc(&src, bytes)) || (rc = b->cu->MemAlloc(&dst, bytes))) {
        if (src) b->cu->MemFree(src);
        return fail(b, rc, "allocate %zu bytes for the copy ceiling", bytes);
    }
    double x[BENCH_BATCH];
    int st = BENCH_OK;
    b->cu->MemsetD32Async(src, 0x3f800000u, bytes / 4, b->stream);
    for (int i = 0; i < BENCH_BATCH + 2 && !st; i++) {
        if ((rc = b->cu->MemcpyDtoDAsync(dst, src, bytes, b->stream))) { st = fail(b, rc, "copy"); break; }
    }
    for (int i = 0; i < BENCH_BATCH && !st; i++) {
        b->cu->EventRecord(b->ev[2 * i], b->stream);
        b->cu->MemcpyDtoDAsync(dst, src, bytes, b->stream);
        b->cu->EventRecord(b->ev[2 * i + 1], b->stream);
    }
    for (int i = 0; i < BENCH_BATCH && !st; i++) st = collect(b, i, &x[i]);
    b->cu->MemFree(src);
    b->cu->MemFree(dst);
    if (st) return st;
    stats s;
    stats_of(x, BENCH_BATCH, &s);
    *gbps = 2.0 * (double)bytes / s.median / 1e3;
    return BENCH_OK;
}
