/* vendor.h: the vendor library in the loop: cuBLASLt, opened at run time
** with dlopen as cu.h opens libcuda, so nothing links it and everything that
** needs no GPU works where it is missing. Types and enums come from the
** toolkit's cublasLt.h; every function is resolved with dlsym.
**
** The worker times the vendor at a task's shape as it times a candidate
** (bench.h: a slot, verified against the reference, flush, stream or neighbour
** timing), and libaitune launches it where the registry names the vendor as
** a bucket's (or a split bucket's part's) winner. Both go through this
** module: the heuristic's first algorithm for the problem, with a
** VENDOR_WORKSPACE-byte workspace the caller provides, on the caller's
** stream. Split-K algorithms are held to adding their parts in fp32 (no
** scheme that rounds parts to the output type), so the vendor keeps the
** accuracy contract the candidates keep.
**
** What the vendor serves (vendor_kind): the GEMM ops, A and B bf16 or f16,
** fp32 accumulation and scale, D of the input type or f32 (the dtypes
** "bf16", "f16", "bf16>f32", "f16>f32" of templates/lib/gemm.lua), all
** row-major:
**     gemm_nt  A m x k, B n x k, D = A·Bᵀ (m x n)  (F.linear's layout)
**     gemm_nn  A m x k, B k x n, D = A·B  (m x n)
** The shape is (m, n, k), the ops' dim order. cuBLASLt is column-major:
** row-major D (m x n) is column-major Dᵀ (n x m), so the call computes
** Dᵀ = Bᵀ·Aᵀ (gemm_nt: B's buffer transposed, A's as it is; gemm_nn: both
** as they are), which reads the same bytes.
**
** A vendor handle holds one cuBLASLt handle, made in the CUDA context that
** is current when it is opened, and a cache of plans: per (kind, m, n, k and
** the alignment class of the three pointers, up to 256 bytes, which the
** heuristic's choice depends on) the matmul descriptor, the three layouts
** and the algorithm. The first call at a shape builds its plan under the
** handle's lock; later ones find it without a lock (a published plan never
** changes), so a launch is a hash probe and one cublasLtMatmul call, and
** several threads may launch through one handle at once.
**
** Calls return 0, or -1 with one line in err. Nothing here prints. */
#ifndef VENDOR_H
#define VENDOR_H
#include <stddef.h>

/* A vendor winner in the registry (winners.template; aitune.h documents
** it): config "{}", no cubin, a launch plan whose kernel is VENDOR_KERNEL
** and whose only workspace is VENDOR_WORKSPACE bytes, none zeroed. */
#define VENDOR_TEMPLATE "vendor/cublaslt"
#define VENDOR_KERNEL "cublaslt"
#define VENDOR_WORKSPACE (32ull << 20)
#define VENDOR_MAXPLANS 65536    /* shapes per handle; past it a call fails */

/* Whether template names the vendor (the reserved name above). */
int vendor_is_template(const char *tmpl);

/* The vendor's problem kind for (op, dtype), or -1 when it does not serve
** it. Needs no library. */
int vendor_kind(const char *op, const char *dtype);

/* Whether cuBLASLt can be opened: 0, or -1 with why ("cannot open cuBLASLt
** (tried ...)"). Opens it once; later calls answer the same. AITUNE_CUBLASLT,
** when set, is the one file (or soname) tried. */
int vendor_available(char *why, int whycap);

/* The library as a registry row names it: "cuBLASLt 130100" (the version
** cublasLtGetVersion reports); "" when it does not open. */
void vendor_library(char *out, int cap);

typedef struct vendor vendor;

/* A handle in the current CUDA context. */
int vendor_open(vendor **out, char *err, int errcap);
void vendor_close(vendor *v);      /* NULL: nothing */

/* D = the product of kind at shape (m, n, k) on stream (a CUstream or
** cudaStream_t; NULL: the legacy default stream), with the workspace ws of
** VENDOR_WORKSPACE bytes. Asynchronous, as a kernel launch. */
int vendor_gemm(vendor *v, int kind, const long long *shape, unsigned long long a, unsigned long long b,
                unsigned long long d, unsigned long long ws, void *stream, char *err, int errcap);

/* The heuristic's choice at that problem (building its plan as vendor_gemm
** would): "algo 66 tile 20 stages 31 splitk 1 ws 0", for the record. */
int vendor_describe(vendor *v, int kind, const long long *shape, unsigned long long a, unsigned long long b,
                    unsigned long long d, char *out, int cap, char *err, int errcap);

#endif
