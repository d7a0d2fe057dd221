/* cu.c: see cu.h. */
#define _GNU_SOURCE
#include "cu.h"
#include <dlfcn.h>
#include <stdio.h>

static cu_api api;
static const cu_api *loaded;
static char why_buf[512];

const cu_api *cu_load(const char **why)
{
    static int tried;
    if (tried) {
        if (!loaded && why) *why = why_buf;
        return loaded;
    }
    tried = 1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why_buf, sizeof why_buf, "cannot open libcuda.so.1 (%s): is the NVIDIA driver installed?", dlerror());
        if (why) *why = why_buf;
        return NULL;
    }
#define CU_LOAD(name, sym) \
    if (!(api.name = (__typeof__(api.name))dlsym(h, sym))) { \
        snprintf(why_buf, sizeof why_buf, "libcuda.so.1 lacks %s: the driver is too old", sym); \
        if (why) *why = why_buf; \
        return NULL; \
    }
    CU_API(CU_LOAD)
#undef CU_LOAD
    loaded = &api;
    return loaded;
}

const char *cu_errstr(CUresult rc)
{
    static __thread char buf[256];
    const char *name = NULL, *text = NULL;
    if (loaded) {
        loaded->GetErrorName(rc, &name);
        loaded->GetErrorString(rc, &text);
    }
    snprintf(buf, sizeof buf, "%s: %s", name ? name : "CUDA error", text ? text : "unknown");
    if (!name) snprintf(buf, sizeof buf, "CUDA error %d", (int)rc);
    return buf;
}

int cu_sticky(CUresult rc)
{
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}

int cu_hw(const cu_api *cu, CUdevice dev, char *out, int cap)
{
    char name[256];
    size_t mem = 0;
    int major = 0, minor = 0, sms = 0, l2 = 0;
    if (cu->DeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS || cu->DeviceTotalMem(&mem, dev) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) != CUDA_SUCCESS)
        return -1;
    name[sizeof name - 1] = '\0';
    int n = snprintf(out, (size_t)cap, CU_HW_FORMAT, name, major * 10 + minor, sms, (long long)mem, (long long)l2);
    return n < 0 || n >= cap ? -1 : 0;
}
