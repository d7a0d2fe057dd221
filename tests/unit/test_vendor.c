/*
** test_vendor: the vendor module (src/vendor.c) without a GPU. cuBLASLt is
** played by build/tests/fake_cublaslt.so (tests/unit/fake_cublaslt.c),
** which computes on the host what cuBLASLt documents, so the products
** vendor_gemm asks for are checked against row-major references: the layout
** mapping, the plan cache (one heuristic per shape and alignment, shared by
** threads), the alignment preferences, and the faults (no algorithm, a
** failing matmul). Child processes check the library's absence (a clear
** message) and the real libcublasLt, when this machine has one (every
** symbol resolves).
*/
#define _GNU_SOURCE
#include "check.h"
#include "vendor.h"
#include <dlfcn.h>
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

/* Run one product through vendor_gemm on host buffers and compare every
** element with the row-major reference. Returns 1 when all agree. */
static int product(vendor *v, const problem *P, int offset_a, char *why, int whycap)
{
    int kind = vendor_kind(P->op, P->dtype);
    int nn = !strcmp(P->op, "gemm_nn"), f16 = !strncmp(P->dtype, "f16", 3), f32out = strchr(P->dtype, '>') != NULL;
    long long m = P->m, n = P->n, k = P->k;
    uint16_t *A = aligned_alloc(256, (size_t)(m * k + 8) * 2 + 256);
    uint16_t *B = aligned_alloc(256, (size_t)(k * n) * 2 + 256);
    void *D = aligned_alloc(256, (size_t)(m * n) * 4 + 256);
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

/* In a child: checks print there; its exit code says whether any failed. */
static void in_child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
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
    snprintf(fake_path, sizeof fake_path, "%s/fake_cublaslt.so", dirname(self));
    if (access(fake_path, R_OK)) {
        CHECK(0, "%s is built (make)", fake_path);
        CHECK_DONE();
    }
    test_kinds();
    in_child("no cuBLASLt", missing);
    in_child("the real cuBLASLt", real);
    test_fake();
    CHECK_DONE();
}
