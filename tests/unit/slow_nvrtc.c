/*
** slow_nvrtc.so: an LD_PRELOAD shim that makes each NVRTC compile take
** SLOW_NVRTC_MS milliseconds longer (default 1000) without using a core,
** so a machine with few cores can play a GPU host whose compile threads
** each have a core of their own and whose compiles are slow (wgmma GEMM
** candidates: 1-3 s): how a sweep's wall time depends on keeping the pool
** busy shows without a GPU or many cores. Used by bench/ahead.sh and
** tests/cli/ahead.sh:
**
**     LD_PRELOAD=build/tests/slow_nvrtc.so SLOW_NVRTC_MS=1500 aitune sweep ...
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <time.h>

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
    static nvrtcResult (*real)(nvrtcProgram, int, const char *const *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "nvrtcCompileProgram");
    if (!real) return NVRTC_ERROR_INTERNAL_ERROR;
    const char *v = getenv("SLOW_NVRTC_MS");
    long ms = v && *v ? strtol(v, NULL, 10) : 1000;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (ms > 0 && nanosleep(&ts, &ts) != 0) {}
    return real(prog, numOptions, options);
}
