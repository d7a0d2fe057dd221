/*
** fake_cuda.c: a libcuda.so.1 that records instead of running, so the
** runtime's kernel layer (aitune_kernel_get, aitune_bind, launches) and the
** Python layer's dispatch can be tested, and their host cost measured, on a
** machine without a GPU.
**
** Built as build/tests/fakecuda/libcuda.so.1 with that soname. cu.c opens
** "libcuda.so.1" with dlopen; a process that loaded this file first (by its
** path, RTLD_GLOBAL) gets it back from that dlopen, since the loader matches
** an already loaded object by soname. LD_LIBRARY_PATH=build/tests/fakecuda
** does the same for a whole process.
**
** It plays one device (sm_90, 132 SMs) whose primary context is current in
** every thread until fakecu_set_context says otherwise. A module is any
** data of at least 16 bytes; data that starts "FAKECUBIN n" has kernels of n
** parameters, anything else (a real cubin) fakecu_set_nparams' count
** (default 0). A launch records its geometry, stream and the first 128 bytes
** of each parameter (aitune's parameters live in 128-byte slots, a tensor
** map's size). cuTensorMapEncodeTiled writes, as 64-bit words: the address,
** the rank, the dims, the strides, then 0xfa4e at word 15. fakecu_fail makes
** the next call of one kind fail. Nothing here is thread-safe but the
** current context (tests launch from one thread at a time).
*/
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
/* Modules and functions one process may load (never freed: a test session's
** every registry and race trial together). */
#define FAKE_MAX_LOADS 4096

struct fake_func {
    char name[64];
    int nparams;
};

static struct {
    int launches, encodes, memsets, loads;
    unsigned grid[3], block[3], cluster[3], smem;
    unsigned long long stream;
    int ex, nparams;
    unsigned char params[32][128];
    char kernel[64];
    unsigned long long memset_addr, memset_bytes;
    int optin;
    int default_nparams;
    char fail[16];
    struct fake_func funcs[FAKE_MAX_LOADS];
    int nfuncs;
    int module_nparams[FAKE_MAX_LOADS];
    int nmodules;
} F;

static _Thread_local int ctx_set;
static _Thread_local unsigned long long ctx_now;

static unsigned long long current(void) { return ctx_set ? ctx_now : 0x7000; }

/* Whether a call of kind what fails this time (once). */
static int failing(const char *what)
{
    if (strcmp(F.fail, what))
        return 0;
    F.fail[0] = '\0';
    return 1;
}

FAKE_EXPORT void fakecu_set_context(unsigned long long ctx) { ctx_set = 1; ctx_now = ctx; }
FAKE_EXPORT void fakecu_set_nparams(int n) { F.default_nparams = n; }
FAKE_EXPORT void fakecu_fail(const char *what) { snprintf(F.fail, sizeof F.fail, "%s", what ? what : ""); }
FAKE_EXPORT int fakecu_launches(void) { return F.launches; }
FAKE_EXPORT int fakecu_encodes(void) { return F.encodes; }
FAKE_EXPORT int fakecu_memsets(void) { return F.memsets; }
FAKE_EXPORT int fakecu_loads(void) { return F.loads; }
FAKE_EXPORT int fakecu_optin(void) { return F.optin; }
FAKE_EXPORT unsigned long long fakecu_memset_addr(void) { return F.memset_addr; }
FAKE_EXPORT unsigned long long fakecu_memset_bytes(void) { return F.memset_bytes; }
FAKE_EXPORT const char *fakecu_kernel(void) { return F.kernel; }
FAKE_EXPORT unsigned long long fakecu_stream(void) { return F.stream; }
FAKE_EXPORT int fakecu_nparams(void) { return F.nparams; }
FAKE_EXPORT int fakecu_ex(void) { return F.ex; }
/* what: 0 grid, 1 block, 2 cluster; i: x, y, z. 3: smem. */
FAKE_EXPORT unsigned fakecu_geom(int what, int i)
{
    if (what == 3) return F.smem;
    if (i < 0 || i > 2) return 0;
    return what == 0 ? F.grid[i] : what == 1 ? F.block[i] : F.cluster[i];
}
/* The 64-bit word w (0..15) of the last launch's parameter i. */
FAKE_EXPORT unsigned long long fakecu_param(int i, int w)
{
    unsigned long long v = 0;
    if (i >= 0 && i < 32 && w >= 0 && w < 16)
        memcpy(&v, F.params[i] + 8 * w, 8);
    return v;
}

CUresult cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { *v = 12080; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i) { *d = i; return i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Fake GPU");
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { (void)d; memset(u, 0xfa, sizeof *u); return CUDA_SUCCESS; }
CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { (void)d; *b = 80ULL << 30; return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)(uintptr_t)0x7000; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { fakecu_set_context((unsigned long long)(uintptr_t)c); return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = (CUcontext)(uintptr_t)current(); return CUDA_SUCCESS; }
CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    if (failing("load"))
        return CUDA_ERROR_INVALID_IMAGE;
    if (F.nmodules == FAKE_MAX_LOADS)
        return CUDA_ERROR_OUT_OF_MEMORY;
    int n = F.default_nparams;
    if (!memcmp(image, "FAKECUBIN ", 10))
        sscanf((const char *)image + 10, "%d", &n);
    F.module_nparams[F.nmodules] = n;
    F.loads++;
    *m = (CUmodule)(uintptr_t)(0x100 + F.nmodules++);
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    int mi = (int)((uintptr_t)m - 0x100);
    if (mi < 0 || mi >= F.nmodules || F.nfuncs == FAKE_MAX_LOADS)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fake_func *fn = &F.funcs[F.nfuncs++];
    snprintf(fn->name, sizeof fn->name, "%s", name);
    fn->nparams = F.module_nparams[mi];
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f;
    if (failing("optin"))
        return CUDA_ERROR_INVALID_VALUE;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        F.optin = v;
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) { (void)a; (void)f; *v = 0; return CUDA_SUCCESS; }

static CUresult record(CUfunction f, const unsigned *grid, const unsigned *block, const unsigned *cluster,
                       unsigned smem, CUstream s, void **params, int ex)
{
    if (failing("launch"))
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    const struct fake_func *fn = (const struct fake_func *)f;
    F.launches++;
    memcpy(F.grid, grid, sizeof F.grid);
    memcpy(F.block, block, sizeof F.block);
    memcpy(F.cluster, cluster, sizeof F.cluster);
    F.smem = smem;
    F.stream = (unsigned long long)(uintptr_t)s;
    F.ex = ex;
    snprintf(F.kernel, sizeof F.kernel, "%s", fn->name);
    F.nparams = fn->nparams < 32 ? fn->nparams : 32;
    for (int i = 0; i < F.nparams; i++)
        memcpy(F.params[i], params[i], 128);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream s, void **params, void **extra)
{
    (void)extra;
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz }, c[3] = { 1, 1, 1 };
    return record(f, g, b, c, smem, s, params, 0);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    (void)extra;
    unsigned g[3] = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ };
    unsigned b[3] = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ }, c[3] = { 1, 1, 1 };
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            c[0] = cfg->attrs[i].value.clusterDim.x;
            c[1] = cfg->attrs[i].value.clusterDim.y;
            c[2] = cfg->attrs[i].value.clusterDim.z;
        }
    return record(f, g, b, c, cfg->sharedMemBytes, cfg->hStream, params, 1);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tm, CUtensorMapDataType dt, cuuint32_t rank, void *addr,
                                const cuuint64_t *gdim, const cuuint64_t *gstride, const cuuint32_t *box,
                                const cuuint32_t *estride, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)dt; (void)box; (void)estride; (void)il; (void)sw; (void)l2; (void)oob;
    if (failing("encode") || rank < 1 || rank > 5 || ((uintptr_t)addr % 16))
        return CUDA_ERROR_INVALID_VALUE;
    F.encodes++;
    unsigned long long w[16] = { 0 };
    w[0] = (unsigned long long)(uintptr_t)addr;
    w[1] = rank;
    for (cuuint32_t d = 0; d < rank; d++)
        w[2 + d] = gdim[d];
    for (cuuint32_t d = 0; d + 1 < rank; d++)
        w[7 + d] = gstride[d];
    w[15] = 0xfa4e;
    memcpy(tm, w, sizeof w);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t n) { (void)n; *p = 0; return CUDA_ERROR_OUT_OF_MEMORY; }
CUresult cuMemFree(CUdeviceptr p) { (void)p; return CUDA_SUCCESS; }
CUresult cuMemGetInfo(size_t *f, size_t *t) { *f = *t = 80ULL << 30; return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { (void)d; (void)s; (void)n; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) { (void)d; (void)s; (void)n; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)d; (void)s; (void)n; (void)st;
    return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    (void)v; (void)s;
    F.memsets++;
    F.memset_addr = d;
    F.memset_bytes = n;
    return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { (void)d; (void)v; (void)n; (void)s; return CUDA_SUCCESS; }
CUresult cuStreamCreate(CUstream *s, unsigned f) { (void)f; *s = (CUstream)(uintptr_t)0x5000; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuStreamDestroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)(uintptr_t)0x6000; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)a; (void)b; *ms = 0; return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult rc, const char **s)
{
    *s = rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
       : rc == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : rc == CUDA_ERROR_INVALID_IMAGE ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult rc, const char **s) { (void)rc; *s = "fake libcuda"; return CUDA_SUCCESS; }
