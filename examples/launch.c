/*
** launch: run a tuned kernel through libaitune, as an application would.
**
**     launch REGISTRY ROWS COLS      (softmax, bf16, on GPU 0)
**
** Fills x with ones (bf16 0x3f80), runs the registry's softmax for the
** shape, and checks that every y is 1/COLS. Needs a GPU and libcuda; the
** application links -laitune (and -lcuda for its own calls).
*/
#include "aitune.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s: CUDA error %d\n", #x, (int)r_); return 1; } } while (0)

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: launch REGISTRY ROWS COLS\n");
        return 2;
    }
    long long shape[2] = { atoll(argv[2]), atoll(argv[3]) };
    size_t n = (size_t)(shape[0] * shape[1]);
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    int major, minor;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", major, minor);

    aitune *h;
    aitune_kernel *k;
    if (aitune_open(argv[1], &h) != AITUNE_OK || aitune_kernel_get(h, "softmax", arch, "bf16", shape, 2, &k) != AITUNE_OK) {
        fprintf(stderr, "%s\n", aitune_errmsg(h));
        aitune_close(h);
        return 1;
    }
    aitune_kernel_info info;
    aitune_kernel_info_get(h, k, &info);
    unsigned long long ws = 0;
    aitune_kernel_workspace(h, k, shape, &ws);
    CUdeviceptr x, y, w = 0;
    CK(cuMemAlloc(&x, n * 2));
    CK(cuMemAlloc(&y, n * 2));
    if (ws) CK(cuMemAlloc(&w, ws));
    CK(cuMemsetD16(x, 0x3f80, n));
    aitune_arg args[5] = { { .ptr = x }, { .ptr = y }, { 0 }, { 0 }, { .ptr = w } };
    if (aitune_launch(h, k, args, shape, NULL) != AITUNE_OK) {
        fprintf(stderr, "%s\n", aitune_errmsg(h));
        return 1;
    }
    CK(cuCtxSynchronize());
    unsigned short *hy = malloc(n * 2);
    CK(cuMemcpyDtoH(hy, y, n * 2));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned u = (unsigned)hy[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        if (f < 0.98f / (float)shape[1] || f > 1.02f / (float)shape[1]) bad++;
    }
    printf("%s softmax bf16 %lldx%lld: %s %s (%s), %zu of %zu wrong\n", bad ? "FAIL" : "ok", shape[0], shape[1],
           info.template_name, info.config, aitune_level_name(info.level), bad, n);
    aitune_close(h);
    return bad != 0;
}
