/*
** test_vendor: the vendor module (src/vendor.c) and the vendor's times in
** the registry (src/registry_vendor.c) without a GPU. cuBLASLt is
** played by build/tests/fake_cublaslt.so (tests/unit/fake_cublaslt.c),
** which computes on the host what cuBLASLt documents, so the products
** vendor_gemm asks for are checked against row-major references: the layout
** mapping, the plan cache (one heuristic per shape and alignment, shared by
** threads), the alignment preferences, and the faults (no algorithm, a
** failing matmul). Child processes check the library's absence (a clear
** message) and the real libcublasLt, when this machine has one (every
** symbol resolves). The registry part: rows stored and read back by
** shape, hardware and timing, beside a winner (its timing), the migration
** from schema 4, a read-only old registry (no rows, no error), export, and
** merge carrying the rows once. libaitune: a split bucket whose part the
** vendor holds answers lookups with the vendor there and its own kernel
** elsewhere; kernel_get on the vendor's part says so when cuBLASLt is
** missing, gets past it to the driver when it is there, and refuses a
** vendor row for a problem the vendor does not serve.
*/
#define _GNU_SOURCE
#include "check.h"
#include "aitune.h"
#include "plan.h"
#include "registry_measure.h"
#include "registry_merge.h"
#include "registry_vendor.h"
#include "sweep_vendor.h"
#include "tmpl.h"
#include "vendor.h"
#include <cublasLt.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char fake_path[1024];

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Exactly representable in f16 and bf16: small multiples of 1/8. */
static float value(int i, int salt) { return (float)((i * 7 + salt * 3) % 17 - 8) / 8.0f; }

static uint16_t to_f16(float f)
{
    /* Values here are multiples of 1/8 below 2 in magnitude: exact. */
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = fabsf(f);
    if (a == 0) return sign;
    int e;
    float m = frexpf(a, &e);
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((long)ldexpf(m, 11) & 1023);
}

typedef struct problem {
    const char *op, *dtype;
    long long m, n, k;
} problem;

/* bytes on a 256-byte boundary: aligned_alloc takes a size that is a
** multiple of the alignment (glibc forgives another, AddressSanitizer not). */
static void *alloc256(size_t bytes) { return aligned_alloc(256, (bytes + 255) / 256 * 256); }

/* Run one product through vendor_gemm on host buffers and compare every
** element with the row-major reference. Returns 1 when all agree. */
static int product(vendor *v, const problem *P, int offset_a, char *why, int whycap)
{
    int kind = vendor_kind(P->op, P->dtype);
    int nn = !strcmp(P->op, "gemm_nn"), f16 = !strncmp(P->dtype, "f16", 3), f32out = strchr(P->dtype, '>') != NULL;
    long long m = P->m, n = P->n, k = P->k;
    uint16_t *A = alloc256((size_t)(m * k + 8) * 2 + 256);
    uint16_t *B = alloc256((size_t)(k * n) * 2 + 256);
    void *D = alloc256((size_t)(m * n) * 4 + 256);
    uint16_t *a = A + offset_a;   /* offset_a = 1: a 2-byte aligned A */
    float *ref = calloc((size_t)(m * n), sizeof *ref);
    for (long long i = 0; i < m * k; i++) a[i] = f16 ? to_f16(value((int)i, 1)) : to_bf16(value((int)i, 1));
    for (long long i = 0; i < k * n; i++) B[i] = f16 ? to_f16(value((int)i, 2)) : to_bf16(value((int)i, 2));
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long p = 0; p < k; p++)
                acc += (double)value((int)(i * k + p), 1) * value((int)(nn ? p * n + j : j * k + p), 2);
            ref[i * n + j] = (float)acc;
        }
    memset(D, 0xff, (size_t)(m * n) * 4);
    long long shape[3] = { m, n, k };
    int ok = !vendor_gemm(v, kind, shape, (uintptr_t)a, (uintptr_t)B, (uintptr_t)D, 0x1000, (void *)0x5150, why, whycap);
    for (long long i = 0; ok && i < m * n; i++) {
        float got = f32out ? ((float *)D)[i] : f16 ? 0 : from_bf16(((uint16_t *)D)[i]);
        if (f16 && !f32out) {
            uint16_t h = ((uint16_t *)D)[i];
            int e = (h >> 10) & 31, mm = h & 1023;
            got = (e ? ldexpf((float)(mm | 1024), e - 25) : ldexpf((float)mm, -24)) * ((h & 0x8000) ? -1 : 1);
        }
        double tol = f32out ? 1e-5 * (1 + fabs(ref[i])) : 1e-2 * (1 + fabs(ref[i]));
        if (!(fabs(got - ref[i]) <= tol)) {
            snprintf(why, (size_t)whycap, "D[%lld] (row %lld, col %lld) = %g, want %g", i, i / n, i % n, got, ref[i]);
            ok = 0;
        }
    }
    free(A);
    free(B);
    free(D);
    free(ref);
    return ok;
}

typedef void (*counts_fn)(int *, int *, int *, uint32_t *, void **);

static counts_fn fake_counts(void)
{
    void *h = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
    return h ? (counts_fn)dlsym(h, "fake_lt_counts") : NULL;
}

typedef struct worker_arg { vendor *v; int id, bad; char why[256]; } worker_arg;

static void *thread_main(void *p)
{
    worker_arg *w = p;
    for (int round = 0; round < 3; round++)
        for (long long m = 1; m <= 24; m++) {
            problem P = { "gemm_nt", "bf16", m, 3, 5 };
            if (!product(w->v, &P, 0, w->why, sizeof w->why)) w->bad++;
        }
    return NULL;
}

static void test_kinds(void)
{
    CHECK(vendor_kind("gemm_nt", "bf16") >= 0 && vendor_kind("gemm_nn", "f16>f32") >= 0, "the GEMM ops and dtypes are served");
    CHECK(vendor_kind("gemm_nt", "bf16") != vendor_kind("gemm_nn", "bf16") &&
          vendor_kind("gemm_nt", "bf16") != vendor_kind("gemm_nt", "bf16>f32"), "each (op, dtype) is its own kind");
    CHECK(vendor_kind("gemm_nt", "f32") < 0 && vendor_kind("softmax", "bf16") < 0 && vendor_kind(NULL, "bf16") < 0 &&
          vendor_kind("gemm_nt", "bf16>f16") < 0, "others are not (f32 GEMM, softmax, NULL, bf16>f16)");
    CHECK(vendor_is_template("vendor/cublaslt") && !vendor_is_template("gemm_nt/mma") && !vendor_is_template(NULL),
          "the reserved template name");
}

static void test_fake(void)
{
    setenv("AITUNE_CUBLASLT", fake_path, 1);
    char why[1024] = "";
    CHECK(vendor_available(why, sizeof why) == 0, "the fake cuBLASLt opens (%s)", why);
    char lib[64];
    vendor_library(lib, sizeof lib);
    CHECK_STR(lib, "cuBLASLt 990001", "the library as a registry row names it");
    counts_fn counts = fake_counts();
    CHECK(counts != NULL, "the fake's counters are reachable");
    if (!counts) return;
    vendor *v = NULL;
    CHECK(vendor_open(&v, why, sizeof why) == 0 && v, "a handle opens (%s)", why);
    if (!v) return;
    int handles, heur, mm;
    uint32_t al[4];
    void *stream;

    static const problem ps[] = {
        { "gemm_nt", "bf16", 5, 7, 9 }, { "gemm_nt", "f16", 3, 4, 6 }, { "gemm_nt", "bf16>f32", 1, 8, 16 },
        { "gemm_nn", "bf16", 5, 7, 9 }, { "gemm_nn", "f16>f32", 6, 2, 3 }, { "gemm_nn", "f16", 2, 9, 4 },
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        why[0] = 0;
        CHECK(product(v, &ps[i], 0, why, sizeof why), "%s %s m=%lld n=%lld k=%lld: D = the row-major product (%s)",
              ps[i].op, ps[i].dtype, ps[i].m, ps[i].n, ps[i].k, why);
    }
    counts(&handles, &heur, &mm, al, &stream);
    CHECK(stream == (void *)0x5150, "cublasLtMatmul runs on the caller's stream");
    CHECK(al[0] == 256 && al[1] == 256 && al[3] == 256, "256-byte aligned buffers: alignment 256 asked of the heuristic");
    void *fl = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
    uint32_t (*reduction)(void) = fl ? (uint32_t (*)(void))dlsym(fl, "fake_lt_reduction") : NULL;
    uint32_t mask = reduction ? reduction() : 0x7u;
    CHECK(mask == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
          "split-K parts are added in fp32 only: reduction mask %#x asked of the heuristic (%#x)", mask,
          (unsigned)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
    int h0 = heur, m0 = mm;
    problem again = { "gemm_nt", "bf16", 5, 7, 9 };
    CHECK(product(v, &again, 0, why, sizeof why), "the same problem again (%s)", why);
    counts(&handles, &heur, &mm, al, &stream);
    CHECK(heur == h0 && mm == m0 + 1, "a shape seen before is one cublasLtMatmul, no heuristic (heuristics %d -> %d)", h0, heur);
    CHECK(product(v, &again, 1, why, sizeof why), "A 2 bytes off alignment (%s)", why);
    counts(&handles, &heur, &mm, al, &stream);
    CHECK(heur == h0 + 1 && al[1] == 2 && al[0] == 256, "a 2-byte aligned A is a new plan, asking alignment 2 of cuBLASLt's B "
          "(A %u, B %u)", al[0], al[1]);

    char desc[128];
    long long s1[3] = { 5, 7, 9 };
    CHECK(vendor_describe(v, vendor_kind("gemm_nt", "bf16"), s1, 256, 512, 1024, desc, sizeof desc, why, sizeof why) == 0 &&
              strstr(desc, "algo 42 ") && strstr(desc, "ws 4096"),
          "describe names the heuristic's algorithm and workspace: '%s'", desc);

    /* Faults. */
    problem noalgo = { "gemm_nt", "bf16", 4, 4, 13 };
    CHECK(!product(v, &noalgo, 0, why, sizeof why) && strstr(why, "cublasLtMatmulAlgoGetHeuristic") &&
              strstr(why, "NOT_SUPPORTED"), "a problem without an algorithm fails, saying so: '%s'", why);
    problem exec = { "gemm_nt", "bf16", 4, 17, 4 };   /* cuBLASLt's M is the row-major n */
    CHECK(!product(v, &exec, 0, why, sizeof why) && strstr(why, "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED"),
          "a failing matmul fails the call: '%s'", why);
    long long bad[3] = { 0, 4, 4 }, big[3] = { 4, 4, 1LL << 40 };
    CHECK(vendor_gemm(v, 0, bad, 256, 256, 256, 256, NULL, why, sizeof why) && strstr(why, "m = 0"), "m = 0 is refused: '%s'", why);
    CHECK(vendor_gemm(v, 0, big, 256, 256, 256, 256, NULL, why, sizeof why) && strstr(why, "k = "), "a k past 2^31 is refused");
    CHECK(vendor_gemm(v, 99, s1, 256, 256, 256, 256, NULL, why, sizeof why) && strstr(why, "bad arguments"),
          "an unknown kind is refused");
    CHECK(vendor_gemm(v, 0, s1, 0, 256, 256, 256, NULL, why, sizeof why) && strstr(why, "NULL"), "a NULL buffer is refused");
    CHECK(vendor_gemm(v, 0, s1, 256, 256, 256, 0, NULL, why, sizeof why) && strstr(why, "workspace"),
          "a NULL workspace, where the algorithm wants one, is refused");

    /* Threads: every product right, each shape's plan built once. */
    counts(&handles, &heur, &mm, al, &stream);
    h0 = heur;
    pthread_t th[4];
    worker_arg wa[4];
    for (int i = 0; i < 4; i++) {
        memset(&wa[i], 0, sizeof wa[i]);
        wa[i].v = v;
        wa[i].id = i;
        pthread_create(&th[i], NULL, thread_main, &wa[i]);
    }
    int bads = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        bads += wa[i].bad;
    }
    counts(&handles, &heur, &mm, al, &stream);
    CHECK(bads == 0, "4 threads x 3 rounds x 24 shapes through one handle: all right (%s)", bads ? wa[0].why : "");
    CHECK(heur - h0 == 24, "each shape's plan was built once: %d heuristic calls for 24 shapes", heur - h0);
    vendor_close(v);
    counts(&handles, &heur, &mm, al, &stream);
    CHECK(handles == 0, "vendor_close destroys the cuBLASLt handle");
    vendor_close(NULL);
}


/* ---- the registry ---- */

static char tmpdir[256];

static device gpu(const char *uuid, const char *driver, const char *name)
{
    device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    d.cc = 90;
    d.sms = 132;
    d.mem = 85899345920LL;
    d.l2 = 52428800;
    d.smem_optin = 232448;
    snprintf(d.driver, sizeof d.driver, "%s", driver);
    d.cuda_driver = 13000;
    snprintf(d.nvrtc, sizeof d.nvrtc, "13.0");
    return d;
}

static reg_vendor vrow(const char *bucket, const char *shape, int stream, double us, long long dev)
{
    reg_vendor v;
    memset(&v, 0, sizeof v);
    snprintf(v.op, sizeof v.op, "gemm_nt");
    snprintf(v.arch, sizeof v.arch, "sm_90");
    snprintf(v.dtype, sizeof v.dtype, "bf16");
    snprintf(v.bucket, sizeof v.bucket, "%s", bucket);
    snprintf(v.shape, sizeof v.shape, "%s", shape);
    v.stream = stream;
    snprintf(v.library, sizeof v.library, "cuBLASLt 130100");
    snprintf(v.algo, sizeof v.algo, "algo 66 tile 20");
    snprintf(v.status, sizeof v.status, "ok");
    v.median_us = us;
    v.min_us = us * 0.9;
    v.max_us = us * 1.1;
    v.spread = 0.01;
    v.samples = 20;
    v.device = dev;
    return v;
}

#define SHAPE16 "{\"m\":16,\"n\":4096,\"k\":4096}"
#define BUCKET16 "m=2^4,n=2^12,k=2^12"
#define PART24 BUCKET16 "/24,2^12,2^12"   /* its part of m in [24, 32) */

static winner wrow(const char *bucket, const char *tmpl, const char *config, double us, long long dev, long long run)
{
    winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.op, sizeof w.op, "gemm_nt");
    snprintf(w.arch, sizeof w.arch, "sm_90");
    snprintf(w.dtype, sizeof w.dtype, "bf16");
    snprintf(w.bucket, sizeof w.bucket, "%s", bucket);
    snprintf(w.dims, sizeof w.dims, "m,n,k");
    snprintf(w.lo, sizeof w.lo, "16,4096,4096");
    snprintf(w.hi, sizeof w.hi, "32,8192,8192");
    snprintf(w.shape, sizeof w.shape, SHAPE16);
    snprintf(w.tmpl, sizeof w.tmpl, "%s", tmpl);
    w.config = (char *)config;
    w.median_us = us;
    w.margin = -1;
    w.exhaustive = 1;
    w.launch = (char *)"{}";
    w.device = dev;
    w.run = run;
    return w;
}

static int count_cb(const reg_vendor *v, void *ctx)
{
    (void)v;
    ++*(int *)ctx;
    return 0;
}

static int json_cb(const char *json, void *ctx)
{
    strbuf *sb = ctx;
    sb_puts(sb, json);
    sb_puts(sb, "\n");
    return 0;
}

static int text_cb(int n, const char *const *names, const char *const *values, void *ctx)
{
    strbuf *sb = ctx;
    if (!values) sb_puts(sb, "header;");
    for (int i = 0; values && i < n; i++) sb_printf(sb, "%s=%s;", names[i], values[i] ? values[i] : "NULL");
    sb_puts(sb, "\n");
    return 0;
}

static void test_registry(void)
{
    char path[512], path2[512], old[512];
    snprintf(path, sizeof path, "%s/a.db", tmpdir);
    snprintf(path2, sizeof path2, "%s/b.db", tmpdir);
    snprintf(old, sizeof old, "%s/old.db", tmpdir);
    reg *r;
    CHECK(reg_open(path, 0, &r) == 0 && reg_version(r) == REG_SCHEMA_VERSION && REG_SCHEMA_VERSION == 8,
          "a new registry is schema 8 (%s)", reg_errmsg(r));
    device h100 = gpu("GPU-1", "580", "NVIDIA H100"), twin = gpu("GPU-2", "580", "NVIDIA H100"),
           h200 = gpu("GPU-3", "580", "NVIDIA H200");
    long long d1 = 0, d2 = 0, d3 = 0, run = 0;
    reg_device(r, &h100, &d1);
    reg_device(r, &twin, &d2);
    reg_device(r, &h200, &d3);
    reg_run_begin(r, "aitune sweep x.yaml", "hash", 1, d1, "{}", &run);
    reg_vendor v = vrow(BUCKET16, SHAPE16, 1, 12.5, d1), got;
    v.run = run;
    CHECK(reg_vendor_put(r, &v) == 0, "a vendor row is stored (%s)", reg_errmsg(r));
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, d1, &got) == 1 && got.median_us == 12.5 &&
              got.stream && !strcmp(got.status, "ok") && !strcmp(got.library, "cuBLASLt 130100") && got.run == run &&
              strstr(got.hw, "NVIDIA H100|sm_90|132 SMs"),
          "and read back by shape, timing and device, with the device's hardware (%s)", got.hw);
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, d2, &got) == 1,
          "a twin GPU (same hardware, another uuid) finds it: a resume on the next GPU of the host");
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 0, d1, &got) == 0, "flush timing is another row");
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, d3, &got) == 0, "another GPU model is another row");
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", "{\"m\":17,\"n\":4096,\"k\":4096}", 1, d1, &got) == 0,
          "another shape is another row");
    v.median_us = 11.0;
    reg_vendor_put(r, &v);
    reg_vendor flush = vrow(BUCKET16, SHAPE16, 0, 20.0, d1);
    reg_vendor_put(r, &flush);
    reg_vendor bad = vrow(BUCKET16, "{\"m\":24,\"n\":4096,\"k\":4096}", 1, 0, d1);
    snprintf(bad.status, sizeof bad.status, "wrong");
    snprintf(bad.error, sizeof bad.error, "D: 3 of 64 elements wrong");
    reg_vendor_put(r, &bad);
    reg_vendor part = vrow(PART24, "{\"m\":31,\"n\":4096,\"k\":4096}", 1, 14.0, d1);
    reg_vendor_put(r, &part);
    int n = 0;
    reg_vendor_each(r, "gemm_nt", "sm_90", "bf16", BUCKET16, count_cb, &n);
    CHECK(n == 4, "the bucket's rows, its part's included, a replaced row once: %d of 4", n);
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", "{\"m\":24,\"n\":4096,\"k\":4096}", 1, d1, &got) == 1 &&
              !strcmp(got.status, "wrong") && got.median_us == 0 && strstr(got.error, "3 of 64"),
          "a failed vendor measurement is kept with its reason, no time");
    CHECK(reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, d1, &got) == 1 && got.median_us == 11.0,
          "a row measured again replaces the old one");

    /* Beside a winner: its shape, hardware and timing. */
    double us = 0;
    winner w = wrow(BUCKET16, "gemm_nt/wgmma", "{\"bm\":64}", 10.0, d1, run);
    reg_winner_put(r, &w);
    CHECK(reg_vendor_for_winner(r, &w, &us) == 1 && us == 20.0,
          "a winner without measurements gets the newest row of either timing: the flush one (%g)", us);
    measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.op, sizeof m.op, "gemm_nt");
    snprintf(m.tmpl, sizeof m.tmpl, "gemm_nt/wgmma");
    snprintf(m.arch, sizeof m.arch, "sm_90");
    snprintf(m.dtype, sizeof m.dtype, "bf16");
    snprintf(m.bucket, sizeof m.bucket, BUCKET16);
    snprintf(m.shape, sizeof m.shape, SHAPE16);
    m.config = (char *)"{\"bm\":64}";
    snprintf(m.config_hash, sizeof m.config_hash, "0123456789abcdef");
    snprintf(m.status, sizeof m.status, "ok");
    m.median_us = m.min_us = m.max_us = 10;   /* merge refuses an ok time that is not positive */
    m.samples = 10;
    m.device = d1;
    m.run = run;
    m.stream = 0;
    reg_measure_put(r, &m);
    CHECK(reg_vendor_for_winner(r, &w, &us) == 1 && us == 20.0, "a winner timed after a flush: the flush row (%g)", us);
    m.stream = 1;
    reg_measure_put(r, &m);
    CHECK(reg_vendor_for_winner(r, &w, &us) == 1 && us == 11.0, "timed as a stream (its newest): the stream row (%g)", us);
    winner w3 = wrow(BUCKET16, "gemm_nt/wgmma", "{\"bm\":64}", 10.0, d3, run);
    CHECK(reg_vendor_for_winner(r, &w3, &us) == 0, "a winner measured on another GPU model has none");
    winner wp = wrow(PART24, "gemm_nt/wgmma", "{\"bm\":64}", 10.0, d1, run);
    snprintf(wp.lo, sizeof wp.lo, "24,4096,4096");
    snprintf(wp.shape, sizeof wp.shape, "{\"m\":31,\"n\":4096,\"k\":4096}");
    CHECK(reg_vendor_for_winner(r, &wp, &us) == 1 && us == 14.0, "a split bucket's part: the row at its shape (%g)", us);
    long long nv = -1;
    winner wv = wrow(PART24, VENDOR_TEMPLATE, "{}", 14.0, d1, run), w16 = wrow(BUCKET16 "/2^4,2^12,2^12", "gemm_nt/wgmma",
                                                                             "{\"bm\":64}", 10.0, d1, run);
    snprintf(wv.lo, sizeof wv.lo, "24,4096,4096");
    snprintf(wv.shape, sizeof wv.shape, "{\"m\":31,\"n\":4096,\"k\":4096}");
    snprintf(w16.hi, sizeof w16.hi, "24,8192,8192");
    reg_winners_put(r, BUCKET16, (winner[]){ w16, wv }, 2);
    CHECK(reg_vendor_winners(r, NULL, &nv) == 0 && nv == 1, "the vendor holds 1 winner (%lld)", nv);
    reg_vendor_winners(r, "gemm_nn", &nv);
    CHECK(nv == 0, "of gemm_nn, none");

    /* Export. */
    strbuf js = STRBUF_INIT, tx = STRBUF_INIT;
    CHECK(reg_vendor_json_rows(r, "gemm_nt", json_cb, &js) == 0 && strstr(sb_str(&js), "\"shape\":{\"m\":16") &&
              strstr(sb_str(&js), "\"timing\":\"stream\"") && strstr(sb_str(&js), "\"status\":\"wrong\""),
          "JSON rows embed the shape as JSON");
    reg_vendor_text_rows(r, NULL, text_cb, &tx);
    CHECK(!strncmp(sb_str(&tx), "header;\n", 8) && strstr(sb_str(&tx), "median_us=11.0;") &&
              strstr(sb_str(&tx), "library=cuBLASLt 130100;"), "text rows, the header first");
    sb_reset(&js);
    reg_vendor_json_rows(r, "softmax", json_cb, &js);
    CHECK(js.len == 0, "--op filters them");
    sb_free(&js);
    sb_free(&tx);
    reg_close(r);

    /* Merge: the rows come across once, ids mapped. */
    reg *r2;
    reg_open(path2, 0, &r2);
    reg_merge_stats st;
    memset(&st, 0, sizeof st);
    CHECK(reg_merge(r2, path, &st) == 0 && st.vendor == 4, "merge carries the 4 vendor rows (%lld; %s)", st.vendor,
          reg_errmsg(r2));
    long long dd = 0;
    reg_device(r2, &h100, &dd);
    CHECK(reg_vendor_get(r2, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, dd, &got) == 1 && got.median_us == 11.0 &&
              got.device == dd && got.run > 0, "with the output's device and run ids");
    memset(&st, 0, sizeof st);
    CHECK(reg_merge(r2, path, &st) == 0 && st.vendor == 0, "merging again adds none");
    reg_close(r2);

    /* An old registry: schema 4, no table (nor what later schemas add). */
    reg_open(old, 0, &r);
    reg_close(r);
    sqlite3 *db;
    sqlite3_open(old, &db);
    sqlite3_exec(db, "DROP TABLE vendor_times; DROP TABLE scans; ALTER TABLE cubins DROP COLUMN cubin_hash; "
                     "UPDATE meta SET value = '4' WHERE key = 'schema_version'", NULL, NULL, NULL);
    sqlite3_close(db);
    reg_open(old, 1, &r);
    n = 0;
    CHECK(reg_version(r) == 4 && reg_vendor_get(r, "gemm_nt", "sm_90", "bf16", SHAPE16, 1, 1, &got) == 0 &&
              reg_vendor_each(r, "gemm_nt", "sm_90", "bf16", NULL, count_cb, &n) == 0 && n == 0 &&
              reg_vendor_for_winner(r, &w, &us) == 0,
          "a schema-4 registry opened read-only has no vendor rows, and no error");
    v = vrow(BUCKET16, SHAPE16, 1, 1, 0);
    CHECK(reg_vendor_put(r, &v) == -1 && strstr(reg_errmsg(r), "no vendor_times"), "and takes none: '%s'", reg_errmsg(r));
    reg_close(r);
    CHECK(reg_open(old, 0, &r) == 0 && reg_version(r) == 8, "opened for writing, it is migrated to schema 8");
    CHECK(reg_vendor_put(r, &v) == 0, "and takes vendor rows (%s)", reg_errmsg(r));
    reg_close(r);
}


/* ---- libaitune ---- */

static char rtdb[512];

/* A registry with gemm_nt bf16 bucket m=2^4 split at 24: [16, 24) held by a
** kernel, [24, 32) by the vendor; and a softmax row naming the vendor. */
static void make_rt_registry(void)
{
    snprintf(rtdb, sizeof rtdb, "%s/rt.db", tmpdir);
    tmpl *T = tmpl_open(AITUNE_SOURCE_DIR);
    op_task t;
    long long shape[3] = { 28, 4096, 4096 };
    CHECK(T && tmpl_task(T, "gemm_nt", "bf16", shape, &t) == 0, "gemm_nt's signature from the templates");
    tmpl_close(T);
    char err[512];
    char *vp = reg_vendor_plan(&t, err, sizeof err);
    plan *p = NULL;
    CHECK(vp && plan_decode(vp, &p, err, sizeof err) == 0, "a vendor winner's plan decodes (%s)", vp ? err : "none");
    if (p) {
        int ws = p->nparams - 1;
        CHECK(!strcmp(p->kernel, VENDOR_KERNEL) && p->nargs == 6 && p->ndims == 3 && ws >= 0 &&
                  p->params[ws].kind == PLAN_WORKSPACE && !strcmp(p->params[ws].expr, "33554432") &&
                  p->params[ws].zero && !strcmp(p->params[ws].zero, "0"),
              "it names the op's arguments and a 32 MiB workspace, none zeroed: %s", vp);
        plan_free(p);
    }
    t.dtype[0] = 0;
    snprintf(t.dtype, sizeof t.dtype, "f32");
    CHECK(reg_vendor_plan(&t, err, sizeof err) == NULL && strstr(err, "serves no gemm_nt f32"), "none for f32: '%s'", err);
    reg *r;
    reg_open(rtdb, 0, &r);
    device h100 = gpu("GPU-1", "580", "NVIDIA H100");
    long long d1 = 0;
    reg_device(r, &h100, &d1);
    winner own = wrow(BUCKET16 "/16", "gemm_nt/mma", "{\"bm\":64}", 10.0, d1, 0);
    snprintf(own.hi, sizeof own.hi, "24,8192,8192");
    own.launch = vp;
    winner ven = wrow(BUCKET16 "/24", VENDOR_TEMPLATE, "{}", 12.0, d1, 0);
    snprintf(ven.lo, sizeof ven.lo, "24,4096,4096");
    snprintf(ven.shape, sizeof ven.shape, "{\"m\":31,\"n\":4096,\"k\":4096}");
    ven.launch = vp;
    CHECK(reg_winners_put(r, BUCKET16, (winner[]){ own, ven }, 2) == 0, "the parts are stored (%s)", reg_errmsg(r));
    winner sm = wrow("rows=2^4,cols=2^12", VENDOR_TEMPLATE, "{}", 3.0, d1, 0);
    snprintf(sm.op, sizeof sm.op, "softmax");
    snprintf(sm.dims, sizeof sm.dims, "rows,cols");
    snprintf(sm.lo, sizeof sm.lo, "16,4096");
    snprintf(sm.hi, sizeof sm.hi, "32,8192");
    snprintf(sm.shape, sizeof sm.shape, "{\"rows\":16,\"cols\":4096}");
    sm.launch = vp;
    reg_winner_put(r, &sm);
    reg_close(r);
    free(vp);
}

static void rt_lookups(void)
{
    aitune *h;
    CHECK(aitune_open(rtdb, &h) == AITUNE_OK, "libaitune opens a registry of this schema (%s)", aitune_errmsg(h));
    long long at20[3] = { 20, 4096, 4096 }, at28[3] = { 28, 4096, 4096 };
    aitune_choice c;
    CHECK(aitune_lookup(h, "gemm_nt", "sm_90", "bf16", at20, 3, &c) == AITUNE_OK && c.level == AITUNE_EXACT &&
              !strcmp(c.template_name, "gemm_nt/mma"), "m = 20: the kernel's part (%s)", c.template_name);
    CHECK(aitune_lookup(h, "gemm_nt", "sm_90a", "bf16", at28, 3, &c) == AITUNE_OK && c.level == AITUNE_EXACT &&
              !strcmp(c.template_name, VENDOR_TEMPLATE) && !strcmp(c.config, "{}") && !strcmp(c.bucket, BUCKET16 "/24") &&
              c.median_us == 12.0, "m = 28: the vendor's part, exact (%s %s %s)", c.template_name, c.config, c.bucket);
    aitune_close(h);
}

/* kernel_get where cuBLASLt is missing: clean, before any driver call. */
static void rt_missing(void)
{
    setenv("AITUNE_CUBLASLT", "/nonexistent/libcublasLt.so", 1);
    aitune *h;
    aitune_open(rtdb, &h);
    long long at28[3] = { 28, 4096, 4096 };
    aitune_kernel *k = (aitune_kernel *)1;
    int rc = aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", at28, 3, &k);
    const char *e = aitune_errmsg(h);
    CHECK(rc == AITUNE_ERROR && k == NULL && strstr(e, "held by the vendor (vendor/cublaslt)") &&
              strstr(e, "cannot open cuBLASLt") && strstr(e, BUCKET16 "/24"),
          "kernel_get on the vendor's part without cuBLASLt: AITUNE_ERROR, saying so: '%s'", e);
    long long sm[2] = { 20, 4096 };
    rc = aitune_kernel_get(h, "softmax", "sm_90", "bf16", sm, 2, &k);
    CHECK(rc == AITUNE_CORRUPT && strstr(aitune_errmsg(h), "names the vendor, which serves no softmax"),
          "a vendor row for softmax is corrupt: '%s'", aitune_errmsg(h));
    aitune_close(h);
}

/* With cuBLASLt there, kernel_get goes on to the driver (none here). */
static void rt_present(void)
{
    setenv("AITUNE_CUBLASLT", fake_path, 1);
    aitune *h;
    aitune_open(rtdb, &h);
    long long at28[3] = { 28, 4096, 4096 };
    aitune_kernel *k = NULL;
    int rc = aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", at28, 3, &k);
    const char *e = aitune_errmsg(h);
    CHECK(rc == AITUNE_ERROR && !strstr(e, "cuBLASLt") && (strstr(e, "libcuda") || strstr(e, "context")),
          "with cuBLASLt, kernel_get on the vendor's part gets to the driver: '%s'", e);
    aitune_close(h);
}


/* ---- the sweep's pure parts: --vendor, the counts, a vendor winner row ---- */

static void test_sweep_parts(void)
{
    int mode = -1;
    CHECK(sweep_vendor_parse("win", &mode) == 0 && mode == SWEEP_VENDOR_WIN && SWEEP_VENDOR_WIN == 0,
          "--vendor win, the default (0)");
    CHECK(sweep_vendor_parse("time", &mode) == 0 && mode == SWEEP_VENDOR_TIME, "--vendor time");
    CHECK(sweep_vendor_parse("off", &mode) == 0 && mode == SWEEP_VENDOR_OFF, "--vendor off");
    CHECK(sweep_vendor_parse("on", &mode) == -1 && sweep_vendor_parse(NULL, &mode) == -1, "anything else is refused");

    sweep_vendor V, L;
    memset(&V, 0, sizeof V);
    memset(&L, 0, sizeof L);
    char line[256];
    sweep_vendor_summary(&V, line, sizeof line);
    CHECK(line[0] == 0, "no vendor in the sweep: no summary line");
    V.timed = 2;
    sweep_vendor_count(&V, 10, 20);    /* 2x */
    L.timed = 1;
    L.raced = 3;
    L.held = 1;
    L.failed = 1;
    sweep_vendor_count(&L, 10, 5);     /* 0.5x */
    sweep_vendor_count(&L, 0, 5);      /* no time: not counted */
    sweep_vendor_add(&V, &L);
    sweep_vendor_summary(&V, line, sizeof line);
    size_t len = strlen(line);
    CHECK(len && line[len - 1] == '\n', "the summary is one line");
    if (len) line[len - 1] = 0;
    CHECK_STR(line, "vendor: cuBLASLt timed at 3 shapes, raced against 3 winners, 1 failed; winners 1.00x the vendor "
                    "(geometric mean of 2), worst 0.50x; the vendor holds 1 bucket or part", "the summary of two lanes");

    /* A vendor winner row for a part: its edges, shape and plan. */
    tmpl *T = tmpl_open(AITUNE_SOURCE_DIR);
    op_task t;
    long long shape[3] = { 40, 384, 256 };
    if (!T || tmpl_task(T, "gemm_nt", "bf16", shape, &t)) {
        CHECK(0, "gemm_nt's task");
        tmpl_close(T);
        return;
    }
    tmpl_close(T);
    sweep_vendor S;
    memset(&S, 0, sizeof S);
    snprintf(S.arch, sizeof S.arch, "sm_90");
    S.dev_id = 7;
    S.run_id = 9;
    bucket b;
    memset(&b, 0, sizeof b);
    b.ndims = 3;
    long long lo[3] = { 32, 384, 256 }, hi[3] = { 64, 512, 512 };
    memcpy(b.lo, lo, sizeof lo);
    memcpy(b.hi, hi, sizeof hi);
    snprintf(b.key, sizeof b.key, "m=2^5,n=2^8,k=2^8/2^5,384,2^8");
    winner W;
    CHECK(sweep_vendor_winner(&S, &t, &b, 5.0, "gemm_nt/mma", "{\"bm\":64}", 7.5, 60.0, 0, &W) == 0, "a vendor winner row");
    CHECK(!strcmp(W.tmpl, VENDOR_TEMPLATE) && !strcmp(W.config, "{}") && !W.cubin[0] && !strcmp(W.bucket, b.key) &&
              !strcmp(W.lo, "32,384,256") && !strcmp(W.hi, "64,512,512") && !strcmp(W.dims, "m,n,k") &&
              !strcmp(W.shape, "{\"m\":40,\"n\":384,\"k\":256}") && W.median_us == 5.0 && fabs(W.margin - 0.5) < 1e-12 &&
              W.default_us == 60.0 && !W.exhaustive && W.device == 7 && W.run == 9,
          "its key, edges, shape, time, margin over the template it beat, default, device and run (%s %s %s)", W.lo, W.hi,
          W.shape);
    CHECK(W.runners_up && !strcmp(W.runners_up, "[{\"template\":\"gemm_nt/mma\",\"config\":{\"bm\":64},\"median_us\":7.500}]"),
          "the template it beat is its runner-up: %s", W.runners_up);
    plan *p = NULL;
    char err[256];
    CHECK(W.launch && plan_decode(W.launch, &p, err, sizeof err) == 0 && !strcmp(p->kernel, VENDOR_KERNEL),
          "its launch plan is the vendor's");
    plan_free(p);
    free(W.runners_up);
    free(W.launch);
    snprintf(t.dtype, sizeof t.dtype, "f32");
    CHECK(sweep_vendor_winner(&S, &t, &b, 5.0, NULL, NULL, 0, 0, 1, &W) == -1, "none for a dtype the vendor does not serve");
}


/* ---- libaitune launching the vendor, on the host ----
** With the fake libcuda (build/tests/fakecuda/libcuda.so.1, made with
** test_rt: a current context, no GPU) loaded first and the fake cuBLASLt,
** a vendor bucket's kernel is got and launched on host buffers, and D
** compared with the product; bound (aitune_bind) too. Skipped, saying so,
** where the fake libcuda is not built. */

static char fakecuda_path[1024];

static void rt_launch(void)
{
    void *dl = dlopen(fakecuda_path, RTLD_NOW | RTLD_GLOBAL);
    if (!dl) {
        SKIP("libaitune's vendor launch on the host: no fake libcuda (%s)", fakecuda_path);
        return;
    }
    setenv("AITUNE_CUBLASLT", fake_path, 1);
    void (*set_ctx)(unsigned long long) = (void (*)(unsigned long long))dlsym(dl, "fakecu_set_context");
    char db[600];
    snprintf(db, sizeof db, "%s/launch.db", tmpdir);
    /* gemm_nt bf16 and gemm_nn f16>f32, buckets [8, 16)^3, the vendor's. */
    tmpl *T = tmpl_open(AITUNE_SOURCE_DIR);
    reg *r;
    reg_open(db, 0, &r);
    device d0 = gpu("GPU-1", "580", "NVIDIA H100");
    long long dev = 0;
    reg_device(r, &d0, &dev);
    const char *ops[2][2] = { { "gemm_nt", "bf16" }, { "gemm_nn", "f16>f32" } };
    for (int i = 0; i < 2; i++) {
        op_task t;
        long long sh[3] = { 9, 10, 11 };
        char err[256];
        char *vp = T && !tmpl_task(T, ops[i][0], ops[i][1], sh, &t) ? reg_vendor_plan(&t, err, sizeof err) : NULL;
        winner w = wrow("m=2^3,n=2^3,k=2^3", VENDOR_TEMPLATE, "{}", 3.0, dev, 0);
        snprintf(w.op, sizeof w.op, "%s", ops[i][0]);
        snprintf(w.dtype, sizeof w.dtype, "%s", ops[i][1]);
        snprintf(w.lo, sizeof w.lo, "8,8,8");
        snprintf(w.hi, sizeof w.hi, "16,16,16");
        snprintf(w.shape, sizeof w.shape, "{\"m\":8,\"n\":8,\"k\":8}");
        w.launch = vp;
        CHECK(vp && reg_winner_put(r, &w) == 0, "%s %s: a vendor bucket stored", ops[i][0], ops[i][1]);
        free(vp);
    }
    reg_close(r);
    tmpl_close(T);

    aitune *h;
    CHECK(aitune_open(db, &h) == AITUNE_OK, "libaitune opens it");
    long long shape[3] = { 9, 10, 11 };
    aitune_kernel *k = NULL;
    int rc = aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", shape, 3, &k);
    CHECK(rc == AITUNE_OK && k, "kernel_get on the vendor's bucket, in the (fake) context: %s", aitune_errmsg(h));
    if (!k) {
        aitune_close(h);
        return;
    }
    aitune_kernel_info info;
    aitune_kernel_info_get(h, k, &info);
    CHECK(!strcmp(info.template_name, VENDOR_TEMPLATE) && info.nargs == 6 && info.ndims == 3 && info.level == AITUNE_EXACT &&
              strstr(info.plan, "\"kernel\":\"cublaslt\""), "its info: the vendor, 6 arguments, 3 dims, exact");
    unsigned long long ws = 0;
    CHECK(aitune_kernel_workspace(h, k, shape, &ws) == AITUNE_OK && ws == VENDOR_WORKSPACE, "its workspace: %llu bytes", ws);
    aitune_kernel *k2 = NULL;
    CHECK(aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", shape, 3, &k2) == AITUNE_OK && k2 == k,
          "got again in the same context: the same kernel");

    /* A launch: host buffers stand for device memory (the fake computes). */
    long long m = 9, n = 10, kk = 11;
    uint16_t *A = aligned_alloc(256, 256 * 4), *B = aligned_alloc(256, 256 * 4), *D = aligned_alloc(256, 512);
    unsigned char *W = aligned_alloc(256, 4096);
    for (long long i = 0; i < m * kk; i++) A[i] = to_bf16(value((int)i, 1));
    for (long long i = 0; i < n * kk; i++) B[i] = to_bf16(value((int)i, 2));
    memset(D, 0xff, 512);
    aitune_arg args[7] = { { .ptr = (uintptr_t)A }, { .ptr = (uintptr_t)B }, { .ptr = (uintptr_t)D }, { 0 }, { 0 }, { 0 },
                           { .ptr = (uintptr_t)W } };
    rc = aitune_launch(h, k, args, shape, (void *)0x77);
    int bad = 0;
    for (long long i = 0; i < m && !rc; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long p = 0; p < kk; p++) acc += (double)value((int)(i * kk + p), 1) * value((int)(j * kk + p), 2);
            bad += fabs(from_bf16(D[i * n + j]) - acc) > 1e-2 * (1 + fabs(acc));
        }
    CHECK(rc == AITUNE_OK && !bad, "aitune_launch: D = A·Bᵀ (%d wrong; %s)", bad, rc ? aitune_errmsg(h) : "ok");
    counts_fn counts = fake_counts();
    int handles = 0, heur = 0, mm = 0;
    uint32_t al[4];
    void *stream = NULL;
    if (counts) counts(&handles, &heur, &mm, al, &stream);
    CHECK(counts && stream == (void *)0x77 && handles == 1, "on the caller's stream, through one cuBLASLt handle");
    args[2].ptr = 0;
    CHECK(aitune_launch(h, k, args, shape, NULL) == AITUNE_MISUSE && strstr(aitune_errmsg(h), "buffer 'D' is NULL"),
          "a NULL D is refused: %s", aitune_errmsg(h));
    args[2].ptr = (uintptr_t)D;
    args[6].ptr = 0;
    CHECK(aitune_launch(h, k, args, shape, NULL) == AITUNE_MISUSE && strstr(aitune_errmsg(h), "workspace is NULL"),
          "a NULL workspace is refused: %s", aitune_errmsg(h));
    args[6].ptr = (uintptr_t)W;
    if (set_ctx) {
        set_ctx(0x9000);
        CHECK(aitune_launch(h, k, args, shape, NULL) == AITUNE_MISUSE && strstr(aitune_errmsg(h), "context"),
              "another current context is refused: %s", aitune_errmsg(h));
        set_ctx(0x7000);
    }

    /* The bound launch (aitune_bind): the vendor's kind, its plan chosen at
    ** bind, the same D. */
    aitune_bound *bd = NULL;
    int h0 = 0, h1 = 0;
    if (counts) counts(&handles, &h0, &mm, al, &stream);
    rc = aitune_bind(h, k, shape, args, &bd);
    aitune_bound_info bi;
    memset(&bi, 0, sizeof bi);
    if (!rc) aitune_bound_info_get(h, bd, &bi);
    CHECK(rc == AITUNE_OK && bi.kind == AITUNE_BOUND_VENDOR && bi.kernel == k && bi.nargs == 6 &&
              bi.ws_bytes == VENDOR_WORKSPACE && !bi.ntmaps, "aitune_bind: a vendor kind, 6 arguments, 32 MiB workspace (%s)",
          rc ? aitune_errmsg(h) : "ok");
    memset(D, 0xff, 512);
    if (!rc) rc = aitune_bound_launch(h, bd, args, (void *)0x78);
    if (counts) counts(&handles, &h1, &mm, al, &stream);
    bad = 0;
    for (long long i = 0; i < m && !rc; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long p = 0; p < kk; p++) acc += (double)value((int)(i * kk + p), 1) * value((int)(j * kk + p), 2);
            bad += fabs(from_bf16(D[i * n + j]) - acc) > 1e-2 * (1 + fabs(acc));
        }
    CHECK(rc == AITUNE_OK && !bad && stream == (void *)0x78, "aitune_bound_launch: the same D, on its stream (%d wrong)", bad);
    CHECK(h1 == h0, "no heuristic at bind or launch: the shape's plan was made by the first launch (%d -> %d)", h0, h1);
    args[6].ptr = 0;
    CHECK(aitune_bound_launch(h, bd, args, NULL) == AITUNE_MISUSE && strstr(aitune_errmsg(h), "workspace"),
          "a NULL workspace is refused: %s", aitune_errmsg(h));
    args[6].ptr = (uintptr_t)W;
    long long other[3] = { 12, 13, 14 };
    if (counts) counts(&handles, &h0, &mm, al, &stream);
    aitune_bound *b2 = NULL;
    rc = aitune_bind(h, k, other, NULL, &b2);
    if (counts) counts(&handles, &h1, &mm, al, &stream);
    CHECK(rc == AITUNE_OK && h1 == h0 + 1, "binding a new shape runs its heuristic there, at bind (%d -> %d)", h0, h1);
    CHECK(aitune_bound_free(h, b2) == AITUNE_OK && aitune_bound_free(h, bd) == AITUNE_OK, "bound launches are freed");

    /* gemm_nn f16 in, f32 out. */
    aitune_kernel *kn = NULL;
    rc = aitune_kernel_get(h, "gemm_nn", "sm_90", "f16>f32", shape, 3, &kn);
    float *Df = aligned_alloc(256, 512);
    for (long long i = 0; i < m * kk; i++) A[i] = to_f16(value((int)i, 1));
    for (long long i = 0; i < kk * n; i++) B[i] = to_f16(value((int)i, 2));
    aitune_arg an[7] = { { .ptr = (uintptr_t)A }, { .ptr = (uintptr_t)B }, { .ptr = (uintptr_t)Df }, { 0 }, { 0 }, { 0 },
                         { .ptr = (uintptr_t)W } };
    if (!rc) rc = aitune_launch(h, kn, an, shape, NULL);
    bad = 0;
    for (long long i = 0; i < m && !rc; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long p = 0; p < kk; p++) acc += (double)value((int)(i * kk + p), 1) * value((int)(p * n + j), 2);
            bad += fabs(Df[i * n + j] - acc) > 1e-5 * (1 + fabs(acc));
        }
    CHECK(rc == AITUNE_OK && !bad, "gemm_nn f16>f32 through libaitune: D = A·B (%d wrong; %s)", bad,
          rc ? aitune_errmsg(h) : "ok");
    if (counts) counts(&handles, &heur, &mm, al, &stream);
    CHECK(handles == 1, "both kernels share the context's cuBLASLt handle (%d)", handles);
    aitune_close(h);
    if (counts) counts(&handles, &heur, &mm, al, &stream);
    CHECK(handles == 0, "aitune_close destroys it");
    free(A);
    free(B);
    free(D);
    free(Df);
    free(W);
}

/* In a child: checks print there; its exit code says whether any failed. */
static void in_child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        check_failed = 0;   /* the child's own checks */
        fn();
        fflush(stdout);
        _exit(check_failed);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child's checks passed", what);
}

static void missing(void)
{
    setenv("AITUNE_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    char why[1024] = "";
    CHECK(vendor_available(why, sizeof why) == -1, "a missing cuBLASLt is not available");
    CHECK(strstr(why, "cannot open cuBLASLt") && strstr(why, "/nonexistent/libcublasLt.so.13") && strstr(why, "AITUNE_CUBLASLT"),
          "the message names it, and what to do: '%s'", why);
    vendor *v = (vendor *)1;
    char err[1024] = "";
    CHECK(vendor_open(&v, err, sizeof err) == -1 && v == NULL && !strcmp(err, why), "vendor_open fails with the same message");
    char lib[64] = "x";
    vendor_library(lib, sizeof lib);
    CHECK(lib[0] == 0, "no library: no name");
}

static void real(void)
{
    unsetenv("AITUNE_CUBLASLT");
    void *h = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcublasLt.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        SKIP("the real cuBLASLt: none on this machine");
        return;
    }
    dlclose(h);
    char why[1024] = "";
    CHECK(vendor_available(why, sizeof why) == 0, "the real cuBLASLt opens and has every entry point used (%s)", why);
    char lib[64];
    vendor_library(lib, sizeof lib);
    CHECK(!strncmp(lib, "cuBLASLt ", 9) && atoi(lib + 9) >= 120000, "its version: '%s'", lib);
    vendor *v = NULL;
    char err[1024] = "";
    int rc = vendor_open(&v, err, sizeof err);
    /* With a GPU a handle opens; without one cublasLtCreate refuses, and
    ** the message says so. */
    CHECK(rc == 0 ? v != NULL : strstr(err, "cublasLtCreate") != NULL, "vendor_open: %s", rc ? err : "a handle");
    vendor_close(v);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[1024];
    snprintf(self, sizeof self, "%s", argv[0]);
    const char *dir = dirname(self);   /* may modify self: called once */
    snprintf(fake_path, sizeof fake_path, "%s/fake_cublaslt.so", dir);
    snprintf(fakecuda_path, sizeof fakecuda_path, "%s/fakecuda/libcuda.so.1", dir);
    if (access(fake_path, R_OK)) {
        CHECK(0, "%s is built (make)", fake_path);
        CHECK_DONE();
    }
    test_kinds();
    test_sweep_parts();
    snprintf(tmpdir, sizeof tmpdir, "%s/aitune-vendor-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        CHECK_DONE();
    }
    test_registry();
    make_rt_registry();
    rt_lookups();
    in_child("libaitune without cuBLASLt", rt_missing);
    in_child("libaitune with cuBLASLt", rt_present);
    in_child("libaitune's vendor launch on the host", rt_launch);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmpdir);
    if (system(rm)) {}
    in_child("no cuBLASLt", missing);
    in_child("the real cuBLASLt", real);
    test_fake();
    CHECK_DONE();
}
