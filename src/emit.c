/* emit.c: see emit.h. */
#define _GNU_SOURCE
#include "emit.h"
#include "aitune.h"
#include "align.h"
#include "device.h"
#include "registry_cubin.h"
#include "registry_winner.h"
#include "tmpl.h"
#include "vendor.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EMIT_MAXKERNELS 256

/* One kernel going into the file. */
typedef struct ek {
    plan *p;
    char *source;
    char note[1024];        /* comment text, already made safe */
    int ndims;
    long long lo[PLAN_MAXDIMS], hi[PLAN_MAXDIMS];
    unsigned char cls[PLAN_MAXDIMS];   /* alignment classes of the shape it was tuned at (align_log2) */
    int nexact;             /* dims its bucket key names exactly (names.h: bucket_exact_dims) */
    int ns;                 /* the namespace holding its source */
    int vendor;             /* the vendor holds the bucket: a cuBLASLt call, no source */
} ek;

typedef struct emitter {
    const emit_opts *o;
    tmpl *T;
    reg *R;
    op_task task;
    char arch[16];
    char fn[128];
    ek k[EMIT_MAXKERNELS];
    int nk;
    int code;               /* exit code of the first failure */
} emitter;

static int efail(emitter *E, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int efail(emitter *E, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error("%s", msg);
    E->code = code;
    return -1;
}

/* Text for a // comment: printable ASCII only, no backslash (a trailing one
** would continue the comment onto the next line) and no "??" (where
** trigraphs are on, as with -std=c++14, a trailing ??/ is a backslash). */
static void safe_text(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && n + 1 < cap; p++) {
        char c = (*p >= 0x20 && *p < 0x7f && *p != '\\') ? (char)*p : '?';
        if (c == '?' && n && dst[n - 1] == '?') c = '.';
        dst[n++] = c;
    }
    dst[n] = 0;
}

/* aitune_<op>_<dtype>: '.' in the op and '>' in a dtype become '_' and
** "_to_"; anything else that is not an identifier character is refused. */
static int fn_name(char *out, size_t cap, const char *op, const char *dtype)
{
    size_t at = (size_t)snprintf(out, cap, "aitune_");
    for (int part = 0; part < 2; part++) {
        const char *s = part ? dtype : op;
        if (part) out[at++] = '_';
        for (const char *p = s; *p; p++) {
            if (at + 5 >= cap) return -1;
            if (*p == '>') { memcpy(out + at, "_to_", 4); at += 4; }
            else if (*p == '.') out[at++] = '_';
            else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
                out[at++] = *p;
            else return -1;
        }
    }
    out[at] = 0;
    return 0;
}

/* A checked expression (plan_check passed) as C: its functions get the
** file's own names. Only identifiers, digits, spaces and + - * ( ) , occur. */
static void c_expr(strbuf *sb, const char *e)
{
    sb_puts(sb, "(");
    for (const char *p = e; *p;) {
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
        if (!n) { sb_add(sb, p++, 1); continue; }
        if ((n == 4 && !strncmp(p, "cdiv", 4)) || (n == 3 && (!strncmp(p, "min", 3) || !strncmp(p, "max", 3))))
            sb_puts(sb, "aitune_");
        sb_add(sb, p, n);
        if (p[0] >= '0' && p[0] <= '9') sb_puts(sb, "LL");
        p += n;
    }
    sb_puts(sb, ")");
}

/* The plan's signature must be the op's, so every kernel of the file fits
** one function type. */
static int same_signature(emitter *E, const plan *p, const char *what)
{
    const op_task *t = &E->task;
    int ok = p->nargs == t->nargs && p->ndims == t->ndims;
    for (int i = 0; ok && i < p->nargs; i++)
        ok = !strcmp(p->args[i].name, t->args[i].name) && p->args[i].role == t->args[i].role &&
             (p->args[i].role > ROLE_INOUT || !strcmp(p->args[i].dtype, t->args[i].dtype));
    for (int i = 0; ok && i < p->ndims; i++) ok = !strcmp(p->dims[i], t->dims[i]);
    if (!ok) return efail(E, EXIT_INPUT, "registry '%s': %s: its launch plan's arguments are not op '%s''s", E->o->db_path, what, t->op);
    return 0;
}

/* The winner's plan: version 2, or a 0.1 row read with the op's signature. */
static int winner_plan(emitter *E, const winner *w, const char *what, plan **out)
{
    char err[512];
    if (!w->launch) return efail(E, EXIT_INPUT, "registry '%s': %s has no launch plan", E->o->db_path, what);
    if (!plan_decode(w->launch, out, err, sizeof err)) return 0;
    if (strstr(err, "written by aitune 0.1")) {
        const char *dims[PLAN_MAXDIMS];
        plan_arg args[PLAN_MAXARGS];
        memset(args, 0, sizeof args);
        for (int i = 0; i < E->task.ndims; i++) dims[i] = E->task.dims[i];
        for (int i = 0; i < E->task.nargs; i++) {
            snprintf(args[i].name, sizeof args[i].name, "%s", E->task.args[i].name);
            args[i].role = E->task.args[i].role;
            if (args[i].role <= ROLE_INOUT) {
                snprintf(args[i].dtype, sizeof args[i].dtype, "%s", E->task.args[i].dtype);
                args[i].esize = E->task.args[i].esize;
            }
        }
        if (!plan_decode_v1(w->launch, E->task.ndims, dims, E->task.nargs, args, out, err, sizeof err)) return 0;
    }
    return efail(E, EXIT_INPUT, "registry '%s': %s: %s", E->o->db_path, what, err);
}

/* A bucket the vendor holds: the vendor serves the op and dtype, and the
** op's arguments are the ones the emitted call passes it (A, B, D; m, n,
** k), with the workspace the plan names (vendor.h: VENDOR_WORKSPACE). */
static int vendor_check(emitter *E, const plan *p, const char *what)
{
    const op_task *t = &E->task;
    static const char *const names[] = { "A", "B", "D", "m", "n", "k" };
    int ok = vendor_kind(t->op, t->dtype) >= 0 && t->nargs == 6 && t->ndims == 3;
    for (int i = 0; ok && i < 6; i++) ok = !strcmp(t->args[i].name, names[i]);
    for (int i = 0; ok && i < 3; i++) ok = !strcmp(t->dims[i], names[3 + i]);
    const char *ws = NULL;
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_WORKSPACE) ws = p->params[i].expr;
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)VENDOR_WORKSPACE);
    if (!ok || !ws || strcmp(ws, want))
        return efail(E, EXIT_INPUT, "registry '%s': %s names the vendor, which serves no such problem (%s %s, a %s-byte "
                     "workspace)", E->o->db_path, what, t->op, t->dtype, want);
    return 0;
}

/* Parse exactly n comma-separated integers. */
static int parse_edges(const char *s, long long *v, int n)
{
    if (!s) return -1;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        v[i] = strtoll(s, &end, 10);
        if (end == s || errno || *end != (i + 1 < n ? ',' : '\0')) return -1;
        s = end + 1;
    }
    return 0;
}

/* Add a winner row as a kernel: plan, source from the cubin cache, edges. */
static int add_winner(emitter *E, const winner *w)
{
    char what[256], b[128];
    safe_text(b, sizeof b, w->bucket);
    snprintf(what, sizeof what, "the winner of %s %s %s", E->o->op, E->o->dtype, b);
    if (E->nk == EMIT_MAXKERNELS) return efail(E, EXIT_INPUT, "more than %d buckets", EMIT_MAXKERNELS);
    ek *k = &E->k[E->nk];
    memset(k, 0, sizeof *k);
    k->vendor = vendor_is_template(w->tmpl);
    if (!k->vendor && !w->cubin[0]) return efail(E, EXIT_INPUT, "registry '%s': %s has no kernel stored", E->o->db_path, what);
    if (winner_plan(E, w, what, &k->p)) return -1;
    E->nk++;   /* counted now, so the plan is freed on any failure below */
    if (same_signature(E, k->p, what)) return -1;
    if (k->vendor && vendor_check(E, k->p, what)) return -1;
    char kname[128] = "";
    int rc = k->vendor ? 1 : reg_cubin_source(E->R, w->cubin, &k->source, kname, sizeof kname);
    if (rc < 0) return efail(E, EXIT_FAIL, "%s", reg_errmsg(E->R));
    if (!k->vendor && (rc == 0 || !k->source))
        return efail(E, EXIT_INPUT, "registry '%s': the cubin cache lacks the source of %s", E->o->db_path, what);
    if (!k->vendor && strcmp(kname, k->p->kernel))
        return efail(E, EXIT_INPUT, "registry '%s': %s: the plan names kernel '%s', the cached source another", E->o->db_path, what,
                     k->p->kernel);
    k->ndims = E->task.ndims;
    if (parse_edges(w->lo, k->lo, k->ndims) || parse_edges(w->hi, k->hi, k->ndims))
        return efail(E, EXIT_INPUT, "registry '%s': %s: bad bucket edges", E->o->db_path, what);
    for (int i = 0; i < k->ndims; i++)
        if (k->lo[i] < 0 || k->hi[i] <= k->lo[i] || k->hi[i] <= 1)
            return efail(E, EXIT_INPUT, "registry '%s': %s: empty bucket", E->o->db_path, what);
    /* The dispatcher picks by alignment class as libaitune does: from the
    ** shape it was tuned at, named by the row's dims, as rt.c reads it. */
    char why[160];
    if (align_shape(w->shape, w->dims, k->ndims, k->cls, why, sizeof why))
        return efail(E, EXIT_INPUT, "registry '%s': %s: %s", E->o->db_path, what, why);
    /* ... and ranks a bucket that names dims exactly first, as rt.c does,
    ** checking the same: such a dim's edges are its one size. */
    long long one[PLAN_MAXDIMS];
    unsigned exact = bucket_exact_dims(w->bucket, w->dims, k->ndims, one);
    for (int i = 0; i < k->ndims; i++) {
        if (!(exact >> i & 1)) continue;
        const char *name = w->dims;   /* the i-th of the row's dims, which the key's pieces matched */
        for (int j = 0; j < i; j++) name += strcspn(name, ",") + 1;
        if (k->lo[i] != one[i] || k->hi[i] != one[i] + 1)
            return efail(E, EXIT_INPUT, "registry '%s': %s: its key names %.*s = %lld exactly, its edges are [%lld, %lld)",
                         E->o->db_path, what, (int)strcspn(name, ","), name, one[i], k->lo[i], k->hi[i]);
        k->nexact++;
    }
    char tm[96], cfg[256], shape[160];
    safe_text(tm, sizeof tm, w->tmpl);
    safe_text(cfg, sizeof cfg, w->config);
    safe_text(shape, sizeof shape, w->shape);
    if (k->vendor)
        snprintf(k->note, sizeof k->note, "bucket %s: the vendor (cuBLASLt, the heuristic's algorithm); measured %.2f us "
                 "at shape %s", b, w->median_us, shape);
    else
        snprintf(k->note, sizeof k->note, "bucket %s: template %s, config %s; measured %.2f us at shape %s", b, tm, cfg,
                 w->median_us, shape);
    return 0;
}

/* The template default, instantiated from the templates. */
static int add_default(emitter *E, const char *tname, const char *config)
{
    device dev;
    if (device_assume(E->arch, &dev)) return efail(E, EXIT_INPUT, "no device facts for arch '%s'", E->arch);
    if (E->nk == EMIT_MAXKERNELS) return efail(E, EXIT_INPUT, "too many kernels");
    ek *k = &E->k[E->nk];
    memset(k, 0, sizeof *k);
    char kname[64];
    snprintf(kname, sizeof kname, "%.50s_default", E->fn);
    /* The registry names the template and config: both must be the op's
    ** own before a template turns them into source. */
    char tm[96], cfgq[256], why[256];
    safe_text(tm, sizeof tm, tname);
    safe_text(cfgq, sizeof cfgq, config);
    size_t no = strlen(E->task.op);
    int ok = 0;
    if (strncmp(tname, E->task.op, no) || tname[no] != '/')
        return efail(E, EXIT_INPUT, "registry '%s': the default of %s names template '%s', not one of the op's", E->o->db_path,
                     E->task.op, tm);
    if (tmpl_config_known(E->T, tname, config, &ok, why, sizeof why))
        return efail(E, EXIT_INPUT, "registry '%s': the default %s %s: %s", E->o->db_path, tm, cfgq, tmpl_errmsg(E->T));
    if (!ok)
        return efail(E, EXIT_INPUT, "registry '%s': the default %s %s: %s", E->o->db_path, tm, cfgq, why);
    kernel_src ks;
    if (tmpl_instantiate(E->T, tname, config, &E->task, &dev, kname, &ks)) return efail(E, EXIT_INPUT, "%s", tmpl_errmsg(E->T));
    k->p = ks.plan;
    k->source = ks.source;
    E->nk++;
    snprintf(k->note, sizeof k->note, "the template default: template %s, config %s", tm, cfgq);
    return 0;
}

/* Macro names a source #defines, so they can be #undef'd after it. */
static void undef_macros(strbuf *out, const char *src)
{
    for (const char *line = src; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t') p++;
            if (!strncmp(p, "define", 6) && (p[6] == ' ' || p[6] == '\t')) {
                p += 6;
                while (*p == ' ' || *p == '\t') p++;
                size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
                if (n) sb_printf(out, "#undef %.*s\n", (int)n, p);
            }
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
}

/* The C parameter list of the public function and of each launch. */
static void signature(emitter *E, strbuf *out, int with_ws)
{
    const op_task *t = &E->task;
    for (int i = 0; i < t->nargs; i++) {
        const op_arg *a = &t->args[i];
        const dtype_info *di = dtype_find(a->dtype);
        const char *ct = di ? di->ctype : "unsigned short";
        if (a->role == ROLE_IN) sb_printf(out, "const %s* %s, ", ct, a->name);
        else if (a->role == ROLE_OUT || a->role == ROLE_INOUT) sb_printf(out, "%s* %s, ", ct, a->name);
        else if (a->role == ROLE_SCALAR) sb_printf(out, "float %s, ", a->name);
        else sb_printf(out, "long long %s, ", a->name);
    }
    for (int d = 0; d < t->ndims; d++) {
        int is_arg = 0;
        for (int i = 0; i < t->nargs; i++) is_arg |= t->args[i].role == ROLE_DIM && !strcmp(t->args[i].name, t->dims[d]);
        if (!is_arg) sb_printf(out, "long long %s, ", t->dims[d]);
    }
    if (with_ws) sb_puts(out, "void* ws, ");
    sb_puts(out, "cudaStream_t stream");
}

/* The argument names in signature order (for forwarding calls). */
static void call_args(emitter *E, strbuf *out, int with_ws)
{
    const op_task *t = &E->task;
    for (int i = 0; i < t->nargs; i++) sb_printf(out, "%s, ", t->args[i].name);
    for (int d = 0; d < t->ndims; d++) {
        int is_arg = 0;
        for (int i = 0; i < t->nargs; i++) is_arg |= t->args[i].role == ROLE_DIM && !strcmp(t->args[i].name, t->dims[d]);
        if (!is_arg) sb_printf(out, "%s, ", t->dims[d]);
    }
    if (with_ws) sb_puts(out, "ws, ");
    sb_puts(out, "stream");
}

static void dims_params(emitter *E, strbuf *out)
{
    for (int d = 0; d < E->task.ndims; d++) sb_printf(out, "%slong long %s", d ? ", " : "", E->task.dims[d]);
}

static int has_ws(const plan *p)
{
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_WORKSPACE) return 1;
    return 0;
}

/* Plan p's workspace size function, NAME_workspace_bytes (q: its linkage). */
static void workspace_fn(emitter *E, strbuf *out, const plan *p, const char *q, const char *name)
{
    sb_printf(out, "%ssize_t %s_workspace_bytes(", q, name);
    dims_params(E, out);
    sb_puts(out, ")\n{\n");
    for (int d = 0; d < E->task.ndims; d++) sb_printf(out, "    (void)%s;\n", E->task.dims[d]);
    const char *ws = NULL;
    for (int j = 0; j < p->nparams; j++)
        if (p->params[j].kind == PLAN_WORKSPACE) ws = p->params[j].expr;
    sb_puts(out, "    return ");
    if (ws) { sb_puts(out, "(size_t)"); c_expr(out, ws); }
    else sb_puts(out, "0");
    sb_puts(out, ";\n}\n\n");
}

/* Parameter j of p, a tensor map: encoded in the launch function from the
** call's pointers (or the workspace, for a map with `at`). */
static void tmap_param(strbuf *out, const plan *p, int j)
{
    const plan_param *pp = &p->params[j];
    const plan_tmap *t = &pp->tm;
    const plan_arg *a = &p->args[pp->arg];
    sb_printf(out, "    CUtensorMap aitune_p%d;\n    {\n        const long long aitune_d[%d] = { ", j, t->rank);
    for (int d = 0; d < t->rank; d++) { if (d) sb_puts(out, ", "); c_expr(out, t->dims[d]); }
    sb_printf(out, " };\n        const long long aitune_s[%d] = { ", t->rank > 1 ? t->rank - 1 : 1);
    for (int d = 0; d + 1 < t->rank; d++) { if (d) sb_puts(out, ", "); c_expr(out, t->strides[d]); }
    if (t->rank == 1) sb_puts(out, "16");
    sb_printf(out, " };\n        const cuuint32_t aitune_box[%d] = { ", t->rank);
    for (int d = 0; d < t->rank; d++) {
        if (d) sb_puts(out, ", ");
        if (!t->box_expr[d]) { sb_printf(out, "%uu", t->box[d]); continue; }
        sb_puts(out, "(cuuint32_t)(");
        c_expr(out, t->box_expr[d]);
        sb_puts(out, ")");
    }
    /* A map with `at` reads the workspace from that byte on. */
    sb_puts(out, " };\n        const void* aitune_base = ");
    if (pp->at) {
        sb_puts(out, "(const void*)((char*)ws + (");
        c_expr(out, pp->at);
        sb_puts(out, "))");
    } else {
        sb_printf(out, "(const void*)%s", a->name);
    }
    sb_printf(out, ";\n        if (aitune_encode(&aitune_p%d, %s, %d, aitune_base, aitune_d, aitune_s, aitune_box, %s, %s, %s))\n"
                   "            return cudaErrorInvalidValue;\n    }\n",
              j, dtype_find(a->dtype) ? dtype_find(a->dtype)->tmap_name : "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
              t->rank,
              t->swizzle == 128 ? "CU_TENSOR_MAP_SWIZZLE_128B" : t->swizzle == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B" : t->swizzle == 32 ? "CU_TENSOR_MAP_SWIZZLE_32B" : "CU_TENSOR_MAP_SWIZZLE_NONE",
              t->l2 == 256 ? "CU_TENSOR_MAP_L2_PROMOTION_L2_256B" : t->l2 == 128 ? "CU_TENSOR_MAP_L2_PROMOTION_L2_128B" : t->l2 == 64 ? "CU_TENSOR_MAP_L2_PROMOTION_L2_64B" : "CU_TENSOR_MAP_L2_PROMOTION_NONE",
              t->oob_nan ? "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA" : "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE");
}

/* Kernel i's workspace size and launch functions. */
static void launch_fn(emitter *E, strbuf *out, int i, const char *name, int is_static, int with_ws)
{
    const ek *k = &E->k[i];
    const plan *p = k->p;
    const char *q = is_static ? "static " : "extern \"C\" ";
    workspace_fn(E, out, p, q, name);
    if (k->vendor) {
        const char *dt = E->task.dtype, *gt = strchr(dt, '>');
        const char *in = !strncmp(dt, "bf16", 4) ? "CUDA_R_16BF" : "CUDA_R_16F";
        const char *to = gt ? "CUDA_R_32F" : in;
        sb_puts(out, "// cuBLASLt on `stream`; returns its error code. ws: a device workspace of the bytes above.\n");
        sb_printf(out, "%scudaError_t %s(", q, name);
        signature(E, out, with_ws);
        sb_printf(out, ")\n{\n    return aitune_vendor_gemm(%d, %s, %s, A, B, D, m, n, k, ws, stream);\n}\n\n",
                  !strcmp(E->task.op, "gemm_nn"), in, to);
        return;
    }
    sb_printf(out, "// Launch on `stream`; returns the launch's error code.%s\n",
              has_ws(p) ? " ws: a zeroed device workspace of the bytes above." : "");
    sb_printf(out, "%scudaError_t %s(", q, name);
    signature(E, out, with_ws);
    sb_puts(out, ")\n{\n");
    if (with_ws && !has_ws(p)) sb_puts(out, "    (void)ws;\n");
    static const char *const gname[] = { "aitune_g", "aitune_b", "aitune_c" };
    for (int a = 0; a < 3; a++) {
        char *const *ex = a == 0 ? p->grid : a == 1 ? p->block : p->cluster;
        sb_printf(out, "    const long long %s[3] = { ", gname[a]);
        for (int d = 0; d < 3; d++) {
            if (d) sb_puts(out, ", ");
            c_expr(out, ex[d]);
        }
        sb_puts(out, " };\n");
    }
    sb_puts(out, "    const long long aitune_smem = ");
    c_expr(out, p->smem);
    sb_puts(out, ";\n"
                 "    for (int d = 0; d < 3; d++)\n"
                 "        if (aitune_g[d] < 1 || aitune_g[d] > 2147483647LL || aitune_b[d] < 1 || aitune_b[d] > 1024 ||\n"
                 "            aitune_c[d] < 1 || aitune_g[d] % aitune_c[d]) return cudaErrorInvalidConfiguration;\n"
                 "    if (aitune_smem < 0) return cudaErrorInvalidConfiguration;\n");
    char kref[160];
    snprintf(kref, sizeof kref, "aitune_k%d::%s", k->ns, p->kernel);
    if (strcmp(p->smem, "0"))
        /* Static plus dynamic shared memory past 48 KB needs the opt-in. */
        sb_printf(out, "    if (aitune_smem > 0) {\n        cudaFuncAttributes aitune_fa;\n"
                       "        cudaError_t aitune_e = cudaFuncGetAttributes(&aitune_fa, %s);\n"
                       "        if (aitune_e == cudaSuccess && (size_t)aitune_smem + aitune_fa.sharedSizeBytes > 48 * 1024)\n"
                       "            aitune_e = cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)aitune_smem);\n"
                       "        if (aitune_e != cudaSuccess) return aitune_e;\n    }\n", kref, kref);
    for (int j = 0; j < p->nparams; j++) {
        const plan_param *pp = &p->params[j];
        switch (pp->kind) {
        case PLAN_PTR: sb_printf(out, "    void* aitune_p%d = (void*)%s;\n", j, p->args[pp->arg].name); break;
        case PLAN_F32: sb_printf(out, "    float aitune_p%d = %s;\n", j, p->args[pp->arg].name); break;
        case PLAN_WORKSPACE: sb_printf(out, "    void* aitune_p%d = ws;\n", j); break;
        case PLAN_DIM:
            sb_printf(out, "    long long aitune_p%d = ", j);
            c_expr(out, pp->expr);
            sb_puts(out, ";\n");
            break;
        case PLAN_I32:
            sb_printf(out, "    const long long aitune_v%d = ", j);
            c_expr(out, pp->expr);
            sb_printf(out, ";\n    if (aitune_v%d < -2147483648LL || aitune_v%d > 2147483647LL) return cudaErrorInvalidValue;\n"
                           "    int aitune_p%d = (int)aitune_v%d;\n", j, j, j, j);
            break;
        case PLAN_TMAP: tmap_param(out, p, j); break;
        }
    }
    sb_puts(out, "    void* aitune_args[] = { ");
    for (int j = 0; j < p->nparams; j++) sb_printf(out, "&aitune_p%d, ", j);
    sb_puts(out, "0 };\n"
                 "    cudaLaunchConfig_t aitune_cfg = {};\n"
                 "    aitune_cfg.gridDim = dim3((unsigned)aitune_g[0], (unsigned)aitune_g[1], (unsigned)aitune_g[2]);\n"
                 "    aitune_cfg.blockDim = dim3((unsigned)aitune_b[0], (unsigned)aitune_b[1], (unsigned)aitune_b[2]);\n"
                 "    aitune_cfg.dynamicSmemBytes = (size_t)aitune_smem;\n"
                 "    aitune_cfg.stream = stream;\n"
                 "    cudaLaunchAttribute aitune_at[2];\n"
                 "    unsigned aitune_nat = 0;\n"
                 "    if (aitune_c[0] * aitune_c[1] * aitune_c[2] > 1) {\n"
                 "        aitune_at[aitune_nat].id = cudaLaunchAttributeClusterDimension;\n"
                 "        aitune_at[aitune_nat].val.clusterDim.x = (unsigned)aitune_c[0];\n"
                 "        aitune_at[aitune_nat].val.clusterDim.y = (unsigned)aitune_c[1];\n"
                 "        aitune_at[aitune_nat].val.clusterDim.z = (unsigned)aitune_c[2];\n"
                 "        aitune_nat++;\n"
                 "    }\n");
    /* The kernel waits on griddepcontrol: the next launch may overlap it. */
    if (p->pdl)
        sb_puts(out, "    aitune_at[aitune_nat].id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
                     "    aitune_at[aitune_nat].val.programmaticStreamSerializationAllowed = 1;\n"
                     "    aitune_nat++;\n");
    sb_puts(out, "    aitune_cfg.attrs = aitune_nat ? aitune_at : 0;\n"
                 "    aitune_cfg.numAttrs = aitune_nat;\n");
    sb_printf(out, "    return cudaLaunchKernelExC(&aitune_cfg, (const void*)%s, aitune_args);\n}\n\n", kref);
}

/* The buckets the vendor holds call cuBLASLt (vendor.h does the same for
** libaitune and the worker): row-major D (m x n) is column-major Dᵀ = op(B's
** buffer) · A's buffer, the heuristic's first algorithm for a 32 MiB
** workspace and the pointers' alignment, kept per device and problem. */
static const char vendor_helper[] =
    "#include <cublasLt.h>\n#include <mutex>\n\n"
    "// cuBLASLt for the buckets the vendor holds. Errors: cudaErrorInvalidValue (a size, a NULL\n"
    "// buffer or workspace), cudaErrorInitializationError (cublasLtCreate), cudaErrorNotSupported\n"
    "// (no algorithm for the problem), cudaErrorLaunchFailure (cublasLtMatmul).\n"
    "struct aitune_vplan {\n"
    "    int dev, nn, in, out;\n    long long m, n, k;\n    unsigned char al[3];\n"
    "    cublasLtMatmulDesc_t desc;\n    cublasLtMatrixLayout_t la, lb, ld;\n    cublasLtMatmulAlgo_t algo;\n"
    "};\n"
    "static std::mutex aitune_vmu;\n"
    "static cublasLtHandle_t aitune_vh[64];\n"
    "static aitune_vplan aitune_vplans[256];\n"
    "static int aitune_nvplans;\n\n"
    "static unsigned char aitune_valign(const void* p)\n{\n"
    "    unsigned long long x = (unsigned long long)p;\n    unsigned char e = 0;\n"
    "    while (e < 8 && !(x & (1ull << e))) e++;\n    return e;\n}\n\n"
    "static void aitune_vfree(aitune_vplan* p)\n{\n"
    "    if (p->la) cublasLtMatrixLayoutDestroy(p->la);\n    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);\n"
    "    if (p->ld) cublasLtMatrixLayoutDestroy(p->ld);\n    if (p->desc) cublasLtMatmulDescDestroy(p->desc);\n}\n\n"
    "// Descriptors and the heuristic's first algorithm for p's problem.\n"
    "static cudaError_t aitune_vbuild(cublasLtHandle_t h, aitune_vplan* p)\n{\n"
    "    cublasOperation_t ta = p->nn ? CUBLAS_OP_N : CUBLAS_OP_T, tb = CUBLAS_OP_N;\n"
    "    const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;\n"
    "    const cudaDataType_t in = (cudaDataType_t)p->in, out = (cudaDataType_t)p->out;\n"
    "    cublasLtMatmulPreference_t pref = 0;\n"
    "    uint64_t wsmax = 33554432ull;\n"
    "    uint32_t aa = 1u << p->al[1], ab = 1u << p->al[0], ad = 1u << p->al[2];\n"
    "    // Split-K parts added in fp32 (or none), as libaitune's vendor calls add them.\n"
    "    uint32_t red = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;\n"
    "    cublasLtMatmulHeuristicResult_t r = {};\n    int found = 0;\n"
    "    bool ok = cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) == CUBLAS_STATUS_SUCCESS &&\n"
    "        (p->nn ? cublasLtMatrixLayoutCreate(&p->la, in, n, k, (int64_t)n) : cublasLtMatrixLayoutCreate(&p->la, in, k, n, (int64_t)k)) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatrixLayoutCreate(&p->lb, in, k, m, (int64_t)k) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatrixLayoutCreate(&p->ld, out, n, m, (int64_t)n) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsmax, sizeof wsmax) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ad, sizeof ad) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ad, sizeof ad) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &red, sizeof red) == CUBLAS_STATUS_SUCCESS &&\n"
    "        cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->la, p->lb, p->ld, p->ld, pref, 1, &r, &found) == CUBLAS_STATUS_SUCCESS &&\n"
    "        found >= 1 && r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize <= wsmax;\n"
    "    if (pref) cublasLtMatmulPreferenceDestroy(pref);\n"
    "    if (!ok) { aitune_vfree(p); return cudaErrorNotSupported; }\n"
    "    p->algo = r.algo;\n    return cudaSuccess;\n}\n\n"
    "static cudaError_t aitune_vendor_gemm(int nn, cudaDataType_t in, cudaDataType_t out, const void* A, const void* B,\n"
    "                                      void* D, long long m, long long n, long long k, void* ws, cudaStream_t stream)\n{\n"
    "    if (m < 1 || n < 1 || k < 1 || m > 2147483647LL || n > 2147483647LL || k > 2147483647LL || !A || !B || !D || !ws)\n"
    "        return cudaErrorInvalidValue;\n"
    "    int dev = 0;\n    cudaError_t e = cudaGetDevice(&dev);\n    if (e != cudaSuccess) return e;\n"
    "    if (dev < 0 || dev >= 64) return cudaErrorInvalidDevice;\n"
    "    aitune_vplan key = {};\n"
    "    key.dev = dev; key.nn = nn; key.in = (int)in; key.out = (int)out; key.m = m; key.n = n; key.k = k;\n"
    "    key.al[0] = aitune_valign(A); key.al[1] = aitune_valign(B); key.al[2] = aitune_valign(D);\n"
    "    aitune_vplan* p = 0;\n    cublasLtHandle_t h;\n    bool once = false;\n"
    "    {\n"
    "        std::lock_guard<std::mutex> g(aitune_vmu);\n"
    "        if (!aitune_vh[dev] && cublasLtCreate(&aitune_vh[dev]) != CUBLAS_STATUS_SUCCESS) {\n"
    "            aitune_vh[dev] = 0;\n            return cudaErrorInitializationError;\n        }\n"
    "        h = aitune_vh[dev];\n"
    "        for (int i = 0; i < aitune_nvplans && !p; i++) {\n"
    "            const aitune_vplan* q = &aitune_vplans[i];\n"
    "            if (q->dev == dev && q->nn == nn && q->in == key.in && q->out == key.out && q->m == m && q->n == n &&\n"
    "                q->k == k && q->al[0] == key.al[0] && q->al[1] == key.al[1] && q->al[2] == key.al[2])\n"
    "                p = &aitune_vplans[i];\n"
    "        }\n"
    "        if (!p && aitune_nvplans < 256) {\n"
    "            aitune_vplans[aitune_nvplans] = key;\n"
    "            if ((e = aitune_vbuild(h, &aitune_vplans[aitune_nvplans])) != cudaSuccess) return e;\n"
    "            p = &aitune_vplans[aitune_nvplans++];\n"
    "        }\n"
    "    }\n"
    "    if (!p) {\n        // Past 256 problems: built for this call only.\n"
    "        if ((e = aitune_vbuild(h, &key)) != cudaSuccess) return e;\n        p = &key;\n        once = true;\n    }\n"
    "    const float one = 1.0f, zero = 0.0f;\n"
    "    cublasStatus_t s = cublasLtMatmul(h, p->desc, &one, B, p->la, A, p->lb, &zero, D, p->ld, D, p->ld, &p->algo,\n"
    "                                      ws, 33554432ull, stream);\n"
    "    if (once) aitune_vfree(p);\n"
    "    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;\n}\n\n";

/* inline, not static: unused ones draw no warning, and two emitted files
** linked together share these identical definitions. */
static const char helpers[] =
    "inline long long aitune_cdiv(long long a, long long b) { return (a + b - 1) / b; }\n"
    "inline long long aitune_min(long long a, long long b) { return a < b ? a : b; }\n"
    "inline long long aitune_max(long long a, long long b) { return a > b ? a : b; }\n";

/* Tensor maps are encoded through the runtime's driver entry point, so the
** file links nothing but cudart. */
static const char encoder[] =
    "typedef CUresult (*aitune_encode_fn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,\n"
    "    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,\n"
    "    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);\n"
    "static int aitune_encode(CUtensorMap* m, CUtensorMapDataType dt, int rank, const void* addr, const long long* dims,\n"
    "                         const long long* strides, const cuuint32_t* box, CUtensorMapSwizzle sw,\n"
    "                         CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)\n"
    "{\n"
    "    static aitune_encode_fn fn = 0;\n"
    "    if (!fn) {\n"
    "        void* p = 0;\n"
    "        cudaDriverEntryPointQueryResult q;\n"
    "#if CUDART_VERSION >= 12050\n"
    "        if (cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &p, 12000, cudaEnableDefault, &q) != cudaSuccess || !p)\n"
    "#else\n"
    "        if (cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", &p, cudaEnableDefault, &q) != cudaSuccess || !p)\n"
    "#endif\n"
    "            return -1;\n"
    "        fn = (aitune_encode_fn)p;\n"
    "    }\n"
    "    cuuint64_t d[5], s[4];\n"
    "    cuuint32_t es[5] = { 1, 1, 1, 1, 1 };\n"
    "    if (((unsigned long long)addr) % 16) return -1;\n"
    "    for (int i = 0; i < rank; i++) { if (dims[i] < 1 || dims[i] > (1LL << 32)) return -1; d[i] = (cuuint64_t)dims[i]; }\n"
    "    for (int i = 0; i + 1 < rank; i++) { if (strides[i] < 16 || strides[i] % 16) return -1; s[i] = (cuuint64_t)strides[i]; }\n"
    "    return fn(m, dt, (cuuint32_t)rank, (void*)addr, d, s, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2, oob) != CUDA_SUCCESS;\n"
    "}\n\n";

/* The dispatcher: aitune_lookup's choice over the file's buckets (rt.c:
** rt_choose, rt_exact_better, rt_better). Exact bucket, else the nearest by
** log2 distance. Among exact ones, the winner whose bucket suits the shape
** (tuned at a class at most the shape's in every dim, then the more dims
** its key names exactly, then the closest classes: align.h, bucket_score,
** spelled out), then the smaller lo; among nearest ones, the more dims
** exact, the smaller lo, then that score. Then the smaller hi (a split
** bucket's part before the whole bucket another GPU kept), the lower
** classes, and the first in the file (the registry's bucket order, as
** libaitune's last tie-break). */
static void dispatcher(emitter *E, strbuf *out, int with_ws)
{
    int nd = E->task.ndims;
    sb_printf(out, "static const long long aitune_lo[%d][%d] = {", E->nk, nd);
    for (int i = 0; i < E->nk; i++) {
        sb_puts(out, i ? ", {" : " {");
        for (int d = 0; d < nd; d++) sb_printf(out, "%s%lldLL", d ? ", " : "", E->k[i].lo[d]);
        sb_puts(out, "}");
    }
    sb_printf(out, " };\nstatic const long long aitune_hi[%d][%d] = {", E->nk, nd);
    for (int i = 0; i < E->nk; i++) {
        sb_puts(out, i ? ", {" : " {");
        for (int d = 0; d < nd; d++) sb_printf(out, "%s%lldLL", d ? ", " : "", E->k[i].hi[d]);
        sb_puts(out, "}");
    }
    sb_printf(out, " };\n// log2 of the alignment class (1, 2, 4, 8) of each dim of the shape each was tuned at.\n"
                   "static const unsigned char aitune_al[%d][%d] = {", E->nk, nd);
    for (int i = 0; i < E->nk; i++) {
        sb_puts(out, i ? ", {" : " {");
        for (int d = 0; d < nd; d++) sb_printf(out, "%s%d", d ? ", " : "", E->k[i].cls[d]);
        sb_puts(out, "}");
    }
    sb_printf(out, " };\n// How many dims each bucket is of one exact size (a spec's exact: true); ranked first when it holds the shape.\n"
                   "static const int aitune_ex[%d] = {", E->nk);
    for (int i = 0; i < E->nk; i++) sb_printf(out, "%s%d", i ? ", " : " ", E->k[i].nexact);
    sb_printf(out, " };\n\n"
                   "// The bucket for a shape, as aitune_lookup picks it; -1 for a size < 1.\n"
                   "static int aitune_pick(const long long* s)\n{\n"
                   "    int best = -1, best_exact = 0, q[%d];\n    long long best_score = 0;\n    double best_dist = 0;\n"
                   "    for (int i = 0; i < %d; i++) {\n"
                   "        if (s[i] < 1) return -1;\n"
                   "        long long c = s[i] %% 8 == 0 ? 8 : s[i] & -s[i];\n"
                   "        q[i] = c == 8 ? 3 : c == 4 ? 2 : c == 2 ? 1 : 0;\n"
                   "    }\n"
                   "    for (int k = 0; k < %d; k++) {\n"
                   "        int exact = 1, fit = 1, gap = 0;\n        double dist = 0;\n"
                   "        for (int i = 0; i < %d; i++) {\n"
                   "            long long a = aitune_lo[k][i] > 1 ? aitune_lo[k][i] : 1, b = aitune_hi[k][i] - 1;\n"
                   "            long long c = s[i] < a ? a : s[i] > b ? b : s[i];\n"
                   "            if (c != s[i]) { exact = 0; dist += fabs(log2((double)s[i]) - log2((double)c)); }\n"
                   "            fit &= aitune_al[k][i] <= q[i];\n"
                   "            gap += aitune_al[k][i] > q[i] ? aitune_al[k][i] - q[i] : q[i] - aitune_al[k][i];\n"
                   "        }\n"
                   "        long long score = (fit ? 1LL << 40 : 0) + ((long long)aitune_ex[k] << 16) - gap;\n"
                   "        int better = best < 0;\n"
                   "        if (!better && exact != best_exact) better = exact;\n"
                   "        else if (!better && fabs(dist - best_dist) > 1e-9) better = dist < best_dist;\n"
                   "        else if (!better && exact && score != best_score) better = score > best_score;\n"
                   "        else if (!better && aitune_ex[k] != aitune_ex[best]) better = aitune_ex[k] > aitune_ex[best];\n"
                   "        else if (!better) {\n"
                   "            int i = 0;\n"
                   "            while (i < %d && aitune_lo[k][i] == aitune_lo[best][i]) i++;\n"
                   "            if (i < %d) better = aitune_lo[k][i] < aitune_lo[best][i];\n"
                   "            else if (score != best_score) better = score > best_score;\n"
                   "            else {\n"
                   "                for (i = 0; i < %d && aitune_hi[k][i] == aitune_hi[best][i]; i++) {}\n"
                   "                if (i < %d) better = aitune_hi[k][i] < aitune_hi[best][i];\n"
                   "                else {\n"
                   "                    for (i = 0; i < %d && aitune_al[k][i] == aitune_al[best][i]; i++) {}\n"
                   "                    better = i < %d && aitune_al[k][i] < aitune_al[best][i];\n"
                   "                }\n"
                   "            }\n"
                   "        }\n"
                   "        if (better) { best = k; best_exact = exact; best_dist = dist; best_score = score; }\n"
                   "    }\n    return best;\n}\n\n", nd, nd, E->nk, nd, nd, nd, nd, nd, nd, nd);
    sb_printf(out, "// Workspace bytes the kernel chosen for this shape needs (0: none).\nextern \"C\" size_t %s_workspace_bytes(", E->fn);
    dims_params(E, out);
    sb_puts(out, ")\n{\n    const long long aitune_s[] = { ");
    for (int d = 0; d < nd; d++) sb_printf(out, "%s%s", d ? ", " : "", E->task.dims[d]);
    sb_puts(out, " };\n    switch (aitune_pick(aitune_s)) {\n");
    for (int i = 0; i < E->nk; i++) {
        sb_printf(out, "    case %d: return aitune_launch_%d_workspace_bytes(", i, i);
        for (int d = 0; d < nd; d++) sb_printf(out, "%s%s", d ? ", " : "", E->task.dims[d]);
        sb_puts(out, ");\n");
    }
    sb_puts(out, "    default: return 0;\n    }\n}\n\n");
    sb_printf(out, "// Launch the kernel chosen for this shape on `stream`.%s\nextern \"C\" cudaError_t %s(",
              with_ws ? " ws: a zeroed device workspace of the bytes above." : "", E->fn);
    signature(E, out, with_ws);
    sb_puts(out, ")\n{\n    const long long aitune_s[] = { ");
    for (int d = 0; d < nd; d++) sb_printf(out, "%s%s", d ? ", " : "", E->task.dims[d]);
    sb_puts(out, " };\n    switch (aitune_pick(aitune_s)) {\n");
    for (int i = 0; i < E->nk; i++) {
        sb_printf(out, "    case %d: return aitune_launch_%d(", i, i);
        call_args(E, out, with_ws);
        sb_puts(out, ");\n");
    }
    sb_puts(out, "    default: return cudaErrorInvalidValue;\n    }\n}\n");
}

static void write_file(emitter *E, strbuf *out, const char *level)
{
    const emit_opts *o = E->o;
    int whole = !o->shape;
    int with_ws = 0, tmaps = 0, vendor = 0;
    for (int i = 0; i < E->nk; i++) {
        with_ws |= has_ws(E->k[i].p);
        tmaps |= plan_has_tmap(E->k[i].p);
        vendor |= E->k[i].vendor;
    }
    char arch[32], dt[32];
    safe_text(arch, sizeof arch, E->arch);
    safe_text(dt, sizeof dt, o->dtype);
    sb_printf(out, "// Written by aitune %s: `aitune emit %s --arch %s --dtype %s%s`.\n", AITUNE_TOOL_VERSION, E->task.op, arch, dt,
              whole ? "" : " --shape ...");
    if (whole)
        sb_printf(out, "// %d kernel%s: %s picks one for a shape as aitune_lookup does (exact bucket, else nearest).\n", E->nk,
                  E->nk == 1 ? "" : "s", E->fn);
    else
        sb_printf(out, "// Chosen at level '%s': %s\n", level, E->k[0].note);
    sb_puts(out, "// Compile with nvcc -gencode=arch=compute_90a,code=sm_90a (the arch it was tuned for).\n");
    if (vendor)
        sb_puts(out, "// Buckets the vendor holds call cuBLASLt: link with -lcublasLt.\n");
    sb_puts(out, "// Standalone: nothing from aitune is needed to build or run it.\n\n"
                 "#include <cuda.h>\n#include <cuda_runtime.h>\n#include <math.h>\n#include <stddef.h>\n\n");
    for (int i = 0; i < E->nk; i++) {
        ek *k = &E->k[i];
        k->ns = i;
        if (k->vendor) continue;   /* no source: a cuBLASLt call */
        for (int j = 0; j < i; j++)
            if (!E->k[j].vendor && !strcmp(E->k[j].p->kernel, k->p->kernel)) k->ns = E->k[j].ns;   /* same kernel: one copy */
        if (k->ns != i) continue;
        if (whole) sb_printf(out, "// ---- kernel %d: %s\n", i, k->note);
        sb_printf(out, "namespace aitune_k%d {\n", i);
        sb_puts(out, k->source);
        sb_printf(out, "\n}  // namespace aitune_k%d\n", i);
        undef_macros(out, k->source);
        sb_puts(out, "\n");
    }
    sb_puts(out, helpers);
    sb_puts(out, "\n");
    if (tmaps) sb_puts(out, encoder);
    if (vendor) sb_puts(out, vendor_helper);
    if (!whole) {
        launch_fn(E, out, 0, E->fn, 0, has_ws(E->k[0].p));
        return;
    }
    for (int i = 0; i < E->nk; i++) {
        char name[48];
        snprintf(name, sizeof name, "aitune_launch_%d", i);
        sb_printf(out, "// kernel %d: %s\n", i, E->k[i].note);
        launch_fn(E, out, i, name, 1, with_ws);
    }
    dispatcher(E, out, with_ws);
}

/* Written whole or not at all, through util's one writer for every -o
** (out_open: a temporary beside FILE, renamed; a link there neither
** followed nor replaced). */
static int write_out(emitter *E, const strbuf *out)
{
    const char *path = E->o->out_path;
    outfile o;
    if (out_open(&o, path)) {
        /* Something not a regular file at FILE is a usage error, as ever. */
        int code = errno == EINVAL ? EXIT_USAGE : EXIT_FAIL;
        const char *why = o.why;
        out_close(&o, 0);
        return efail(E, code, "cannot write '%s': %s (emit writes only regular files, or - for stdout)", path, why);
    }
    int bad = out->len && fwrite(out->buf, 1, out->len, o.f) != out->len;
    if (out_close(&o, !bad) || bad)
        return efail(E, EXIT_FAIL, "cannot write '%s': %s", strcmp(path, "-") ? path : "standard output",
                     o.why ? o.why : strerror(errno));
    return 0;
}

int emit_run(const emit_opts *o)
{
    emitter E0, *E = &E0;
    memset(E, 0, sizeof *E);
    E->o = o;
    E->code = EXIT_FAIL;
    aitune *h = NULL;
    strbuf out = STRBUF_INIT;
    const char *level = "exact";
    int rc = -1;
    arch_base(o->arch, E->arch);
    if (fn_name(E->fn, sizeof E->fn, o->op, o->dtype)) {
        efail(E, EXIT_USAGE, "op '%s' and dtype '%s' do not make a C function name", o->op, o->dtype);
        goto done;
    }
    E->T = tmpl_open(o->root);
    /* The op's signature from the templates; the shape only picks buckets. */
    long long shape[TMPL_MAXDIMS] = { 1, 1, 1, 1 };
    int nd, ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(E->T, o->op, &nd, dims, &ndt, dts, 32)) { efail(E, EXIT_INPUT, "%s", tmpl_errmsg(E->T)); goto done; }
    if (o->shape) memcpy(shape, o->shape, sizeof *shape * (size_t)(o->ndims < nd ? o->ndims : nd));
    if (tmpl_task(E->T, o->op, o->dtype, shape, &E->task)) { efail(E, EXIT_INPUT, "%s", tmpl_errmsg(E->T)); goto done; }
    if (aitune_open(o->db_path, &h) != AITUNE_OK) { efail(E, EXIT_INPUT, "%s", aitune_errmsg(h)); goto done; }
    if (reg_open(o->db_path, 1, &E->R)) { efail(E, EXIT_INPUT, "%s", reg_errmsg(E->R)); goto done; }
    if (!o->arch[0]) {
        /* Whole op without --arch: the one arch the registry has for it. */
        char archs[256];
        int na = reg_archs_of(E->R, o->op, o->dtype, archs, sizeof archs);
        if (na < 0) { efail(E, EXIT_FAIL, "%s", reg_errmsg(E->R)); goto done; }
        if (na != 1) {
            efail(E, na ? EXIT_USAGE : EXIT_INPUT, na ? "registry '%s' has %s %s for several archs (%s): pass --arch"
                                                    : "registry '%s' has nothing for %s %s%s", o->db_path, o->op, o->dtype, archs);
            goto done;
        }
        snprintf(E->arch, sizeof E->arch, "%.15s", archs);
    }
    if (o->shape) {
        aitune_choice c;
        if (aitune_lookup(h, o->op, o->arch, o->dtype, o->shape, o->ndims, &c) != AITUNE_OK) {
            efail(E, EXIT_INPUT, "%s", aitune_errmsg(h));
            goto done;
        }
        level = aitune_level_name(c.level);
        if (c.level == AITUNE_DEFAULT) {
            if (add_default(E, c.template_name, c.config)) goto done;
        } else {
            winner w;
            int got = reg_winner_get(E->R, o->op, E->arch, o->dtype, c.bucket, &w);
            if (got < 0) { efail(E, EXIT_FAIL, "%s", reg_errmsg(E->R)); goto done; }
            if (got == 0) { efail(E, EXIT_INPUT, "registry '%s': the winner of bucket %s vanished", o->db_path, c.bucket); goto done; }
            int bad = add_winner(E, &w);
            winner_free(&w);
            if (bad) goto done;
        }
    } else {
        winner *ws = NULL;
        int nw = 0;
        if (reg_winners_of(E->R, o->op, E->arch, o->dtype, &ws, &nw)) { efail(E, EXIT_FAIL, "%s", reg_errmsg(E->R)); goto done; }
        int bad = 0;
        for (int i = 0; i < nw; i++) {
            if (!bad) bad = add_winner(E, &ws[i]);
            winner_free(&ws[i]);
        }
        free(ws);
        if (bad) goto done;
        if (!E->nk) {
            /* No tuned bucket: the default answers every shape, as in lookup. */
            char tname[64], *config = NULL;
            int got = reg_default_get(E->R, o->op, E->arch, o->dtype, tname, sizeof tname, &config);
            if (got < 0) { efail(E, EXIT_FAIL, "%s", reg_errmsg(E->R)); goto done; }
            if (!got) {
                efail(E, EXIT_INPUT, "registry '%s': no winner or default for %s %s %s", o->db_path, o->op, E->arch, o->dtype);
                goto done;
            }
            level = "default";
            int bad2 = add_default(E, tname, config);
            free(config);
            if (bad2) goto done;
            for (int d = 0; d < E->task.ndims; d++) { E->k[0].lo[d] = 1; E->k[0].hi[d] = 1LL << 62; }
            E->k[0].ndims = E->task.ndims;
        }
    }
    write_file(E, &out, level);
    if (write_out(E, &out)) goto done;
    if (strcmp(o->out_path, "-")) {
        if (o->shape) fprintf(stderr, "wrote %s: %s (level %s)\n", o->out_path, E->fn, level);
        else fprintf(stderr, "wrote %s: %s over %d kernel%s\n", o->out_path, E->fn, E->nk, E->nk == 1 ? "" : "s");
    }
    rc = 0;
done:
    for (int i = 0; i < E->nk; i++) {
        plan_free(E->k[i].p);
        free(E->k[i].source);
    }
    sb_free(&out);
    reg_close(E->R);
    tmpl_close(E->T);
    aitune_close(h);
    return rc ? E->code : EXIT_OK;
}
