/* tmpl.h: the Lua side of aitune. One Lua 5.4 state holds the ops
** (templates/<op>/op.lua), their template families (templates/<op>/<impl>.lua),
** the shared Lua in templates/lib/ and the search strategies (search/). Files
** run in a sandbox: base (without file or load functions), string, table,
** math, plus lib(name) and, in template files, OP.
**
** Every call returns 0 or -1; on -1, tmpl_errmsg says why, naming the file
** and line when Lua raised the error. Nothing here prints. */
#ifndef TMPL_H
#define TMPL_H
#include "device.h"
#include "plan.h"
#include "util.h"

typedef struct tmpl tmpl;
struct lua_State;

#define TMPL_MAXARGS 16
#define TMPL_MAXDIMS MAXDIMS


/* One kernel argument, resolved for a dtype and a shape. */
typedef struct op_arg {
    char name[32];
    int role;               /* enum arg_role */
    char dtype[8];          /* buffers: f32 | f16 | bf16 */
    int esize;              /* bytes per element */
    long long count;        /* buffers: elements */
    int init;               /* inputs: enum arg_init */
    double value;           /* scalars: the value; dims: the size */
} op_arg;

/* An op resolved for (dtype, shape): all the worker needs to set a task up. */
typedef struct op_task {
    char op[32];
    char dtype[16];
    int ndims;
    char dims[TMPL_MAXDIMS][16];
    long long shape[TMPL_MAXDIMS];
    int nargs;
    op_arg args[TMPL_MAXARGS];
    double rtol, atol;
    double bytes, flops;    /* op.metrics */
    int stream;             /* timed back to back over rotating input copies (spec `timing: stream`; bench.h) */
} op_task;

/* A kernel ready to compile: source, entry name, and its launch plan
** (plan.h: parameters, geometry and workspace as expressions over the dims).
** A template's launch() may list `params`; without them the plan passes the
** op's arguments in order plus a workspace when the template has
** workspace(), whose Lua arithmetic over shape becomes the size expression
** (templates/lib/kernel.lua), and launch()'s `zero` (an expression) says how
** many of its bytes are zeroed before a launch (default: all). launch()'s
** `pdl = true` asks for programmatic dependent launch (plan.h), and its
** `waves` (an expression) gives the rounds of work the grid runs (plan.h). */
typedef struct kernel_src {
    char *source;
    char name[64];
    plan *plan;
} kernel_src;

tmpl *tmpl_open(const char *root);        /* root holds templates/ and search/ */
void tmpl_close(tmpl *T);
const char *tmpl_errmsg(tmpl *T);
/* Set the message tmpl_errmsg returns; returns -1. */
int tmpl_seterr(tmpl *T, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct lua_State *tmpl_lua(tmpl *T);
const char *tmpl_root(tmpl *T);

/* A watch over long Lua work (a space counted, a batch asked of a search,
** a config instantiated), so a Ctrl-C need not wait for it: fn(ctx) is
** called about every TMPL_WATCH_STEPS Lua instructions, and once it returns
** non-zero the call in progress fails with "interrupted", as does every
** Lua call after it, until the watch is set again or removed (fn NULL).
** A template that catches errors (pcall) cannot hold it: the error is
** raised again at each instruction until it leaves the template. */
#define TMPL_WATCH_STEPS 100000
void tmpl_watch(tmpl *T, int (*fn)(void *ctx), void *ctx);
/* Whether the watch has stopped the Lua work (tmpl_errmsg then ends in
** "interrupted"). */
int tmpl_stopped(tmpl *T);

/* Ops (folders with an op.lua), sorted. The list is owned by the caller:
** free each name, then the array. */
int tmpl_ops(tmpl *T, char ***names, int *n);
/* The op's dims and dtypes. */
int tmpl_op_info(tmpl *T, const char *op, int *ndims, char dims[][16],
                 int *ndtypes, char dtypes[][16], int maxdtypes);
/* The template families of an op, "op/impl", sorted; free like tmpl_ops. */
int tmpl_templates(tmpl *T, const char *op, char ***names, int *n);

/* Bytes of all the task's buffers (LLONG_MAX if that overflows): what a
** sweep must allocate on the GPU, checked against its memory first. */
long long tmpl_task_bytes(const op_task *t);
/* Resolve op for dtype and shape (sizes in the op's dim order). Buffer
** sizes are checked for overflow (each at most 2^62 elements and bytes). */
int tmpl_task(tmpl *T, const char *op, const char *dtype, const long long *shape, op_task *out);

/* Whether the template handles the task on dev; *why gets the reason if not. */
int tmpl_supports(tmpl *T, const char *tname, const op_task *task, const device *dev,
                  int *ok, char *why, int whycap);
/* Check one config against the template's params and constraints. */
int tmpl_valid(tmpl *T, const char *tname, const char *config, const op_task *task,
               const device *dev, int *ok, char *why, int whycap);
/* The params half of tmpl_valid: every key is one of the template's params
** and every value one of that param's values (no constraints, no shape):
** what a config read from a registry must pass before a template sees it. */
int tmpl_config_known(tmpl *T, const char *tname, const char *config, int *ok, char *why, int whycap);
/* A config tuned at from's shape (a winner of another bucket, untrusted),
** carried to task's: the template's carry(p, from_shape, shape, dtype, dev)
** may return the config that tiles task's shape as p tiled from's (swapab:
** as many tiles of m rows, each as wide as they now need), or nil for p as
** it is. *out (canonical JSON, caller frees) is that config, or config
** itself where the template has no carry, config is not one of its space,
** or carry gives nil or a config of its space unchanged. -1 (tmpl_errmsg)
** when carry fails or gives what is not a config of the template's space. */
int tmpl_carry(tmpl *T, const char *tname, const char *config, const op_task *from, const op_task *task,
               const device *dev, char **out);
/* A config that serves every shape from lo's to hi's (a part of a range,
** sweep_part.h) made to serve each as it wants: the template's span(p,
** lo_shape, hi_shape, dtype, dev) may return it (swapab: its mid-size
** kernel's widths chosen at run time, in steps of 8 or 16 from bn down to
** lo's m), or nil where p serves them so already or cannot. *out as
** tmpl_carry's (config itself where there is no other), -1 likewise. */
int tmpl_span(tmpl *T, const char *tname, const char *config, const op_task *lo, const op_task *hi,
              const device *dev, char **out);
/* The template's default config, canonical JSON; caller frees. */
int tmpl_default(tmpl *T, const char *tname, const op_task *task, const device *dev, char **config);

/* Instantiate a config (canonical JSON) as a kernel named kname. */
int tmpl_instantiate(tmpl *T, const char *tname, const char *config, const op_task *task,
                     const device *dev, const char *kname, kernel_src *out);
/* The op's reference kernel for the task. */
int tmpl_reference(tmpl *T, const op_task *task, const char *kname, kernel_src *out);
void kernel_src_free(kernel_src *k);
/* The measurement engine's kernels (templates/lib/support.lua); caller frees. */
int tmpl_support(tmpl *T, char **source);

/* The task's shape as JSON, dim -> size ({"M":4096,"N":1024}): what the
** registry stores as a measurement's or a winner's shape. */
void tmpl_shape_json(const op_task *t, char *out, size_t cap);

/* Evaluate a kernel's launch plan for the task's shape. */
int kernel_geometry(const kernel_src *k, const op_task *task, plan_geom *g, char *err, int errcap);

/* Lua helpers for search.c: push the template table, the task's shape
** table, the dev table; convert between config tables and canonical JSON. */
int tmpl_push_template(tmpl *T, const char *tname);
void tmpl_push_shape(tmpl *T, const op_task *task);
void tmpl_push_dev(tmpl *T, const device *dev);
int tmpl_push_config(tmpl *T, const char *json);
/* The config table at stack index idx as canonical JSON (sorted keys). */
int tmpl_config_json(tmpl *T, int idx, strbuf *out);

/* Load a Lua file from root/<rel> in the sandbox and push what it returns. */
int tmpl_load_file(tmpl *T, const char *rel, const char *op);
/* lua_pcall with a traceback; on failure sets the errmsg (prefixed by what). */
int tmpl_pcall(tmpl *T, int nargs, int nresults, const char *what);

#endif
