// emit_check: does an emitted .cu compute bit for bit what the swept kernel
// (the registry's NVRTC cubin) computes? Built by tests/gpu/run.sh with the
// emitted file; MODE selects the op's signature.
//   emit_check CUBIN KERNEL N GX BX
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#if defined(MODE_AXPY_F32)
extern "C" cudaError_t aitune_axpy_f32(const float*, float*, float, long long, cudaStream_t);
typedef float Tin; typedef float Tout;
#elif defined(MODE_CAST_F32_BF16)
extern "C" cudaError_t aitune_cast_f32_to_bf16(const float*, unsigned short*, long long, cudaStream_t);
typedef float Tin; typedef unsigned short Tout;
#else
#error "define MODE_AXPY_F32 or MODE_CAST_F32_BF16"
#endif

#define CK(x) do { int e_ = (int)(x); if (e_) { fprintf(stderr, "FAIL %s: error %d\n", #x, e_); exit(1); } } while (0)

int main(int argc, char** argv)
{
    if (argc != 6) { fprintf(stderr, "usage: emit_check CUBIN KERNEL N GX BX\n"); return 2; }
    long long n = atoll(argv[3]);
    unsigned gx = (unsigned)atoi(argv[4]), bx = (unsigned)atoi(argv[5]);
    std::vector<Tin> hx(n);
    std::vector<Tout> hy(n);
    unsigned long long s = 12345;
    for (long long i = 0; i < n; i++) {   // random normal-ish values, never zeros
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        float u = ((s >> 40) + 0.5f) / 16777216.0f;
        hx[i] = (Tin)((u - 0.5f) * 7.0f);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        hy[i] = (Tout)(s >> 33);
#if defined(MODE_AXPY_F32)
        hy[i] = (Tout)(((s >> 40) + 0.5f) / 16777216.0f - 0.5f);
#endif
    }
    CK(cuInit(0));
    CUdevice dev; CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    Tin* x; Tout *ya, *yb;
    CK(cudaMalloc(&x, n * sizeof(Tin)));
    CK(cudaMalloc(&ya, n * sizeof(Tout)));
    CK(cudaMalloc(&yb, n * sizeof(Tout)));
    CK(cudaMemcpy(x, hx.data(), n * sizeof(Tin), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ya, hy.data(), n * sizeof(Tout), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(yb, hy.data(), n * sizeof(Tout), cudaMemcpyHostToDevice));
    // The emitted kernel, through its own host function.
#if defined(MODE_AXPY_F32)
    CK(aitune_axpy_f32(x, ya, 0.75f, n, 0));
#else
    CK(aitune_cast_f32_to_bf16(x, ya, n, 0));
#endif
    CK(cudaDeviceSynchronize());
    // The swept kernel: the registry's cubin, launched with the registry's geometry.
    CUmodule mod; CUfunction fn;
    CK(cuModuleLoad(&mod, argv[1]));
    CK(cuModuleGetFunction(&fn, mod, argv[2]));
    float a = 0.75f;
#if defined(MODE_AXPY_F32)
    void* params[] = { &x, &yb, &a, &n };
#else
    void* params[] = { &x, &yb, &n };
    (void)a;
#endif
    CK(cuLaunchKernel(fn, gx, 1, 1, bx, 1, 1, 0, 0, params, NULL));
    CK(cuCtxSynchronize());
    std::vector<Tout> ra(n), rb(n);
    CK(cudaMemcpy(ra.data(), ya, n * sizeof(Tout), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rb.data(), yb, n * sizeof(Tout), cudaMemcpyDeviceToHost));
    long long diff = 0, changed = 0;
    for (long long i = 0; i < n; i++) {
        diff += memcmp(&ra[i], &rb[i], sizeof(Tout)) != 0;
        changed += memcmp(&ra[i], &hy[i], sizeof(Tout)) != 0;
    }
    printf("%s: %lld elements, %lld differ bitwise, %lld written\n", argv[2], n, diff, changed);
    return diff == 0 && changed > n / 2 ? 0 : 1;
}
