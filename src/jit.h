/* jit.h: NVRTC compilation on a pool of threads. Jobs are submitted and
** waited for one by one, so the caller can time one candidate while the pool
** compiles the next ones. Each result carries the ptxas resource report.
**
** NVRTC can crash on a source (NVRTC 13.0 segfaulted on one swapab
** variant). In a program that called jit_use_helpers (aitune does), each
** pool thread compiles in a helper process of its own (this binary, exec'd
** as `aitune __nvrtc`), started on the thread's first job and kept for the
** next ones, so NVRTC's start-up is paid once per thread, not per job. A
** helper that dies on a job makes that job a compile error like any other,
** not ok, with one line that says how ("NVRTC crashed (signal 11, SIGSEGV)
** compiling this candidate"); the thread starts a fresh helper for its next
** job. A helper killed from outside (SIGKILL, SIGTERM) gets the job once
** more on a fresh one. Otherwise (the unit tests) the threads compile in
** this process.
**
** A helper that takes longer than AITUNE_COMPILE_TIMEOUT seconds (default
** 600; NVRTC takes 0.1-3 s on aitune's kernels) over one job is killed,
** and the job is a compile error that says so; it is not retried.
**
** AITUNE_NVRTC_CRASH=TEXT, for tests: a helper raises SIGSEGV on itself
** instead of compiling a source that contains TEXT. AITUNE_NVRTC_HANG=TEXT:
** it never answers on such a source.
**
** Caching is the caller's: jit_key gives the cache key, a hash of the
** source, the entry name, the options, the arch and the NVRTC version. The
** pool only keeps a kernel from compiling twice at once: a job submitted
** with the key of one queued or compiling (several GPUs' lanes tuning
** buckets of one op) waits for that one and gets a copy of its result. */
#ifndef JIT_H
#define JIT_H
#include <stddef.h>

typedef struct jit_job {
    /* in */
    char *source;
    char name[64];
    char arch[16];          /* "sm_90a" */
    char key[17];           /* jit_key, or "": jobs of one key in the pool at once compile once */
    /* out */
    int done;
    int ok;                 /* 0: compile error, or a ptxas warning aitune treats as one */
    int shared;             /* a copy of another job's result (same key): not compiled for this one */
    unsigned char *cubin;
    size_t cubin_len;
    char *log;              /* NVRTC's log (errors, ptxas -v report) */
    char *error;            /* one line, when !ok */
    int registers, spills, smem, stack;   /* spills: bytes stored + loaded; registers -1: no report */
    double ms;
    double t_start;         /* now_s() when its compile began; 0: not compiled */
    int cancelled;          /* dropped before it compiled (jit_cancel, jit_pool_cancel, jit_pool_abort) */
    /* the pool's */
    int state;
    struct jit_job *leader, *followers, *next;   /* jobs of one key in flight */
} jit_job;

typedef struct jit_pool jit_pool;

/* "13.0": the NVRTC this binary loaded. */
const char *jit_nvrtc_version(void);
/* The options every compile uses, as one string (recorded with the cubin). */
const char *jit_options(const char *arch);
/* Cache key of (source, name, options, arch, NVRTC version): 16 hex digits. */
void jit_key(const char *source, const char *name, const char *arch, char out[17]);
/* The same from the options' text (jit_options(arch), as the cache stores
** it): what a cached row's key must be, recomputed from the row. */
void jit_key_options(const char *source, const char *name, const char *options, char out[17]);
/* The hash of a cubin's bytes, stored beside it in the cache. */
void jit_hash(const void *cubin, size_t len, char out[17]);

/* Compile in helper processes from now on (pools made after the call):
** `/proc/self/exe SUBCOMMAND` must run jit_helper_main. */
void jit_use_helpers(const char *subcommand);
/* A helper's loop: requests on stdin, replies on stdout, until end of file. */
int jit_helper_main(void);

jit_pool *jit_pool_new(int threads);      /* threads <= 0: one per core */
/* Waits for running and queued jobs, then ends the helpers: their stdin is
** closed, and one that has not exited 2 s later is killed. */
void jit_pool_free(jit_pool *p);
int jit_pool_threads(const jit_pool *p);
void jit_submit(jit_pool *p, jit_job *j); /* j must live until waited for */
void jit_wait(jit_pool *p, jit_job *j);
/* Drop the queued jobs no thread has started (Ctrl-C): each becomes done,
** not ok, cancelled, with the error "cancelled". Jobs being compiled finish. */
void jit_pool_cancel(jit_pool *p);
/* The same, and the jobs being compiled in helpers are given up too: each
** helper is killed within about 0.1 s and its job becomes cancelled like
** the queued ones (a compile in this process, without helpers, finishes).
** For a Ctrl-C that must not wait for NVRTC; the pool compiles nothing
** more after it. */
void jit_pool_abort(jit_pool *p);
/* jit_pool_abort on its own as soon as stop() returns non-zero (asked
** about every 0.1 s while a helper compiles, and before each job): a
** Ctrl-C flag, so a caller blocked in jit_wait is released at once. */
void jit_pool_stop_when(jit_pool *p, int (*stop)(void));
/* Drop job j if no thread has started it (or it was never submitted): it
** becomes done, not ok, with the error "cancelled", and 1 is returned; 0:
** it is compiling (wait for it) or done. A job of the same key waiting on
** j is compiled in its place. */
int jit_cancel(jit_pool *p, jit_job *j);
/* Compile in the calling thread, in this process (no helper): a crash of
** NVRTC ends the caller. For one-off compiles and tests; tuning uses the
** pool. */
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
