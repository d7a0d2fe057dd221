/* plan.c: see plan.h. */
#include "plan.h"
#include "expr.h"
#include "json.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int perr(char *err, int errcap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, int errcap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errcap, fmt, ap);
    va_end(ap);
    return -1;
}

int plan_ident(const char *s)
{
    if (!s || !*s || strlen(s) > PLAN_MAXNAME) return 0;
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (const char *q = s; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_'))
            return 0;
    return 1;
}

plan *plan_new(void)
{
    return calloc(1, sizeof(plan));
}

static void free_param(plan_param *q)
{
    free(q->expr);
    free(q->zero);
    free(q->at);
    for (int i = 0; i < 5; i++) free(q->tm.dims[i]);
    for (int i = 0; i < 5; i++) free(q->tm.box_expr[i]);
    for (int i = 0; i < 4; i++) free(q->tm.strides[i]);
    memset(q, 0, sizeof *q);
}

void plan_free(plan *p)
{
    if (!p) return;
    for (int i = 0; i < 3; i++) {
        free(p->grid[i]);
        free(p->block[i]);
        free(p->cluster[i]);
    }
    free(p->smem);
    free(p->waves);
    for (int i = 0; i < p->nparams; i++) free_param(&p->params[i]);
    free(p);
}

int plan_set(char **slot, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (!c) return -1;
    memcpy(c, s, n);
    free(*slot);
    *slot = c;
    return 0;
}

int plan_arg_index(const plan *p, const char *name)
{
    for (int i = 0; i < p->nargs; i++)
        if (!strcmp(p->args[i].name, name)) return i;
    return -1;
}

int plan_default_params(plan *p, const char *ws_expr, char *err, int errcap)
{
    for (int i = 0; i < p->nparams; i++) free_param(&p->params[i]);
    p->nparams = 0;
    if (p->nargs + (ws_expr != NULL) > PLAN_MAXPARAMS) return perr(err, errcap, "too many parameters");
    for (int i = 0; i < p->nargs; i++) {
        plan_param *q = &p->params[p->nparams++];
        q->arg = i;
        switch (p->args[i].role) {
        case ROLE_SCALAR: q->kind = PLAN_F32; break;
        case ROLE_DIM:
            q->kind = PLAN_DIM;
            q->arg = -1;
            if (plan_set(&q->expr, p->args[i].name)) return perr(err, errcap, "out of memory");
            break;
        default: q->kind = PLAN_PTR; break;
        }
    }
    if (ws_expr) {
        plan_param *q = &p->params[p->nparams++];
        q->kind = PLAN_WORKSPACE;
        q->arg = -1;
        if (plan_set(&q->expr, ws_expr)) return perr(err, errcap, "out of memory");
    }
    return 0;
}

/* ---- validation ---- */

static int check_expr(const plan *p, const char *e, const char *what, char *err, int errcap)
{
    if (!e) return perr(err, errcap, "launch plan: %s is missing", what);
    if (strlen(e) > PLAN_MAXEXPR) return perr(err, errcap, "launch plan: %s is longer than %d bytes", what, PLAN_MAXEXPR);
    const char *names[PLAN_MAXDIMS];
    for (int i = 0; i < p->ndims; i++) names[i] = p->dims[i];
    char why[384];
    if (expr_check(e, p->ndims, names, why, sizeof why)) return perr(err, errcap, "launch plan: %s: %s", what, why);
    return 0;
}

static int check_tmap(const plan *p, int i, const plan_param *q, char *err, int errcap)
{
    const plan_tmap *t = &q->tm;
    const plan_arg *a = &p->args[q->arg];
    char what[64];
    if (t->rank < 1 || t->rank > 5) return perr(err, errcap, "launch plan: param %d (tmap of '%s'): rank %d (1 to 5)", i, a->name, t->rank);
    for (int d = 0; d < t->rank; d++) {
        snprintf(what, sizeof what, "param %d (tmap) dims[%d]", i, d);
        if (check_expr(p, t->dims[d], what, err, errcap)) return -1;
        if (t->box_expr[d]) {
            if (d == 0) return perr(err, errcap, "launch plan: param %d (tmap of '%s'): box[0] must be an integer", i, a->name);
            snprintf(what, sizeof what, "param %d (tmap) box[%d]", i, d);
            if (check_expr(p, t->box_expr[d], what, err, errcap)) return -1;
        } else if (t->box[d] < 1 || t->box[d] > 256)
            return perr(err, errcap, "launch plan: param %d (tmap of '%s'): box[%d] = %u (1 to 256)", i, a->name, d, t->box[d]);
    }
    for (int d = 0; d + 1 < t->rank; d++) {
        snprintf(what, sizeof what, "param %d (tmap) strides[%d]", i, d);
        if (check_expr(p, t->strides[d], what, err, errcap)) return -1;
    }
    if (q->at) {
        snprintf(what, sizeof what, "param %d (tmap) at", i);
        if (check_expr(p, q->at, what, err, errcap)) return -1;
    }
    if (t->swizzle != 0 && t->swizzle != 32 && t->swizzle != 64 && t->swizzle != 128)
        return perr(err, errcap, "launch plan: param %d (tmap of '%s'): swizzle %d (0, 32, 64 or 128)", i, a->name, t->swizzle);
    if (t->l2 != 0 && t->l2 != 64 && t->l2 != 128 && t->l2 != 256)
        return perr(err, errcap, "launch plan: param %d (tmap of '%s'): l2 %d (0, 64, 128 or 256)", i, a->name, t->l2);
    unsigned inner = t->box[0] * (unsigned)a->esize;
    if (inner % 16)
        return perr(err, errcap, "launch plan: param %d (tmap of '%s'): the inner box is %u bytes, not a multiple of 16", i, a->name, inner);
    if (t->swizzle && inner > (unsigned)t->swizzle)
        return perr(err, errcap, "launch plan: param %d (tmap of '%s'): the inner box is %u bytes, more than the %d-byte swizzle span",
                    i, a->name, inner, t->swizzle);
    return 0;
}

int plan_check(const plan *p, char *err, int errcap)
{
    if (!plan_ident(p->kernel)) return perr(err, errcap, "launch plan: the kernel name is not a C identifier");
    if (p->ndims < 1 || p->ndims > PLAN_MAXDIMS) return perr(err, errcap, "launch plan: %d dims (1 to %d)", p->ndims, PLAN_MAXDIMS);
    for (int i = 0; i < p->ndims; i++) {
        if (!plan_ident(p->dims[i])) return perr(err, errcap, "launch plan: dim %d is not an identifier", i);
        if (!strcmp(p->dims[i], "cdiv") || !strcmp(p->dims[i], "min") || !strcmp(p->dims[i], "max"))
            return perr(err, errcap, "launch plan: dim '%s' is a function name", p->dims[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(p->dims[i], p->dims[j])) return perr(err, errcap, "launch plan: dim '%s' twice", p->dims[i]);
    }
    if (p->nargs < 1 || p->nargs > PLAN_MAXARGS) return perr(err, errcap, "launch plan: %d args (1 to %d)", p->nargs, PLAN_MAXARGS);
    for (int i = 0; i < p->nargs; i++) {
        const plan_arg *a = &p->args[i];
        if (!plan_ident(a->name)) return perr(err, errcap, "launch plan: arg %d is not an identifier", i);
        for (int j = 0; j < i; j++)
            if (!strcmp(a->name, p->args[j].name)) return perr(err, errcap, "launch plan: arg '%s' twice", a->name);
        if (a->role < ROLE_IN || a->role > ROLE_DIM) return perr(err, errcap, "launch plan: arg '%s' has no role", a->name);
        if (a->role <= ROLE_INOUT && (!dtype_size(a->dtype) || a->esize != dtype_size(a->dtype)))
            return perr(err, errcap, "launch plan: buffer '%s' has dtype '%.8s' (f32, f16 or bf16)", a->name, a->dtype);
        if (a->role == ROLE_DIM) {
            int found = 0;
            for (int d = 0; d < p->ndims; d++) found |= !strcmp(p->dims[d], a->name);
            if (!found) return perr(err, errcap, "launch plan: dim argument '%s' is not one of the dims", a->name);
        }
        for (int d = 0; d < p->ndims; d++)
            if (a->role != ROLE_DIM && !strcmp(p->dims[d], a->name))
                return perr(err, errcap, "launch plan: arg '%s' has a dim's name", a->name);
        if (a->size[0]) {
            char what[96];
            snprintf(what, sizeof what, "size of '%s'", a->name);
            if (a->role > ROLE_INOUT) return perr(err, errcap, "launch plan: '%s' is not a buffer but has a size", a->name);
            if (check_expr(p, a->size, what, err, errcap)) return -1;
        }
    }
    static const char *const axes = "xyz";
    char what[64];
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "grid.%c", axes[i]);
        if (check_expr(p, p->grid[i], what, err, errcap)) return -1;
        snprintf(what, sizeof what, "block.%c", axes[i]);
        if (check_expr(p, p->block[i], what, err, errcap)) return -1;
        snprintf(what, sizeof what, "cluster.%c", axes[i]);
        if (check_expr(p, p->cluster[i], what, err, errcap)) return -1;
    }
    if (check_expr(p, p->smem, "smem", err, errcap)) return -1;
    if (p->waves && check_expr(p, p->waves, "waves", err, errcap)) return -1;
    if (p->nparams < 0 || p->nparams > PLAN_MAXPARAMS) return perr(err, errcap, "launch plan: too many params");
    int nws = 0;
    for (int i = 0; i < p->nparams; i++) {
        const plan_param *q = &p->params[i];
        if (q->kind < PLAN_PTR || q->kind > PLAN_TMAP) return perr(err, errcap, "launch plan: param %d has no kind", i);
        int needs_arg = q->kind == PLAN_PTR || q->kind == PLAN_F32 || q->kind == PLAN_TMAP;
        if (needs_arg) {
            if (q->arg < 0 || q->arg >= p->nargs) return perr(err, errcap, "launch plan: param %d (%s) names no argument", i, plan_kind_name(q->kind));
            int role = p->args[q->arg].role;
            if (q->kind == PLAN_F32 ? role != ROLE_SCALAR : role > ROLE_INOUT)
                return perr(err, errcap, "launch plan: param %d (%s) names '%s', whose role is %s", i, plan_kind_name(q->kind),
                            p->args[q->arg].name, role_name(role));
        } else {
            snprintf(what, sizeof what, "param %d (%s)", i, plan_kind_name(q->kind));
            if (check_expr(p, q->expr, what, err, errcap)) return -1;
        }
        if (q->kind == PLAN_WORKSPACE && ++nws > 1) return perr(err, errcap, "launch plan: more than one workspace");
        if (q->kind == PLAN_WORKSPACE && q->zero) {
            snprintf(what, sizeof what, "param %d (workspace) zero", i);
            if (check_expr(p, q->zero, what, err, errcap)) return -1;
        }
        if (q->kind == PLAN_TMAP && check_tmap(p, i, q, err, errcap)) return -1;
    }
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_TMAP && p->params[i].at && !nws)
            return perr(err, errcap, "launch plan: param %d (tmap of '%s') reads the workspace at '%s', but the plan has none",
                        i, p->args[p->params[i].arg].name, p->params[i].at);
    return 0;
}

/* ---- encoding ---- */

/* Strings in an array. */
static void jw_strs(jw *w, char *const *v, int n)
{
    jw_arr(w);
    for (int i = 0; i < n; i++) jw_str(w, v[i]);
    jw_end(w);
}

/* A param's fields after its kind. */
static void encode_param(jw *w, const plan *p, const plan_param *q)
{
    switch (q->kind) {
    case PLAN_PTR:
    case PLAN_F32:
        jw_key(w, "arg");
        jw_str(w, p->args[q->arg].name);
        break;
    case PLAN_DIM:
    case PLAN_I32:
        jw_key(w, "expr");
        jw_str(w, q->expr);
        break;
    case PLAN_WORKSPACE:
        jw_key(w, "size");
        jw_str(w, q->expr);
        if (q->zero) {
            jw_key(w, "zero");
            jw_str(w, q->zero);
        }
        break;
    case PLAN_TMAP:
        jw_key(w, "arg");
        jw_str(w, p->args[q->arg].name);
        if (q->at) {
            jw_key(w, "at");
            jw_str(w, q->at);
        }
        jw_key(w, "dims");
        jw_strs(w, q->tm.dims, q->tm.rank);
        jw_key(w, "strides");
        jw_strs(w, q->tm.strides, q->tm.rank - 1);
        jw_key(w, "box");
        jw_arr(w);
        for (int d = 0; d < q->tm.rank; d++) {
            if (q->tm.box_expr[d]) jw_str(w, q->tm.box_expr[d]);
            else jw_int(w, q->tm.box[d]);
        }
        jw_end(w);
        jw_key(w, "swizzle");
        jw_int(w, q->tm.swizzle);
        jw_key(w, "oob");
        jw_str(w, q->tm.oob_nan ? "nan" : "zero");
        jw_key(w, "l2");
        jw_int(w, q->tm.l2);
        break;
    }
}

char *plan_encode(const plan *p, char *err, int errcap)
{
    if (plan_check(p, err, errcap)) return NULL;
    jw w = { 0 };
    jw_obj(&w);
    jw_key(&w, "v");
    jw_int(&w, PLAN_VERSION);
    jw_key(&w, "kernel");
    jw_str(&w, p->kernel);
    jw_key(&w, "dims");
    jw_arr(&w);
    for (int i = 0; i < p->ndims; i++) jw_str(&w, p->dims[i]);
    jw_end(&w);
    jw_key(&w, "args");
    jw_arr(&w);
    for (int i = 0; i < p->nargs; i++) {
        const plan_arg *a = &p->args[i];
        jw_obj(&w);
        jw_key(&w, "name");
        jw_str(&w, a->name);
        jw_key(&w, "role");
        jw_str(&w, role_name(a->role));
        if (a->role <= ROLE_INOUT) {
            jw_key(&w, "dtype");
            jw_str(&w, a->dtype);
        }
        if (a->size[0]) {
            jw_key(&w, "size");
            jw_str(&w, a->size);
        }
        jw_end(&w);
    }
    jw_end(&w);
    jw_key(&w, "grid");
    jw_strs(&w, p->grid, 3);
    jw_key(&w, "block");
    jw_strs(&w, p->block, 3);
    jw_key(&w, "cluster");
    jw_strs(&w, p->cluster, 3);
    jw_key(&w, "smem");
    jw_str(&w, p->smem);
    if (p->pdl) {
        jw_key(&w, "pdl");
        jw_bool(&w, 1);
    }
    if (p->waves) {
        jw_key(&w, "waves");
        jw_str(&w, p->waves);
    }
    jw_key(&w, "params");
    jw_arr(&w);
    for (int i = 0; i < p->nparams; i++) {
        jw_obj(&w);
        jw_key(&w, "kind");
        jw_str(&w, plan_kind_name(p->params[i].kind));
        encode_param(&w, p, &p->params[i]);
        jw_end(&w);
    }
    jw_end(&w);
    jw_end(&w);
    if (w.oom) {
        jw_free(&w);
        perr(err, errcap, "out of memory");
        return NULL;
    }
    return w.buf;
}

/* ---- decoding ---- */

static int get_str(const json *o, const char *key, const char **s)
{
    const json *v = json_get(o, key);
    if (!v || v->type != JSON_STR) return -1;
    *s = v->str;
    return 0;
}

/* An expression given as a string or an integer. */
static int take_expr(const json *v, char **slot)
{
    if (!v) return -1;
    if (v->type == JSON_STR) return plan_set(slot, v->str);
    if (v->type == JSON_NUM && v->is_int) {
        char b[32];
        snprintf(b, sizeof b, "%lld", v->i);
        return plan_set(slot, b);
    }
    return -1;
}

static int take_exprs(const json *v, char **slots, int n)
{
    if (!v || v->type != JSON_ARR || v->n != n) return -1;
    for (int i = 0; i < n; i++)
        if (take_expr(&v->items[i], &slots[i])) return -1;
    return 0;
}

static int get_int(const json *o, const char *key, long long lo, long long hi, long long dflt, long long *x)
{
    const json *v = json_get(o, key);
    if (!v) { *x = dflt; return 0; }
    if (v->type != JSON_NUM || !v->is_int || v->i < lo || v->i > hi) return -1;
    *x = v->i;
    return 0;
}

static int copy_name(char *dst, const char *s)
{
    if (!plan_ident(s)) return -1;
    snprintf(dst, PLAN_MAXNAME + 1, "%s", s);
    return 0;
}

static int decode_param(plan *p, const json *j, int i, char *err, int errcap)
{
    plan_param *q = &p->params[i];
    const char *kind, *arg;
    q->arg = -1;
    if (j->type != JSON_OBJ || get_str(j, "kind", &kind)) return perr(err, errcap, "launch plan: param %d has no kind", i);
    q->kind = plan_kind_find(kind);
    if (q->kind < 0) return perr(err, errcap, "launch plan: param %d: unknown kind (ptr, dim, i32, f32, workspace, tmap)", i);
    if (q->kind == PLAN_PTR || q->kind == PLAN_F32 || q->kind == PLAN_TMAP) {
        if (get_str(j, "arg", &arg) || (q->arg = plan_arg_index(p, arg)) < 0)
            return perr(err, errcap, "launch plan: param %d (%s) names no argument of the op", i, kind);
    }
    if (q->kind == PLAN_DIM || q->kind == PLAN_I32) {
        if (take_expr(json_get(j, "expr"), &q->expr)) return perr(err, errcap, "launch plan: param %d (%s) needs \"expr\"", i, kind);
    }
    if (q->kind == PLAN_WORKSPACE) {
        if (take_expr(json_get(j, "size"), &q->expr)) return perr(err, errcap, "launch plan: param %d (workspace) needs \"size\"", i);
        if (json_get(j, "zero") && take_expr(json_get(j, "zero"), &q->zero))
            return perr(err, errcap, "launch plan: param %d (workspace): \"zero\" must be an expression", i);
    }
    if (q->kind == PLAN_TMAP) {
        if (json_get(j, "at") && take_expr(json_get(j, "at"), &q->at))
            return perr(err, errcap, "launch plan: param %d (tmap): \"at\" must be an expression", i);
        const json *dims = json_get(j, "dims"), *strides = json_get(j, "strides"), *box = json_get(j, "box");
        if (!dims || dims->type != JSON_ARR || dims->n < 1 || dims->n > 5)
            return perr(err, errcap, "launch plan: param %d (tmap): \"dims\" must list 1 to 5 sizes", i);
        q->tm.rank = dims->n;
        if (take_exprs(dims, q->tm.dims, q->tm.rank))
            return perr(err, errcap, "launch plan: param %d (tmap): \"dims\" entries must be expressions", i);
        if (q->tm.rank > 1 ? take_exprs(strides, q->tm.strides, q->tm.rank - 1)
                           : (strides && (strides->type != JSON_ARR || strides->n != 0)))
            return perr(err, errcap, "launch plan: param %d (tmap): \"strides\" must list %d byte strides", i, q->tm.rank - 1);
        if (!box || box->type != JSON_ARR || box->n != q->tm.rank)
            return perr(err, errcap, "launch plan: param %d (tmap): \"box\" must list %d sizes", i, q->tm.rank);
        for (int d = 0; d < q->tm.rank; d++) {
            const json *b = &box->items[d];
            if (d > 0 && b->type == JSON_STR) {
                if (plan_set(&q->tm.box_expr[d], b->str)) return perr(err, errcap, "out of memory");
                continue;
            }
            if (b->type != JSON_NUM || !b->is_int || b->i < 1 || b->i > 256)
                return perr(err, errcap, "launch plan: param %d (tmap): box[%d] must be an integer 1 to 256%s", i, d,
                            d ? " or an expression" : "");
            q->tm.box[d] = (unsigned)b->i;
        }
        long long sw, l2;
        const char *oob = "zero";
        if (get_int(j, "swizzle", 0, 128, 0, &sw) || get_int(j, "l2", 0, 256, 0, &l2))
            return perr(err, errcap, "launch plan: param %d (tmap): bad swizzle or l2", i);
        if (json_get(j, "oob") && get_str(j, "oob", &oob)) return perr(err, errcap, "launch plan: param %d (tmap): bad oob", i);
        if (strcmp(oob, "zero") && strcmp(oob, "nan"))
            return perr(err, errcap, "launch plan: param %d (tmap): oob must be \"zero\" or \"nan\"", i);
        q->tm.swizzle = (int)sw;
        q->tm.l2 = (int)l2;
        q->tm.oob_nan = !strcmp(oob, "nan");
    }
    return 0;
}

static int decode2(plan *p, const json *doc, char *err, int errcap)
{
    const char *s;
    if (get_str(doc, "kernel", &s) || copy_name(p->kernel, s))
        return perr(err, errcap, "launch plan: \"kernel\" must be a C identifier");
    const json *dims = json_get(doc, "dims"), *args = json_get(doc, "args"), *params = json_get(doc, "params");
    if (!dims || dims->type != JSON_ARR || dims->n < 1 || dims->n > PLAN_MAXDIMS)
        return perr(err, errcap, "launch plan: \"dims\" must list 1 to %d names", PLAN_MAXDIMS);
    p->ndims = dims->n;
    for (int i = 0; i < dims->n; i++)
        if (dims->items[i].type != JSON_STR || copy_name(p->dims[i], dims->items[i].str))
            return perr(err, errcap, "launch plan: dim %d is not an identifier", i);
    if (!args || args->type != JSON_ARR || args->n < 1 || args->n > PLAN_MAXARGS)
        return perr(err, errcap, "launch plan: \"args\" must list 1 to %d arguments", PLAN_MAXARGS);
    p->nargs = args->n;
    for (int i = 0; i < args->n; i++) {
        const json *a = &args->items[i];
        const char *name, *role, *dt = "";
        if (a->type != JSON_OBJ || get_str(a, "name", &name) || copy_name(p->args[i].name, name) || get_str(a, "role", &role))
            return perr(err, errcap, "launch plan: arg %d needs an identifier \"name\" and a \"role\"", i);
        p->args[i].role = role_find(role);
        if (p->args[i].role < 0) return perr(err, errcap, "launch plan: arg '%s': unknown role", p->args[i].name);
        if (p->args[i].role <= ROLE_INOUT && (get_str(a, "dtype", &dt) || !dtype_size(dt)))
            return perr(err, errcap, "launch plan: buffer '%s' needs a dtype (f32, f16 or bf16)", p->args[i].name);
        snprintf(p->args[i].dtype, sizeof p->args[i].dtype, "%s", p->args[i].role <= ROLE_INOUT ? dt : "");
        p->args[i].esize = dtype_size(p->args[i].dtype);
        const json *sz = json_get(a, "size");
        if (sz && (sz->type != JSON_STR || strlen(sz->str) > PLAN_MAXEXPR))
            return perr(err, errcap, "launch plan: arg '%s': size must be an expression", p->args[i].name);
        if (sz) snprintf(p->args[i].size, sizeof p->args[i].size, "%s", sz->str);
    }
    if (take_exprs(json_get(doc, "grid"), p->grid, 3) || take_exprs(json_get(doc, "block"), p->block, 3))
        return perr(err, errcap, "launch plan: \"grid\" and \"block\" must list 3 expressions each");
    const json *cl = json_get(doc, "cluster");
    if (cl ? take_exprs(cl, p->cluster, 3) : (plan_set(&p->cluster[0], "1") || plan_set(&p->cluster[1], "1") || plan_set(&p->cluster[2], "1")))
        return perr(err, errcap, "launch plan: \"cluster\" must list 3 expressions");
    const json *sm = json_get(doc, "smem");
    if (sm ? take_expr(sm, &p->smem) : plan_set(&p->smem, "0"))
        return perr(err, errcap, "launch plan: \"smem\" must be an expression");
    const json *pd = json_get(doc, "pdl");
    if (pd && pd->type != JSON_BOOL) return perr(err, errcap, "launch plan: \"pdl\" must be true or false");
    p->pdl = pd && pd->b;
    const json *wv = json_get(doc, "waves");
    if (wv && take_expr(wv, &p->waves)) return perr(err, errcap, "launch plan: \"waves\" must be an expression");
    if (!params || params->type != JSON_ARR || params->n > PLAN_MAXPARAMS)
        return perr(err, errcap, "launch plan: \"params\" must list at most %d parameters", PLAN_MAXPARAMS);
    for (int i = 0; i < params->n; i++) {
        p->nparams = i + 1;
        if (decode_param(p, &params->items[i], i, err, errcap)) return -1;
    }
    return plan_check(p, err, errcap);
}

int plan_decode(const char *text, plan **out, char *err, int errcap)
{
    *out = NULL;
    json *doc;
    char jerr[160];
    if (json_parse(text, &doc, jerr, sizeof jerr)) return perr(err, errcap, "launch plan: %s", jerr);
    long long v;
    int rc = -1;
    if (doc->type != JSON_OBJ) perr(err, errcap, "launch plan: not a JSON object");
    else if (doc->n == 0) perr(err, errcap, "launch plan: empty (no kernel was stored for it)");
    else if (!json_get(doc, "v"))
        perr(err, errcap, "launch plan: no version (\"v\"): written by aitune 0.1; `aitune compile` or `aitune sweep` "
                          "on this registry migrates it");
    else if (get_int(doc, "v", 0, 1000000, 0, &v)) perr(err, errcap, "launch plan: bad version");
    else if (v != PLAN_VERSION) perr(err, errcap, "launch plan: version %lld (this aitune reads %d)", v, PLAN_VERSION);
    else {
        plan *p = plan_new();
        if (!p) perr(err, errcap, "out of memory");
        else if (decode2(p, doc, err, errcap)) plan_free(p);
        else { *out = p; rc = 0; }
    }
    json_free(doc);
    return rc;
}

int plan_decode_v1(const char *text, int ndims, const char *const *dims, int nargs, const plan_arg *args,
                   plan **out, char *err, int errcap)
{
    *out = NULL;
    json *doc;
    char jerr[160];
    if (json_parse(text, &doc, jerr, sizeof jerr)) return perr(err, errcap, "0.1 launch: %s", jerr);
    plan *p = plan_new();
    int rc = -1;
    const char *name;
    if (!p) { perr(err, errcap, "out of memory"); goto done; }
    if (doc->type != JSON_OBJ || get_str(doc, "kernel", &name) || copy_name(p->kernel, name)) {
        perr(err, errcap, "0.1 launch: no kernel name");
        goto done;
    }
    if (ndims < 1 || ndims > PLAN_MAXDIMS || nargs < 1 || nargs > PLAN_MAXARGS) {
        perr(err, errcap, "0.1 launch: %d dims and %d args", ndims, nargs);
        goto done;
    }
    p->ndims = ndims;
    for (int i = 0; i < ndims; i++)
        if (copy_name(p->dims[i], dims[i])) { perr(err, errcap, "0.1 launch: dim %d is not an identifier", i); goto done; }
    p->nargs = nargs;
    memcpy(p->args, args, sizeof *args * (size_t)nargs);
    if (take_exprs(json_get(doc, "grid"), p->grid, 3) || take_exprs(json_get(doc, "block"), p->block, 3)) {
        perr(err, errcap, "0.1 launch: \"grid\" and \"block\" must list 3 expressions each");
        goto done;
    }
    const json *sm = json_get(doc, "smem");
    if (sm ? take_expr(sm, &p->smem) : plan_set(&p->smem, "0")) { perr(err, errcap, "0.1 launch: bad smem"); goto done; }
    /* 0.1 stored the cluster as integers, 0,0,0 for none. */
    const json *cl = json_get(doc, "cluster");
    for (int i = 0; i < 3; i++) {
        long long c = 1;
        if (cl && cl->type == JSON_ARR && cl->n == 3 && cl->items[i].type == JSON_NUM && cl->items[i].is_int) c = cl->items[i].i;
        char b[32];
        snprintf(b, sizeof b, "%lld", c < 1 ? 1 : c);
        if (plan_set(&p->cluster[i], b)) { perr(err, errcap, "out of memory"); goto done; }
    }
    long long ws = 0;
    if (get_int(doc, "workspace", 0, (1LL << 50), 0, &ws)) { perr(err, errcap, "0.1 launch: bad workspace"); goto done; }
    char wsb[32];
    snprintf(wsb, sizeof wsb, "%lld", ws);
    if (plan_default_params(p, ws > 0 ? wsb : NULL, err, errcap) || plan_check(p, err, errcap)) goto done;
    *out = p;
    p = NULL;
    rc = 0;
done:
    plan_free(p);
    json_free(doc);
    return rc;
}

/* ---- binding ---- */

/* Evaluate e at shape: 0, or -1 with the reason in why. Callers name what
** failed only when it failed: a launch binds a dozen expressions, and
** formatting their names every time would cost more than evaluating them. */
static int eval(const plan *p, const char *e, const long long *shape, long long *v, char *why, int cap)
{
    /* Most block, cluster and shared-memory sizes are plain numbers. */
    long long n = 0;
    int k = 0;
    for (; e[k] >= '0' && e[k] <= '9' && k < 18; k++) n = n * 10 + (e[k] - '0');
    if (k && !e[k]) {
        *v = n;
        return 0;
    }
    const char *names[PLAN_MAXDIMS];
    for (int i = 0; i < p->ndims; i++) names[i] = p->dims[i];
    return expr_eval(e, p->ndims, names, shape, v, why, cap);
}

int plan_waves(const plan *p, const long long *shape, long long *out, char *err, int errcap)
{
    if (!p->waves) return 0;
    char why[384];
    if (eval(p, p->waves, shape, out, why, sizeof why)) return perr(err, errcap, "waves: %s", why);
    if (*out < 1) return perr(err, errcap, "waves = %lld from '%s'", *out, p->waves);
    return 1;
}

static const char *const axis_names[3][3] = {
    { "grid.x", "grid.y", "grid.z" }, { "block.x", "block.y", "block.z" }, { "cluster.x", "cluster.y", "cluster.z" },
};

int plan_geometry(const plan *p, const long long *shape, plan_geom *g, char *err, int errcap)
{
    memset(g, 0, sizeof *g);
    for (int i = 0; i < p->ndims; i++)
        if (shape[i] < 1) return perr(err, errcap, "%s is %lld: sizes must be >= 1", p->dims[i], shape[i]);
    long long v;
    char why[384];
    for (int i = 0; i < 3; i++) {
        const char *const *e[3] = { (const char *const *)p->grid, (const char *const *)p->block, (const char *const *)p->cluster };
        static const long long most[3][3] = { { 2147483647LL, 65535, 65535 }, { 1024, 1024, 1024 }, { 16, 16, 16 } };
        unsigned *out[3] = { &g->grid[i], &g->block[i], &g->cluster[i] };
        for (int k = 0; k < 3; k++) {
            if (eval(p, e[k][i], shape, &v, why, sizeof why)) return perr(err, errcap, "%s: %s", axis_names[k][i], why);
            if (v < 1 || v > most[k][i]) return perr(err, errcap, "%s = %lld from '%s'", axis_names[k][i], v, e[k][i]);
            *out[k] = (unsigned)v;
        }
        if (g->grid[i] % g->cluster[i])
            return perr(err, errcap, "grid.%c = %u is not a multiple of cluster.%c = %u", "xyz"[i], g->grid[i], "xyz"[i], g->cluster[i]);
    }
    if ((unsigned long long)g->block[0] * g->block[1] * g->block[2] > 1024)
        return perr(err, errcap, "block of %u threads (at most 1024)", g->block[0] * g->block[1] * g->block[2]);
    if (eval(p, p->smem, shape, &v, why, sizeof why)) return perr(err, errcap, "smem: %s", why);
    if (v < 0 || v > (1 << 30)) return perr(err, errcap, "smem = %lld from '%s'", v, p->smem);
    g->smem = (unsigned)v;
    g->pdl = p->pdl;
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_WORKSPACE) {
            if (eval(p, p->params[i].expr, shape, &v, why, sizeof why)) return perr(err, errcap, "workspace: %s", why);
            if (v < 0) return perr(err, errcap, "workspace = %lld bytes from '%s'", v, p->params[i].expr);
            g->ws_bytes = g->ws_zero = (unsigned long long)v;
            if (p->params[i].zero) {
                if (eval(p, p->params[i].zero, shape, &v, why, sizeof why)) return perr(err, errcap, "workspace zero: %s", why);
                if (v < 0 || (unsigned long long)v > g->ws_bytes)
                    return perr(err, errcap, "workspace zero = %lld bytes from '%s' (0 to the size)", v, p->params[i].zero);
                g->ws_zero = (unsigned long long)v;
            }
        }
    return 0;
}

int plan_has_tmap(const plan *p)
{
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_TMAP) return 1;
    return 0;
}

/* addr: buffer arg's address, or (the map has `at`) the workspace's of
** ws_bytes bytes. */
static int bind_tmap(const plan *p, int i, const long long *shape, unsigned long long addr, unsigned long long ws_bytes,
                     plan_tmap_encoder encode, CUtensorMap *tm, char *err, int errcap)
{
    const plan_tmap *t = &p->params[i].tm;
    const plan_arg *a = &p->args[p->params[i].arg];
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t box[5], estride[5];
    char why[384];
    if (!encode) return perr(err, errcap, "param %d (tmap of '%s'): no tensor-map encoder (libcuda)", i, a->name);
    unsigned long long at = 0;
    if (p->params[i].at) {
        long long v;
        if (eval(p, p->params[i].at, shape, &v, why, sizeof why))
            return perr(err, errcap, "param %d (tmap of '%s') at: %s", i, a->name, why);
        if (v < 0 || (unsigned long long)v >= ws_bytes)
            return perr(err, errcap, "param %d (tmap of '%s') at = %lld: outside the workspace of %llu bytes", i, a->name, v, ws_bytes);
        at = (unsigned long long)v;
        addr += at;
    }
    if (!addr || addr % 16) return perr(err, errcap, "param %d (tmap of '%s'): the address must be 16-byte aligned", i, a->name);
    for (int d = 0; d < t->rank; d++) {
        long long v;
        if (eval(p, t->dims[d], shape, &v, why, sizeof why))
            return perr(err, errcap, "param %d (tmap of '%s') dims[%d]: %s", i, a->name, d, why);
        if (v < 1 || v > (1LL << 32)) return perr(err, errcap, "param %d (tmap of '%s') dims[%d] = %lld (1 to 2^32)", i, a->name, d, v);
        gdim[d] = (cuuint64_t)v;
        box[d] = t->box[d];
        if (t->box_expr[d]) {
            if (eval(p, t->box_expr[d], shape, &v, why, sizeof why))
                return perr(err, errcap, "param %d (tmap of '%s') box[%d]: %s", i, a->name, d, why);
            if (v < 1 || v > 256) return perr(err, errcap, "param %d (tmap of '%s') box[%d] = %lld (1 to 256)", i, a->name, d, v);
            box[d] = (cuuint32_t)v;
        }
        estride[d] = 1;
    }
    for (int d = 0; d + 1 < t->rank; d++) {
        long long v;
        if (eval(p, t->strides[d], shape, &v, why, sizeof why))
            return perr(err, errcap, "param %d (tmap of '%s') strides[%d]: %s", i, a->name, d, why);
        if (v < 16 || v % 16 || v >= (1LL << 40))
            return perr(err, errcap, "param %d (tmap of '%s') strides[%d] = %lld bytes: must be a multiple of 16 below 2^40",
                        i, a->name, d, v);
        gstride[d] = (cuuint64_t)v;
    }
    if (p->params[i].at) {
        /* What the map can reach: the outermost stride times the outermost
        ** dim (or the row's bytes), from `at` on. */
        unsigned long long span = t->rank > 1 ? gstride[t->rank - 2] : (unsigned long long)a->esize;
        if (span > (ws_bytes - at) / gdim[t->rank - 1])
            return perr(err, errcap, "param %d (tmap of '%s'): the map reaches past the workspace of %llu bytes", i, a->name, ws_bytes);
    }
    const dtype_info *di = dtype_find(a->dtype);
    CUtensorMapDataType dt = di ? (CUtensorMapDataType)di->tmap : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    CUtensorMapSwizzle sw = t->swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : t->swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                          : t->swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMapL2promotion l2 = t->l2 == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : t->l2 == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                              : t->l2 == 64 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    CUtensorMapFloatOOBfill oob = t->oob_nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    memset(tm, 0, sizeof *tm);
    CUresult rc = encode(tm, dt, (cuuint32_t)t->rank, (void *)(uintptr_t)addr, gdim, t->rank > 1 ? gstride : NULL, box, estride,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2, oob);
    if (rc != CUDA_SUCCESS)
        return perr(err, errcap, "param %d (tmap of '%s'): cuTensorMapEncodeTiled failed (CUresult %d)", i, a->name, (int)rc);
    return 0;
}

int plan_bind(const plan *p, const long long *shape, const plan_value *args, unsigned long long ws,
              plan_tmap_encoder encode, plan_launch *L, char *err, int errcap)
{
    /* Only what is set below is read: no memset of the parameter storage
    ** (32 tensor maps' worth) on every launch. */
    L->nparams = 0;
    if (plan_geometry(p, shape, &L->g, err, errcap)) return -1;
    /* The workspace, and the maps that read it (`at`: a map past a
    ** workspace of 0 bytes is refused by bind_tmap). */
    if (!ws && L->g.ws_bytes) return perr(err, errcap, "the kernel needs a workspace of %llu bytes", L->g.ws_bytes);
    for (int i = 0; i < p->nparams; i++) {
        const plan_param *q = &p->params[i];
        long long v;
        char why[384];
        L->params[i] = &L->storage[i];
        L->storage[i].u64 = 0;
        switch (q->kind) {
        case PLAN_PTR:
            L->storage[i].u64 = args[q->arg].ptr;
            break;
        case PLAN_F32:
            L->storage[i].f32 = args[q->arg].f32;
            break;
        case PLAN_DIM:
        case PLAN_I32:
            if (eval(p, q->expr, shape, &v, why, sizeof why))
                return perr(err, errcap, "param %d (%s): %s", i, plan_kind_name(q->kind), why);
            if (q->kind == PLAN_DIM) {
                L->storage[i].i64 = v;
            } else {
                if (v < -2147483648LL || v > 2147483647LL)
                    return perr(err, errcap, "param %d (%s) = %lld does not fit in an i32", i, plan_kind_name(q->kind), v);
                L->storage[i].i32 = (int)v;
            }
            break;
        case PLAN_WORKSPACE:
            L->storage[i].u64 = ws;
            break;
        case PLAN_TMAP:
            if (bind_tmap(p, i, shape, q->at ? ws : args[q->arg].ptr, L->g.ws_bytes, encode, &L->storage[i].tmap, err, errcap))
                return -1;
            break;
        }
    }
    L->nparams = p->nparams;
    return 0;
}

CUresult plan_launch_kernel(__typeof__(cuLaunchKernel) *launch, __typeof__(cuLaunchKernelEx) *launch_ex,
                            CUfunction fn, CUstream stream, plan_launch *L)
{
    const plan_geom *g = &L->g;
    CUlaunchAttribute at[2];
    unsigned n = 0;
    memset(at, 0, sizeof at);
    if (g->cluster[0] * g->cluster[1] * g->cluster[2] > 1) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at[n].value.clusterDim.x = g->cluster[0];
        at[n].value.clusterDim.y = g->cluster[1];
        at[n].value.clusterDim.z = g->cluster[2];
        n++;
    }
    if (g->pdl) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at[n].value.programmaticStreamSerializationAllowed = 1;
        n++;
    }
    if (n) {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = g->grid[0], cfg.gridDimY = g->grid[1], cfg.gridDimZ = g->grid[2];
        cfg.blockDimX = g->block[0], cfg.blockDimY = g->block[1], cfg.blockDimZ = g->block[2];
        cfg.sharedMemBytes = g->smem;
        cfg.hStream = stream;
        cfg.attrs = at;
        cfg.numAttrs = n;
        return launch_ex(&cfg, fn, L->params, NULL);
    }
    return launch(fn, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2], g->smem, stream,
                  L->params, NULL);
}
