// gemm_launch_check: a GEMM op's tuned kernel through libaitune
// (aitune_launch) against the whole-op emitted .cu (built in with
// -DFN=aitune_<op>_<dtype>, -DOUT_F32 when the output is f32), at one shape:
// both must write the same bits, every output written; and both must agree
// with a plain fp64 reference within the op's tolerance (lib/gemm.lua).
//
//   gemm_launch_check REGISTRY OP(gemm_nn|gemm_nt) ARCH DTYPE M N K
//
// Prints one line, "ok ..." or "FAIL ...", and exits 0 or 1. Built and run by
// tests/gpu/gemm_launch.sh.
#include <cuda.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "aitune.h"

#ifdef OUT_F32
typedef float out_t;
#else
typedef unsigned short out_t;
#endif
// -DWITH_WS: the emitted op takes a workspace (one of its kernels has one)
// and says its size through FN_workspace_bytes.
#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#ifdef WITH_WS
extern "C" size_t PASTE(FN, _workspace_bytes)(long long, long long, long long);
extern "C" cudaError_t FN(const unsigned short*, const unsigned short*, out_t*, long long, long long, long long, void*,
                          cudaStream_t);
#else
extern "C" cudaError_t FN(const unsigned short*, const unsigned short*, out_t*, long long, long long, long long,
                          cudaStream_t);
#endif

#define CK(x) do { int e_ = (int)(x); if (e_) { printf("FAIL %s: error %d\n", #x, e_); exit(1); } } while (0)

static float from16(unsigned short h, bool bf)
{
    if (bf) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; }
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

static unsigned short to16(float f, bool bf)
{
    if (bf) { unsigned u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
    return (unsigned short)0;   // not used: inputs are made from bf16 or f16 bit patterns below
}

static float out_value(out_t v, bool bf)
{
#ifdef OUT_F32
    (void)bf;
    return v;
#else
    return from16(v, bf);
#endif
}

int main(int argc, char** argv)
{
    if (argc < 8) { fprintf(stderr, "usage: gemm_launch_check REGISTRY OP ARCH DTYPE M N K\n"); return 2; }
    const char *db = argv[1], *op = argv[2], *arch = argv[3], *dtype = argv[4];
    long long shape[3] = { atoll(argv[5]), atoll(argv[6]), atoll(argv[7]) };
    const long long M = shape[0], N = shape[1], K = shape[2];
    const bool nt = !strcmp(op, "gemm_nt"), bf = !strncmp(dtype, "bf16", 4);
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    // Inputs: small integers times 1/8 in [-2, 2], exact in bf16 and f16, so
    // the fp64 reference is exact and only the output rounding differs.
    std::vector<unsigned short> ha(M * K), hb(K * N);
    unsigned s = 2024;
    auto next = [&](void) {
        s = s * 1664525u + 1013904223u;
        float v = (float)((int)((s >> 10) % 33) - 16) / 8.0f;
        if (bf) return to16(v, true);
        // f16 of v: v is a multiple of 1/8 with |v| <= 2.
        unsigned short h = 0;
        if (v != 0.0f) {
            int e;
            float fr = frexpf(fabsf(v), &e);    // |v| = fr * 2^e, fr in [0.5, 1)
            unsigned mant = (unsigned)lrintf((fr * 2.0f - 1.0f) * 1024.0f);
            h = (unsigned short)(((unsigned)(e - 1 + 15) << 10) | mant | (v < 0 ? 0x8000u : 0u));
        }
        return h;
    };
    for (auto& v : ha) v = next();
    for (auto& v : hb) v = next();
    unsigned short *a, *b;
    out_t *d1, *d2;
    CK(cudaMalloc(&a, ha.size() * 2));
    CK(cudaMalloc(&b, hb.size() * 2));
    CK(cudaMalloc(&d1, M * N * sizeof(out_t)));
    CK(cudaMalloc(&d2, M * N * sizeof(out_t)));
    CK(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemset(d1, 0xff, M * N * sizeof(out_t)));   // NaN in every output type
    CK(cudaMemset(d2, 0xff, M * N * sizeof(out_t)));

    aitune* h;
    aitune_kernel* k;
    if (aitune_open(db, &h) != AITUNE_OK || aitune_kernel_get(h, op, arch, dtype, shape, 3, &k) != AITUNE_OK) {
        printf("FAIL %s %s %lldx%lldx%lld: %s\n", op, dtype, M, N, K, aitune_errmsg(h));
        return 1;
    }
    aitune_kernel_info info;
    aitune_kernel_info_get(h, k, &info);
    aitune_arg args[7] = {};
    args[0].ptr = (unsigned long long)a;
    args[1].ptr = (unsigned long long)b;
    args[2].ptr = (unsigned long long)d1;
    // A kernel with a workspace takes it as the entry after the op's
    // arguments (A, B, D, m, n, k); aitune_launch zeroes what must be.
    unsigned long long wsb = 0;
    void *ws1 = nullptr, *ws2 = nullptr;
    if (aitune_kernel_workspace(h, k, shape, &wsb) != AITUNE_OK) {
        printf("FAIL %s %s %lldx%lldx%lld: aitune_kernel_workspace: %s\n", op, dtype, M, N, K, aitune_errmsg(h));
        return 1;
    }
    if (wsb) {
        CK(cudaMalloc(&ws1, wsb));
        CK(cudaMemset(ws1, 0xff, wsb));   // garbage: only what the plan says is zeroed may be relied on
        args[6].ptr = (unsigned long long)ws1;
    }
    if (aitune_launch(h, k, args, shape, nullptr) != AITUNE_OK) {
        printf("FAIL %s %s %lldx%lldx%lld: aitune_launch: %s\n", op, dtype, M, N, K, aitune_errmsg(h));
        return 1;
    }
    CK(cudaDeviceSynchronize());
#ifdef WITH_WS
    const size_t wsb2 = PASTE(FN, _workspace_bytes)(M, N, K);
    if (wsb2) {
        CK(cudaMalloc(&ws2, wsb2));
        CK(cudaMemset(ws2, 0, wsb2));     // the emitted file asks for a zeroed workspace
    }
    cudaError_t e = FN(a, b, d2, M, N, K, ws2, 0);
#else
    cudaError_t e = FN(a, b, d2, M, N, K, 0);
#endif
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("FAIL %s %s %lldx%lldx%lld: the emitted launch: %s\n", op, dtype, M, N, K, cudaGetErrorString(e));
        return 1;
    }
    std::vector<out_t> o1(M * N), o2(M * N);
    CK(cudaMemcpy(o1.data(), d1, o1.size() * sizeof(out_t), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o2.data(), d2, o2.size() * sizeof(out_t), cudaMemcpyDeviceToHost));
    size_t diff = (size_t)0, wrong = 0, checked = 0;
    for (size_t i = 0; i < o1.size(); i++) diff += memcmp(&o1[i], &o2[i], sizeof(out_t)) != 0;
    // The reference on a sample of rows (every row when small): fp64 sums of
    // exact products; tolerance as lib/gemm.lua's for the output type.
    const double rtol = sizeof(out_t) == 4 ? 1e-5 : (bf ? 1.6e-2 : 2e-3);
    const double atol = (sizeof(out_t) == 4 ? 2e-6 : 1e-4) * (double)K;
    const long long step = M > 64 ? M / 61 : 1;
    for (long long r = 0; r < M; r += step) {
        for (long long c = 0; c < N; c++) {
            double ref = 0;
            for (long long q = 0; q < K; q++)
                ref += (double)from16(ha[r * K + q], bf) * from16(nt ? hb[c * K + q] : hb[q * N + c], bf);
            double got = out_value(o1[r * N + c], bf);
            checked++;
            if (!(fabs(got - ref) <= atol + rtol * fabs(ref))) wrong++;
        }
    }
    int ok = diff == 0 && wrong == 0;
    printf("%s %s %s %lldx%lldx%lld: aitune_launch (%s, bucket %s, %s %s) vs the emitted file: %zu of %zu outputs differ; "
           "vs the fp64 reference: %zu of %zu checked outside the tolerance\n",
           ok ? "ok  " : "FAIL", op, dtype, M, N, K, aitune_level_name(info.level), info.bucket ? info.bucket : "-",
           info.template_name, info.config,
           diff, o1.size(), wrong, checked);
    aitune_close(h);
    return ok ? 0 : 1;
}
