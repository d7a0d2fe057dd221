/* plan.h: the launch plan, the one owner of "how to launch this cubin". The
** worker (bench.c), the runtime (rt.c) and `aitune emit` all launch through
** it; templates produce it (tmpl.c), the registry stores it (winners.launch).
** It depends on expr (the expression grammar), json and cu (types, and the
** tensor-map encoder handed in by the caller), never on util, so libaitune
** carries it.
**
** ## What a plan holds
** - the kernel's entry name (a C identifier);
** - the op's dims, in the op's order (the names expressions use), and the
**   op's arguments in order: name, role (in/out/inout buffer, f32 scalar,
**   dim), element dtype of buffers (f32, f16, bf16) and their size in
**   elements (an expression, from op.lua's size(); callers check buffers
**   against it);
** - grid, block, cluster (3 each) and dynamic shared memory: expressions
**   over the dims (expr.h: integers, dim names, + - *, parentheses, cdiv,
**   min, max);
** - pdl: whether the kernel is launched with programmatic stream
**   serialization (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): it
**   calls griddepcontrol.launch_dependents and griddepcontrol.wait, so the
**   next launch on the stream may start before this one ends, and this one
**   before the previous one ends. JSON "pdl": true; absent means false;
** - waves (optional): an expression over the dims, how many rounds of
**   equal work the grid runs at a shape (a persistent kernel's tiles over
**   the CTAs that take them, rounded up). Nothing launches by it: the
**   sweep races a range's winner where it steps up (sweep_probe.h:
**   probe_wave_shapes), where a tiled kernel's time jumps and a vendor's
**   rises smoothly. JSON "waves"; absent: not known;
** - the kernel's parameter list, in order, each one of:
**     ptr        a device pointer to op buffer argument `arg`
**     dim        an i64 value of expression `expr`
**     i32        an i32 value of expression `expr` (checked to fit)
**     f32        the value of op scalar argument `arg`
**     workspace  a device pointer to a workspace of `size` bytes (an
**                expression), its first `zero` bytes (an expression, at most
**                size; default: all of it) zeroed before every launch (a
**                kernel that keeps counters there and leaves its partial sums
**                to be overwritten asks for the counters only); at most one
**                per plan
**     tmap       a CUtensorMap (TMA descriptor) of op buffer `arg`, encoded
**                on the host with cuTensorMapEncodeTiled and passed by value
**                (the kernel declares it `const __grid_constant__ CUtensorMap`):
**                rank 1..5; `dims` global sizes innermost first (expressions);
**                `strides` byte strides of dims 2..rank (expressions, multiples
**                of 16 at bind); `box` sizes (integers 1..256, the innermost
**                box a multiple of 16 bytes and, when swizzled, at most the
**                swizzle span; an outer box may be an expression instead,
**                1..256 at bind: a box that follows the shape, e.g.
**                "min(192, cdiv(m, 8) * 8)", so TMA fills no rows past m);
**                element type from the argument's dtype;
**                element strides 1; no interleave; `swizzle` 0/32/64/128;
**                `oob` "zero" (FILL_NONE) or "nan" (NAN_REQUEST_ZERO_FMA);
**                `l2` promotion 0/64/128/256;
**                optional `at` (an expression, bytes): the map reads the plan's
**                workspace from byte `at` on instead of buffer `arg`, which then
**                gives only the element type: a kernel that stages a copy of
**                `arg` there (rows padded to 16-byte strides TMA can take)
**                before it loads it. Bind checks that the map's extent (the
**                outermost stride times the outermost dim) lies inside the
**                workspace.
**   A template that gives no `params` gets the op's arguments in order
**   (buffers as ptr, scalars as f32, dims as dim) plus a workspace when it
**   has one: plan_default_params.
**
** ## The codec (version PLAN_VERSION), one JSON object:
**     {"v":2,"kernel":"aitune_softmax_1a2b3c4d","dims":["rows","cols"],
**      "args":[{"name":"x","role":"in","dtype":"bf16","size":"rows * cols"},
**              {"name":"y","role":"out","dtype":"bf16","size":"rows * cols"},
**              {"name":"rows","role":"dim"},{"name":"cols","role":"dim"}],
**      "grid":["rows","1","1"],"block":["256","1","1"],"cluster":["1","1","1"],
**      "smem":"0",
**      "params":[{"kind":"ptr","arg":"x"},{"kind":"ptr","arg":"y"},
**                {"kind":"dim","expr":"rows"},{"kind":"dim","expr":"cols"},
**                {"kind":"workspace","size":"rows*4+16"},
**                {"kind":"tmap","arg":"x","dims":["cols","rows"],
**                 "strides":["cols*2"],"box":[64,128],"swizzle":128,
**                 "oob":"zero","l2":256}]}
** Registries written by aitune 0.1 hold version 1 (no "v"; grid, block and
** smem strings, cluster integers, a workspace byte count, no dims, args or
** params): plan_decode_v1 reads it given the op's signature (registry.c
** migrates stored rows with it).
**
** Everything decoded is validated (plan_check): a registry is untrusted
** input. Identifiers must be C identifiers of at most 63 characters, every
** expression must parse under the grammar with the plan's dims as the only
** names, every argument reference must name an argument of the right role.
** A plan that passes is safe to paste into C (emit) and to evaluate.
**
** Calls return 0, or -1 with one line in err. Nothing here prints or exits. */
#ifndef PLAN_H
#define PLAN_H
#include "names.h"
#include <cuda.h>

#define PLAN_VERSION 2
#define PLAN_MAXDIMS MAXDIMS
#define PLAN_MAXARGS 16
#define PLAN_MAXPARAMS 32
#define PLAN_MAXEXPR 255     /* bytes of one expression */
#define PLAN_MAXNAME 63      /* bytes of an identifier */
/* Whether s is a C identifier of at most PLAN_MAXNAME bytes (a kernel's,
** a dim's or an argument's name). */
int plan_ident(const char *s);


typedef struct plan_arg {
    char name[PLAN_MAXNAME + 1];
    int role;               /* enum arg_role (names.h) */
    char dtype[8];          /* buffers: f32 | f16 | bf16; "" otherwise */
    int esize;              /* buffers: bytes per element */
    char size[PLAN_MAXEXPR + 1];   /* buffers: elements, an expression over dims; "" unknown */
} plan_arg;

typedef struct plan_tmap {
    int rank;               /* 1..5 */
    char *dims[5];          /* rank expressions, innermost first */
    char *strides[4];       /* rank - 1 expressions, bytes */
    unsigned box[5];        /* integer boxes; 0 where box_expr[d] is set */
    char *box_expr[5];      /* outer boxes (d >= 1) given as expressions; NULL: box[d] */
    int swizzle;            /* 0, 32, 64, 128 (bytes) */
    int oob_nan;            /* 0: "zero", 1: "nan" */
    int l2;                 /* 0, 64, 128, 256 */
} plan_tmap;

typedef struct plan_param {
    int kind;               /* enum plan_kind (names.h) */
    int arg;                /* ptr, f32, tmap: index into args; else -1 */
    char *expr;             /* dim, i32: the value; workspace: the size */
    char *zero;             /* workspace: bytes zeroed before a launch; NULL: all */
    char *at;               /* tmap: byte offset in the workspace it reads; NULL: buffer arg */
    plan_tmap tm;           /* tmap */
} plan_param;

typedef struct plan {
    char kernel[PLAN_MAXNAME + 1];
    int ndims;
    char dims[PLAN_MAXDIMS][PLAN_MAXNAME + 1];
    int nargs;
    plan_arg args[PLAN_MAXARGS];
    char *grid[3], *block[3], *cluster[3], *smem;
    int pdl;                /* launch with programmatic stream serialization */
    char *waves;            /* rounds of work at a shape, an expression; NULL: not known */
    int nparams;
    plan_param params[PLAN_MAXPARAMS];
} plan;

/* An empty plan (calloc'd; NULL out of memory). Expressions are strings the
** plan owns: set them with plan_set. */
plan *plan_new(void);
void plan_free(plan *p);
/* Replace *slot (an expression field of p) with a copy of s; 0 or -1 (OOM). */
int plan_set(char **slot, const char *s);
/* Fill params with the op's arguments in order (buffers ptr, scalars f32,
** dims dim) plus a workspace of size ws_expr when it is not NULL. */
int plan_default_params(plan *p, const char *ws_expr, char *err, int errcap);
/* Validate everything (see above). */
int plan_check(const plan *p, char *err, int errcap);
/* The index of argument name, or -1. */
int plan_arg_index(const plan *p, const char *name);

/* The JSON of p (checked first); malloc'd, caller frees. NULL with err on
** failure. */
char *plan_encode(const plan *p, char *err, int errcap);
/* Decode and check. *out is NULL on failure. */
int plan_decode(const char *text, plan **out, char *err, int errcap);
/* Decode a 0.1 launch JSON: the op's signature (dims, args) comes from the
** caller, who knows it (the winner's dims column; the op). Params are the
** default list; a workspace of the stored byte count, if any. */
int plan_decode_v1(const char *text, int ndims, const char *const *dims, int nargs, const plan_arg *args,
                   plan **out, char *err, int errcap);

/* ---- binding: (plan, shape, arguments) -> a launch ---- */

/* Geometry for a shape (ndims sizes in the plan's dim order). */
typedef struct plan_geom {
    unsigned grid[3], block[3], cluster[3];
    unsigned smem;                  /* dynamic shared memory, bytes */
    unsigned long long ws_bytes;    /* 0: no workspace */
    unsigned long long ws_zero;     /* its first bytes to zero before a launch (<= ws_bytes) */
    int pdl;                        /* the plan's pdl */
} plan_geom;

int plan_geometry(const plan *p, const long long *shape, plan_geom *g, char *err, int errcap);

/* One op argument's value, in the op's order: ptr for buffers (a device
** address), f32 for scalars; dims come from the shape. */
typedef struct plan_value {
    unsigned long long ptr;
    float f32;
} plan_value;

/* cuTensorMapEncodeTiled's type: the caller hands it in (cu_load()'s, or a
** fake in tests), so this module never opens libcuda itself. */
typedef __typeof__(cuTensorMapEncodeTiled) *plan_tmap_encoder;

/* A bound launch: kernelParams for cuLaunchKernel(Ex) point into storage. */
typedef struct plan_launch {
    plan_geom g;
    int nparams;
    void *params[PLAN_MAXPARAMS];
    union {
        CUtensorMap tmap;
        unsigned long long u64;
        long long i64;
        int i32;
        float f32;
    } storage[PLAN_MAXPARAMS];
} plan_launch;

/* Bind: geometry, then every parameter. ws is the workspace's device
** address (ignored when the plan has none; must be non-zero when it has).
** encode may be NULL when the plan has no tmap. The result must not be
** copied (params point into it). */
int plan_bind(const plan *p, const long long *shape, const plan_value *args, unsigned long long ws,
              plan_tmap_encoder encode, plan_launch *out, char *err, int errcap);

/* The plan's waves at a shape: 1 with *out set, 0 when the plan gives
** none, -1 with err when it does not evaluate (or is below 1). */
int plan_waves(const plan *p, const long long *shape, long long *out, char *err, int errcap);

/* Whether the plan has a tmap parameter / a cluster that is not 1,1,1. */
int plan_has_tmap(const plan *p);

/* Launch a bound plan: cuLaunchKernelEx with the cluster attribute when the
** cluster is not 1x1x1 and the programmatic-serialization one when the plan
** has pdl, else cuLaunchKernel. The caller has set the
** function's dynamic shared memory opt-in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_
** SHARED_SIZE_BYTES) to at least L->g.smem. */
CUresult plan_launch_kernel(__typeof__(cuLaunchKernel) *launch, __typeof__(cuLaunchKernelEx) *launch_ex,
                            CUfunction fn, CUstream stream, plan_launch *L);

#endif
