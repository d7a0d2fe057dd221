/* spec.h: sweep specs (the YAML files in specs/), read with libyaml. A spec says what to
** tune: ops, dtypes, and per dim how shapes fall into buckets.
**
**   name: elementwise
**   arch: sm_90a            # compile target; default sm_90a
**   seed: 1                 # inputs and strategies; default 1
**   search: exhaustive      # a file in search/; default exhaustive
**   max_evals: 200          # per task and template; default: no cap
**   budget: 30m             # whole sweep; default: none
**   top_k: 5                # finalists re-timed interleaved; default 5
**   joint: false            # true: one search per bucket across its templates
**                           # (max_evals then caps the bucket, not each template)
**   hold: false             # true: finalists raced again at the bucket's middle and
**                           # upper edge; the smallest worst loss wins
**   tasks:
**     - op: axpy
**       dtypes: [f32, bf16]
**       search: random      # search, max_evals, joint and hold may be set per task
**       templates: [tma]    # only these of the op's templates; default all
**       shapes:
**         n: {log2: [10, 28]}        # buckets [2^k, 2^(k+1)), tuned at 2^k
**         m: {values: [4096, 5000]}  # tuned at these sizes, bucketed by log2
**
** Errors name the file, the line and the field. */
#ifndef SPEC_H
#define SPEC_H
#include <stddef.h>

#define SPEC_MAXDIMS 4
#define SPEC_MAXVALUES 64
#define SPEC_MAXTEMPLATES 8
/* A spec is untrusted input: these caps bound what loading one costs. */
#define SPEC_MAXBYTES (1 << 20)     /* file size */
#define SPEC_MAXDEPTH 16            /* nesting of mappings and lists */
#define SPEC_MAXEVENTS 200000       /* YAML nodes and ends */
#define SPEC_MAXELEMS_LOG2 48       /* elements of a task's largest shape */
#define SPEC_MAXELEMS (1LL << SPEC_MAXELEMS_LOG2)

typedef struct spec_dim {
    char name[16];
    int nvalues;
    long long values[SPEC_MAXVALUES];   /* representatives */
    int line;
} spec_dim;

typedef struct spec_task {
    char op[32];
    int ndtypes;
    char dtypes[16][16];
    int ndims;
    spec_dim dims[SPEC_MAXDIMS];
    char search[32];
    int max_evals;
    int joint;                  /* one search per bucket across templates */
    int hold;                   /* winners chosen for the whole bucket (sweep.c: hold_probe) */
    int ntemplates;             /* 0: all of the op's templates */
    char templates[SPEC_MAXTEMPLATES][32];
    int templates_line;
    int line;
} spec_task;

typedef struct spec {
    char path[512];
    char name[64];
    char arch[16];
    unsigned long long seed;
    char search[32];
    int max_evals;
    int joint, hold;
    double budget_s;        /* 0: none */
    int top_k;
    int ntasks;
    spec_task *tasks;
    char hash[17];          /* of the file's bytes */
} spec;

/* A bucket: per dim [lo, hi) and the size tuned, in the task's dim order. */
typedef struct bucket {
    int ndims;
    long long lo[SPEC_MAXDIMS], hi[SPEC_MAXDIMS], rep[SPEC_MAXDIMS];
    char key[96];           /* "n=2^26" or "rows=2^14,cols=2^12" */
} bucket;

/* Whether task t tunes template tname ("op/impl"): every template when the
** task names none. */
int spec_task_uses(const spec_task *t, const char *tname);

/* Load and check a spec. On error returns -1 with one line in err (control
** characters escaped). path must be a regular file of at most SPEC_MAXBYTES;
** duplicate keys, nesting deeper than SPEC_MAXDEPTH, unknown archs and
** shapes of more than SPEC_MAXELEMS elements are refused. */
int spec_load(const char *path, spec *out, char *err, int errcap);
/* The same from text in memory (len bytes; path names it in messages). */
int spec_load_text(const char *path, const char *text, size_t len, spec *out, char *err, int errcap);
void spec_free(spec *s);

/* The log2 bucket of a size: [2^k, 2^(k+1)) with 2^k <= v. */
void bucket_of(long long v, long long *lo, long long *hi);
/* Every bucket of a task (cross product of its dims); caller frees. */
int spec_buckets(const spec_task *t, bucket **out);
/* Key of a bucket: "n=2^26,..." from dims and lo edges. */
void bucket_key(int ndims, char names[][16], const long long *lo, char *out, int cap);

#endif
