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
**   split_at: 0.05          # hold: a bucket whose winner still loses more than this
**                           # fraction somewhere is split (bucket_split); 0 never
**   split_evals: 16         # hold: candidates of a part's own search where it loses
**                           # most (sweep_part.h: part_research), when its winner among the
**                           # bucket's finalists still loses more than split_at (as
**                           # max_evals: per template, or per bucket with joint);
**                           # default max(8, max_evals/4), the whole space with no
**                           # max_evals; 0: parts are never searched
**   split_polish: 14        # hold: a searched part's winner polished over the part:
**                           # at most this many of its neighbours raced there,
**                           # then their combination (sweep_part.h); 0: none
**   split_depth: 2          # hold: levels of parts below a bucket, 1 to 4: a part
**                           # whose winner still loses more than split_at after
**                           # its own search is split again, down to this level
**                           # (sweep_split.c: split_settle); 1: never again; default 2
**   tasks:
**     - op: axpy
**       dtypes: [f32, bf16]
**       search: random      # search, max_evals, joint, hold, split_at, split_evals,
**                           # split_polish and split_depth may be set per task
**       templates: [tma]    # only these of the op's templates; default all
**       shapes:
**         n: {log2: [10, 28]}        # buckets [2^k, 2^(k+1)), tuned at 2^k
**         m: {values: [4096, 5000]}  # tuned at these sizes, bucketed by log2
**                                    # and alignment class: two sizes of one
**                                    # log2 bucket only of different classes
**                                    # (4096 and 4097; align.h)
**         b: {range: [1, 256]}       # every size from 1 to 256 served: a bucket
**                                    # per log2 range and class, tuned at its
**                                    # largest size (spec_range_reps)
**         c: {range: [1, 256], align: [1]}  # classes to tune apart (default [8, 1])
**         n: {values: [4096, 6144], exact: true}  # each size a bucket of its
**                                    # own, [4096, 4097) and [6144, 6145),
**                                    # keyed n=4096 and n=6144 (spec_dim.exact)
**
** Errors name the file, the line and the field. */
#ifndef SPEC_H
#define SPEC_H
#include "names.h"
#include <stddef.h>

#define SPEC_MAXDIMS MAXDIMS
#define SPEC_MAXVALUES 64
#define SPEC_MAXTEMPLATES 8
#define SPEC_MAXSPLITDEPTH 4    /* split_depth's most: each level multiplies a sweep's races */
#define SPEC_SPLIT_POLISH 14    /* split_polish's default: the worker's 16 slots less the winner and the combination */
#define SPEC_MAXWARM 16         /* warm's most: configs a search tries first (sweep_warm.h) */
#define SPEC_WARM 4             /* a range bucket's warm start when the spec says none */
/* A spec is untrusted input: these caps bound what loading one costs. */
#define SPEC_MAXBYTES (1 << 20)     /* file size */
#define SPEC_MAXDEPTH 16            /* nesting of mappings and lists */
#define SPEC_MAXEVENTS 200000       /* YAML nodes and ends */
#define SPEC_MAXELEMS_LOG2 48       /* elements of a task's largest shape */
#define SPEC_MAXELEMS (1LL << SPEC_MAXELEMS_LOG2)

typedef struct spec_dim {
    char name[16];
    int nvalues;
    long long values[SPEC_MAXVALUES];   /* representatives: the sizes tuned */
    int line;
    /* A range ({range: [lo, hi]}): every size of [range_lo, range_hi] is
    ** served. values[] then holds, per log2 bucket the range meets and per
    ** alignment class it asks for (range_align: a mask of 1, 2, 4, 8), the
    ** largest size of the range in that bucket and class (spec_range_reps):
    ** where a kernel tiled along the dim is slowest. */
    int range;
    long long range_lo, range_hi;
    unsigned range_align;
    /* exact: true (with values or log2): each size is a bucket of its own,
    ** [v, v + 1), keyed "n=6144" (names.h: BUCKET_LOG2). A model's weight
    ** dims (a GEMM's n and k, a norm's width) are constants: a config tuned
    ** at 6144 must not be replaced by one tuned at 4096 because both fall
    ** in [4096, 8192), nor answer for it. Sizes never share a bucket, so any
    ** two of one dim may be listed; lookups rank an exact bucket before a
    ** log2 one that holds the shape too (align.h: bucket_score). */
    int exact;
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
    int hold;                   /* winners chosen for the whole bucket (sweep_hold.h) */
    double split_at;            /* hold: split a bucket whose winner loses more (a fraction; 0 never) */
    int split_evals;            /* hold: a part's own search (sweep_part.h: part_research); -1 the default, 0 none */
    int split_polish;           /* hold: a searched part's winner polished over it (sweep_part.h); 0 none */
    int split_depth;            /* hold: levels of parts below a bucket, 1..SPEC_MAXSPLITDEPTH */
    int stream;                 /* timing: 0 flush (L2 flushed, one launch per sample), 1 stream (bench.h) */
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
    double split_at;        /* tasks' default */
    int split_evals;        /* tasks' default; -1: max(8, max_evals/4) */
    int split_polish;       /* tasks' default; SPEC_SPLIT_POLISH */
    int split_depth;        /* tasks' default; 2 */
    int stream;             /* tasks' default timing; 0 flush */
    double budget_s;        /* 0: none */
    int top_k;
    /* Each search warm-started from this many neighbouring winners
    ** (sweep_warm.h); -1 (absent): SPEC_WARM for a bucket cut from a range,
    ** none for the others. */
    int warm;
    int ntasks;
    spec_task *tasks;
    char hash[17];          /* of the file's bytes */
} spec;

/* A bucket: per dim [lo, hi), the size tuned and that size's alignment
** class (align.h), in the task's dim order. Whatever the sweep measures
** in a bucket (its parts' sizes, the sizes a hold race probes) keeps the
** class, so a winner is chosen among configs that run at its class. */
typedef struct bucket {
    int ndims;
    long long lo[SPEC_MAXDIMS], hi[SPEC_MAXDIMS], rep[SPEC_MAXDIMS];
    int align[SPEC_MAXDIMS];    /* align_class(rep[d]) */
    char key[96];           /* "n=2^26", "rows=2^14,cols=2^12" or "n=2^12:align1" */
    /* Bit d: dim d comes from a range, whose sizes in [slo[d], shi[d]) this
    ** bucket promises to serve (those of its class and above: align.h). The
    ** other dims: [lo, hi). */
    unsigned ranged;
    /* A range dim's classes tuned apart (spec_dim.range_align: a mask of 1,
    ** 2, 4 and 8), so which of its sizes this bucket serves: those of its
    ** class and above up to the next class tuned apart (probe_range_shapes;
    ** a range tuning class 1 alone serves every size from its buckets of
    ** class 1). 0 for the other dims. */
    unsigned char salign[SPEC_MAXDIMS];
    /* Bit d: dim d is exact (spec_dim.exact): [rep, rep + 1), never cut. */
    unsigned exact;
    long long slo[SPEC_MAXDIMS], shi[SPEC_MAXDIMS];
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

/* The sizes a range [lo, hi] is tuned at: per log2 bucket it meets, in
** increasing order, and per class of align (a mask of 1, 2, 4 and 8), the
** largest size of the range in that bucket whose bucket key names that
** class (align_key_class: 8 names none, and below 8 the lower edge's class
** names none), when the range holds one. A range bucket is tuned where a
** kernel tiled along the dim does the most work: [16, 32) of [1, 256] at 24
** (class 8) and 31 (class 1). A size of a class the range does not tune
** apart is served by a bucket of a lower class (a config tuned at 31 runs
** 30). At most cap sizes into out; returns their count, or -1 when there
** would be more than cap. */
int spec_range_reps(long long lo, long long hi, unsigned align, long long *out, int cap);

/* The log2 bucket of a size: [2^k, 2^(k+1)) with 2^k <= v. */
void bucket_of(long long v, long long *lo, long long *hi);
/* The alignment class of b's dim d: b->align[d], or where that was not
** recorded (0) the class of b->rep[d]. */
int bucket_align(const bucket *b, int d);
/* Every bucket of a task (cross product of its dims); caller frees. */
int spec_buckets(const spec_task *t, bucket **out);
/* Key of a bucket from its dims' names, lo edges and sizes tuned (rep):
** per dim "name=2^k", and ":alignC" after it when the size's class C
** (align.h) is below its lower edge's (align_key_class): 1, 2 or 4 from
** 2^3 up, "m=2^12,n=2^12:align1,k=2^12" for 4096 x 4097 x 4096. A bucket
** tuned at aligned sizes (and one below 8 tuned at its lower edge) keeps
** the key it had before classes were part of it, so registries written
** then still resume and answer. Returns 0, or -1 when the key does not fit
** in cap (out is then cut). */
int bucket_key(int ndims, char names[][16], const long long *lo, const long long *rep, char *out, int cap);
/* The same where the dims of mask exact (bit d) are exact (spec_dim.exact):
** "name=SIZE", the size tuned, no class: "m=2^4,n=6144,k=4096". */
int bucket_key_exact(int ndims, char names[][16], const long long *lo, const long long *rep, unsigned exact, char *out,
                     int cap);

/* Split buckets (spec `hold: true` with `split_at`). A bucket's winner that
** loses more than split_at somewhere in it is replaced by the winners of its
** parts; a part whose winner still does is split again the same way, down to
** split_depth levels below the bucket. The registry stores the parts that
** were not split again (the leaves): boxes that partition the bucket.
**
** The rule, per dim: the split point is the geometric middle of [lo, hi),
** rounded down, else up, to a multiple of 64 (kernels' fast paths and real
** workloads like aligned sizes, and a part is tuned at its lower edge), else
** of 8, else not rounded, the first that falls inside: [1024, 1152) at 1088;
** a dim with no point inside (one value, as [1, 2) or [2, 4)) is not split,
** nor is an exact dim (bucket.exact: one size). Splitting the dims of mask (bit d: dim d) gives 2^k parts, k the
** dims split: each dim's lower part [lo, at) and upper part [at, hi), the
** other dims whole. A part is tuned at the parent's size where that falls in
** it, else at the smallest size of the parent's class (align.h: align_up)
** from its lower edge: the lower edge itself for class 8, 5761 in [5760,
** 8192) for class 1; at the lower edge when the part holds no size of that
** class (a part of [4, 8) cut at 5: [4, 5)). Which dims are split is the
** sweep's choice (sweep_split.c: split_box): those along which the best config
** changes.
**
** A part's key is its bucket's, BUCKET_PART ('/', names.h), and its lower corner in the dims' order
** ("n=2^12/5760", "rows=2^14,cols=2^12/2^14,5760", "n=2^12:align1/5760":
** the class stays in the home), at every level: a
** part's part that shares its lower corner shares its key, and the leaves,
** disjoint, have keys of their own. The bucket's key is the part's home,
** which keeps the measurements taken at the bucket's size, and the registry
** stores no winner for a bucket or part next to its parts. */
/* The split point of [lo, hi): 1 with *at, or 0 when it cannot be split. */
int bucket_split_point(long long lo, long long hi, long long *at);
/* The parts of b when the dims of mask are split (dims that cannot be are
** left whole): their count, up to 2^SPEC_MAXDIMS, into parts, in order of
** their lower corners (dim 0 slowest). Returns -1 when a key would not fit. */
int bucket_split(const bucket *b, unsigned mask, bucket *parts);
/* The same, dim d cut at cut[d] where that lies inside (lo, hi) (NULL, or
** 0 there: at bucket_split_point): the sweep cuts a range dim where its
** races show the best config changing (sweep_split.c: split_cut). */
int bucket_split_at(const bucket *b, unsigned mask, const long long *cut, bucket *parts);
/* A bucket key read back from a registry (untrusted): per dim its name, its
** home's lower edge (a power of two: the home is [lo, 2 lo); or an exact
** dim's size, bit d of exact: the home is [lo, lo + 1)) and the class the
** key names (0: none), and for a part (part = 1) its lower corner.
** Only keys bucket_key, bucket_key_exact and bucket_split write parse:
** "n=2^12:align1/5761" and "m=2^4,n=6144/24,6144" do, "n=2^12:align3",
** "n=6144:align1", "n=06144", "n=2^12/4096" (a power of two not written as
** 2^k) and "m=2^4,n=6144/2^4,6000" (a part cut in an exact dim) do not.
** 0, or -1 with why. Whether the key fits a row's edges and shape is the
** reader's to check; bucket_parsed_hi gives the home's upper edge. */
typedef struct bucket_parsed {
    int ndims, part;
    char names[SPEC_MAXDIMS][16];
    long long lo[SPEC_MAXDIMS], corner[SPEC_MAXDIMS];
    int cls[SPEC_MAXDIMS];
    unsigned exact;
} bucket_parsed;
int bucket_key_parse(const char *key, bucket_parsed *out, char *why, int cap);
/* The upper edge (exclusive) of dim d of a parsed key's home. */
long long bucket_parsed_hi(const bucket_parsed *k, int d);
/* The home of a bucket key: the key up to BUCKET_PART (the key itself for a
** bucket that is not a part). */
void bucket_home(const char *key, char *out, size_t cap);
/* Whether key is home, or one of home's parts. */
int bucket_in_home(const char *key, const char *home);

#endif
