/* registry_scan.h: `aitune scan`'s rows in the registry (table scans,
** db/migrations/013-scans.sql): per size scanned, the registry's answer there
** (level, bucket, template, config), its time, the vendor's in the same race,
** the best measurement the registry held at that size, and whether it is a
** hole (sweep_scan.h). One row per (op, arch, dtype, shape, hardware,
** timing): the latest scan replaces the one before. `report` plots x vendor
** from them, `window` puts the holes' buckets first. A registry older than
** the table (opened read-only, so not migrated) has none: readers answer
** none there. Calls return 0 (1 found where said) and -1 with reg_errmsg. */
#ifndef REGISTRY_SCAN_H
#define REGISTRY_SCAN_H
#include "registry.h"

typedef struct reg_scan {
    char op[32], arch[16], dtype[16];
    char shape[256];            /* JSON, as measurements.shape */
    char hw[256];               /* devices.hw of the GPU */
    int stream;                 /* timed as a stream */
    char level[16];             /* exact | nearest | default ("" when none answered) */
    char bucket[96], tmpl[64];
    char *config;               /* put: the caller's; each: the row's, valid during the callback */
    char status[12];            /* ok, or why there is no time (none, compile, wrong, runtime, ...) */
    double median_us, vendor_us, best_us;   /* 0: none */
    int hole;
    char error[512];
    long long device, run;
} reg_scan;

int reg_scan_put(reg *r, const reg_scan *s);
/* The fastest ok measurement at shape (JSON, as stored) on hardware hw,
** timed stream's way: *us, 0 when there is none. */
int reg_scan_best(reg *r, const char *op, const char *arch, const char *dtype, const char *shape, const char *hw,
                  int stream, double *us);
/* Each row of op (NULL: all), ordered by op, dtype, hw, timing and shape's
** sizes; cb's row lives only during the call, non-zero stops. */
int reg_scan_each(reg *r, const char *op, int (*cb)(const reg_scan *s, void *ctx), void *ctx);

#endif
