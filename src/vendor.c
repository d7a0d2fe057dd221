/* vendor.c: see vendor.h. */
#define _GNU_SOURCE
#include "vendor.h"
#include <cublasLt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(field, exported symbol): the entry points used. */
#define LT_API(X) \
    X(Create, "cublasLtCreate") \
    X(Destroy, "cublasLtDestroy") \
    X(GetVersion, "cublasLtGetVersion") \
    X(GetStatusName, "cublasLtGetStatusName") \
    X(MatmulDescCreate, "cublasLtMatmulDescCreate") \
    X(MatmulDescDestroy, "cublasLtMatmulDescDestroy") \
    X(MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute") \
    X(MatrixLayoutCreate, "cublasLtMatrixLayoutCreate") \
    X(MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy") \
    X(MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate") \
    X(MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy") \
    X(MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute") \
    X(MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic") \
    X(MatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute") \
    X(Matmul, "cublasLtMatmul")

typedef struct lt_api {
#define LT_FIELD(name, sym) __typeof__(cublasLt##name) *name;
    LT_API(LT_FIELD)
#undef LT_FIELD
} lt_api;

static lt_api api;
static const lt_api *loaded;
static char load_why[768];
static char load_name[64];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The sonames of the cuBLAS releases whose cublasLt.h types this build
** uses (the ones here are stable across them), newest first. */
static const char *const sonames[] = { "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so" };

static void load(void)
{
    const char *env = getenv("AITUNE_CUBLASLT");
    const char *one[1] = { env };
    const char *const *names = env && *env ? one : sonames;
    int n = env && *env ? 1 : (int)(sizeof sonames / sizeof sonames[0]);
    void *h = NULL;
    char tried[256] = "", last[384] = "";
    for (int i = 0; i < n && !h; i++) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            snprintf(last, sizeof last, "%s", e ? e : "not found");
            size_t at = strlen(tried);
            snprintf(tried + at, sizeof tried - at, "%s%s", at ? ", " : "", names[i]);
        } else {
            snprintf(load_name, sizeof load_name, "%s", names[i]);
        }
    }
    if (!h) {
        snprintf(load_why, sizeof load_why,
                 "cannot open cuBLASLt (tried %s: %s): install the CUDA toolkit's cuBLAS, or set AITUNE_CUBLASLT to "
                 "its libcublasLt.so", tried, last);
        return;
    }
#define LT_LOAD(name, sym) \
    if (!(api.name = (__typeof__(api.name))dlsym(h, sym))) { \
        snprintf(load_why, sizeof load_why, "%s lacks %s: cuBLAS 12 or newer is needed", load_name, sym); \
        return; \
    }
    LT_API(LT_LOAD)
#undef LT_LOAD
    loaded = &api;
}

static const lt_api *lt(char *why, int whycap)
{
    pthread_once(&load_once, load);
    if (!loaded && why) snprintf(why, (size_t)whycap, "%s", load_why);
    return loaded;
}

int vendor_available(char *why, int whycap) { return lt(why, whycap) ? 0 : -1; }

void vendor_library(char *out, int cap)
{
    const lt_api *a = lt(NULL, 0);
    if (a) snprintf(out, (size_t)cap, "cuBLASLt %zu", a->GetVersion());
    else if (cap > 0) out[0] = '\0';
}

int vendor_is_template(const char *tmpl) { return tmpl && !strcmp(tmpl, VENDOR_TEMPLATE); }

/* ---- kinds ---- */

static const char *const ops[] = { "gemm_nt", "gemm_nn" };
static const struct { const char *name; cudaDataType_t in, out; } dtypes[] = {
    { "bf16", CUDA_R_16BF, CUDA_R_16BF },
    { "f16", CUDA_R_16F, CUDA_R_16F },
    { "bf16>f32", CUDA_R_16BF, CUDA_R_32F },
    { "f16>f32", CUDA_R_16F, CUDA_R_32F },
};
#define NDT (int)(sizeof dtypes / sizeof dtypes[0])

int vendor_kind(const char *op, const char *dtype)
{
    if (!op || !dtype) return -1;
    for (int o = 0; o < 2; o++)
        for (int d = 0; d < NDT; d++)
            if (!strcmp(op, ops[o]) && !strcmp(dtype, dtypes[d].name)) return o * NDT + d;
    return -1;
}

/* ---- handles and plans ---- */

#define NCHAINS 256     /* a power of two */

typedef struct vplan {
    struct vplan *next;         /* the chain; set before publishing */
    int kind;
    long long m, n, k;
    unsigned char align[3];     /* log2 of each pointer's alignment, up to 256 bytes */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    size_t ws;                  /* what the algorithm asked of the workspace */
} vplan;

struct vendor {
    const lt_api *lt;
    cublasLtHandle_t h;
    pthread_mutex_t mu;         /* building plans */
    vplan *chains[NCHAINS];     /* heads: atomic release/acquire */
    int nplans;
};

static int fail(char *err, int errcap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, int errcap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errcap > 0) vsnprintf(err, (size_t)errcap, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *status_name(const lt_api *a, cublasStatus_t s)
{
    const char *n = a->GetStatusName(s);
    return n ? n : "CUBLAS_STATUS_?";
}

int vendor_open(vendor **out, char *err, int errcap)
{
    *out = NULL;
    char why[768];
    const lt_api *a = lt(why, sizeof why);
    if (!a) return fail(err, errcap, "%s", why);
    vendor *v = calloc(1, sizeof *v);
    if (!v) return fail(err, errcap, "out of memory");
    v->lt = a;
    cublasStatus_t s = a->Create(&v->h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        free(v);
        return fail(err, errcap, "cublasLtCreate: %s (is there a GPU and a current CUDA context?)", status_name(a, s));
    }
    pthread_mutex_init(&v->mu, NULL);
    *out = v;
    return 0;
}

static void vplan_destroy(const lt_api *a, vplan *p)
{
    if (p->la) a->MatrixLayoutDestroy(p->la);
    if (p->lb) a->MatrixLayoutDestroy(p->lb);
    if (p->ld) a->MatrixLayoutDestroy(p->ld);
    if (p->desc) a->MatmulDescDestroy(p->desc);
    free(p);
}

void vendor_close(vendor *v)
{
    if (!v) return;
    for (int i = 0; i < NCHAINS; i++)
        for (vplan *p = v->chains[i], *next; p; p = next) {
            next = p->next;
            vplan_destroy(v->lt, p);
        }
    v->lt->Destroy(v->h);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

/* log2 of the largest power of two, up to 256, that divides address x. */
static unsigned char align_of(unsigned long long x)
{
    unsigned char e = 0;
    while (e < 8 && !(x & (1ull << e))) e++;
    return e;
}

static unsigned hash_of(int kind, const long long *s, const unsigned char *al)
{
    uint64_t x = (uint64_t)kind * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 3; i++) x = (x ^ (uint64_t)s[i]) * 0x9e3779b97f4a7c15ULL;
    x ^= (uint64_t)al[0] | (uint64_t)al[1] << 8 | (uint64_t)al[2] << 16;
    x *= 0x9e3779b97f4a7c15ULL;
    return (unsigned)(x >> 40) & (NCHAINS - 1);
}

#define LT(call, what) do { cublasStatus_t s_ = (call); \
    if (s_ != CUBLAS_STATUS_SUCCESS) { vplan_destroy(a, p); return fail(err, errcap, "%s: %s", what, status_name(a, s_)); } \
} while (0)

/* Descriptors and the heuristic's algorithm for one problem (the caller
** holds the lock). */
static int build(vendor *v, int kind, const long long *s, const unsigned char *al, vplan **out, char *err, int errcap)
{
    const lt_api *a = v->lt;
    vplan *p = calloc(1, sizeof *p);
    if (!p) return fail(err, errcap, "out of memory");
    p->kind = kind;
    p->m = s[0], p->n = s[1], p->k = s[2];
    memcpy(p->align, al, 3);
    int nn = kind / NDT == 1;
    cudaDataType_t in = dtypes[kind % NDT].in, dt_out = dtypes[kind % NDT].out;
    /* Column-major Dᵀ (n x m) = op(B's buffer) · A's buffer (k x m). */
    cublasOperation_t ta = nn ? CUBLAS_OP_N : CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT(a->MatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    LT(a->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "set TRANSA");
    LT(a->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "set TRANSB");
    uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
    /* B's buffer: gemm_nt n x k row-major = k x n column-major (ld k);
    ** gemm_nn k x n row-major = n x k column-major (ld n). */
    LT(nn ? a->MatrixLayoutCreate(&p->la, in, n, k, (int64_t)n) : a->MatrixLayoutCreate(&p->la, in, k, n, (int64_t)k),
       "cublasLtMatrixLayoutCreate (B)");
    LT(a->MatrixLayoutCreate(&p->lb, in, k, m, (int64_t)k), "cublasLtMatrixLayoutCreate (A)");
    LT(a->MatrixLayoutCreate(&p->ld, dt_out, n, m, (int64_t)n), "cublasLtMatrixLayoutCreate (D)");
    cublasLtMatmulPreference_t pref = NULL;
    LT(a->MatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    uint64_t ws = VENDOR_WORKSPACE;
    /* cuBLASLt's own A is our B and its B our A; C and D are D. */
    uint32_t al_a = 1u << al[1], al_b = 1u << al[0], al_d = 1u << al[2];
    cublasStatus_t st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d, sizeof al_d);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof al_d);
    /* Split-K parts added in fp32 or not split: a scheme that adds them in
    ** the output type (bf16 in place, or a bf16 workspace) rounds each part,
    ** and a misaligned A drew one 7 ulps off the reference (bench/RESULTS.md,
    ** 2026-11-27 vendor check); the candidates it races add in fp32. */
    uint32_t red = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &red, sizeof red);
    cublasLtMatmulHeuristicResult_t r;
    memset(&r, 0, sizeof r);
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = a->MatmulAlgoGetHeuristic(v->h, p->desc, p->la, p->lb, p->ld, p->ld, pref, 1, &r, &found);
    a->MatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) {
        vplan_destroy(a, p);
        return fail(err, errcap, "cublasLtMatmulAlgoGetHeuristic: %s", status_name(a, st));
    }
    if (found < 1 || r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > VENDOR_WORKSPACE) {
        vplan_destroy(a, p);
        return fail(err, errcap, "cuBLASLt has no algorithm for %s %s at m=%lld n=%lld k=%lld", ops[kind / NDT],
                    dtypes[kind % NDT].name, s[0], s[1], s[2]);
    }
    p->algo = r.algo;
    p->ws = r.workspaceSize;
    *out = p;
    return 0;
}

/* The vplan for a problem, built on first use. */
static int get(vendor *v, int kind, const long long *s, unsigned long long a, unsigned long long b,
               unsigned long long d, const vplan **out, char *err, int errcap)
{
    if (!v || kind < 0 || kind >= 2 * NDT || !s) return fail(err, errcap, "vendor: bad arguments");
    for (int i = 0; i < 3; i++)
        if (s[i] < 1 || s[i] > INT32_MAX)
            return fail(err, errcap, "vendor: %c = %lld is out of range", "mnk"[i], s[i]);
    unsigned char al[3] = { align_of(a), align_of(b), align_of(d) };
    vplan **chain = &v->chains[hash_of(kind, s, al)];
    for (int locked = 0;; locked = 1) {
        for (vplan *p = __atomic_load_n(chain, __ATOMIC_ACQUIRE); p; p = p->next)
            if (p->kind == kind && p->m == s[0] && p->n == s[1] && p->k == s[2] && !memcmp(p->align, al, 3)) {
                if (locked) pthread_mutex_unlock(&v->mu);
                *out = p;
                return 0;
            }
        if (locked) break;
        pthread_mutex_lock(&v->mu);   /* look again: another thread may have built it */
    }
    int rc;
    vplan *p = NULL;
    if (v->nplans >= VENDOR_MAXPLANS)
        rc = fail(err, errcap, "vendor: more than %d problem shapes in one handle", VENDOR_MAXPLANS);
    else
        rc = build(v, kind, s, al, &p, err, errcap);
    if (!rc) {
        p->next = *chain;
        __atomic_store_n(chain, p, __ATOMIC_RELEASE);
        v->nplans++;
        *out = p;
    }
    pthread_mutex_unlock(&v->mu);
    return rc;
}

int vendor_gemm(vendor *v, int kind, const long long *shape, unsigned long long a, unsigned long long b,
                unsigned long long d, unsigned long long ws, void *stream, char *err, int errcap)
{
    const vplan *p;
    if (get(v, kind, shape, a, b, d, &p, err, errcap)) return -1;
    if (!a || !b || !d || (!ws && p->ws)) return fail(err, errcap, "vendor: a NULL buffer or workspace");
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = v->lt->Matmul(v->h, p->desc, &one, (const void *)(uintptr_t)b, p->la, (const void *)(uintptr_t)a,
                                     p->lb, &zero, (const void *)(uintptr_t)d, p->ld, (void *)(uintptr_t)d, p->ld,
                                     &p->algo, (void *)(uintptr_t)ws, ws ? VENDOR_WORKSPACE : 0, (cudaStream_t)stream);
    if (s != CUBLAS_STATUS_SUCCESS) return fail(err, errcap, "cublasLtMatmul: %s", status_name(v->lt, s));
    return 0;
}

int vendor_describe(vendor *v, int kind, const long long *shape, unsigned long long a, unsigned long long b,
                    unsigned long long d, char *out, int cap, char *err, int errcap)
{
    const vplan *p;
    if (get(v, kind, shape, a, b, d, &p, err, errcap)) return -1;
    int32_t id = -1;
    uint32_t tile = 0, stages = 0, splitk = 0;
    size_t got;
    v->lt->MatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
    v->lt->MatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
    v->lt->MatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &got);
    v->lt->MatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &got);
    snprintf(out, (size_t)cap, "algo %d tile %u stages %u splitk %u ws %zu", (int)id, tile, stages, splitk, p->ws);
    return 0;
}
