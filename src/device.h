/* device.h: what a GPU reports about itself. The worker fills it; templates
** receive it as `dev`; the registry stores it as the fingerprint. */
#ifndef DEVICE_H
#define DEVICE_H

typedef struct device {
    char name[128];
    char uuid[64];
    int cc;                 /* 90 for sm_90 */
    int sms;
    long long mem;          /* bytes */
    long long l2;           /* bytes */
    int smem_optin;         /* bytes per block, opt-in */
    int smem_per_sm;
    int regs_per_sm;
    int max_threads_per_sm;
    int clock_khz, mem_clock_khz;
    char driver[32];        /* NVML's driver version, "" if NVML did not open */
    int cuda_driver;        /* cuDriverGetVersion: 13000 */
    char nvrtc[16];         /* "13.0" */
    int real;               /* 0: facts assumed from the arch (no GPU) */
    int count;              /* GPUs the driver sees */
} device;

/* Facts assumed for an arch when no GPU is at hand (compile-only work):
** sm_90 is an H100 SXM. Returns 0, or -1 for an arch it does not know. */
int device_assume(const char *arch, device *out);

#endif
