/*
** fake_cublaslt: a libcublasLt.so that computes on the host, so the vendor
** module (src/vendor.c) can be tested without a GPU: vendor_gemm is called
** with host addresses, and cublasLtMatmul here does what cuBLASLt documents
** (column-major layouts, op(A) and op(B) by the descriptor's TRANSA and
** TRANSB, D = alpha op(A) op(B) + beta C, bf16/f16/f32 elements, fp32
** accumulation, the output rounded to nearest even). A test that compares
** the row-major product it wanted with what comes back checks the layout
** mapping vendor.c chose, which is the part a GPU run would only show as
** wrong numbers.
**
** Selected with AITUNE_CUBLASLT=build/tests/fake_cublaslt.so. Faults, by
** shape: a problem with K = 13 has no algorithm (the heuristic returns
** none); one with M = 17 (cuBLASLt's M: the row-major product's n) fails
** in cublasLtMatmul (CUBLAS_STATUS_EXECUTION_FAILED). fake_lt_counts() (dlsym it) reports
** the calls made and the last alignment preferences.
*/
#include <cublasLt.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct fdesc { int ta, tb; cublasComputeType_t compute; cudaDataType_t scale; } fdesc;
typedef struct flayout { cudaDataType_t type; uint64_t rows, cols; int64_t ld; } flayout;
typedef struct fpref { uint64_t ws; uint32_t align[4], reduction; } fpref;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int n_handles, n_heuristics, n_matmuls;
static uint32_t last_align[4], last_reduction;
static void *last_stream;

/* Counters for the test: handles alive, heuristic and matmul calls, the
** last heuristic's minimum alignments (A, B, C, D) and the last stream. */
void fake_lt_counts(int *handles, int *heuristics, int *matmuls, uint32_t *align, void **stream)
{
    pthread_mutex_lock(&mu);
    *handles = n_handles;
    *heuristics = n_heuristics;
    *matmuls = n_matmuls;
    memcpy(align, last_align, sizeof last_align);
    *stream = last_stream;
    pthread_mutex_unlock(&mu);
}

/* The last heuristic's reduction scheme mask (cuBLASLt's default: all). */
uint32_t fake_lt_reduction(void)
{
    pthread_mutex_lock(&mu);
    uint32_t r = last_reduction;
    pthread_mutex_unlock(&mu);
    return r;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = (cublasLtHandle_t)malloc(16);
    pthread_mutex_lock(&mu);
    n_handles++;
    pthread_mutex_unlock(&mu);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    free(h);
    pthread_mutex_lock(&mu);
    n_handles--;
    pthread_mutex_unlock(&mu);
    return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) { return 990001; }

const char *cublasLtGetStatusName(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_?";
    }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute, cudaDataType_t scale)
{
    fdesc *x = calloc(1, sizeof *x);
    x->compute = compute;
    x->scale = scale;
    *d = (cublasLtMatmulDesc_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t n)
{
    fdesc *x = (fdesc *)d;
    int32_t v;
    if (n != sizeof v) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&v, buf, sizeof v);
    if (attr == CUBLASLT_MATMUL_DESC_TRANSA) x->ta = v == CUBLAS_OP_T;
    else if (attr == CUBLASLT_MATMUL_DESC_TRANSB) x->tb = v == CUBLAS_OP_T;
    else return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld)
{
    if (ld < (int64_t)rows) return CUBLAS_STATUS_INVALID_VALUE;   /* column-major: ld >= rows */
    flayout *x = calloc(1, sizeof *x);
    x->type = type;
    x->rows = rows;
    x->cols = cols;
    x->ld = ld;
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    fpref *x = calloc(1, sizeof *x);
    for (int i = 0; i < 4; i++) x->align[i] = 256;
    x->reduction = CUBLASLT_REDUCTION_SCHEME_MASK;
    *p = (cublasLtMatmulPreference_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                                                    const void *buf, size_t n)
{
    fpref *x = (fpref *)p;
    if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && n == 8) memcpy(&x->ws, buf, 8);
    else if (a >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES && a <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES && n == 4)
        memcpy(&x->align[a - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf, 4);
    else if (a == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK && n == 4) memcpy(&x->reduction, buf, 4);
    else return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* op(X)'s rows and columns for a layout. */
static void op_dims(const flayout *l, int t, uint64_t *r, uint64_t *c)
{
    *r = t ? l->cols : l->rows;
    *c = t ? l->rows : l->cols;
}

static int shapes_agree(const fdesc *d, const flayout *a, const flayout *b, const flayout *c, const flayout *dd)
{
    uint64_t am, ak, bk, bn;
    op_dims(a, d->ta, &am, &ak);
    op_dims(b, d->tb, &bk, &bn);
    return ak == bk && c->rows == am && c->cols == bn && dd->rows == am && dd->cols == bn && c->type == dd->type &&
           a->type == b->type;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
                                              cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                                              cublasLtMatmulPreference_t pref, int want,
                                              cublasLtMatmulHeuristicResult_t *res, int *got)
{
    (void)h;
    const fdesc *d = (const fdesc *)desc;
    const flayout *a = (const flayout *)A, *b = (const flayout *)B, *c = (const flayout *)C, *dd = (const flayout *)D;
    const fpref *p = (const fpref *)pref;
    pthread_mutex_lock(&mu);
    n_heuristics++;
    memcpy(last_align, p->align, sizeof last_align);
    last_reduction = p->reduction;
    pthread_mutex_unlock(&mu);
    *got = 0;
    if (want < 1 || !shapes_agree(d, a, b, c, dd)) return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t am, ak;
    op_dims(a, d->ta, &am, &ak);
    if (ak == 13) return CUBLAS_STATUS_NOT_SUPPORTED;   /* a problem with no algorithm */
    memset(&res[0], 0, sizeof res[0]);
    res[0].algo.data[0] = 42;
    res[0].algo.data[1] = am;
    res[0].workspaceSize = p->ws < 4096 ? p->ws : 4096;
    res[0].state = CUBLAS_STATUS_SUCCESS;
    *got = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a,
                                                    void *buf, size_t n, size_t *written)
{
    uint32_t v = a == CUBLASLT_ALGO_CONFIG_ID ? (uint32_t)algo->data[0] : a == CUBLASLT_ALGO_CONFIG_SPLITK_NUM ? 1u : 7u;
    if (n < sizeof v) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &v, sizeof v);
    *written = sizeof v;
    return CUBLAS_STATUS_SUCCESS;
}

static float load(cudaDataType_t t, const void *base, uint64_t i)
{
    if (t == CUDA_R_32F) return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    if (t == CUDA_R_16BF) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

static void store(cudaDataType_t t, void *base, uint64_t i, float f)
{
    if (t == CUDA_R_32F) { ((float *)base)[i] = f; return; }
    if (t == CUDA_R_16BF) {
        uint32_t u;
        memcpy(&u, &f, 4);
        u += 0x7fff + ((u >> 16) & 1);   /* round to nearest even */
        ((uint16_t *)base)[i] = (uint16_t)(u >> 16);
        return;
    }
    /* f16, round to nearest even, for the normal range the tests use. */
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = fabsf(f);
    uint16_t h;
    if (a == 0) h = 0;
    else {
        int e;
        float m = frexpf(a, &e);          /* a = m 2^e, m in [0.5, 1) */
        int he = e - 1 + 15;
        if (he <= 0) h = (uint16_t)lrintf(ldexpf(a, 24));
        else {
            long q = lrintf(ldexpf(m, 11));   /* 11 bits, 1024..2048 */
            if (q == 2048) { q = 1024; he++; }
            h = he >= 31 ? 0x7c00 : (uint16_t)((he << 10) | (q & 1023));
        }
    }
    ((uint16_t *)base)[i] = sign | h;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsbytes, cudaStream_t stream)
{
    (void)h;
    const fdesc *d = (const fdesc *)desc;
    const flayout *a = (const flayout *)Ad, *b = (const flayout *)Bd, *c = (const flayout *)Cd, *dd = (const flayout *)Dd;
    pthread_mutex_lock(&mu);
    n_matmuls++;
    last_stream = stream;
    pthread_mutex_unlock(&mu);
    if (!algo || algo->data[0] != 42 || !shapes_agree(d, a, b, c, dd) || (wsbytes && !ws) ||
        d->compute != CUBLAS_COMPUTE_32F || d->scale != CUDA_R_32F)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t M, K, N, k2;
    op_dims(a, d->ta, &M, &K);
    op_dims(b, d->tb, &k2, &N);
    if (M == 17) return CUBLAS_STATUS_EXECUTION_FAILED;
    float al, be;
    memcpy(&al, alpha, 4);
    memcpy(&be, beta, 4);
    for (uint64_t j = 0; j < N; j++)
        for (uint64_t i = 0; i < M; i++) {
            float acc = 0;
            for (uint64_t p = 0; p < K; p++) {
                float x = load(a->type, A, d->ta ? p + i * (uint64_t)a->ld : i + p * (uint64_t)a->ld);
                float y = load(b->type, B, d->tb ? j + p * (uint64_t)b->ld : p + j * (uint64_t)b->ld);
                acc += x * y;
            }
            float cv = be != 0 ? load(c->type, C, i + j * (uint64_t)c->ld) : 0;
            store(dd->type, D, i + j * (uint64_t)dd->ld, al * acc + be * cv);
        }
    return CUBLAS_STATUS_SUCCESS;
}
