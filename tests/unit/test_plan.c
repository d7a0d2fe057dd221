/*
** test_plan: the launch plan (plan.h) and its JSON reader (json.h) without a
** GPU: codec round trip, hostile plans refused, 0.1 plans read, bind
** (geometry, every parameter kind, tensor maps through a recording encoder)
** and its errors.
*/
#define _GNU_SOURCE
#include "check.h"
#include "expr.h"
#include "json.h"
#include "plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

#define HEAD "{\"v\":2,\"kernel\":\"gemm_k\",\"dims\":[\"m\",\"n\",\"k\"],\"args\":[" \
    "{\"name\":\"A\",\"role\":\"in\",\"dtype\":\"bf16\",\"size\":\"m * k\"},{\"name\":\"B\",\"role\":\"in\",\"dtype\":\"bf16\"}," \
    "{\"name\":\"D\",\"role\":\"out\",\"dtype\":\"f32\"},{\"name\":\"alpha\",\"role\":\"scalar\"}," \
    "{\"name\":\"m\",\"role\":\"dim\"},{\"name\":\"n\",\"role\":\"dim\"},{\"name\":\"k\",\"role\":\"dim\"}]," \
    "\"grid\":[\"cdiv(n,128)\",\"cdiv(m,128)\",1],\"block\":[384,1,1],\"cluster\":[2,1,1],\"smem\":\"4*64*128*2+1024\","

#define GEMM HEAD "\"params\":[" \
    "{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,128],\"swizzle\":128,\"oob\":\"zero\",\"l2\":256}," \
    "{\"kind\":\"tmap\",\"arg\":\"B\",\"dims\":[\"k\",\"n\"],\"strides\":[\"k*2\"],\"box\":[64,128],\"swizzle\":128,\"oob\":\"nan\",\"l2\":128}," \
    "{\"kind\":\"ptr\",\"arg\":\"D\"},{\"kind\":\"f32\",\"arg\":\"alpha\"},{\"kind\":\"dim\",\"expr\":\"m\"}," \
    "{\"kind\":\"i32\",\"expr\":\"cdiv(k,64)\"},{\"kind\":\"workspace\",\"size\":\"cdiv(m,128)*cdiv(n,128)*4\"}]}"

/* The encoder records its last call. */
static struct {
    int calls;
    CUtensorMapDataType dt;
    cuuint32_t rank;
    void *addr;
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], es[5];
    CUtensorMapSwizzle sw;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
} rec;

static CUresult record(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                       const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                       CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)il;
    rec.calls++;
    rec.dt = dt;
    rec.rank = rank;
    rec.addr = addr;
    for (cuuint32_t i = 0; i < rank; i++) {
        rec.dims[i] = dims[i];
        rec.box[i] = box[i];
        rec.es[i] = es[i];
        if (i + 1 < rank) rec.strides[i] = strides[i];
    }
    rec.sw = sw, rec.l2 = l2, rec.oob = oob;
    memset(m, 0x5a, sizeof *m);
    return CUDA_SUCCESS;
}

static CUresult refuse(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                       const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                       CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)m, (void)dt, (void)rank, (void)addr, (void)dims, (void)strides, (void)box, (void)es, (void)il, (void)sw, (void)l2, (void)oob;
    return CUDA_ERROR_INVALID_VALUE;
}

static void test_json(void)
{
    json *v;
    char err[256];
    CHECK(!json_parse("{\"a\":[1,2.5,\"x\\n\\u00e9\"],\"b\":true,\"c\":null}", &v, err, sizeof err), "JSON parses (%s)", err);
    if (v) {
        const json *a = json_get(v, "a");
        CHECK(a && a->type == JSON_ARR && a->n == 3 && a->items[0].is_int && a->items[0].i == 1 && !a->items[1].is_int &&
              !strcmp(a->items[2].str, "x\n\xc3\xa9"), "values, escapes and UTF-8");
        json_free(v);
    }
    const char *bad[] = { "{\"a\":1,}", "[1,2", "{\"a\":1,\"a\":2}", "\"\\u0000\"", "01", "{\"a\":\"x\ny\"}", "[1] x",
                          "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "\"\\ud800\"", "nul", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        int rc = json_parse(bad[i], &v, err, sizeof err);
        CHECK(rc == -1 && v == NULL && has(err, "JSON:"), "JSON refuses case %zu: %s", i, err);
    }
}

static void test_expr_check(void)
{
    const char *names[] = { "m", "n" };
    char err[256];
    CHECK(!expr_check("cdiv(m, 128) * max(n, 1) - 3", 2, names, err, sizeof err), "a good expression checks");
    const char *bad[] = { "m; system(\"x\")", "q", "m +", "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((m))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
                          "99999999999999999999", "m/2", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(expr_check(bad[i], 2, names, err, sizeof err) == -1, "expr_check refuses '%.30s': %s", bad[i], err);
    long long vals[] = { 1LL << 40, 1LL << 40 }, out;
    CHECK(expr_eval("m * n", 2, names, vals, &out, err, sizeof err) == -1 && has(err, "overflow"), "overflow is an error: %s", err);
}

static void test_roundtrip(void)
{
    plan *p;
    char err[512] = "";
    int rc = plan_decode(GEMM, &p, err, sizeof err);
    CHECK(rc == 0, "a GEMM plan with tensor maps decodes (%s)", err);
    if (rc) return;
    CHECK(p->nparams == 7 && p->params[0].kind == PLAN_TMAP && p->params[0].tm.rank == 2 && p->params[0].tm.box[1] == 128 &&
          p->params[1].tm.oob_nan == 1 && p->params[1].tm.l2 == 128 && p->params[5].kind == PLAN_I32 &&
          p->params[6].kind == PLAN_WORKSPACE, "params decoded in order with their fields");
    CHECK(!strcmp(p->args[0].size, "m * k") && !p->args[1].size[0], "a buffer's size expression, optional");
    char *j = plan_encode(p, err, sizeof err);
    plan *q = NULL;
    CHECK(j && !plan_decode(j, &q, err, sizeof err), "the encoding decodes again (%s)", err);
    char *j2 = q ? plan_encode(q, err, sizeof err) : NULL;
    CHECK(j && j2 && !strcmp(j, j2), "encode(decode(encode(p))) == encode(p)");
    CHECK(j && !strchr(j, '\n'), "the encoding is one line (the worker protocol carries it as a value)");
    free(j);
    free(j2);
    plan_free(q);

    /* Geometry and bind at m=1000, n=512, k=200. */
    long long shape[] = { 1000, 512, 200 };
    plan_value v[7] = { { 0x10000, 0 }, { 0x20000, 0 }, { 0x30000, 0 }, { 0, 1.5f } };
    plan_launch L;
    rec.calls = 0;
    rc = plan_bind(p, shape, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == 0, "bind (%s)", err);
    if (!rc) {
        CHECK(L.g.grid[0] == 4 && L.g.grid[1] == 8 && L.g.block[0] == 384 && L.g.cluster[0] == 2 && L.g.smem == 4 * 64 * 128 * 2 + 1024,
              "geometry: grid %u,%u block %u cluster %u smem %u", L.g.grid[0], L.g.grid[1], L.g.block[0], L.g.cluster[0], L.g.smem);
        CHECK(L.g.ws_bytes == 8 * 4 * 4, "workspace bytes %llu", L.g.ws_bytes);
        CHECK(L.g.ws_zero == L.g.ws_bytes, "without \"zero\" the whole workspace is zeroed (%llu)", L.g.ws_zero);
        CHECK(L.nparams == 7 && L.params[2] && *(unsigned long long *)L.params[2] == 0x30000 && *(float *)L.params[3] == 1.5f &&
              *(long long *)L.params[4] == 1000 && *(int *)L.params[5] == 4 && *(unsigned long long *)L.params[6] == 0x40000,
              "ptr, f32, dim, i32 and workspace values");
        CHECK(((uintptr_t)L.params[0] % 64) == 0 && ((unsigned char *)L.params[0])[0] == 0x5a, "tensor maps are 64-byte aligned, by value");
        CHECK(rec.calls == 2 && rec.dt == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && rec.rank == 2 && rec.addr == (void *)0x20000 &&
              rec.dims[0] == 200 && rec.dims[1] == 512 && rec.strides[0] == 400 && rec.box[0] == 64 && rec.box[1] == 128 &&
              rec.es[0] == 1 && rec.es[1] == 1 && rec.sw == CU_TENSOR_MAP_SWIZZLE_128B && rec.l2 == CU_TENSOR_MAP_L2_PROMOTION_L2_128B &&
              rec.oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
              "the encoder got B's type, rank, address, sizes, byte strides, box, swizzle, L2 and OOB fill");
    }
    /* Bind errors. */
    long long odd[] = { 1000, 512, 201 };   /* k*2 = 402: not a multiple of 16 */
    rc = plan_bind(p, odd, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "strides[0]") && has(err, "multiple of 16"), "an odd stride fails bind: %s", err);
    rc = plan_bind(p, shape, v, 0, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "workspace"), "a missing workspace fails bind: %s", err);
    rc = plan_bind(p, shape, v, 0x40000, NULL, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "encoder"), "no encoder fails bind: %s", err);
    rc = plan_bind(p, shape, v, 0x40000, refuse, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "cuTensorMapEncodeTiled"), "the encoder's refusal is a bind error: %s", err);
    plan_value mis[7] = { { 0x10008, 0 }, { 0x20000, 0 }, { 0x30000, 0 }, { 0, 1 } };
    rc = plan_bind(p, shape, mis, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "aligned"), "a misaligned tensor fails bind: %s", err);
    long long zero[] = { 0, 512, 200 };
    rc = plan_bind(p, zero, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "m is 0"), "a zero size fails: %s", err);
    long long wide[] = { 1000, 300, 200 };   /* grid.x 3, cluster 2: not a multiple */
    rc = plan_bind(p, wide, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "multiple of cluster"), "a grid that is not a multiple of the cluster fails: %s", err);
    long long wider[] = { 1000, 129, 200 };  /* grid.x 2 */
    rc = plan_bind(p, wider, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == 0, "grid 2 with cluster 2 binds (%s)", rc ? err : "ok");
    long long tiny[] = { 1000, 100, 200 };   /* grid.x 1 < cluster 2 */
    rc = plan_bind(p, tiny, v, 0x40000, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "cluster"), "a grid smaller than its cluster fails: %s", err);
    plan_free(p);
}

/* A workspace whose kernel needs only its first bytes zero (stream-K's
** tickets): the plan says how many, geometry carries it, and it can never
** exceed the workspace. */
static void test_workspace_zero(void)
{
    plan *p;
    char err[512] = "";
    int rc = plan_decode(HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"D\"},"
                         "{\"kind\":\"workspace\",\"size\":\"m*n*4+4096\",\"zero\":\"cdiv(m,128)*4\"}]}", &p, err, sizeof err);
    CHECK(rc == 0, "a workspace with \"zero\" decodes (%s)", err);
    if (rc) return;
    char *j = plan_encode(p, err, sizeof err);
    CHECK(j && has(j, "\"zero\":\"cdiv(m,128)*4\""), "and encodes it again: %s", j ? j : err);
    free(j);
    long long shape[] = { 1000, 512, 200 };
    plan_geom g;
    CHECK(plan_geometry(p, shape, &g, err, sizeof err) == 0 && g.ws_bytes == 1000ULL * 512 * 4 + 4096 && g.ws_zero == 32,
          "geometry: %llu bytes, the first %llu zeroed (%s)", g.ws_bytes, g.ws_zero, err);
    plan_free(p);
    rc = plan_decode(HEAD "\"params\":[{\"kind\":\"workspace\",\"size\":\"64\",\"zero\":\"m\"}]}", &p, err, sizeof err);
    CHECK(rc == 0, "decodes (%s)", err);
    if (rc) return;
    CHECK(plan_geometry(p, shape, &g, err, sizeof err) == -1 && has(err, "zero"), "zero beyond the workspace is refused: %s", err);
    plan_free(p);
}

/* The launchers record what plan_launch_kernel asked for. */
static struct {
    int plain, ex;
    unsigned nattrs, grid0;
    int cluster_x, pdl;
} lrec;

static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned smem, CUstream s, void **params, void **extra)
{
    (void)f, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s, (void)params, (void)extra;
    lrec.plain++;
    lrec.grid0 = gx;
    return CUDA_SUCCESS;
}

static CUresult fake_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    (void)f, (void)params, (void)extra;
    lrec.ex++;
    lrec.nattrs = cfg->numAttrs;
    lrec.grid0 = cfg->gridDimX;
    lrec.cluster_x = 0, lrec.pdl = 0;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) lrec.cluster_x = (int)cfg->attrs[i].value.clusterDim.x;
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            lrec.pdl = (int)cfg->attrs[i].value.programmaticStreamSerializationAllowed;
    }
    return CUDA_SUCCESS;
}

/* "pdl": decoded, encoded again, refused when not a boolean, and launched
** with the programmatic-serialization attribute (beside a cluster's). */
static void test_pdl(void)
{
    plan *p;
    char err[512] = "";
    const char *tail = "\"params\":[{\"kind\":\"ptr\",\"arg\":\"D\"}]}";
    char text[2048];
    snprintf(text, sizeof text, "%s\"pdl\":true,%s", HEAD, tail);
    int rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == 0 && p->pdl == 1, "a plan with \"pdl\":true decodes (%s)", err);
    if (rc) return;
    char *j = plan_encode(p, err, sizeof err);
    CHECK(j && has(j, "\"pdl\":true"), "and encodes it again: %s", j ? j : err);
    free(j);
    long long shape[] = { 1000, 512, 200 };
    plan_value v[8] = { { 0x10000, 0 }, { 0x20000, 0 }, { 0x30000, 0 } };
    plan_launch L;
    rc = plan_bind(p, shape, v, 0, NULL, &L, err, sizeof err);
    CHECK(rc == 0 && L.g.pdl == 1, "bind carries pdl into the geometry (%s)", err);
    memset(&lrec, 0, sizeof lrec);
    if (!rc) plan_launch_kernel(fake_launch, fake_launch_ex, NULL, NULL, &L);
    CHECK(lrec.ex == 1 && lrec.plain == 0 && lrec.nattrs == 2 && lrec.pdl == 1 && lrec.cluster_x == 2 && lrec.grid0 == 4,
          "launched by cuLaunchKernelEx with the cluster and the PDL attributes (ex %d, plain %d, %u attrs, pdl %d, cluster %d)",
          lrec.ex, lrec.plain, lrec.nattrs, lrec.pdl, lrec.cluster_x);
    p->pdl = 0;
    rc = plan_bind(p, shape, v, 0, NULL, &L, err, sizeof err);
    memset(&lrec, 0, sizeof lrec);
    if (!rc) plan_launch_kernel(fake_launch, fake_launch_ex, NULL, NULL, &L);
    CHECK(lrec.ex == 1 && lrec.nattrs == 1 && lrec.pdl == 0 && lrec.cluster_x == 2, "without pdl, the cluster attribute alone");
    j = plan_encode(p, err, sizeof err);
    CHECK(j && !has(j, "pdl"), "a plan without pdl encodes no \"pdl\" (older readers take it): %s", j ? j : err);
    free(j);
    plan_free(p);
    /* No cluster, no pdl: the plain launcher. */
    snprintf(text, sizeof text, "%s", HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"D\"}]}");
    char *c = strstr(text, "\"cluster\":[2,1,1]");
    if (c) c[11] = '1';
    rc = plan_decode(text, &p, err, sizeof err);
    if (!rc) rc = plan_bind(p, shape, v, 0, NULL, &L, err, sizeof err);
    memset(&lrec, 0, sizeof lrec);
    if (!rc) plan_launch_kernel(fake_launch, fake_launch_ex, NULL, NULL, &L);
    CHECK(rc == 0 && lrec.plain == 1 && lrec.ex == 0, "no cluster and no pdl: cuLaunchKernel (%s)", err);
    if (!rc) plan_free(p);
    snprintf(text, sizeof text, "%s\"pdl\":1,%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == -1 && has(err, "\"pdl\" must be true or false"), "\"pdl\":1 is refused: %s", err);
}

/* "waves": decoded, encoded again, evaluated at a shape; absent, a plan
** has none; an expression naming anything but the dims, or evaluating
** below 1, is refused (a registry is untrusted). */
static void test_waves(void)
{
    plan *p;
    char err[512] = "";
    const char *tail = "\"params\":[{\"kind\":\"ptr\",\"arg\":\"D\"}]}";
    char text[2048];
    snprintf(text, sizeof text, "%s\"waves\":\"cdiv(cdiv(n, 128) * cdiv(m, 224), 66)\",%s", HEAD, tail);
    int rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == 0 && p->waves && !strcmp(p->waves, "cdiv(cdiv(n, 128) * cdiv(m, 224), 66)"), "a plan with \"waves\" decodes (%s)", err);
    if (rc) return;
    long long shape[] = { 1344, 4096, 4096 }, w = 0;
    rc = plan_waves(p, shape, &w, err, sizeof err);
    CHECK(rc == 1 && w == 3, "32 x 6 = 192 tiles on 66 pairs of SMs: 3 rounds (got %d, %lld)", rc, w);
    shape[0] = 1345;
    rc = plan_waves(p, shape, &w, err, sizeof err);
    CHECK(rc == 1 && w == 4, "one column of tiles more: 32 x 7 = 224 tiles, 4 rounds (got %d, %lld)", rc, w);
    char *j = plan_encode(p, err, sizeof err);
    CHECK(j && has(j, "\"waves\":\"cdiv(cdiv(n, 128) * cdiv(m, 224), 66)\""), "and encodes it again: %s", j ? j : err);
    free(j);
    plan_free(p);
    snprintf(text, sizeof text, "%s%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == 0 && !p->waves && plan_waves(p, shape, &w, err, sizeof err) == 0, "without \"waves\" a plan has none (%s)", err);
    if (!rc) {
        j = plan_encode(p, err, sizeof err);
        CHECK(j && !has(j, "waves"), "and encodes none: %s", j ? j : err);
        free(j);
        plan_free(p);
    }
    snprintf(text, sizeof text, "%s\"waves\":\"m; system(1)\",%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == -1 && has(err, "waves"), "a hostile \"waves\" is refused: %s", err);
    snprintf(text, sizeof text, "%s\"waves\":\"rows\",%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == -1 && has(err, "waves"), "\"waves\" naming no dim is refused: %s", err);
    snprintf(text, sizeof text, "%s\"waves\":[1],%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == -1 && has(err, "\"waves\" must be an expression"), "\"waves\" that is no expression is refused: %s", err);
    snprintf(text, sizeof text, "%s\"waves\":\"m - 2000\",%s", HEAD, tail);
    rc = plan_decode(text, &p, err, sizeof err);
    CHECK(rc == 0, "\"m - 2000\" decodes (%s)", err);
    if (!rc) {
        rc = plan_waves(p, shape, &w, err, sizeof err);
        CHECK(rc == -1 && has(err, "waves = -655"), "and evaluated below 1 it is an error: %s", err);
        plan_free(p);
    }
}

/* A tensor map over a copy the kernel stages in its workspace ("at"): the
** encoder gets the workspace's address plus the offset, the map's extent
** must fit the workspace, and a plan with such a map but no workspace is
** refused. */
static void test_tmap_at(void)
{
    plan *p;
    char err[512] = "";
    int rc = plan_decode(HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"A\"},"
                         "{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"256\",\"dims\":[\"k\",\"m\"],\"strides\":[\"cdiv(k,64)*128\"],"
                         "\"box\":[64,128],\"swizzle\":128},"
                         "{\"kind\":\"workspace\",\"size\":\"256+m*cdiv(k,64)*128\",\"zero\":\"256\"}]}", &p, err, sizeof err);
    CHECK(rc == 0, "a tmap with \"at\" decodes (%s)", err);
    if (rc) return;
    char *j = plan_encode(p, err, sizeof err);
    CHECK(j && has(j, "\"at\":\"256\""), "and encodes it again: %s", j ? j : err);
    free(j);
    long long shape[] = { 4001, 512, 4001 };
    plan_value v[7] = { { 0x10000, 0 } };
    plan_launch L;
    memset(&rec, 0, sizeof rec);
    rc = plan_bind(p, shape, v, 0x800000, record, &L, err, sizeof err);
    CHECK(rc == 0 && rec.calls == 1 && rec.addr == (void *)(uintptr_t)(0x800000 + 256) && rec.dims[0] == 4001 &&
          rec.strides[0] == 63 * 128, "bound over the workspace from byte 256 (addr %p, stride %llu): %s", rec.addr,
          (unsigned long long)rec.strides[0], err);
    CHECK(L.storage[0].u64 == 0x10000, "the buffer itself still goes to the ptr param");
    rc = plan_bind(p, shape, v, 0, record, &L, err, sizeof err);
    CHECK(rc == -1 && has(err, "workspace"), "no workspace address: refused (%s)", err);
    plan_free(p);
    /* Maps that bind outside the workspace: one row past its end, an
    ** offset at its end. */
    struct { const char *text, *want, *what; } out[] = {
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"256\",\"dims\":[\"k\",\"m+1\"],"
          "\"strides\":[\"cdiv(k,64)*128\"],\"box\":[64,128]},{\"kind\":\"workspace\",\"size\":\"256+m*cdiv(k,64)*128\"}]}",
          "reaches past the workspace", "a map past the workspace" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"m*k*2\",\"dims\":[\"k\"],\"box\":[64]},"
          "{\"kind\":\"workspace\",\"size\":\"m*k*2\"}]}",
          "outside the workspace", "an offset at the workspace's end" },
    };
    for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
        rc = plan_decode(out[i].text, &p, err, sizeof err);
        CHECK(rc == 0, "decodes (%s)", err);
        if (rc) continue;
        rc = plan_bind(p, shape, v, 0x800000, record, &L, err, sizeof err);
        CHECK(rc == -1 && has(err, out[i].want), "%s is refused: %s", out[i].what, err);
        plan_free(p);
    }
}

/* An outer box given as an expression (a box that follows the shape, as
** swapab's A: rows up to m rounded to 8, at most 192): it round-trips as a
** string, bind evaluates it per shape, and a value outside 1..256 at bind
** is refused there. */
static void test_tmap_box_expr(void)
{
    plan *p;
    char err[512] = "";
    int rc = plan_decode(HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],"
                         "\"box\":[64,\"min(192, cdiv(m, 8) * 8)\"],\"swizzle\":128}]}", &p, err, sizeof err);
    CHECK(rc == 0, "a tmap whose outer box is an expression decodes (%s)", err);
    if (rc) return;
    CHECK(p->params[0].tm.box_expr[1] && !p->params[0].tm.box_expr[0] && p->params[0].tm.box[0] == 64,
          "box[1] is held as an expression, box[0] as an integer");
    char *j = plan_encode(p, err, sizeof err);
    CHECK(j && has(j, "\"box\":[64,\"min(192, cdiv(m, 8) * 8)\"]"), "and encodes as one: %s", j ? j : err);
    free(j);
    long long sizes[][2] = { { 1, 8 }, { 100, 104 }, { 189, 192 }, { 190, 192 }, { 1000, 192 } };
    plan_value v[7] = { { 0x10000, 0 } };
    plan_launch L;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        long long shape[] = { sizes[i][0], 512, 4096 };
        memset(&rec, 0, sizeof rec);
        rc = plan_bind(p, shape, v, 0, record, &L, err, sizeof err);
        CHECK(rc == 0 && rec.calls == 1 && rec.box[0] == 64 && rec.box[1] == (cuuint32_t)sizes[i][1],
              "m = %lld: a box of %u rows (want %lld): %s", sizes[i][0], rec.box[1], sizes[i][1], err);
    }
    plan_free(p);
    /* Boxes out of range at bind: 257 rows, and 0. */
    struct { const char *box; long long m; const char *want; } bad[] = {
        { "m", 257, "box[1] = 257" },
        { "m - 8", 8, "box[1] = 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512];
        snprintf(text, sizeof text, HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],"
                 "\"strides\":[\"k*2\"],\"box\":[64,\"%s\"]}]}", bad[i].box);
        rc = plan_decode(text, &p, err, sizeof err);
        CHECK(rc == 0, "box [64, %s] decodes (%s)", bad[i].box, err);
        if (rc) continue;
        long long shape[] = { bad[i].m, 512, 4096 };
        rc = plan_bind(p, shape, v, 0, record, &L, err, sizeof err);
        CHECK(rc == -1 && has(err, bad[i].want), "box [64, %s] at m = %lld is refused at bind: %s", bad[i].box, bad[i].m, err);
        plan_free(p);
    }
}

static void test_hostile(void)
{
    struct { const char *text, *want; } cases[] = {
        { HEAD "\"params\":[{\"kind\":\"dim\",\"expr\":\"m); system(\\\"rm -rf /\\\"); (0\"}]}", "param 0 (dim)" },
        { "{\"v\":2,\"kernel\":\"k(){}; void evil\",\"dims\":[\"m\"],\"args\":[{\"name\":\"m\",\"role\":\"dim\"}],\"grid\":[1,1,1],\"block\":[1,1,1],\"params\":[]}", "kernel" },
        { HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"Z\"}]}", "names no argument" },
        { HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"alpha\"}]}", "role is scalar" },
        { HEAD "\"params\":[{\"kind\":\"f32\",\"arg\":\"A\"}]}", "role is in" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\"],\"box\":[512]}]}", "box[0]" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\"],\"box\":[\"k\"]}]}", "box[0] must be an integer" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,\"m); evil(\"]}]}", "box[1]" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,\"q\"]}]}", "box[1]" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[64,[8]]}]}", "box[1]" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\",\"m\"],\"strides\":[\"k*2\"],\"box\":[128,64],\"swizzle\":128}]}", "swizzle span" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\"],\"box\":[4]}]}", "multiple of 16" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\"],\"box\":[64],\"swizzle\":48}]}", "swizzle" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[\"k\"],\"box\":[64],\"oob\":\"inf\"}]}", "oob" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"dims\":[1,2,3,4,5,6],\"box\":[64]}]}", "1 to 5" },
        { HEAD "\"params\":[{\"kind\":\"workspace\",\"size\":\"1\"},{\"kind\":\"workspace\",\"size\":\"2\"}]}", "more than one workspace" },
        { HEAD "\"params\":[{\"kind\":\"launch_missiles\"}]}", "unknown kind" },
        { HEAD "\"params\":[{\"kind\":\"workspace\",\"size\":\"64\",\"zero\":\"m; evil()\"}]}", "zero" },
        { HEAD "\"params\":[{\"kind\":\"workspace\",\"size\":\"64\",\"zero\":[1]}]}", "zero" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"0\",\"dims\":[\"k\"],\"box\":[64]}]}", "has none" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":\"ws+1\",\"dims\":[\"k\"],\"box\":[64]},{\"kind\":\"workspace\",\"size\":\"64\"}]}", "at" },
        { HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"A\",\"at\":[7],\"dims\":[\"k\"],\"box\":[64]},{\"kind\":\"workspace\",\"size\":\"64\"}]}", "at" },
        { "{\"kernel\":\"k\",\"grid\":[\"1\",\"1\",\"1\"],\"block\":[\"1\",\"1\",\"1\"]}", "aitune 0.1" },
        { "{\"v\":3}", "version 3" },
        { "{}", "empty" },
        { "[]", "not a JSON object" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"m\",\"m\"],\"args\":[{\"name\":\"m\",\"role\":\"dim\"}],\"grid\":[1,1,1],\"block\":[1,1,1],\"params\":[]}", "twice" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"cdiv\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\"}],\"grid\":[1,1,1],\"block\":[1,1,1],\"params\":[]}", "function name" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"m\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f64\"}],\"grid\":[1,1,1],\"block\":[1,1,1],\"params\":[]}", "dtype" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"m\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\"}],\"grid\":[\"m\\n#include <x>\",1,1],\"block\":[1,1,1],\"params\":[]}", "grid.x" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"m\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\"}],\"grid\":[1,1],\"block\":[1,1,1],\"params\":[]}", "3 expressions" },
        { "{\"v\":2,\"kernel\":null}", "kernel" },
        { "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"m\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\",\"size\":\"m;x\"}],\"grid\":[1,1,1],\"block\":[1,1,1],\"params\":[]}", "size of 'x'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        plan *p = (plan *)1;
        char err[512] = "";
        int rc = plan_decode(cases[i].text, &p, err, sizeof err);
        CHECK(rc == -1 && p == NULL && has(err, cases[i].want) && !strchr(err, '\n'), "hostile plan %zu refused, one line: %s", i, err);
    }
}

static void test_v1(void)
{
    const char *dims[] = { "n" };
    plan_arg args[4] = { { "x", ROLE_IN, "f32", 4, "n" }, { "y", ROLE_INOUT, "f32", 4, "n" }, { "a", ROLE_SCALAR, "", 0, "" },
                         { "n", ROLE_DIM, "", 0, "" } };
    const char *v1 = "{\"grid\":[\"cdiv(n, 1024)\",\"1\",\"1\"],\"block\":[\"256\",\"1\",\"1\"],\"smem\":\"0\",\"cluster\":[0,0,0],"
                     "\"kernel\":\"aitune_axpy_0123abcd\",\"workspace\":64}";
    plan *p;
    char err[512] = "";
    int rc = plan_decode_v1(v1, 1, dims, 4, args, &p, err, sizeof err);
    CHECK(rc == 0, "a 0.1 launch row decodes with the op's signature (%s)", err);
    if (rc) return;
    CHECK(p->nparams == 5 && p->params[0].kind == PLAN_PTR && p->params[2].kind == PLAN_F32 && p->params[3].kind == PLAN_DIM &&
          p->params[4].kind == PLAN_WORKSPACE && !strcmp(p->params[4].expr, "64") && !strcmp(p->cluster[0], "1"),
          "default params plus the stored workspace; cluster 0,0,0 becomes 1,1,1");
    char *j = plan_encode(p, err, sizeof err);
    plan *q = NULL;
    CHECK(j && !plan_decode(j, &q, err, sizeof err) && has(j, "\"v\":2"), "and encodes as version 2");
    free(j);
    plan_free(q);
    plan_free(p);
    rc = plan_decode_v1("{\"grid\":[\"system()\",\"1\",\"1\"],\"block\":[\"1\",\"1\",\"1\"],\"kernel\":\"k\"}", 1, dims, 4, args, &p, err, sizeof err);
    CHECK(rc == -1 && has(err, "grid.x"), "a hostile 0.1 row is refused too: %s", err);
}

int main(void)
{
    test_json();
    test_expr_check();
    test_roundtrip();
    test_workspace_zero();
    test_tmap_at();
    test_tmap_box_expr();
    test_pdl();
    test_waves();
    test_hostile();
    test_v1();
    CHECK_DONE();
}
