/* registry_measure.h: the registry's measurements, one row per candidate a
** sweep (or `aitune import`) evaluated: what it is (op, template, arch,
** dtype, bucket, shape, config), how it went (status, times, registers,
** ...), on which device in which run, and how it was timed (after an L2
** flush, or as a stream). A sweep writes each the moment it lands and asks
** for it before measuring again, so a killed sweep resumes where it
** stopped; the race reads the fastest back, `why` and replay read them all.
**
** A registry older than schema 4, opened read-only (so not migrated), has
** no timing column: its measurements were all timed after a flush, and the
** readers say so. Calls return 0 (or what they say) and -1 with reg_errmsg
** set. */
#ifndef REGISTRY_MEASURE_H
#define REGISTRY_MEASURE_H
#include "registry.h"

typedef struct measurement {
    char op[32], tmpl[64], arch[16], dtype[16], bucket[96];
    char shape[128];        /* JSON */
    char *config;           /* canonical JSON */
    char config_hash[17];
    char status[12];        /* ok | constraint | compile | runtime | timeout | wrong */
    double median_us, min_us, max_us, spread;
    int samples;
    double gbps, tflops;
    int registers, spills, smem;
    double compile_ms;
    char cubin[17];
    char *error;
    long long device, run;
    int stream;             /* timed as a stream (timing = 'stream'), not one launch after a flush */
} measurement;
/* Free what a reader malloc'd (config, error); m may be read again. */
void measurement_free(measurement *m);

int reg_measure_put(reg *r, const measurement *m);
/* The newest measurement of this config for the task on this device, or on
** a GPU with the same hardware and toolchain identity (its twin on the same
** host), at the key's shape (a bucket's part may be searched at another size
** than its own, and its measurements at one size are no answer at another),
** timed the key's way (stream or flush): 1 found (m filled: the row's
** results, the key's config, device and run; free m->config and m->error),
** 0 none. */
int reg_measure_find(reg *r, const measurement *key, measurement *m);
/* The fastest ok measurements of key's (op, arch, dtype, bucket, shape) on
** key's device or its twins, timed the key's way (as reg_measure_find),
** any template or run, one per config (its fastest row): up to n into out
** (free each with measurement_free). Returns how many, or -1. */
int reg_measure_best(reg *r, const measurement *key, int n, measurement *out);
/* Each config's newest measurement (any device), of op (NULL: every op),
** ordered by op, arch, dtype, template, then buckets and configs in the
** order they were first measured; a task's rows are those timed the way its
** newest was. cb returning non-zero stops. */
int reg_measure_each(reg *r, const char *op, int (*cb)(const measurement *m, void *ctx), void *ctx);

/* The buckets of (op, dtype) that hold measurements or a winner, in the
** order a sweep first measured them (those with a winner only, last); arch
** NULL: any. cb returning non-zero stops. */
int reg_buckets(reg *r, const char *op, const char *arch, const char *dtype,
                int (*cb)(const char *arch, const char *bucket, void *ctx), void *ctx);
/* Every measurement of one bucket on any device: ok ones fastest first, then
** the failures by status (a split bucket's part: its bucket's, where the
** search measured; spec.h: bucket_split). m lives only during the call. */
int reg_bucket_measurements(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                            int (*cb)(const measurement *m, void *ctx), void *ctx);
/* A bucket's measurements in the order they were made (each run's search,
** then the next run's): status and time (-1: none), for convergence plots
** (a part's: its bucket's). */
int reg_bucket_history(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                       int (*cb)(const char *status, double median_us, void *ctx), void *ctx);

/* Seconds per measurement in this registry's finished runs (their wall time
** over what they measured); 0 when none. */
double reg_seconds_per_measurement(reg *r);

#endif
