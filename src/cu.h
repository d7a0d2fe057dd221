/* cu.h: the CUDA Driver API, opened at run time with dlopen("libcuda.so.1"),
** so that everything that needs no GPU runs on machines without one. Types
** come from the toolkit's cuda.h; no libcuda is linked. */
#ifndef CU_H
#define CU_H
#include <cuda.h>

/* X(field, exported symbol): the entry points aitune uses. */
#define CU_API(X) \
    X(Init, "cuInit") \
    X(DriverGetVersion, "cuDriverGetVersion") \
    X(DeviceGetCount, "cuDeviceGetCount") \
    X(DeviceGet, "cuDeviceGet") \
    X(DeviceGetName, "cuDeviceGetName") \
    X(DeviceGetUuid, "cuDeviceGetUuid_v2") \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2") \
    X(DeviceGetAttribute, "cuDeviceGetAttribute") \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") \
    X(CtxSetCurrent, "cuCtxSetCurrent") \
    X(CtxGetCurrent, "cuCtxGetCurrent") \
    X(CtxGetDevice, "cuCtxGetDevice") \
    X(CtxSynchronize, "cuCtxSynchronize") \
    X(ModuleLoadData, "cuModuleLoadData") \
    X(ModuleUnload, "cuModuleUnload") \
    X(ModuleGetFunction, "cuModuleGetFunction") \
    X(FuncSetAttribute, "cuFuncSetAttribute") \
    X(FuncGetAttribute, "cuFuncGetAttribute") \
    X(LaunchKernel, "cuLaunchKernel") \
    X(LaunchKernelEx, "cuLaunchKernelEx") \
    X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled") \
    X(MemAlloc, "cuMemAlloc_v2") \
    X(MemFree, "cuMemFree_v2") \
    X(MemGetInfo, "cuMemGetInfo_v2") \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2") \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2") \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") \
    X(MemsetD8Async, "cuMemsetD8Async") \
    X(MemsetD32Async, "cuMemsetD32Async") \
    X(StreamCreate, "cuStreamCreate") \
    X(StreamSynchronize, "cuStreamSynchronize") \
    X(StreamDestroy, "cuStreamDestroy_v2") \
    X(EventCreate, "cuEventCreate") \
    X(EventRecord, "cuEventRecord") \
    X(EventSynchronize, "cuEventSynchronize") \
    X(EventElapsedTime, "cuEventElapsedTime_v2") \
    X(EventDestroy, "cuEventDestroy_v2") \
    X(GetErrorName, "cuGetErrorName") \
    X(GetErrorString, "cuGetErrorString")

typedef struct cu_api {
#define CU_FIELD(name, sym) __typeof__(cu##name) *name;
    CU_API(CU_FIELD)
#undef CU_FIELD
} cu_api;

/* The loaded API, or NULL with a reason in *why (a static string: "libcuda.so.1
** not found: ..."). Loads once; later calls return the same table. */
const cu_api *cu_load(const char **why);

/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered". */
const char *cu_errstr(CUresult rc);

/* A GPU's hardware identity, as the registry keys winners by it
** (winners.hw): name, compute capability, SM count, memory and L2 bytes.
** The one format: the tool fills it from the worker's device facts
** (identity_hw), the runtime from the device itself (cu_hw). */
#define CU_HW_FORMAT "%s|sm_%d|%d SMs|%lld B|L2 %lld B"
int cu_hw(const cu_api *cu, CUdevice dev, char *out, int cap);

/* Whether rc leaves the context unusable, so the worker must be restarted. */
int cu_sticky(CUresult rc);

#endif
