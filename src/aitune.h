/*
** aitune.h: the runtime library (libaitune). Link with -laitune (see
** aitune.pc); it depends on SQLite only.
**
** An application opens a registry written by `aitune sweep` and asks which
** tuned configuration to use for a problem:
**
**     aitune *h;
**     if (aitune_open("registry.db", &h) != AITUNE_OK) {
**         fprintf(stderr, "%s\n", aitune_errmsg(h));   // safe even here
**         aitune_close(h);
**         return;
**     }
**     long long shape[] = { 50000000 };
**     aitune_choice c;
**     if (aitune_lookup(h, "axpy", "sm_90", "bf16", shape, 1, &c) == AITUNE_OK)
**         printf("%s %s (%s)\n", c.template_name, c.config, aitune_level_name(c.level));
**     aitune_close(h);
**
** Rules that hold for every call:
** - Every function returns an int status (AITUNE_OK on success) except the
**   two that return strings. On failure the handle's message says why:
**   aitune_errmsg(h). The library never prints and never exits.
** - aitune_open reads the registry's defaults and keeps one read-only
**   connection; it costs the same with 10 or 10k winners. The winners of an
**   (op, arch, dtype) are read into memory the first time a lookup asks for
**   them (one indexed query, under the handle's lock; about 0.2 ms for a few
**   hundred buckets). From then on lookups of it allocate nothing, take no
**   lock and run no SQL, so they are cheap enough for a launch path, and
**   safe from several threads at once (only the error message is shared:
**   when lookups fail in several threads at once, it may be garbled; the
**   status codes are always right). A damaged winners row makes the lookups
**   of its (op, arch, dtype) fail with AITUNE_CORRUPT, every time; other
**   ops still answer. Warm an op at start-up with one lookup if its first
**   launch must not pay the read.
** - Strings in an aitune_choice belong to the handle and live until
**   aitune_close. aitune_close(NULL) is a no-op.
** - A registry written by a newer aitune (a higher schema version) is
**   refused with AITUNE_CORRUPT; one written by 0.1 answers lookups (its
**   launch plans need one `aitune compile` or `aitune sweep` over it before
**   its kernels can be launched).
**
** Layer 2, kernels. The library also launches the tuned kernels, with
** libcuda opened at run time (no link-time CUDA dependency):
**
**     aitune_kernel *k;
**     long long shape[] = { rows, cols };      // the op's dims, in its order
**     if (aitune_kernel_get(h, "softmax", "sm_90", "bf16", shape, 2, &k) == AITUNE_OK) {
**         aitune_arg args[] = { { .ptr = x }, { .ptr = y }, { 0 }, { 0 } };  // x, y, rows, cols
**         aitune_launch(h, k, args, shape, stream);
**     }
**
** - aitune_kernel_get loads the winner's cubin (exact bucket, else the
**   nearest; else the default when the registry stores a compiled one) into
**   the calling thread's current CUDA context, once per bucket and context,
**   and caches it in the handle; kernels live until aitune_close. It takes a
**   lock while it loads; aitune_launch takes none. Both are thread-safe.
** - A registry may hold winners of one bucket measured on several kinds of
**   GPU of the same arch (merged from several machines). aitune_kernel_get
**   takes the one measured on the context's GPU (same name, SM count,
**   memory and L2), else the first in a fixed order; aitune_lookup, which
**   knows no GPU, answers with that fixed order.
** - A bucket one config could not hold (a sweep with `hold: true` and
**   `split_at`) is stored as its parts: buckets that partition it, each
**   with its own winner, keyed "n=2^12/5760" (the bucket's key, '/', the
**   part's lower corner). A shape in a part is answered by that part, at
**   AITUNE_EXACT. Where buckets overlap (a registry merged from a GPU that
**   split a bucket and one that did not), the one measured on the
**   context's GPU answers; knowing no GPU, the smaller lo, then the
**   narrower bucket.
** - Sizes of one log2 range but of different alignment classes (the
**   largest of 1, 2, 4 and 8 that divides the size: 4096 is 8, 4097 is 1,
**   4100 is 4) are tuned into buckets of their own, with the same edges,
**   keyed "m=2^12,n=2^12:align1,k=2^12" (an aligned size's key has no
**   suffix). Of the buckets that hold a shape, the answer is first one whose
**   winner was tuned at a class at most the shape's in every dim (a config
**   tuned at 4097 runs at 4096 and 4100; one tuned at 4096 may not run at
**   4097: a TMA tensor map needs 16-byte rows), then the one tuned at the
**   classes closest to the shape's; the GPU and lo rules above come after.
**   Among nearest buckets, classes only break ties of distance and lo
**   (buckets of one range tuned at several classes). Classes
**   never make a nearest bucket answer in place of one that holds the
**   shape: a registry tuned at 4096 only answers 4097 from it, at
**   AITUNE_EXACT.
** - A dim may be tuned at exact sizes (a spec's `exact: true`: a weight's
**   n and k): its bucket is that one size, keyed "m=2^4,n=6144,k=4096".
**   Of the buckets that hold a shape and whose classes fit it, the one
**   that names more of its dims exactly answers: n = 6144 from the bucket
**   tuned at 6144, not from a log2 bucket [4096, 8192) tuned at 4096 that
**   holds it too (n = 5000 still from that one). A shape no bucket holds
**   gets the nearest, an exact bucket's distance counted from its size;
**   of buckets as near, the one that names more dims exactly.
** - args: one entry per op argument in the op's order (op.lua): buffers as
**   device addresses in .ptr, scalars in .f32; entries for dims are ignored
**   (the shape gives them). When aitune_kernel_workspace reports a non-zero
**   size, one more entry follows: a device buffer of at least that many
**   bytes. aitune_launch zeroes, on the stream before the kernel, the part
**   the kernel needs zero (the launch plan's workspace "zero": e.g. a
**   stream-K GEMM's 4 KB of tickets, not its tens of MB of partial tiles,
**   which it writes before it reads); the rest may hold anything.
** - Buffers of kernels that use TMA must be 16-byte aligned (PyTorch's and
**   cudaMalloc's always are). Other kernels of a bucket whose sizes are
**   16-byte multiples expect aligned buffers too, and stay right but slow
**   without them: the mma GEMMs' `aligned` kernels take an element-by-element
**   path, 200-480x slower on an H100 (bench/RESULTS.md, 2026-11-27 fourth
**   session). Pass offset views as aligned copies.
** - The vendor as a winner. Where no template beat the vendor library over
**   a bucket or a split bucket's part (a sweep times cuBLASLt beside the
**   candidates), the registry may name the vendor as that part's winner:
**   template "vendor/cublaslt", config "{}", no cubin. Only the GEMM ops
**   (gemm_nt, gemm_nn) have such winners. Lookups answer them as any
**   winner. aitune_kernel_get then gives a kernel that calls cuBLASLt
**   (libcublasLt.so.13, .12 or .so, opened at run time, or the file the
**   environment variable AITUNE_CUBLASLT names; nothing is linked), with
**   the heuristic's best algorithm for each shape, found at a shape's first
**   launch and kept in the handle; it fails with AITUNE_ERROR, saying so,
**   when cuBLASLt cannot be opened. Its workspace is 32 MiB
**   (aitune_kernel_workspace), none of it zeroed; aitune_launch takes the
**   arguments as for any kernel of the op, the workspace last, and calls
**   cublasLtMatmul on the stream. Buffers may have any alignment (the
**   algorithm is chosen for it).
** - Lookups and kernel_gets that were not answered by an exact bucket are
**   counted in the handle (misses); aitune_flush_misses adds them to the
**   registry's `misses` table, the next sweep's input, through a separate
**   write connection. Exact answers take no lock.
*/
#ifndef AITUNE_H
#define AITUNE_H

#ifdef __cplusplus
extern "C" {
#endif

#define AITUNE_VERSION "0.1.0"

/* Status codes. */
#define AITUNE_OK        0
#define AITUNE_ERROR     1  /* generic failure; see aitune_errmsg */
#define AITUNE_NOTFOUND  2  /* no winner, no nearby bucket and no default */
#define AITUNE_CANTOPEN  3  /* the registry file is missing or unreadable */
#define AITUNE_CORRUPT   4  /* the file is not an aitune registry, or damaged */
#define AITUNE_MISUSE    5  /* a NULL or out-of-range argument */
#define AITUNE_NOMEM     6

/* Which level of the fallback answered a lookup. */
#define AITUNE_EXACT     0  /* the shape falls in a tuned bucket */
#define AITUNE_NEAREST   1  /* the nearest tuned bucket of the same op/arch/dtype */
#define AITUNE_DEFAULT   2  /* the template's default configuration */

typedef struct aitune aitune;

typedef struct aitune_choice {
    int level;                 /* AITUNE_EXACT, AITUNE_NEAREST or AITUNE_DEFAULT */
    const char *template_name; /* "axpy/vec" */
    const char *config;        /* canonical JSON: {"block":256,"ilp":4,...} */
    const char *bucket;        /* "n=2^26" (a split bucket's part: "n=2^12/5760"); NULL at AITUNE_DEFAULT */
    double median_us;          /* measured median at the tuned shape; 0 at AITUNE_DEFAULT */
    double distance;           /* log2 distance from the shape to that bucket; 0 if exact */
} aitune_choice;

/* Open a registry read-only. *out is always set: to a handle that carries the
** error message when the call fails, or to NULL when not even the handle could
** be allocated (AITUNE_NOMEM; aitune_errmsg(NULL) says "out of memory" and
** aitune_close(NULL) is a no-op). Close it either way. path is a file name,
** never read as a SQLite URI. A file whose schema holds a view, a virtual
** table, or a table or trigger that is not the registry's is AITUNE_CORRUPT,
** and so is any query on it that runs past a bound on its work. */
int aitune_open(const char *path, aitune **out);

/* The configuration for (op, arch, dtype, shape). arch is "sm_90" (a
** trailing 'a' or 'f', as in "sm_90a" or "sm_100f", is ignored); shape holds
** ndims sizes (each >= 1) in the op's dim order. Exact bucket, else the
** nearest tuned bucket with as many dims, else the template default;
** out->level says which. A shape with another number of dims than the
** winners of (op, arch, dtype) is AITUNE_MISUSE. */
int aitune_lookup(aitune *h, const char *op, const char *arch, const char *dtype,
                  const long long *shape, int ndims, aitune_choice *out);

/* aitune_lookup for a given GPU: gpu (NULL or "" for none) is a hardware
** identity as the registry stores it ("NVIDIA H100 80GB HBM3|sm_90|132
** SMs|85045231616 B|L2 52428800 B"; `aitune devices` and `aitune show`
** print it). Among winners of one bucket measured on several GPUs (or of
** overlapping buckets: a split bucket's part and the whole bucket), the one
** measured on gpu answers. *measured_on (when not NULL) is set to the
** answering winner's hardware identity ("" for registries older than
** schema 3; NULL at AITUNE_DEFAULT), a string that lives until
** aitune_close: compare it with gpu to know the winner was measured
** elsewhere. */
int aitune_lookup_gpu(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, const char *gpu, aitune_choice *out,
                      const char **measured_on);
/* The number of winners in the registry (all ops; a count query). */
int aitune_count(aitune *h, int *out);

/* The last error message on h ("not an error" when there was none; a
** successful call does not clear it). Never NULL. */
const char *aitune_errmsg(aitune *h);

/* "exact", "nearest", "default". */
const char *aitune_level_name(int level);

/* ---- layer 2: launching tuned kernels ---- */

typedef struct aitune_kernel aitune_kernel;

/* One kernel argument (see above). */
typedef union aitune_arg {
    unsigned long long ptr;    /* a device address (CUdeviceptr, or a cudaMalloc pointer) */
    float f32;                 /* a scalar */
    long long i64;             /* unused by current ops; zero it */
} aitune_arg;

typedef struct aitune_kernel_info {
    int level;                 /* AITUNE_EXACT, AITUNE_NEAREST or AITUNE_DEFAULT */
    const char *template_name, *config;
    const char *bucket;        /* NULL at AITUNE_DEFAULT */
    const char *plan;          /* the launch plan, JSON (src/plan.h documents it): the op's
                                  dims and arguments (name, role, dtype) in order */
    int ndims, nargs;          /* nargs: op arguments, not counting the workspace entry */
} aitune_kernel_info;

/* The kernel for (op, arch, dtype, shape), loaded into the current context.
** AITUNE_NOTFOUND: nothing answers, or the default level has no compiled
** kernel in the registry. AITUNE_ERROR: no driver, no current context, or
** the module does not load (aitune_errmsg says which). */
int aitune_kernel_get(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, aitune_kernel **out);

/* What k is; strings live until aitune_close. */
int aitune_kernel_info_get(aitune *h, const aitune_kernel *k, aitune_kernel_info *out);

/* Workspace bytes k needs at shape (0: none). */
int aitune_kernel_workspace(aitune *h, const aitune_kernel *k, const long long *shape,
                            unsigned long long *bytes);

/* Launch k at shape (k's ndims sizes) on stream (a CUstream or cudaStream_t;
** NULL: the legacy default stream). Asynchronous: errors the kernel hits
** show on the stream, not here. The current context must be the one k was
** loaded in. */
int aitune_launch(aitune *h, const aitune_kernel *k, const aitune_arg *args,
                  const long long *shape, void *stream);

/* ---- bound launches: the cached fast path ----
**
** aitune_launch evaluates the launch plan (geometry, dims, tensor maps) at
** every call. An application that launches one kernel at one shape many
** times (a model's layers, token after token) binds it once instead and
** launches the bound launch, which only writes the buffers' addresses,
** the scalars and the stream into a prebuilt parameter buffer:
**
**     aitune_kernel *k;
**     aitune_bound *b;
**     long long shape[] = { m, n, k };                     // gemm_nt
**     aitune_kernel_get(h, "gemm_nt", "sm_90", "bf16", shape, 3, &k);
**     aitune_arg known[] = { { 0 }, { .ptr = weight }, { 0 }, { 0 }, { 0 }, { 0 } };
**     aitune_bind(h, k, shape, known, &b);                 // once, at warm-up
**     ...
**     aitune_arg args[] = { { .ptr = x }, { .ptr = weight }, { .ptr = y }, { 0 }, { 0 }, { 0 } };
**     aitune_bound_launch(h, b, args, stream);             // every call
**
** - aitune_bind(h, k, shape, args, &b) evaluates k's plan at shape (k's
**   ndims sizes; a shape of the bucket k was got for), allows the kernel
**   the dynamic shared memory it needs there, and prebuilds every
**   parameter. args may be NULL, or give addresses known now (a weight):
**   a tensor map (TMA) is encoded at bind for those, and at a launch whose
**   address differs it is encoded again (cuTensorMapEncodeTiled, host-only,
**   every other argument stored at bind); buffers left 0 in args are
**   mapped at each launch. Scalars given here are not kept: a launch gives
**   them. Errors: AITUNE_MISUSE for a shape the plan refuses (a stride TMA
**   cannot take, a size that does not fit), AITUNE_ERROR when the driver
**   refuses the shared memory.
** - aitune_bound_launch(h, b, args, stream) takes args as aitune_launch
**   does (one entry per op argument in the op's order, dims ignored, then
**   the workspace when aitune_bound_info_get says ws_bytes > 0; the part of
**   it the kernel needs zeroed is zeroed on the stream first). It evaluates
**   no expression, parses nothing, allocates nothing and waits on no lock.
**   Each tensor map keeps the last map a launch encoded and its address
**   (an activation comes back at the address it had a step before), so a
**   launch at that address copies it instead of calling the driver; the
**   slot is taken with an atomic exchange, and a launch that finds it taken
**   encodes its own. Nothing else shared is written (the handle's message,
**   on failure), so one bound launch may be launched from several threads
**   at once, and a launch inside CUDA graph capture records the kernel (and
**   the workspace's memset) into the graph. It fails with AITUNE_MISUSE on a
**   NULL buffer, a buffer a tensor map reads that is not 16-byte aligned,
**   or a current context that is not the kernel's; with AITUNE_ERROR when
**   the driver refuses the launch.
** - Bound launches live until aitune_bound_free or aitune_close;
**   aitune_bound_free(h, NULL) is a no-op.
** - A bound launch has a kind (aitune_bound_info.kind): AITUNE_BOUND_KERNEL,
**   a tuned kernel launched through the driver, or AITUNE_BOUND_VENDOR, a
**   bucket the vendor holds: one cublasLtMatmul with the algorithm chosen
**   for the shape (at bind, for the buffers' alignment when args gives the
**   addresses; a launch at another alignment chooses once more, then keeps
**   it), launched through the same aitune_bound_launch with the same args
**   (the workspace last, ws_bytes 32 MiB; geometry and tensor maps 0).
*/

typedef struct aitune_bound aitune_bound;

#define AITUNE_BOUND_KERNEL 0       /* a tuned kernel: cuLaunchKernel(Ex) */
#define AITUNE_BOUND_VENDOR 1       /* a bucket the vendor holds: cublasLtMatmul */

typedef struct aitune_bound_info {
    int kind;                       /* AITUNE_BOUND_KERNEL or AITUNE_BOUND_VENDOR */
    const aitune_kernel *kernel;    /* the kernel it launches (aitune_kernel_get's) */
    int nargs;                      /* op arguments in args, not counting the workspace entry */
    unsigned long long ws_bytes;    /* workspace bytes a launch needs (0: none, no entry) */
    unsigned grid[3], block[3], cluster[3];
    unsigned smem;                  /* dynamic shared memory, bytes */
    int ntmaps;                     /* tensor maps encoded at a launch whose address moved */
} aitune_bound_info;

int aitune_bind(aitune *h, const aitune_kernel *k, const long long *shape, const aitune_arg *args,
                aitune_bound **out);
int aitune_bound_launch(aitune *h, const aitune_bound *b, const aitune_arg *args, void *stream);
int aitune_bound_info_get(aitune *h, const aitune_bound *b, aitune_bound_info *out);
int aitune_bound_free(aitune *h, aitune_bound *b);

/* ---- cached launches: a bound launch from one block of the caller's memory ----
**
** For callers that pay per argument to cross into C (Python's ctypes
** converts each one, about as long as the call itself): everything a bound
** launch takes lies in one struct the caller keeps, writes in place
** (usually just the addresses that moved and the stream) and hands over
** as the only argument.
**
**     aitune_cached c = { .h = h, .b = b };          // one per thread
**     ...
**     c.stream = stream;
**     c.args[0].ptr = x; c.args[1].ptr = weight; c.args[2].ptr = y;
**     aitune_launch_cached(&c);                      // every call
**
** - aitune_launch_cached(c) is aitune_bound_launch(c->h, c->b, c->args,
**   c->stream): the same args (the op's arguments in its order, then the
**   workspace when ws_bytes > 0; at most AITUNE_CACHED_MAXARGS entries in
**   all), the same checks and errors, the message in c->h. c NULL or c->h
**   NULL is AITUNE_MISUSE with no message (there is no handle to hold one):
**   a caller that sets h to NULL when it closes the handle gets that
**   instead of a launch through a freed bound launch.
** - The struct is read, never written, by the library: one per thread
**   (or per launch in flight), as a bound launch's args are. */

#define AITUNE_CACHED_MAXARGS 17    /* an op's arguments (16 at most) and the workspace */

typedef struct aitune_cached {
    aitune *h;
    const aitune_bound *b;
    void *stream;                   /* a CUstream; NULL: the legacy default stream */
    aitune_arg args[AITUNE_CACHED_MAXARGS];
} aitune_cached;

int aitune_launch_cached(const aitune_cached *c);

/* Add the counted misses to the registry's misses table (opened for writing
** for this call only) and reset the counts. */
int aitune_flush_misses(aitune *h);

/* The number of misses counted since the last flush. */
int aitune_miss_count(aitune *h, long long *out);

/* Free the handle. NULL is a no-op. */
int aitune_close(aitune *h);

#ifdef __cplusplus
}
#endif
#endif
