// mma_aligned_check: one mma kernel (templates/lib/mma.lua, its source as
// `kernel_sample sources -o` writes it) on the GPU, outside the tuner, so
// what no sweep reaches is checked: operands at any offset from 16 bytes
// (the worker's buffers are always aligned) and shapes of another class
// than the kernel's bucket. Built by tests/gpu/mma_aligned.sh:
//   nvcc -arch=sm_90a -std=c++17 -O2 -DSRC='"k.cu"' -DKERNEL=aitune_gemm_nt_xxxxxxxx [-DOUT_F32] mma_aligned_check.cu
//   mma_aligned_check M N K AOFF BOFF REPS [ROWS]
// A and B start AOFF and BOFF elements past 256-byte-aligned allocations.
// D is poisoned with NaN; every output of a sample of about ROWS rows
// (default 61; every row when m is at most that; 0: none, a timing run) is
// compared with an fp64 reference within lib/gemm.lua's tolerance
// (inputs are multiples of 1/8 in [-2, 2]: exact products). Then REPS
// launches back to back are timed with events; the median is printed.
// One line: "ok ..." or "FAIL ...", exit 0 or 1.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include SRC

#ifdef OUT_F32
typedef float out_host;
#else
typedef unsigned short out_host;
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static float bf16_value(unsigned short h) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; }
static unsigned short bf16_of(float f) { unsigned u; memcpy(&u, &f, 4); return (unsigned short)(u >> 16); }   // exact for these inputs

int main(int argc, char** argv)
{
    if (argc != 7 && argc != 8) { fprintf(stderr, "usage: mma_aligned_check M N K AOFF BOFF REPS [ROWS]\n"); return 2; }
    const long long rows = argc == 8 ? atoll(argv[7]) : 61;
    const long long m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
    const int aoff = atoi(argv[4]), boff = atoi(argv[5]), reps = atoi(argv[6]);
    if (m < 1 || n < 1 || k < 1 || aoff < 0 || boff < 0 || reps < 1 || rows < 0) { fprintf(stderr, "mma_aligned_check: bad arguments\n"); return 2; }
    std::vector<unsigned short> ha(m * k), hb(k * n);
    unsigned s = 2024;
    auto next = [&]() { s = s * 1664525u + 1013904223u; return bf16_of((float)((int)((s >> 10) % 33) - 16) / 8.0f); };
    for (auto& v : ha) v = next();
    for (auto& v : hb) v = next();
    unsigned short *abuf, *bbuf;
    out_host* d;
    CK(cudaMalloc(&abuf, (m * k + aoff) * 2 + 256));
    CK(cudaMalloc(&bbuf, (k * n + boff) * 2 + 256));
    CK(cudaMalloc(&d, m * n * sizeof(out_host)));
    unsigned short* a = abuf + aoff;
    unsigned short* b = bbuf + boff;
    CK(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xff, m * n * sizeof(out_host)));   // NaN in bf16 and f32

    const int smem = STAGES * (BM * BK + BK * BN) * 2;
    const unsigned grid = (unsigned)(((m + BM - 1) / BM) * ((n + BN - 1) / BN));
    CK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    KERNEL<<<grid, THREADS, smem>>>(a, b, (OUT_T*)d, m, n, k);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    std::vector<out_host> o(m * n);
    CK(cudaMemcpy(o.data(), d, o.size() * sizeof(out_host), cudaMemcpyDeviceToHost));
#ifdef OUT_F32
    const double rtol = 1e-5, atol = 2e-6 * (double)k;
#else
    const double rtol = 1.6e-2, atol = 1e-4 * (double)k;
#endif
    size_t wrong = 0, checked = 0;
    const long long step = m > rows ? (rows ? m / rows : m) : 1;
    for (long long r = 0; rows && r < m; r += step)
        for (long long c = 0; c < n; c++) {
            double ref = 0;
            for (long long q = 0; q < k; q++)
                ref += (double)bf16_value(ha[r * k + q]) * bf16_value(NN ? hb[q * n + c] : hb[c * k + q]);
#ifdef OUT_F32
            const double got = o[r * n + c];
#else
            const double got = bf16_value(o[r * n + c]);
#endif
            checked++;
            if (!(fabs(got - ref) <= atol + rtol * fabs(ref))) {
                if (wrong < 3) fprintf(stderr, "D[%lld][%lld] = %g, want %g\n", r, c, got, ref);
                wrong++;
            }
        }

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(e0));
        KERNEL<<<grid, THREADS, smem>>>(a, b, (OUT_T*)d, m, n, k);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms[i], e0, e1));
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    const double us = 1000.0 * ms[reps / 2];
    printf("%s %s %lldx%lldx%lld A +%d B +%d elements: %zu of %zu checked outside the tolerance; median %.2f us "
           "(%.1f TFLOP/s)\n", wrong ? "FAIL" : "ok  ", NN ? "nn" : "nt", m, n, k, aoff, boff, wrong, checked, us,
           2.0 * m * n * k / us / 1e6);
    return wrong ? 1 : 0;
}
