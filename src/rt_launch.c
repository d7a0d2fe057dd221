/*
** rt_launch.c: libaitune's layer 2, what aitune_kernel_get, aitune_launch
** and aitune_bind do, and aitune_close, which frees both layers (aitune.h
** is the contract; rt_impl.h what it shares with rt.c, the layer below,
** which opens the handle and chooses the winner).
**
** A winner's launch plan and cubin are read by the row id remembered when
** its set was loaded, through the handle's connection (under the mutex).
** Loaded kernels form a list under the mutex; a kernel never moves or
** changes once published, so aitune_launch reads it without the lock. The
** launch plan (plan.c) binds arguments exactly as the worker that measured
** the kernel did. A vendor winner (vendor.h: VENDOR_TEMPLATE) has no cubin:
** its kernel is a cuBLASLt call through one vendor handle per CUDA context.
*/
#define _GNU_SOURCE /* strdup */

#include "rt_impl.h"

#include <stdatomic.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layer 2: kernels ---- */

/* Read the row's launch plan and cubin (a winner of set s, or a default, by
** rowid) into *launch and *cubin (malloc'd), checking the row is still the
** one loaded; cubin NULL: the plan only (a vendor winner has no cubin).
** Under h->mu: it uses the handle's connection. */
static int rt_fetch(aitune *h, const struct rt_set *s, const void *row, int is_default, char **launch,
                    void **cubin, size_t *cubin_len)
{
    *launch = NULL;
    if (cubin)
        *cubin = NULL;
    const char *sql = is_default
        ? "SELECT d.op, d.dtype, d.template, d.launch, c.cubin FROM defaults d "
          "LEFT JOIN cubins c ON c.hash = d.cubin WHERE d.rowid = ?"
        : "SELECT w.op, w.dtype, w.bucket, w.launch, c.cubin FROM winners w "
          "LEFT JOIN cubins c ON c.hash = w.cubin WHERE w.rowid = ?";
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rt_sqlite_error(h, h->path, h->db, rc);
    const struct rt_winner *w = row;
    const struct rt_default *d = row;
    sqlite3_bind_int64(st, 1, is_default ? d->rowid : w->rowid);
    rc = sqlite3_step(st);
    int arc = AITUNE_OK;
    if (rc == SQLITE_ROW) {
        const char *op = is_default ? h->pool.s + d->op : s->key;
        const char *dtype = is_default ? h->pool.s + d->dtype : s->key + s->dtype;
        const char *third = is_default ? h->pool.s + d->tmpl : s->pool.s + w->bucket;
        if (strcmp(rt_text(st, 0), op) || strcmp(rt_text(st, 1), dtype) || strcmp(rt_text(st, 2), third))
            arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
        else if (sqlite3_column_type(st, 3) != SQLITE_TEXT)
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': %s has no launch plan", h->path,
                           is_default ? "the default" : "the winner");
        else if (cubin && (sqlite3_column_type(st, 4) != SQLITE_BLOB || sqlite3_column_bytes(st, 4) < 16))
            arc = rt_error(h, AITUNE_NOTFOUND, "registry '%s': the cubin of %s %s is not stored", h->path,
                           is_default ? "the default" : "bucket", third);
        else if (!(*launch = strdup(rt_text(st, 3))))
            arc = rt_error(h, AITUNE_NOMEM, "out of memory");
        else if (cubin) {
            *cubin_len = (size_t)sqlite3_column_bytes(st, 4);
            *cubin = malloc(*cubin_len);
            if (!*cubin)
                arc = rt_error(h, AITUNE_NOMEM, "out of memory");
            else
                memcpy(*cubin, sqlite3_column_blob(st, 4), *cubin_len);
        }
    } else if (rc == SQLITE_DONE) {
        arc = rt_error(h, AITUNE_ERROR, "registry '%s' changed since aitune_open: open it again", h->path);
    } else {
        arc = rt_sqlite_error(h, h->path, h->db, rc);
    }
    sqlite3_finalize(st);
    if (arc != AITUNE_OK) {
        free(*launch);
        *launch = NULL;
        if (cubin) {
            free(*cubin);
            *cubin = NULL;
        }
    }
    return arc;
}

static const cu_api *rt_cu(aitune *h)
{
    const char *why = NULL;
    const cu_api *cu = cu_load(&why);
    if (!cu)
        rt_error(h, AITUNE_ERROR, "%s", why ? why : "cannot load libcuda");
    return cu;
}

/* Whether winner w of set s is the vendor's (vendor.h: VENDOR_TEMPLATE). */
static int rt_is_vendor(const struct rt_set *s, const struct rt_winner *w)
{
    return w && vendor_is_template(s->pool.s + w->tmpl);
}

/* The vendor handle of context ctx into *out, made on first use. Under
** h->mu. */
static int rt_vendor_of(aitune *h, CUcontext ctx, vendor **out)
{
    for (struct rt_vendor *x = h->vendors; x; x = x->next)
        if (x->ctx == ctx) {
            *out = x->v;
            return AITUNE_OK;
        }
    char err[768];
    struct rt_vendor *x = calloc(1, sizeof *x);
    if (!x)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    if (vendor_open(&x->v, err, sizeof err)) {
        free(x);
        return rt_error(h, AITUNE_ERROR, "cuBLASLt in this context: %s", err);
    }
    x->ctx = ctx;
    x->next = h->vendors;
    h->vendors = x;
    *out = x->v;
    return AITUNE_OK;
}

/* A vendor winner's kernel: its plan names the op's A and B (in), D (out)
** and dims m, n, k (what vendor_gemm reads) and a workspace, and cuBLASLt
** opens in ctx. Under h->mu. */
static int rt_vendor_kernel(aitune *h, struct aitune_kernel *k, const char *op, const char *dtype,
                            const char *bucket, CUcontext ctx)
{
    const plan *p = k->p;
    k->vkind = vendor_kind(op, dtype);
    k->va = plan_arg_index(p, "A");
    k->vb = plan_arg_index(p, "B");
    k->vd = plan_arg_index(p, "D");
    int ws = 0;
    for (int i = 0; i < p->nparams; i++)
        ws |= p->params[i].kind == PLAN_WORKSPACE;
    if (k->vkind < 0 || p->ndims != 3 || strcmp(p->dims[0], "m") || strcmp(p->dims[1], "n") ||
        strcmp(p->dims[2], "k") || k->va < 0 || k->vb < 0 || k->vd < 0 || p->args[k->va].role != ROLE_IN ||
        p->args[k->vb].role != ROLE_IN || p->args[k->vd].role != ROLE_OUT || !ws)
        return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s bucket %s names the vendor, but the vendor "
                        "serves no such problem (%s %s, its plan's arguments and workspace)", h->path, op, dtype,
                        bucket, op, dtype);
    int rc = rt_vendor_of(h, ctx, &k->vend);
    if (rc == AITUNE_OK)
        k->ws = 1;
    return rc;
}

int aitune_kernel_get(aitune *h, const char *op, const char *arch, const char *dtype,
                      const long long *shape, int ndims, aitune_kernel **out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_get: out is NULL");
    *out = NULL;
    aitune_choice c;
    const struct rt_set *s;
    const struct rt_winner *w;
    const struct rt_default *d;
    int rc = rt_choose(h, op, arch, dtype, shape, ndims, NULL, &c, &s, &w, &d);
    if (rc == AITUNE_OK ? c.level != AITUNE_EXACT : rc == AITUNE_NOTFOUND)
        rt_count_miss(h, op, arch, dtype, shape, ndims);
    if (rc != AITUNE_OK)
        return rc;
    if (d && !d->rowid)
        return rt_error(h, AITUNE_NOTFOUND, "%s %s %s: only the default answers, and this registry "
                        "stores no compiled default", op, arch, dtype);
    if (rt_is_vendor(s, w)) {
        /* Before the driver: a registry that names the vendor says so even
        ** where cuBLASLt (or the GPU) is missing. */
        char why[768];
        if (vendor_kind(op, dtype) < 0)
            return rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s bucket %s names the vendor, which serves "
                            "no %s %s", h->path, op, dtype, c.bucket, op, dtype);
        if (vendor_available(why, sizeof why))
            return rt_error(h, AITUNE_ERROR, "%s %s %s bucket %s is held by the vendor (%s), which cannot be "
                            "opened: %s", op, arch, dtype, c.bucket, VENDOR_TEMPLATE, why);
    }
    const cu_api *cu = rt_cu(h);
    if (!cu)
        return AITUNE_ERROR;
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return rt_error(h, AITUNE_ERROR, "no current CUDA context in this thread (cudaSetDevice "
                        "and cudaFree(0), or cuCtxSetCurrent, first)");
    /* The GPU of this context: among winners of one bucket measured on
    ** several GPUs, the one measured on this kind of GPU answers. */
    char hw[256];
    pthread_mutex_lock(&h->mu);
    if (h->hw_ctx != ctx) {
        CUdevice dev;
        if (cu->CtxGetDevice(&dev) != CUDA_SUCCESS || cu_hw(cu, dev, h->hw, sizeof h->hw))
            h->hw[0] = '\0';
        h->hw_ctx = ctx;
    }
    memcpy(hw, h->hw, sizeof hw);
    pthread_mutex_unlock(&h->mu);
    if (w && hw[0] && (rc = rt_choose(h, op, arch, dtype, shape, ndims, hw, &c, &s, &w, &d)) != AITUNE_OK)
        return rc;
    const void *row = w ? (const void *)w : (const void *)d;

    pthread_mutex_lock(&h->mu);
    for (struct aitune_kernel *k = h->kernels; k; k = k->next)
        if (k->row == row && k->ctx == ctx) {
            pthread_mutex_unlock(&h->mu);
            *out = k;
            return AITUNE_OK;
        }
    char *launch = NULL;
    void *cubin = NULL;
    size_t len = 0;
    struct aitune_kernel *k = NULL;
    int is_vendor = rt_is_vendor(s, w);
    rc = rt_fetch(h, s, row, d != NULL, &launch, is_vendor ? NULL : &cubin, &len);
    if (rc == AITUNE_OK && !(k = calloc(1, sizeof *k)))
        rc = rt_error(h, AITUNE_NOMEM, "out of memory");
    char err[512];
    if (rc == AITUNE_OK && plan_decode(launch, &k->p, err, sizeof err))
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': %s %s %s %s: %s", h->path, op, arch, dtype,
                      c.bucket ? c.bucket : "default", err);
    if (rc == AITUNE_OK && k->p->ndims != ndims)
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': the launch plan has %d dims, the bucket %d",
                      h->path, k->p->ndims, ndims);
    CUresult cr;
    if (rc == AITUNE_OK && is_vendor)
        rc = rt_vendor_kernel(h, k, op, dtype, c.bucket, ctx);
    else if (rc == AITUNE_OK && (cr = cu->ModuleLoadData(&k->mod, cubin)) != CUDA_SUCCESS)
        rc = rt_error(h, AITUNE_ERROR, "cannot load the kernel of %s %s %s into this context: %s",
                      op, arch, dtype, cu_errstr(cr));
    if (rc == AITUNE_OK && !is_vendor && (cr = cu->ModuleGetFunction(&k->fn, k->mod, k->p->kernel)) != CUDA_SUCCESS)
        rc = rt_error(h, AITUNE_CORRUPT, "registry '%s': the cubin has no kernel '%s': %s", h->path,
                      k->p->kernel, cu_errstr(cr));
    if (rc == AITUNE_OK) {
        k->row = row;
        k->ctx = ctx;
        k->plan_json = launch;
        launch = NULL;
        k->info.level = c.level;
        k->info.template_name = c.template_name;
        k->info.config = c.config;
        k->info.bucket = c.bucket;
        k->info.plan = k->plan_json;
        k->info.ndims = k->p->ndims;
        k->info.nargs = k->p->nargs;
        for (int i = 0; i < k->p->nparams; i++)
            k->ws |= k->p->params[i].kind == PLAN_WORKSPACE;
        k->next = h->kernels;
        h->kernels = k;
        *out = k;
    } else if (k) {
        if (k->mod)
            cu->ModuleUnload(k->mod);
        plan_free(k->p);
        free(k);
    }
    pthread_mutex_unlock(&h->mu);
    free(launch);
    free(cubin);
    return rc;
}

int aitune_kernel_info_get(aitune *h, const aitune_kernel *k, aitune_kernel_info *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !out)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_info_get: %s is NULL", !k ? "k" : "out");
    *out = k->info;
    return AITUNE_OK;
}

int aitune_kernel_workspace(aitune *h, const aitune_kernel *k, const long long *shape,
                            unsigned long long *bytes)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !shape || !bytes)
        return rt_error(h, AITUNE_MISUSE, "aitune_kernel_workspace: an argument is NULL");
    if (k->vend) {
        *bytes = VENDOR_WORKSPACE;
        return AITUNE_OK;
    }
    plan_geom g;
    char err[512];
    if (plan_geometry(k->p, shape, &g, err, sizeof err))
        return rt_error(h, AITUNE_MISUSE, "%s: %s", k->p->kernel, err);
    *bytes = g.ws_bytes;
    return AITUNE_OK;
}

/* Launch k with L, bound, on s: its workspace ws zeroed first where the
** plan asks (aitune_launch's last step and a bound launch's). */
static int rt_run(aitune *h, const cu_api *cu, const struct aitune_kernel *k, const plan *p, plan_launch *L,
                  unsigned long long ws, CUstream s)
{
    CUresult cr;
    if (L->g.ws_zero && (cr = cu->MemsetD8Async(ws, 0, (size_t)L->g.ws_zero, s)) != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: zero the workspace: %s", p->kernel, cu_errstr(cr));
    cr = plan_launch_kernel(cu->LaunchKernel, cu->LaunchKernelEx, k->fn, s, L);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "launch %s: %s", p->kernel, cu_errstr(cr));
    return AITUNE_OK;
}

int aitune_launch(aitune *h, const aitune_kernel *k, const aitune_arg *args,
                  const long long *shape, void *stream)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!k || !args || !shape)
        return rt_error(h, AITUNE_MISUSE, "aitune_launch: %s is NULL", !k ? "k" : !args ? "args" : "shape");
    const cu_api *cu = cu_load(NULL);   /* loaded: k exists */
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_launch: the current context is not the one the "
                        "kernel was loaded in (aitune_kernel_get in this context)");
    const plan *p = k->p;
    if (k->vend) {
        const int idx[3] = { k->va, k->vb, k->vd };
        for (int i = 0; i < 3; i++)
            if (!args[idx[i]].ptr)
                return rt_error(h, AITUNE_MISUSE, "aitune_launch: buffer '%s' is NULL", p->args[idx[i]].name);
        if (!args[p->nargs].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_launch: the vendor's workspace is NULL (%llu bytes: "
                            "aitune_kernel_workspace)", VENDOR_WORKSPACE);
        char err[512];
        if (vendor_gemm(k->vend, k->vkind, shape, args[k->va].ptr, args[k->vb].ptr, args[k->vd].ptr,
                        args[p->nargs].ptr, stream, err, sizeof err))
            return rt_error(h, AITUNE_ERROR, "aitune_launch (vendor): %s", err);
        return AITUNE_OK;
    }
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < p->nargs; i++) {
        v[i].ptr = p->args[i].role <= ROLE_INOUT ? args[i].ptr : 0;
        v[i].f32 = p->args[i].role == ROLE_SCALAR ? args[i].f32 : 0;
        if (p->args[i].role <= ROLE_INOUT && !args[i].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_launch: buffer '%s' is NULL", p->args[i].name);
    }
    unsigned long long ws = k->ws ? args[p->nargs].ptr : 0;
    plan_launch L;
    char err[512];
    if (plan_bind(p, shape, v, ws, cu->TensorMapEncodeTiled, &L, err, sizeof err))
        return rt_error(h, AITUNE_MISUSE, "aitune_launch %s: %s", p->kernel, err);
    CUstream s = (CUstream)stream;
    CUresult cr;
    unsigned allowed = __atomic_load_n(&((struct aitune_kernel *)k)->optin, __ATOMIC_RELAXED);
    if (L.g.smem > allowed) {
        /* Past 48 KB of static plus dynamic shared memory a kernel must opt
        ** in; allowing the dynamic size needs no check of the static part. */
        cr = cu->FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)L.g.smem);
        if (cr != CUDA_SUCCESS)
            return rt_error(h, AITUNE_ERROR, "%s: allow %u bytes of shared memory: %s", p->kernel,
                            L.g.smem, cu_errstr(cr));
        while (allowed < L.g.smem &&
               !__atomic_compare_exchange_n(&((struct aitune_kernel *)k)->optin, &allowed, L.g.smem, 0,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    return rt_run(h, cu, k, p, &L, ws, s);
}

/* ---- bound launches (the cached fast path) ----
**
** aitune_bind does once what aitune_launch does on every call: it evaluates
** the launch plan at a shape (geometry, dims, i32s), opts the kernel in to
** its shared memory, and encodes its tensor maps. What it cannot know yet,
** the buffers' addresses, it leaves to aitune_bound_launch, which copies the
** prebuilt parameters onto its stack, writes the addresses, scalars and the
** workspace into them, and launches: no expression, no JSON, no allocation,
** no lock waited on, no write to shared state but a tensor map's slot (below).
**
** A tensor map holds its buffer's address, encoded by the driver in a layout
** it does not document, so a map is re-encoded at launch when its address is
** not the one it was prebuilt at (cuTensorMapEncodeTiled is a host-only call
** with every other argument stored here: no expression is evaluated again).
** Each map keeps the last one encoded at launch, with its address, in a slot
** of its own (rt_tmap_slot): a decode loop's activations come back at the
** same addresses step after step (the caching allocator hands a module's
** input the block it had), so a launch there copies 128 bytes instead of
** calling the driver. A slot is taken with an atomic exchange and never
** waited on: a launch that finds it busy encodes, as it would without it.
** To learn those arguments without a second copy of plan.c's tensor-map
** rules, bind hands plan_bind a recording encoder (rt_record_encode) that
** keeps each call's arguments before it calls the driver's.
**
** The kind and the launcher: a bound launch runs through b->launch, which for
** a tuned kernel is rt_bound_kernel. Another kind (a vendor library's call)
** gets its own launcher and keeps its state beside the kernel's. */

/* Where rt_record_encode writes (bind's, in this thread). */
struct rt_recorder {
    struct aitune_bound *b;
    const cu_api *cu;
    int n;                          /* maps recorded so far */
};
static _Thread_local struct rt_recorder *rt_rec;

static CUresult rt_record_encode(CUtensorMap *tm, CUtensorMapDataType dt, cuuint32_t rank, void *addr,
                                 const cuuint64_t *gdim, const cuuint64_t *gstride, const cuuint32_t *box,
                                 const cuuint32_t *estride, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                 CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    struct rt_recorder *R = rt_rec;
    if (!R || R->n >= R->b->ntmaps || rank < 1 || rank > 5)
        return CUDA_ERROR_INVALID_VALUE;
    struct rt_tmap_rec *r = &R->b->tmaps[R->n++];
    r->addr = (unsigned long long)(uintptr_t)addr;
    r->dt = dt;
    r->rank = rank;
    for (cuuint32_t d = 0; d < rank; d++) {
        r->gdim[d] = gdim[d];
        r->box[d] = box[d];
        r->estride[d] = estride[d];
        if (d + 1 < rank)
            r->gstride[d] = gstride[d];
    }
    r->il = il;
    r->sw = sw;
    r->l2 = l2;
    r->oob = oob;
    return R->cu->TensorMapEncodeTiled(tm, dt, rank, addr, gdim, gstride, box, estride, il, sw, l2, oob);
}

/* Where bind pretends buffers live when the caller gives no address: 16-byte
** aligned, non-zero, and never reused by a launch (r->known stays 0). */
#define RT_FAKE_ADDR(i) ((1ULL << 46) + ((unsigned long long)(i) << 20))

static void rt_bound_release(struct aitune_bound *b)
{
    free(b->slots);
    free(b);
}

/* Copy into tm the map slot holds for address a; 0 when it holds another or is busy. */
static int rt_slot_get(struct rt_tmap_slot *slot, unsigned long long a, CUtensorMap *tm)
{
    if (atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire))
        return 0;
    int hit = slot->addr == a;
    if (hit)
        memcpy(tm, slot->map, sizeof *tm);
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
    return hit;
}

static void rt_slot_put(struct rt_tmap_slot *slot, unsigned long long a, const CUtensorMap *tm)
{
    if (atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire))
        return;
    slot->addr = a;
    memcpy(slot->map, tm, sizeof *tm);
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
}

static int rt_bound_kernel(aitune *h, const struct aitune_bound *b, const aitune_arg *args, CUstream s)
{
    const struct aitune_kernel *k = b->k;
    const plan *p = k->p;
    const cu_api *cu = b->cu;
    for (int i = 0; i < b->nbufs; i++)
        if (!args[b->bufs[i]].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: buffer '%s' is NULL", p->args[b->bufs[i]].name);
    unsigned long long ws = b->L.g.ws_bytes ? args[b->nargs].ptr : 0;
    if (b->L.g.ws_bytes && !ws)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch %s: the workspace (args[%d]) is NULL", p->kernel,
                        b->nargs);
    CUcontext ctx = NULL;
    if (cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the current context is not the one the "
                        "kernel was loaded in");
    plan_launch L;
    L.g = b->L.g;
    L.nparams = b->L.nparams;
    for (int i = 0; i < L.nparams; i++) {
        const plan_param *q = &p->params[i];
        L.params[i] = &L.storage[i];
        switch (q->kind) {
        case PLAN_PTR:       L.storage[i].u64 = args[q->arg].ptr; break;
        case PLAN_F32:       L.storage[i].f32 = args[q->arg].f32; break;
        case PLAN_WORKSPACE: L.storage[i].u64 = ws; break;
        case PLAN_TMAP:      break;   /* below */
        default:             L.storage[i].i64 = b->L.storage[i].i64; break;   /* dim, i32 */
        }
    }
    for (int j = 0; j < b->ntmaps; j++) {
        const struct rt_tmap_rec *r = &b->tmaps[j];
        unsigned long long a = (r->src < 0 ? ws : args[r->src].ptr) + r->off;
        CUtensorMap *tm = &L.storage[r->param].tmap;
        if (r->known && a == r->addr) {
            memcpy(tm, &b->L.storage[r->param].tmap, sizeof *tm);
            continue;
        }
        if (a % 16)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch %s: buffer '%s' is not 16-byte aligned "
                            "(a TMA tensor map reads it)", p->kernel,
                            r->src < 0 ? "workspace" : p->args[r->src].name);
        if (rt_slot_get(&b->slots[j], a, tm))
            continue;
        memset(tm, 0, sizeof *tm);
        CUresult cr = cu->TensorMapEncodeTiled(tm, r->dt, r->rank, (void *)(uintptr_t)a, r->gdim,
                                               r->rank > 1 ? r->gstride : NULL, r->box, r->estride, r->il, r->sw,
                                               r->l2, r->oob);
        if (cr != CUDA_SUCCESS)
            return rt_error(h, AITUNE_ERROR, "aitune_bound_launch %s: encode the tensor map of '%s': %s", p->kernel,
                            r->src < 0 ? "workspace" : p->args[r->src].name, cu_errstr(cr));
        rt_slot_put(&b->slots[j], a, tm);
    }
    return rt_run(h, cu, k, p, &L, ws, s);
}

/* A vendor bucket's bound launch: one cublasLtMatmul through the kernel's
** vendor handle, its plan found by shape and alignment (vendor.h). */
static int rt_bound_vendor(aitune *h, const struct aitune_bound *b, const aitune_arg *args, CUstream s)
{
    const struct aitune_kernel *k = b->k;
    const int idx[3] = { k->va, k->vb, k->vd };
    for (int i = 0; i < 3; i++)
        if (!args[idx[i]].ptr)
            return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: buffer '%s' is NULL", k->p->args[idx[i]].name);
    if (!args[b->nargs].ptr)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the vendor's workspace (args[%d]) is NULL", b->nargs);
    CUcontext ctx = NULL;
    if (b->cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != k->ctx)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: the current context is not the one the "
                        "kernel was loaded in");
    char err[512];
    if (vendor_gemm(k->vend, k->vkind, b->vshape, args[k->va].ptr, args[k->vb].ptr, args[k->vd].ptr,
                    args[b->nargs].ptr, s, err, sizeof err))
        return rt_error(h, AITUNE_ERROR, "aitune_bound_launch (vendor): %s", err);
    return AITUNE_OK;
}

/* Bind a vendor bucket's kernel: the shape kept, the heuristic run now for
** the addresses args gives (else aligned ones), so the first launch finds
** its plan. */
static int rt_bind_vendor(aitune *h, const struct aitune_kernel *k, const long long *shape, const aitune_arg *args,
                          aitune_bound **out)
{
    struct aitune_bound *b = calloc(1, sizeof *b);
    if (!b)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    b->kind = AITUNE_BOUND_VENDOR;
    b->launch = rt_bound_vendor;
    b->k = k;
    b->cu = cu_load(NULL);
    b->nargs = k->p->nargs;
    b->L.g.ws_bytes = VENDOR_WORKSPACE;
    memcpy(b->vshape, shape, sizeof b->vshape);
    unsigned long long a[3];
    const int idx[3] = { k->va, k->vb, k->vd };
    for (int i = 0; i < 3; i++)
        a[i] = args && args[idx[i]].ptr ? args[idx[i]].ptr : RT_FAKE_ADDR(i + 1);
    char desc[128], err[512];
    if (vendor_describe(k->vend, k->vkind, shape, a[0], a[1], a[2], desc, sizeof desc, err, sizeof err)) {
        free(b);
        return rt_error(h, AITUNE_ERROR, "aitune_bind (vendor): %s", err);
    }
    pthread_mutex_lock(&h->mu);
    b->next = h->bounds;
    h->bounds = b;
    pthread_mutex_unlock(&h->mu);
    *out = b;
    return AITUNE_OK;
}

/* Allow k smem bytes of dynamic shared memory (once per size reached). */
static int rt_optin(aitune *h, const cu_api *cu, struct aitune_kernel *k, unsigned smem)
{
    unsigned allowed = __atomic_load_n(&k->optin, __ATOMIC_RELAXED);
    if (smem <= allowed)
        return AITUNE_OK;
    CUresult cr = cu->FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (cr != CUDA_SUCCESS)
        return rt_error(h, AITUNE_ERROR, "%s: allow %u bytes of shared memory: %s", k->p->kernel, smem, cu_errstr(cr));
    while (allowed < smem && !__atomic_compare_exchange_n(&k->optin, &allowed, smem, 0, __ATOMIC_RELAXED,
                                                          __ATOMIC_RELAXED))
        ;
    return AITUNE_OK;
}

int aitune_bind(aitune *h, const aitune_kernel *k, const long long *shape, const aitune_arg *args,
                aitune_bound **out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!out)
        return rt_error(h, AITUNE_MISUSE, "aitune_bind: out is NULL");
    *out = NULL;
    if (!k || !shape)
        return rt_error(h, AITUNE_MISUSE, "aitune_bind: %s is NULL", !k ? "k" : "shape");
    const plan *p = k->p;
    for (int i = 0; i < p->ndims; i++)
        if (shape[i] < 1)
            return rt_error(h, AITUNE_MISUSE, "aitune_bind %s: %s = %lld (sizes must be >= 1)", p->kernel,
                            p->dims[i], shape[i]);
    if (k->vend)
        return rt_bind_vendor(h, k, shape, args, out);
    const cu_api *cu = cu_load(NULL);   /* loaded: k exists */
    struct aitune_bound *b = calloc(1, sizeof *b);
    if (!b)
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    b->kind = AITUNE_BOUND_KERNEL;
    b->launch = rt_bound_kernel;
    b->k = k;
    b->cu = cu;
    b->nargs = p->nargs;
    plan_value v[PLAN_MAXARGS];
    for (int i = 0; i < p->nargs; i++) {
        int buf = p->args[i].role <= ROLE_INOUT;
        v[i].ptr = !buf ? 0 : args && args[i].ptr ? args[i].ptr : RT_FAKE_ADDR(i + 1);
        v[i].f32 = p->args[i].role == ROLE_SCALAR && args ? args[i].f32 : 0;
        if (buf)
            b->bufs[b->nbufs++] = (signed char)i;
    }
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].kind == PLAN_TMAP) {
            struct rt_tmap_rec *r = &b->tmaps[b->ntmaps++];
            r->param = i;
            r->src = p->params[i].at ? -1 : p->params[i].arg;
        }
    if (b->ntmaps && !(b->slots = calloc((size_t)b->ntmaps, sizeof *b->slots))) {
        free(b);
        return rt_error(h, AITUNE_NOMEM, "out of memory");
    }
    /* The workspace entry is read only when the plan has one. */
    unsigned long long ws = RT_FAKE_ADDR(0);
    struct rt_recorder R = { b, cu, 0 };
    rt_rec = &R;
    char err[512];
    int bad = plan_bind(p, shape, v, ws, rt_record_encode, &b->L, err, sizeof err);
    rt_rec = NULL;
    int rc = AITUNE_OK;
    if (bad)
        rc = rt_error(h, AITUNE_MISUSE, "aitune_bind %s: %s", p->kernel, err);
    else if (R.n != b->ntmaps)
        rc = rt_error(h, AITUNE_ERROR, "aitune_bind %s: %d of %d tensor maps encoded", p->kernel, R.n, b->ntmaps);
    for (int j = 0; rc == AITUNE_OK && j < b->ntmaps; j++) {
        struct rt_tmap_rec *r = &b->tmaps[j];
        unsigned long long base = r->src < 0 ? ws : v[r->src].ptr;
        r->off = r->addr - base;
        r->known = r->src >= 0 && args && args[r->src].ptr;
    }
    if (rc == AITUNE_OK)
        rc = rt_optin(h, cu, (struct aitune_kernel *)k, b->L.g.smem);
    if (rc != AITUNE_OK) {
        rt_bound_release(b);
        return rc;
    }
    pthread_mutex_lock(&h->mu);
    b->next = h->bounds;
    h->bounds = b;
    pthread_mutex_unlock(&h->mu);
    *out = b;
    return AITUNE_OK;
}

int aitune_bound_launch(aitune *h, const aitune_bound *b, const aitune_arg *args, void *stream)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!b || !args)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_launch: %s is NULL", !b ? "b" : "args");
    return b->launch(h, b, args, (CUstream)stream);
}

_Static_assert(PLAN_MAXARGS + 1 <= AITUNE_CACHED_MAXARGS, "aitune_cached holds every argument and the workspace");

int aitune_launch_cached(const aitune_cached *c)
{
    if (!c || !c->h)
        return AITUNE_MISUSE;
    return aitune_bound_launch(c->h, c->b, c->args, c->stream);
}

int aitune_bound_info_get(aitune *h, const aitune_bound *b, aitune_bound_info *out)
{
    if (!h)
        return AITUNE_MISUSE;
    if (!b || !out)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_info_get: %s is NULL", !b ? "b" : "out");
    memset(out, 0, sizeof *out);
    out->kind = b->kind;
    out->kernel = b->k;
    out->nargs = b->nargs;
    out->ws_bytes = b->L.g.ws_bytes;
    for (int i = 0; i < 3; i++) {
        out->grid[i] = b->L.g.grid[i];
        out->block[i] = b->L.g.block[i];
        out->cluster[i] = b->L.g.cluster[i];
    }
    out->smem = b->L.g.smem;
    out->ntmaps = b->ntmaps;
    return AITUNE_OK;
}

int aitune_bound_free(aitune *h, aitune_bound *b)
{
    if (!b)
        return AITUNE_OK;
    if (!h)
        return AITUNE_MISUSE;
    pthread_mutex_lock(&h->mu);
    struct aitune_bound **at = &h->bounds;
    while (*at && *at != b)
        at = &(*at)->next;
    int found = *at != NULL;
    if (found)
        *at = b->next;
    pthread_mutex_unlock(&h->mu);
    if (!found)
        return rt_error(h, AITUNE_MISUSE, "aitune_bound_free: not a bound launch of this handle");
    rt_bound_release(b);
    return AITUNE_OK;
}

/* The kernels, vendor handles and bound launches h holds. */
static void launch_free(aitune *h)
{
    for (struct aitune_bound *b = h->bounds, *next; b; b = next) {
        next = b->next;
        rt_bound_release(b);
    }
    const cu_api *cu = h->kernels ? cu_load(NULL) : NULL;
    for (struct aitune_kernel *k = h->kernels, *next; k; k = next) {
        next = k->next;
        /* The context may be gone already; then there is nothing to unload. */
        if (cu && k->mod)
            cu->ModuleUnload(k->mod);
        plan_free(k->p);
        free(k->plan_json);
        free(k);
    }
    for (struct rt_vendor *x = h->vendors, *next; x; x = next) {
        next = x->next;
        vendor_close(x->v);
        free(x);
    }
}

int aitune_close(aitune *h)
{
    if (h) {
        launch_free(h);
        pthread_mutex_destroy(&h->mu);
        rt_disconnect(h);
        for (int i = 0; i < RT_NCHAINS; i++)
            for (struct rt_set *s = h->chains[i], *next; s; s = next) {
                next = s->next;
                rt_free_set(s);
            }
        free(h->path);
        free(h->defaults);
        free(h->pool.s);
        free(h);
    }
    return AITUNE_OK;
}
