// gemm_probe: checks and times GEMM cubins built from templates/lib/wgmma.lua
// against cuBLAS in one process, outside the tuner (a development probe: the
// tuner's own measurements come from `aitune sweep`).
//
//   gemm_probe VARIANTS M N K [reps]
//
// VARIANTS is a text file, one kernel per line:
//   cubin kernel layout(nn|nt) bm bn threads smem persistent share abox bbox epi
// share: 0 none, 1 a cluster pair along M sharing B, 2 along N sharing A;
// abox/bbox: the rows of A's and B's TMA boxes; epi 1: D is stored through a
// tensor map (64 x 64 boxes), passed before D's pointer.
// Inputs are random normal bf16; each kernel's bf16 output is compared element
// by element with cuBLAS's (bf16 in, fp32 accumulate, bf16 out) after the
// output was poisoned with NaN; timing is the median of CUDA-event samples,
// each after a 256 MB L2 flush, for the kernel and cuBLAS alike.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { auto e_ = (x); if (e_ != 0) { fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)

static __global__ void fill(__nv_bfloat16* p, long long n, unsigned long long seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long z = seed + (unsigned long long)i * 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        float u1 = ((z >> 40) + 1) * (1.0f / 16777217.0f), u2 = ((z & 0xFFFFFF) + 0.5f) * (1.0f / 16777216.0f);
        p[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
    }
}

static __global__ void compare(const __nv_bfloat16* got, const __nv_bfloat16* want, long long n, float atol,
                               unsigned long long* bad, float* worst)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float g = __bfloat162float(got[i]), w = __bfloat162float(want[i]);
        float e = fabsf(g - w);
        if (!(e <= atol + 1.6e-2f * fabsf(w))) atomicAdd(bad, 1ull);
        if (e == e) atomicMax((int*)worst, __float_as_int(e));
        else atomicMax((int*)worst, 0x7f800000);
    }
}

struct Variant {
    std::string cubin, kernel, layout;
    int bm, bn, threads, smem, persistent, share, abox, bbox, epi, streamk;
};

typedef CUresult (*encode_fn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                              const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static CUtensorMap tmap2d(void* p, unsigned long long inner, unsigned long long outer, unsigned box_in, unsigned box_out)
{
    CUtensorMap m;
    cuuint64_t dims[2] = { inner, outer }, strides[1] = { inner * 2 };
    cuuint32_t box[2] = { box_in, box_out }, es[2] = { 1, 1 };
    CK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, es,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
}

int main(int argc, char** argv)
{
    if (argc < 5) { fprintf(stderr, "usage: gemm_probe VARIANTS M N K [reps]\n"); return 2; }
    long long M = atoll(argv[2]), N = atoll(argv[3]), K = atoll(argv[4]);
    int reps = argc > 5 ? atoi(argv[5]) : 30;
    std::vector<Variant> vs;
    FILE* f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    char c[512], k[128], l[8];
    Variant v;
    while (fscanf(f, "%511s %127s %7s %d %d %d %d %d %d %d %d %d %d", c, k, l, &v.bm, &v.bn, &v.threads, &v.smem, &v.persistent,
                  &v.share, &v.abox, &v.bbox, &v.epi, &v.streamk) == 13) {
        v.cubin = c, v.kernel = k, v.layout = l;
        vs.push_back(v);
    }
    fclose(f);
    CK(cuInit(0));
    CK(cudaFree(0));
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    __nv_bfloat16 *A, *B, *D, *R;
    CK(cudaMalloc(&A, M * K * 2));
    CK(cudaMalloc(&B, K * N * 2));
    CK(cudaMalloc(&D, M * N * 2));
    CK(cudaMalloc(&R, M * N * 2));
    void* flush;
    const size_t flush_bytes = 256 << 20;
    CK(cudaMalloc(&flush, flush_bytes));
    unsigned long long* bad;
    CK(cudaMalloc(&bad, 16));
    fill<<<1024, 256>>>(A, M * K, 1);
    fill<<<1024, 256>>>(B, K * N, 2);
    cublasHandle_t h;
    CK(cublasCreate(&h));
    void* ws;
    CK(cudaMalloc(&ws, 32 << 20));
    void* skws;
    CK(cudaMalloc(&skws, 64 << 20));
    CK(cudaMemset(skws, 0, 64 << 20));
    CK(cublasSetWorkspace(h, ws, 32 << 20));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const double flops = 2.0 * M * N * K;
    auto time_it = [&](auto&& launch) {
        for (int i = 0; i < 3; i++) launch();
        std::vector<float> t;
        for (int i = 0; i < reps; i++) {
            cudaMemsetAsync(flush, i & 0xFF, flush_bytes);
            cudaEventRecord(e0);
            launch();
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            t.push_back(ms);
        }
        CK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        return (double)t[t.size() / 2];
    };
    // cuBLAS (column-major): D^T = B^T A^T.
    const float one = 1.0f, zero = 0.0f;
    auto blas = [&](const char* layout, __nv_bfloat16* out) {
        bool nt = !strcmp(layout, "nt");
        CK(cublasGemmEx(h, nt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B, CUDA_R_16BF,
                        nt ? (int)K : (int)N, A, CUDA_R_16BF, (int)K, &zero, out, CUDA_R_16BF, (int)N,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    const float atol = 1e-4f * (float)K;
    printf("%-34s %6s %9s %9s %8s %12s %10s\n", "kernel", "layout", "ms", "TFLOP/s", "vs_blas", "wrong", "max_err");
    std::string last_layout;
    double blas_ms = 0;
    for (auto& x : vs) {
        if (x.layout != last_layout) {
            blas_ms = time_it([&] { blas(x.layout.c_str(), R); });
            printf("%-34s %6s %9.4f %9.1f %8s\n", "cublas", x.layout.c_str(), blas_ms, flops / blas_ms / 1e9, "1.000");
            last_layout = x.layout;
        }
        blas(x.layout.c_str(), R);
        CUmodule mod;
        CUfunction fn;
        CUresult lr = cuModuleLoad(&mod, x.cubin.c_str());
        if (lr) { printf("%-34s load failed (%d)\n", x.kernel.c_str(), (int)lr); continue; }
        CK(cuModuleGetFunction(&fn, mod, x.kernel.c_str()));
        CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, x.smem));
        bool nt = x.layout == "nt";
        CUtensorMap ta = tmap2d(A, K, M, 64, x.abox);
        CUtensorMap tb = nt ? tmap2d(B, K, N, 64, x.bbox) : tmap2d(B, N, K, 64, 64);
        long long um = (M + x.bm - 1) / x.bm, un = (N + x.bn - 1) / x.bn;
        if (x.share == 1) um = (um + 1) / 2;
        if (x.share == 2) un = (un + 1) / 2;
        const int per = x.share ? 2 : 1;
        unsigned grid = (unsigned)(x.streamk ? sms / per * per
                                   : x.persistent ? std::min<long long>(um * un, sms / per) * per : um * un * per);
        CUtensorMap td = tmap2d(D, N, M, 64, 64);
        // Stream-K: the workspace (tickets zeroed once: the kernel leaves them zero).
        void* args_direct[] = { &ta, &tb, &D, &M, &N, &K, &skws };
        void* args_tma[] = { &ta, &tb, &td, &D, &M, &N, &K, &skws };
        void** args = x.epi ? args_tma : args_direct;
        CUlaunchAttribute at;
        at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at.value.clusterDim.x = per, at.value.clusterDim.y = 1, at.value.clusterDim.z = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = x.threads, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.sharedMemBytes = x.smem;
        cfg.attrs = &at;
        cfg.numAttrs = 1;
        auto run = [&] {
            CUresult r = cuLaunchKernelEx(&cfg, fn, args, nullptr);
            if (r) { fprintf(stderr, "launch %s: %d\n", x.kernel.c_str(), (int)r); exit(1); }
        };
        CK(cudaMemset(D, 0xFF, M * N * 2));
        run();
        cudaError_t err = cudaDeviceSynchronize();
        if (err) { printf("%-34s FAULT %s\n", x.kernel.c_str(), cudaGetErrorString(err)); return 1; }
        CK(cudaMemset(bad, 0, 16));
        compare<<<1024, 256>>>(D, R, M * N, atol, bad, (float*)(bad + 1));
        unsigned long long hb[2];
        CK(cudaMemcpy(hb, bad, 16, cudaMemcpyDeviceToHost));
        float worst;
        memcpy(&worst, &hb[1], 4);
        double ms = time_it(run);
        printf("%-34s %6s %9.4f %9.1f %8.3f %12llu %10.3g\n", x.kernel.c_str(), x.layout.c_str(), ms, flops / ms / 1e9,
               blas_ms / ms, hb[0], worst);
        cuModuleUnload(mod);
    }
    return 0;
}
