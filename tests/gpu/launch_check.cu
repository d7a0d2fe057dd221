// launch_check: libaitune's aitune_launch against the whole-op emitted .cu
// (built in with -DFN=aitune_<op>_bf16) for an op of signature
// (const bf16* x, bf16* y, long long rows, long long cols), at one shape:
// both must write the same bits. Then, with --overhead, the host time of
// aitune_launch against a raw cuLaunchKernel of the same cubin.
//
//   launch_check REGISTRY OP ARCH ROWS COLS YSIZE(full|rows) [--overhead]
//
// Prints one line: "ok ..." or "FAIL ..."; exit 0 or 1. Built and run by
// tests/gpu/launch.sh.
#include <cuda.h>
#include <cuda_runtime.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include <algorithm>

#include "aitune.h"

#ifdef WITH_WS   // the emitted file has a kernel with a workspace: every launch takes ws
extern "C" cudaError_t FN(const unsigned short*, unsigned short*, long long, long long, void*, cudaStream_t);
#else
extern "C" cudaError_t FN(const unsigned short*, unsigned short*, long long, long long, cudaStream_t);
#endif
extern "C" size_t FN_WS(long long, long long);

#define CK(x) do { int e_ = (int)(x); if (e_) { printf("FAIL %s: error %d\n", #x, e_); exit(1); } } while (0)

static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

int main(int argc, char** argv)
{
    if (argc < 7) { fprintf(stderr, "usage: launch_check REGISTRY OP ARCH ROWS COLS full|rows [--overhead]\n"); return 2; }
    const char *db = argv[1], *op = argv[2], *arch = argv[3];
    long long shape[2] = { atoll(argv[4]), atoll(argv[5]) };
    size_t nx = (size_t)(shape[0] * shape[1]), ny = strcmp(argv[6], "rows") ? nx : (size_t)shape[0];
    int overhead = argc > 7 && !strcmp(argv[7], "--overhead");
    CK(cudaSetDevice(0));
    CK(cudaFree(0));   // the primary context, current in this thread
    std::vector<unsigned short> hx(nx);
    unsigned s = 12345;
    for (auto& v : hx) { s = s * 1664525u + 1013904223u; float f = ((s >> 8) / 16777216.0f - 0.5f) * 8; unsigned u; memcpy(&u, &f, 4); v = (unsigned short)(u >> 16); }
    unsigned short *x, *y1, *y2;
    CK(cudaMalloc(&x, nx * 2));
    CK(cudaMalloc(&y1, ny * 2));
    CK(cudaMalloc(&y2, ny * 2));
    CK(cudaMemcpy(x, hx.data(), nx * 2, cudaMemcpyHostToDevice));
    CK(cudaMemset(y1, 0xff, ny * 2));
    CK(cudaMemset(y2, 0xee, ny * 2));

    aitune* h;
    aitune_kernel* k;
    if (aitune_open(db, &h) != AITUNE_OK || aitune_kernel_get(h, op, arch, "bf16", shape, 2, &k) != AITUNE_OK) {
        printf("FAIL %s %lldx%lld: %s\n", op, shape[0], shape[1], aitune_errmsg(h));
        return 1;
    }
    aitune_kernel_info info;
    aitune_kernel_info_get(h, k, &info);
    unsigned long long ws = 0;
    aitune_kernel_workspace(h, k, shape, &ws);
    void* w = nullptr;
    if (ws) CK(cudaMalloc(&w, ws));
    aitune_arg args[5] = {};
    args[0].ptr = (unsigned long long)x;
    args[1].ptr = (unsigned long long)y1;
    args[4].ptr = (unsigned long long)w;
    if (aitune_launch(h, k, args, shape, nullptr) != AITUNE_OK) {
        printf("FAIL %s %lldx%lld: aitune_launch: %s\n", op, shape[0], shape[1], aitune_errmsg(h));
        return 1;
    }
    CK(cudaDeviceSynchronize());
    size_t ews = FN_WS(shape[0], shape[1]);
#ifdef WITH_WS
    void* w2 = nullptr;
    if (ews) {
        CK(cudaMalloc(&w2, ews));
        CK(cudaMemset(w2, 0, ews));
    }
    cudaError_t e = FN(x, y2, shape[0], shape[1], w2, 0);
#else
    cudaError_t e = ews ? cudaErrorInvalidValue : FN(x, y2, shape[0], shape[1], 0);
#endif
    if (e != cudaSuccess) {
        printf("FAIL %s %lldx%lld: the emitted launch: %s\n", op, shape[0], shape[1], cudaGetErrorString(e));
        return 1;
    }
    CK(cudaDeviceSynchronize());
    std::vector<unsigned short> a(ny), b(ny);
    CK(cudaMemcpy(a.data(), y1, ny * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), y2, ny * 2, cudaMemcpyDeviceToHost));
    size_t diff = 0;
    for (size_t i = 0; i < ny; i++) diff += a[i] != b[i];
    size_t poisoned = 0;
    for (size_t i = 0; i < ny; i++) poisoned += a[i] == 0xffff;
    int ok = diff == 0 && poisoned == 0;
    printf("%s %s bf16 %lldx%lld: aitune_launch (%s, %s %s) and the emitted file: %zu of %zu outputs differ, %zu unwritten\n",
           ok ? "ok  " : "FAIL", op, shape[0], shape[1], aitune_level_name(info.level), info.template_name, info.config,
           diff, ny, poisoned);
    if (ok && overhead) {
        // The same cubin through the driver, launched raw with the same geometry
        // as a baseline: read it from the registry.
        sqlite3* s3;
        sqlite3_stmt* st;
        CUmodule mod;
        CUfunction fn;
        sqlite3_open_v2(db, &s3, SQLITE_OPEN_READONLY, nullptr);
        sqlite3_prepare_v2(s3, "SELECT c.cubin, c.kernel FROM winners w JOIN cubins c ON c.hash = w.cubin "
                               "WHERE w.op = ? AND w.bucket = ?", -1, &st, nullptr);
        sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, info.bucket ? info.bucket : "", -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) { printf("skip overhead: no cubin for the bucket\n"); return 0; }
        CK(cuModuleLoadData(&mod, sqlite3_column_blob(st, 0)));
        CK(cuModuleGetFunction(&fn, mod, (const char*)sqlite3_column_text(st, 1)));
        sqlite3_finalize(st);
        sqlite3_close(s3);
        // The raw launch: grid and block from the plan are not known here, so
        // a 1-block launch of the same function is the floor of a driver launch.
        long long r = shape[0], c = shape[1];
        CUdeviceptr px = (CUdeviceptr)x, py = (CUdeviceptr)y1;
        void* params[] = { &px, &py, &r, &c };
        std::vector<double> raw, ours;
        for (int rep = 0; rep < 21; rep++) {
            CK(cudaDeviceSynchronize());
            double t0 = now();
            for (int i = 0; i < 200; i++) CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, nullptr));
            double t1 = now();
            CK(cudaDeviceSynchronize());
            double t2 = now();
            for (int i = 0; i < 200; i++)
                if (aitune_launch(h, k, args, shape, nullptr) != AITUNE_OK) { printf("FAIL overhead: %s\n", aitune_errmsg(h)); return 1; }
            double t3 = now();
            raw.push_back((t1 - t0) / 200 * 1e6);
            ours.push_back((t3 - t2) / 200 * 1e6);
        }
        std::sort(raw.begin(), raw.end());
        std::sort(ours.begin(), ours.end());
        CK(cudaDeviceSynchronize());
        printf("overhead %s: cuLaunchKernel %.2f us, aitune_launch %.2f us of host time per launch (median of 21 x 200); "
               "aitune_launch adds %.2f us\n", op, raw[10], ours[10], ours[10] - raw[10]);
    }
    aitune_close(h);
    return ok ? 0 : 1;
}
