/* registry_vendor.h: the vendor library's times in the registry (table
** vendor_times, db/migrations/012-vendor.sql): the worker measures the
** vendor (vendor.h: cuBLASLt) at the shapes a sweep times, as it measures a
** candidate, and `show`, `why`, `report`, `status` and the sweep's summary
** read the rows back beside the winners. A registry older than schema 5
** (opened read-only, so not migrated) has none: the readers answer "none"
** there, not an error.
**
** A row's key is (op, arch, dtype, bucket, shape, hardware, timing): hw is
** the measuring device's devices.hw, so rows survive a merge as winners do.
** Calls return 0 (or 1 found, 0 none) and -1 with reg_errmsg set. */
#ifndef REGISTRY_VENDOR_H
#define REGISTRY_VENDOR_H
#include "registry_winner.h"

typedef struct reg_vendor {
    char op[32], arch[16], dtype[16], bucket[96];
    char shape[128];            /* JSON, as measurements.shape */
    int stream;                 /* timed as a stream, not one launch after a flush */
    char library[64];           /* "cuBLASLt 130100" */
    char algo[128];             /* the heuristic's choice */
    char status[12];            /* ok | wrong | runtime */
    double median_us, min_us, max_us, spread;
    int samples;
    char error[512];
    long long device, run;      /* put: the device row gives hw */
    char hw[256];               /* read back: devices.hw of the GPU */
} reg_vendor;

/* Store v, in place of the row with its key. */
int reg_vendor_put(reg *r, const reg_vendor *v);

/* The row of (op, arch, dtype, shape, timing) measured on the hardware of
** device (its twins, whichever run): what a resumed sweep already has. 1
** found (out filled; its status may be a failure), 0 none. */
int reg_vendor_get(reg *r, const char *op, const char *arch, const char *dtype, const char *shape, int stream,
                   long long device, reg_vendor *out);

/* The vendor's time beside winner w: an ok row at w's shape, on w's
** hardware (the row's device's; any when w has none), timed as w was (the
** timing of w's newest ok measurement; either when none is left). 1 found
** (*us set), 0 none. */
int reg_vendor_for_winner(reg *r, const winner *w, double *us);

/* Each row of (op, arch, dtype) in bucket home or its parts (NULL: every
** bucket), ordered by bucket, shape and timing; cb's row lives only during
** the call, non-zero stops. */
int reg_vendor_each(reg *r, const char *op, const char *arch, const char *dtype, const char *home,
                    int (*cb)(const reg_vendor *v, void *ctx), void *ctx);

/* How many winners are the vendor (template VENDOR_TEMPLATE), of op (NULL:
** every op). */
int reg_vendor_winners(reg *r, const char *op, long long *n);

/* Export: the rows of op (NULL: all) as JSON objects built by SQLite, or as
** text columns, the header first (registry.h: reg_json_rows, reg_text_rows). */
int reg_vendor_json_rows(reg *r, const char *op, int (*cb)(const char *json, void *ctx), void *ctx);
int reg_vendor_text_rows(reg *r, const char *op,
                         int (*cb)(int ncols, const char *const *names, const char *const *values, void *ctx), void *ctx);

/* A vendor winner's launch plan (winners.launch) for task t's op: the op's
** arguments and dims, kernel VENDOR_KERNEL, geometry 1, a workspace of
** VENDOR_WORKSPACE bytes, none zeroed (vendor.h). JSON, malloc'd; NULL with
** err when the vendor does not serve t's op and dtype. */
struct op_task;
char *reg_vendor_plan(const struct op_task *t, char *err, int errcap);

/* reg_merge's step: the input's rows (schema src, device and run ids mapped
** through temp.devmap and temp.runmap) that the output lacks. */
extern const char reg_vendor_merge_sql[];

#endif
