/* jit.h: NVRTC compilation on a pool of threads. Jobs are submitted and
** waited for one by one, so the caller can time one candidate while the pool
** compiles the next. Each result carries the ptxas resource report.
**
** Caching is the caller's: jit_key gives the cache key, a hash of the
** source, the entry name, the options, the arch and the NVRTC version. */
#ifndef JIT_H
#define JIT_H
#include <stddef.h>

typedef struct jit_job {
    /* in */
    char *source;
    char name[64];
    char arch[16];          /* "sm_90a" */
    /* out */
    int done;
    int ok;                 /* 0: compile error, or a ptxas warning aitune treats as one */
    unsigned char *cubin;
    size_t cubin_len;
    char *log;              /* NVRTC's log (errors, ptxas -v report) */
    char *error;            /* one line, when !ok */
    int registers, spills, smem, stack;   /* spills: bytes stored + loaded; registers -1: no report */
    double ms;
} jit_job;

typedef struct jit_pool jit_pool;

/* "13.0": the NVRTC this binary loaded. */
const char *jit_nvrtc_version(void);
/* The options every compile uses, as one string (recorded with the cubin). */
const char *jit_options(const char *arch);
/* Cache key of (source, name, options, arch, NVRTC version): 16 hex digits. */
void jit_key(const char *source, const char *name, const char *arch, char out[17]);

jit_pool *jit_pool_new(int threads);      /* threads <= 0: one per core */
void jit_pool_free(jit_pool *p);          /* waits for running jobs */
void jit_submit(jit_pool *p, jit_job *j); /* j must live until waited for */
void jit_wait(jit_pool *p, jit_job *j);
/* Drop the queued jobs no thread has started (Ctrl-C): each becomes done,
** not ok, with the error "cancelled". Jobs being compiled finish. */
void jit_pool_cancel(jit_pool *p);
/* Compile in the calling thread. */
void jit_compile(jit_job *j);
void jit_job_clear(jit_job *j);           /* frees outputs and source */

/* Parse a ptxas -v report into j's resource fields; returns 0 if found. */
int jit_parse_report(const char *log, jit_job *j);
/* After a successful compile: the report in j->log must describe kernel
** j->name (its numbers are parsed into j) and carry no fatal warning; NULL,
** or the one-line error to record (malloc'd). A log with no ptxas report at
** all (a tool like compute-sanitizer suppressed it) is accepted with
** registers = -1: unknown, so nothing is pruned for spills. */
char *jit_check_log(jit_job *j);

#endif
