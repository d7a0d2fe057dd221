/*
** test_tmpl: the Lua side (tmpl.c, search.c) against the real templates and
** against broken ones in tests/fixtures/broken/.
**
**     build/tests/test_tmpl [REPO_ROOT]
*/
#define _GNU_SOURCE
#include "check.h"
#include "device.h"
#include "search.h"
#include "tmpl.h"
#include "util.h"

#include <lua.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[1024], broken[1100];
static device dev;

static int has(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void test_ops(tmpl *T)
{
    char **ops = NULL;
    int n = 0;
    int rc = tmpl_ops(T, &ops, &n);
    CHECK(rc == 0, "tmpl_ops on the real templates");
    int axpy = 0, cast = 0, scale = 0, lib = 0, sorted = 1;
    for (int i = 0; i < n; i++) {
        axpy |= !strcmp(ops[i], "axpy");
        cast |= !strcmp(ops[i], "cast");
        scale |= !strcmp(ops[i], "scale_copy");
        lib |= !strcmp(ops[i], "lib");
        if (i && strcmp(ops[i - 1], ops[i]) >= 0) sorted = 0;
    }
    CHECK(axpy && cast && scale, "tmpl_ops lists axpy, cast and scale_copy (%d ops)", n);
    CHECK(!lib, "tmpl_ops does not list lib/");
    CHECK(sorted, "tmpl_ops is sorted");
    free_names(ops, n);

    char **tn = NULL;
    rc = tmpl_templates(T, "axpy", &tn, &n);
    CHECK(rc == 0 && n >= 1 && !strcmp(tn[0], "axpy/vec"), "tmpl_templates(axpy) gives axpy/vec (%d)", n);
    if (!rc) free_names(tn, n);

    int nd, ndt;
    char dims[4][16], dts[8][16];
    rc = tmpl_op_info(T, "cast", &nd, dims, &ndt, dts, 8);
    CHECK(rc == 0 && nd == 1 && !strcmp(dims[0], "n") && ndt == 4 && !strcmp(dts[0], "f32>bf16"),
          "tmpl_op_info(cast): dims [n], 4 dtypes starting f32>bf16");
}

static void test_tasks(tmpl *T)
{
    op_task t;
    long long n1000[] = { 1000 };
    int rc = tmpl_task(T, "axpy", "f32", n1000, &t);
    CHECK(rc == 0, "tmpl_task axpy f32 n=1000 (%s)", rc ? tmpl_errmsg(T) : "ok");
    if (!rc) {
        CHECK(t.nargs == 4, "axpy has 4 args (got %d)", t.nargs);
        CHECK(!strcmp(t.args[0].name, "x") && t.args[0].role == ROLE_IN && t.args[0].count == 1000 && t.args[0].esize == 4 &&
              !strcmp(t.args[0].dtype, "f32"), "arg x: in, f32, 1000 elements");
        CHECK(!strcmp(t.args[1].name, "y") && t.args[1].role == ROLE_INOUT && t.args[1].count == 1000, "arg y: inout, 1000 elements");
        CHECK(t.args[2].role == ROLE_SCALAR && t.args[2].value == 0.75, "arg a: scalar 0.75");
        CHECK(t.args[3].role == ROLE_DIM && t.args[3].value == 1000, "arg n: dim = 1000");
        CHECK(t.bytes == 12000, "axpy f32 n=1000 moves 12000 bytes (got %g)", t.bytes);
        CHECK(t.flops == 2000, "axpy f32 n=1000 does 2000 flops (got %g)", t.flops);
        CHECK(t.rtol > 0 && t.rtol < 1e-3, "axpy f32 has a tight tolerance (%g)", t.rtol);
        CHECK(t.ndims == 1 && !strcmp(t.dims[0], "n") && t.shape[0] == 1000, "task shape n=1000");
    }
    rc = tmpl_task(T, "axpy", "bf16", n1000, &t);
    CHECK(rc == 0 && t.args[0].esize == 2 && t.bytes == 6000 && t.args[2].esize == 0, "axpy bf16: 2-byte elements, 6000 bytes");
    rc = tmpl_task(T, "cast", "f32>bf16", n1000, &t);
    CHECK(rc == 0, "tmpl_task cast f32>bf16 (%s)", rc ? tmpl_errmsg(T) : "ok");
    if (!rc) {
        CHECK(!strcmp(t.args[0].dtype, "f32") && t.args[0].esize == 4 && t.args[0].role == ROLE_IN, "cast In = f32");
        CHECK(!strcmp(t.args[1].dtype, "bf16") && t.args[1].esize == 2 && t.args[1].role == ROLE_OUT, "cast Out = bf16");
        CHECK(t.bytes == 6000, "cast f32>bf16 n=1000 moves 6000 bytes (got %g)", t.bytes);
        CHECK(t.rtol == 0 && t.atol == 0, "cast is exact");
    }
    rc = tmpl_task(T, "nope", "f32", n1000, &t);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "unknown op 'nope'") && has(tmpl_errmsg(T), "axpy") && has(tmpl_errmsg(T), "cast"),
          "unknown op: error lists the known ops: '%s'", tmpl_errmsg(T));
    rc = tmpl_task(T, "../axpy", "f32", n1000, &t);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "unknown op"), "an op name with a path is an unknown op: '%s'", tmpl_errmsg(T));
    rc = tmpl_task(T, "axpy", "f64", n1000, &t);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "f64") && has(tmpl_errmsg(T), "f32, f16, bf16"),
          "bad dtype: error lists the op's dtypes: '%s'", tmpl_errmsg(T));
    long long zero[] = { 0 };
    rc = tmpl_task(T, "axpy", "f32", zero, &t);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "n=0") && has(tmpl_errmsg(T), ">= 1"), "shape 0: error '%s'", tmpl_errmsg(T));
    /* The Lua stack is balanced after failures and successes alike. */
    int top = lua_gettop(tmpl_lua(T));
    for (int i = 0; i < 50; i++) {
        tmpl_task(T, "axpy", "f32", n1000, &t);
        tmpl_task(T, "axpy", "f64", n1000, &t);
        tmpl_task(T, "nope", "f32", n1000, &t);
    }
    CHECK(lua_gettop(tmpl_lua(T)) == top, "the Lua stack is balanced after 150 tmpl_task calls (%d -> %d)", top,
          lua_gettop(tmpl_lua(T)));
}

static void test_configs(tmpl *T)
{
    op_task t;
    long long n1000[] = { 1000 };
    if (tmpl_task(T, "axpy", "f32", n1000, &t)) { CHECK(0, "setup: axpy task"); return; }
    char *d = NULL;
    int rc = tmpl_default(T, "axpy/vec", &t, &dev, &d);
    CHECK(rc == 0 && d, "tmpl_default axpy/vec");
    if (rc) return;
    CHECK_STR(d, "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", "the default is canonical JSON (sorted keys)");
    int ok = -1;
    char why[256] = "";
    rc = tmpl_valid(T, "axpy/vec", d, &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 1, "the default is valid (%s)", why);
    free(d);

    rc = tmpl_valid(T, "axpy/vec", "{\"block\":100,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 0 && has(why, "block=100"), "block=100 is not one of the values: '%s'", why);
    rc = tmpl_valid(T, "axpy/vec", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1,\"tile\":4}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 0 && has(why, "not know"), "an unknown key is rejected: '%s'", why);
    rc = tmpl_valid(T, "axpy/vec", "{\"block\":256,\"ilp\":1,\"vec\":1}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 0 && has(why, "grid_stride") && has(why, "missing"), "a missing key is rejected: '%s'", why);
    rc = tmpl_valid(T, "axpy/vec", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":16}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 0 && has(why, "vector"), "a config the constraints reject says why: '%s'", why);
    rc = tmpl_valid(T, "axpy/vec", "{\"block\":\"256\",\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == 0 && ok == 0, "a string \"256\" is not the number 256");
    rc = tmpl_valid(T, "axpy/vec", "not json", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "not a JSON object"), "malformed config JSON is an error: '%s'", tmpl_errmsg(T));
    rc = tmpl_valid(T, "axpy/nope", "{}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "unknown template 'axpy/nope'"), "unknown template: '%s'", tmpl_errmsg(T));
    rc = tmpl_valid(T, "axpyvec", "{}", &t, &dev, &ok, why, sizeof why);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "op/impl"), "a template name without a slash: '%s'", tmpl_errmsg(T));

    /* Config JSON round trip through Lua. */
    const char *cfg = "{\"block\":128,\"grid_stride\":1,\"ilp\":2,\"vec\":4}";
    if (!tmpl_push_config(T, "{ \"vec\" : 4, \"ilp\":2, \"grid_stride\":1,\"block\":128 }")) {
        strbuf sb = STRBUF_INIT;
        rc = tmpl_config_json(T, -1, &sb);
        lua_pop(tmpl_lua(T), 1);
        CHECK(rc == 0 && !strcmp(sb_str(&sb), cfg), "config JSON round trip sorts keys: '%s'", sb_str(&sb));
        sb_free(&sb);
    } else {
        CHECK(0, "tmpl_push_config of spaced JSON: %s", tmpl_errmsg(T));
    }
}

static void test_instantiate(tmpl *T)
{
    op_task t;
    long long n[] = { 100000 };
    if (tmpl_task(T, "axpy", "f32", n, &t)) { CHECK(0, "setup: axpy task"); return; }
    struct { int block, ilp, vec, gs; long long n; unsigned grid; } cases[] = {
        { 256, 1, 1, 0, 1000, 4 },          /* ceil(1000 / 256) */
        { 128, 2, 4, 0, 100000, 98 },       /* ceil(100000 / 1024) */
        { 64, 1, 1, 0, 64, 1 },
        { 1024, 8, 4, 0, 1LL << 24, 512 },
        { 256, 1, 1, 1, 1LL << 24, 1056 },  /* min(cdiv, 132 SMs * 8 blocks) */
        { 256, 1, 1, 1, 1000, 4 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "{\"block\":%d,\"grid_stride\":%d,\"ilp\":%d,\"vec\":%d}", cases[i].block, cases[i].gs,
                 cases[i].ilp, cases[i].vec);
        t.shape[0] = cases[i].n;
        kernel_src k;
        int rc = tmpl_instantiate(T, "axpy/vec", cfg, &t, &dev, "aitune_test_kernel", &k);
        CHECK(rc == 0, "instantiate %s (%s)", cfg, rc ? tmpl_errmsg(T) : "ok");
        if (rc) continue;
        CHECK(has(k.source, "aitune_test_kernel") && has(k.source, "extern \"C\""), "source defines extern \"C\" aitune_test_kernel");
        CHECK(!strcmp(k.name, "aitune_test_kernel"), "kernel_src name");
        plan_geom g;
        char err[256] = "";
        rc = kernel_geometry(&k, &t, &g, err, sizeof err);
        CHECK(rc == 0 && g.grid[0] == cases[i].grid && g.grid[1] == 1 && g.grid[2] == 1 && g.block[0] == (unsigned)cases[i].block &&
              g.block[1] == 1 && g.smem == 0,
              "geometry of %s at n=%lld: grid %u (want %u), block %u ('%s')", cfg, cases[i].n, g.grid[0], cases[i].grid, g.block[0],
              k.plan ? k.plan->grid[0] : "?");
        kernel_src_free(&k);
    }
    /* The source does not depend on the shape (one compile serves every bucket). */
    kernel_src a, b;
    t.shape[0] = 1000;
    int ra = tmpl_instantiate(T, "axpy/vec", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, "k", &a);
    t.shape[0] = 1 << 20;
    int rb = tmpl_instantiate(T, "axpy/vec", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, "k", &b);
    CHECK(!ra && !rb && !strcmp(a.source, b.source), "the same config gives the same source at another shape");
    if (!ra) kernel_src_free(&a);
    if (!rb) kernel_src_free(&b);
    /* Reference and support kernels. */
    kernel_src r;
    if (!tmpl_reference(T, &t, "aitune_reference", &r)) {
        plan_geom g;
        char err[256];
        CHECK(has(r.source, "aitune_reference") && !kernel_geometry(&r, &t, &g, err, sizeof err) &&
              g.grid[0] * g.block[0] >= (unsigned)t.shape[0], "the reference covers n with its launch");
        kernel_src_free(&r);
    } else {
        CHECK(0, "tmpl_reference: %s", tmpl_errmsg(T));
    }
    char *sup = NULL;
    CHECK(!tmpl_support(T, &sup) && sup && has(sup, "fill_f32"), "tmpl_support gives the engine's kernels (fill_f32)");
    free(sup);
}

/* The wgmma family's overlapped staging ("a_overlap", "ab_overlap"): where
** the constraints take it, and what it puts in the kernel and its plan. */
#define OV_CFG \
    "{\"bm\":128,\"bn\":256,\"cluster\":\"1x1\",\"consumers\":2,\"epilogue\":\"%s\",\"group\":8,\"inflight\":0," \
    "\"persistent\":1,\"producer_regs\":%d,\"raster\":\"%s\",\"schedule\":\"coop\",\"stage\":\"%s\",\"stages\":4," \
    "\"streamk\":0}"

static int ov_valid(tmpl *T, const char *op, long long m, long long n, long long k, const char *raster,
                    const char *stage, int regs, char *why, int whycap)
{
    op_task t;
    long long shape[] = { m, n, k };
    if (tmpl_task(T, op, "bf16", shape, &t)) return -1;
    char cfg[512];
    /* Aligned rows of D take the TMA store, odd ones "rows". */
    snprintf(cfg, sizeof cfg, OV_CFG, n % 8 == 0 ? "tma" : "rows", regs, raster, stage);
    int ok = -1;
    char tname[64];
    snprintf(tname, sizeof tname, "%s/wgmma", op);
    return tmpl_valid(T, tname, cfg, &t, &dev, &ok, why, whycap) ? -1 : ok;
}

static void test_wgmma_overlap(tmpl *T)
{
    char why[256] = "";
    /* 4001^3: 32 x 16 tiles, the first wave of 132 reads tile rows 0..11. */
    CHECK(ov_valid(T, "gemm_nn", 4001, 4001, 4001, "m", "ab_overlap", 40, why, sizeof why) == 1,
          "nn 4001^3 takes ab_overlap (%s)", why);
    CHECK(ov_valid(T, "gemm_nt", 4001, 4001, 4001, "m", "ab_overlap", 40, why, sizeof why) == 1,
          "nt 4001^3 takes ab_overlap (%s)", why);
    CHECK(ov_valid(T, "gemm_nn", 4001, 4000, 4001, "m", "a_overlap", 40, why, sizeof why) == 1,
          "nn 4001 x 4000 x 4001 takes a_overlap (%s)", why);
    CHECK(ov_valid(T, "gemm_nn", 4001, 4000, 4001, "m", "ab_overlap", 40, why, sizeof why) == 0 && has(why, "stage a"),
          "an aligned n does not stage B, overlapped or not: '%s'", why);
    CHECK(ov_valid(T, "gemm_nn", 4096, 4096, 4096, "m", "a_overlap", 40, why, sizeof why) == 0 && has(why, "in place"),
          "aligned rows are never staged: '%s'", why);
    CHECK(ov_valid(T, "gemm_nn", 4001, 4001, 4001, "n", "ab_overlap", 40, why, sizeof why) == 0 && has(why, "raster n"),
          "raster n's first wave reads all of A: '%s'", why);
    CHECK(ov_valid(T, "gemm_nn", 4001, 4001, 4001, "m", "ab_overlap", 24, why, sizeof why) == 0 && has(why, "registers"),
          "overlap sets the producer's registers itself: '%s'", why);
    /* 1536 rows: 12 tile rows x 16 = 192 tiles, but the first 132 reach tile
    ** row 11 (group 8: rows 0..7, then 8..11 of the next group): all of A. */
    CHECK(ov_valid(T, "gemm_nn", 1536, 4001, 4001, "m", "ab_overlap", 40, why, sizeof why) == 0 && has(why, "first wave"),
          "a first wave that reads every row of A leaves nothing to overlap: '%s'", why);
    CHECK(ov_valid(T, "gemm_nn", 1537, 4001, 4001, "m", "ab_overlap", 40, why, sizeof why) == 1,
          "one tile row more than the first wave reads is overlapped (%s)", why);
    CHECK(ov_valid(T, "gemm_nn", 4001, 4001, 15, "m", "ab_overlap", 40, why, sizeof why) == 0 && has(why, "k < 16"),
          "k < 16: the kernel stages all of A up front, so nothing overlaps: '%s'", why);

    op_task t;
    long long shape[] = { 4001, 4001, 4001 };
    if (tmpl_task(T, "gemm_nn", "bf16", shape, &t)) { CHECK(0, "setup: gemm_nn task"); return; }
    char cfg[512];
    kernel_src k, up;
    snprintf(cfg, sizeof cfg, OV_CFG, "rows", 40, "m", "ab_overlap");
    int rc = tmpl_instantiate(T, "gemm_nn/wgmma", cfg, &t, &dev, "k_ov", &k);
    CHECK(rc == 0, "instantiate the overlapped config (%s)", rc ? tmpl_errmsg(T) : "ok");
    snprintf(cfg, sizeof cfg, OV_CFG, "rows", 40, "m", "ab");
    int rc2 = tmpl_instantiate(T, "gemm_nn/wgmma", cfg, &t, &dev, "k_up", &up);
    CHECK(rc2 == 0, "instantiate the up-front config (%s)", rc2 ? tmpl_errmsg(T) : "ok");
    if (rc || rc2) return;
    CHECK(has(k.source, "#define OVERLAP 1") && has(up.source, "#define OVERLAP 0"), "OVERLAP follows the stage value");
    CHECK(has(k.source, "setmaxnreg.dec.sync.aligned.u32 56;") && has(k.source, "setmaxnreg.inc.sync.aligned.u32 224;"),
          "the overlapped kernel gives its producer 56 registers and its consumers 224");
    CHECK(has(up.source, "setmaxnreg.dec.sync.aligned.u32 40;") && has(up.source, "setmaxnreg.inc.sync.aligned.u32 232;"),
          "the up-front kernel keeps producer_regs 40 and 232");
    plan_geom g, gu;
    char err[256] = "";
    rc = kernel_geometry(&k, &t, &g, err, sizeof err);
    rc2 = kernel_geometry(&up, &t, &gu, err, sizeof err);
    CHECK(rc == 0 && rc2 == 0, "geometry of both (%s)", err);
    if (!rc && !rc2) {
        /* ctl (128 bytes) and 256 band counters are zeroed before a launch;
        ** both copies of A and B follow, padded to 4032 elements. */
        CHECK(gu.ws_zero == 128 && g.ws_zero == 128 + 256 * 4, "zeroed: %llu up front, %llu overlapped", gu.ws_zero, g.ws_zero);
        unsigned long long copies = 2ull * 4001 * 4032 * 2;
        CHECK(gu.ws_bytes == 128 + copies && g.ws_bytes == 128 + 1024 + copies, "workspace: %llu up front, %llu overlapped",
              gu.ws_bytes, g.ws_bytes);
    }
    kernel_src_free(&k);
    kernel_src_free(&up);
}

/* Collect every config the strategy gives, asking k at a time. */
static int drain(search *s, int k, char ***all)
{
    int total = 0;
    *all = NULL;
    for (int round = 0; round < 10000; round++) {
        char **cfgs;
        int got;
        if (search_ask(s, k, &cfgs, &got)) return -1;
        if (got > k) { free_names(cfgs, got); return -2; }
        for (int i = 0; i < got; i++) {
            *all = realloc(*all, sizeof **all * (size_t)(total + 1));
            (*all)[total++] = cfgs[i];
        }
        free(cfgs);
        if (!got) break;
    }
    return total;
}

static int dups(char **v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!strcmp(v[i], v[j])) return 1;
    return 0;
}

/* swapab's A map: in the decode kernel its box holds the rows up to m
** rounded to 8 (at most bn), in the first mid-size kernel those of one of
** its tiles of rows (m split evenly over cdiv(m, bn) of them, rounded to
** 8); an expression bind evaluates, and the kernel's slots expect those
** bytes. The second mid-size kernel keeps its boxes of 64 and 8 rows. */
static cuuint32_t sw_rows;
static CUresult sw_record(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                          const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                          CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)m, (void)dt, (void)addr, (void)dims, (void)strides, (void)es, (void)il, (void)sw, (void)l2, (void)oob;
    if (rank == 2 && dims[1] < 4096) sw_rows = box[1];   /* A's map: m rows (B's has n = 4096) */
    return CUDA_SUCCESS;
}

static void test_swapab_box(tmpl *T)
{
    struct { long long m; int bn, mc; const char *expr; unsigned rows; } cases[] = {
        { 40, 64, 0, "min(64, cdiv(m, 8) * 8)", 40 },
        { 33, 64, 0, "min(64, cdiv(m, 8) * 8)", 40 },
        { 100, 192, 0, "min(192, cdiv(cdiv(m, cdiv(m, 192)), 8) * 8)", 104 },
        { 190, 192, 0, "min(192, cdiv(cdiv(m, cdiv(m, 192)), 8) * 8)", 192 },
        { 255, 128, 0, "min(128, cdiv(cdiv(m, cdiv(m, 128)), 8) * 8)", 128 },   /* two tiles of rows */
        { 129, 96, 0, "min(96, cdiv(cdiv(m, cdiv(m, 96)), 8) * 8)", 72 },        /* 65 rows each, to 72 */
        { 100, 128, 1, NULL, 8 },    /* its maps of 64 and 8 rows: the last recorded */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        op_task t;
        long long shape[] = { cases[i].m, 4096, 4096 };
        if (tmpl_task(T, "gemm_nt", "bf16", shape, &t)) { CHECK(0, "setup: gemm_nt task"); return; }
        char cfg[256];
        snprintf(cfg, sizeof cfg, "{\"bm\":64,\"bn\":%d,\"csplit\":2,\"evict\":0,\"inflight\":1,\"kbox\":1,\"l2pre\":0,\"mc\":%d,"
                 "\"nvar\":1,\"pdl\":1,\"stages\":4,\"wstep\":0}", cases[i].bn, cases[i].mc);
        kernel_src k;
        int rc = tmpl_instantiate(T, "gemm_nt/swapab", cfg, &t, &dev, "k", &k);
        CHECK(rc == 0, "instantiate swapab %s at m = %lld (%s)", cfg, cases[i].m, rc ? tmpl_errmsg(T) : "ok");
        if (rc) continue;
        const plan_tmap *a = &k.plan->params[1].tm;
        if (cases[i].expr) {
            CHECK(a->box_expr[1] && !strcmp(a->box_expr[1], cases[i].expr), "bn %d: A's box is '%s' (%s)", cases[i].bn,
                  cases[i].expr, a->box_expr[1] ? a->box_expr[1] : "an integer");
            CHECK(has(k.source, "mbar_expect(bar, slot_bytes)") &&
                  (has(k.source, "128u * (unsigned)min((long long)BN, (m + 7) / 8 * 8)") ||
                   (has(k.source, "128u * (unsigned)zr") && has(k.source, "zt = (m + BN - 1) / BN") &&
                    has(k.source, "((m + zt - 1) / zt + 7) / 8 * 8"))),
                  "bn %d: its slots expect the box's bytes", cases[i].bn);
        } else {
            CHECK(!a->box_expr[1] && a->box[1] == 64, "the second mid-size kernel keeps A's box of 64 rows");
        }
        long long dims[] = { cases[i].m, 4096, 4096 };
        plan_value v[6] = { { 0x10000, 0 }, { 0x20000, 0 }, { 0x30000, 0 } };
        plan_launch L;
        char err[256] = "";
        sw_rows = 0;
        rc = plan_bind(k.plan, dims, v, 0, sw_record, &L, err, sizeof err);
        CHECK(rc == 0 && sw_rows == cases[i].rows, "m = %lld, bn %d: A's box binds to %u rows (want %u) %s", cases[i].m,
              cases[i].bn, sw_rows, cases[i].rows, err);
        kernel_src_free(&k);
    }
}

/* swapab's carry: a neighbour's winner keeps its tiles of A's rows at the
** new m, each the narrowest width of its kernel that holds them, and (at
** another bn) the most of its nvar widths that bn takes: equal steps of a
** multiple of 8, wstep's none narrower than bn/2; and the most of its slots
** that fit shared memory there. */
static void test_swapab_carry(tmpl *T)
{
    struct { long long from, to; int bn, nvar, wstep, want, want_nvar, want_wstep, want_stages; } cases[] = {
        { 192, 215, 192, 3, 0, 224, 3, 0, 5 },    /* one tile at 192: one of 224 rows at 215 */
        { 192, 255, 192, 3, 0, 256, 3, 0, 4 },    /* 5 slots of 256 rows do not fit shared memory: 4 */
        { 255, 193, 128, 3, 0, 128, 3, 0, 5 },    /* two tiles of 128 at 255 hold 193 as two: unchanged */
        { 255, 129, 256, 3, 0, 160, 3, 0, 5 },    /* one tile of 256: 160 holds 129 */
        { 16, 13, 16, 3, 0, 16, 3, 0, 5 },        /* the decode kernel: unchanged */
        { 16, 31, 16, 3, 0, 32, 3, 0, 5 },        /* ... its nvar left to its constraints */
        { 64, 100, 64, 3, 0, 64, 3, 0, 5 },       /* no decode width holds 100: as it is */
        { 97, 300, 128, 3, 0, 128, 3, 0, 5 },     /* no width holds 300 in one tile: as it is */
        { 256, 215, 256, 5, 0, 224, 3, 0, 5 },    /* 224 in 5 equal widths steps 28 rows: 3 (56) */
        { 256, 250, 256, 5, 0, 256, 5, 0, 5 },    /* unchanged */
        { 128, 90, 128, 5, 16, 96, 3, 16, 5 },    /* 96 - 4 x 16 = 32 < 48: 3 widths, down to 64 */
        { 160, 100, 160, 2, 0, 128, 2, 0, 5 },    /* 128 in 2 widths (128, 64) */
        { 128, 70, 128, 2, 16, 96, 2, 16, 5 },    /* 96 - 16 = 80 >= 48 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        op_task from, to;
        long long fs[] = { cases[i].from, 14336, 4096 }, ts[] = { cases[i].to, 14336, 4096 };
        if (tmpl_task(T, "gemm_nt", "bf16", fs, &from) || tmpl_task(T, "gemm_nt", "bf16", ts, &to)) {
            CHECK(0, "setup: gemm_nt tasks");
            return;
        }
        char cfg[256], want[256], *out = NULL;
        const char *fmt = "{\"bm\":128,\"bn\":%d,\"csplit\":1,\"evict\":0,\"inflight\":0,\"kbox\":1,\"l2pre\":1,\"mc\":0,"
                          "\"nvar\":%d,\"pdl\":1,\"stages\":%d,\"wstep\":%d}";
        snprintf(cfg, sizeof cfg, fmt, cases[i].bn, cases[i].nvar, 5, cases[i].wstep);
        snprintf(want, sizeof want, fmt, cases[i].want, cases[i].want_nvar, cases[i].want_stages, cases[i].want_wstep);
        int rc = tmpl_carry(T, "gemm_nt/swapab", cfg, &from, &to, &dev, &out);
        CHECK(rc == 0 && out && !strcmp(out, want), "swapab bn %d nvar %d wstep %d found at m = %lld, carried to %lld: %s (%s)",
              cases[i].bn, cases[i].nvar, cases[i].wstep, cases[i].from, cases[i].to, want, rc ? tmpl_errmsg(T) : out);
        free(out);
    }
    /* The swapped wgmma kernel's fixed widths keep their tiles along m;
    ** widths chosen at run time are left as they are. */
    struct { long long from, to; int bn, wstep, want; } sw[] = {
        { 2047, 1415, 176, 0, 128 },   /* 12 tiles: 118 rows each, to 128 */
        { 561, 640, 144, 0, 160 },     /* 4 tiles */
        { 640, 561, 160, 0, 144 },
        { 561, 640, 144, 8, 144 },     /* a run-time width: as it is */
        { 300, 4000, 256, 0, 256 },    /* no width holds 4000 in 2 tiles: as it is */
    };
    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++) {
        op_task from, to;
        long long fs[] = { sw[i].from, 4096, 4096 }, ts[] = { sw[i].to, 4096, 4096 };
        if (tmpl_task(T, "gemm_nt", "bf16", fs, &from) || tmpl_task(T, "gemm_nt", "bf16", ts, &to)) {
            CHECK(0, "setup: gemm_nt tasks");
            return;
        }
        char cfg[320], want[320], *out = NULL;
        const char *fmt = "{\"bm\":128,\"bn\":%d,\"cluster\":\"1x1\",\"consumers\":2,\"epilogue\":\"direct\",\"group\":8,"
                          "\"inflight\":1,\"persistent\":1,\"producer_regs\":40,\"raster\":\"n\",\"schedule\":\"coop\","
                          "\"stage\":\"none\",\"stages\":5,\"streamk\":0,\"wstep\":%d}";
        snprintf(cfg, sizeof cfg, fmt, sw[i].bn, sw[i].wstep);
        snprintf(want, sizeof want, fmt, sw[i].want, sw[i].wstep);
        int rc = tmpl_carry(T, "gemm_nt/wgmma_swap", cfg, &from, &to, &dev, &out);
        CHECK(rc == 0 && out && !strcmp(out, want), "wgmma_swap bn %d wstep %d found at m = %lld, carried to %lld: bn %d (%s)",
              sw[i].bn, sw[i].wstep, sw[i].from, sw[i].to, sw[i].want, rc ? tmpl_errmsg(T) : out);
        free(out);
    }

    /* A template without carry, and a config outside the space: as they are. */
    op_task t;
    long long sh[] = { 200, 14336, 4096 };
    char *out = NULL;
    if (tmpl_task(T, "gemm_nt", "bf16", sh, &t)) { CHECK(0, "setup: gemm_nt task"); return; }
    const char *mma = "{\"aligned\":1,\"bk\":64,\"bm\":64,\"bn\":128,\"group\":8,\"stages\":4,\"wm\":1,\"wn\":4}";
    CHECK(!tmpl_carry(T, "gemm_nt/mma", mma, &t, &t, &dev, &out) && out && !strcmp(out, mma), "a family without carry: the config as it is");
    free(out);
    out = NULL;
    CHECK(!tmpl_carry(T, "gemm_nt/swapab", "{\"bn\":7}", &t, &t, &dev, &out) && out && !strcmp(out, "{\"bn\":7}"),
          "a config outside the space is left to the space's nearest: as it is");
    free(out);
}

/* swapab's span over a part m = lo..hi of 14336 x 4096: one tile of rows
** holding hi, its widths chosen at run time down to lo (m rounded up to 8)
** in steps of 8, else 16, else nvar's most in equal steps; nil (the config
** as it is) where it spans them already, is the decode kernel, or no width
** holds hi. A span keeps the most of its config's slots that fit shared
** memory at its bn. */
static void test_swapab_span(tmpl *T)
{
    struct {
        long long lo, hi;
        int bn, nvar, wstep, want_bn, want_nvar, want_wstep, stages, want_stages;
        const char *what;
    } cases[] = {
        { 193, 224, 224, 1, 0, 224, 5, 8, 4, 4, "four widths of 8 reach 200: nvar 5 (224 .. 192)" },
        { 216, 224, 224, 1, 0, 224, 2, 8, 4, 4, "224 and 216" },
        { 128, 192, 192, 1, 0, 192, 5, 16, 4, 4, "192 .. 128 in steps of 16" },
        { 128, 191, 160, 1, 0, 192, 5, 16, 4, 4, "bn 160 (found at 129) widened to 192, the narrowest that holds 191" },
        { 129, 255, 256, 1, 0, 256, 5, 0, 4, 4, "nine steps of 16: nvar 5's equal steps (256 .. 128)" },
        { 225, 255, 224, 1, 0, 256, 5, 8, 4, 4, "widened to 256, down to 232" },
        { 224, 224, 224, 1, 0, 224, 1, 0, 4, 4, "one size: as it is" },
        { 193, 224, 224, 5, 8, 224, 5, 8, 4, 4, "spanning already: as it is" },
        { 9, 16, 16, 1, 0, 16, 1, 0, 4, 4, "the decode kernel: as it is" },
        { 216, 255, 224, 3, 8, 256, 5, 16, 5, 4, "widened to 256: its 5 slots do not fit shared memory there, 4 do" },
        { 193, 224, 224, 1, 0, 224, 5, 8, 5, 5, "5 slots of 224 rows fit: kept" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        op_task lo, hi;
        long long ls[] = { cases[i].lo, 14336, 4096 }, hs[] = { cases[i].hi, 14336, 4096 };
        if (tmpl_task(T, "gemm_nt", "bf16", ls, &lo) || tmpl_task(T, "gemm_nt", "bf16", hs, &hi)) {
            CHECK(0, "setup: gemm_nt tasks");
            return;
        }
        const char *fmt = "{\"bm\":128,\"bn\":%d,\"csplit\":1,\"evict\":0,\"inflight\":1,\"kbox\":1,\"l2pre\":0,\"mc\":0,"
                          "\"nvar\":%d,\"pdl\":1,\"stages\":%d,\"wstep\":%d}";
        char cfg[256], want[256], *out = NULL;
        snprintf(cfg, sizeof cfg, fmt, cases[i].bn, cases[i].nvar, cases[i].stages, cases[i].wstep);
        snprintf(want, sizeof want, fmt, cases[i].want_bn, cases[i].want_nvar, cases[i].want_stages, cases[i].want_wstep);
        int rc = tmpl_span(T, "gemm_nt/swapab", cfg, &lo, &hi, &dev, &out);
        CHECK(rc == 0 && out && !strcmp(out, want), "swapab span of bn %d over m = %lld..%lld: %s (%s)", cases[i].bn,
              cases[i].lo, cases[i].hi, cases[i].what, rc ? tmpl_errmsg(T) : out);
        int ok = 0;
        char why[256] = "";
        if (!rc && strcmp(out, cfg))
            CHECK(!tmpl_valid(T, "gemm_nt/swapab", out, &hi, &dev, &ok, why, sizeof why) && ok,
                  "the span of case %zu is a valid config at m = %lld (%s)", i, cases[i].hi, why);
        free(out);
    }
}

static void test_search(tmpl *T)
{
    op_task t;
    long long n[] = { 1 << 20 };
    if (tmpl_task(T, "axpy", "f32", n, &t)) { CHECK(0, "setup: axpy task"); return; }
    search *s = search_new(T, "exhaustive", "axpy/vec", &t, &dev, 1, 0);
    CHECK(s != NULL, "search_new exhaustive (%s)", s ? "ok" : tmpl_errmsg(T));
    if (!s) return;
    /* Lazy: nothing is checked before the first ask; the size is the product. */
    CHECK(search_size(s) == 5 * 5 * 4 * 2 && search_nrejected(s) == 0, "before any ask: size 200 (the product), 0 rejected (%d, %d)",
          search_size(s), search_nrejected(s));
    char **all;
    int total = drain(s, 7, &all);
    int size = search_size(s), nrej = search_nrejected(s);
    CHECK(size > 0 && size + nrej == 5 * 5 * 4 * 2, "after the walk: valid + rejected = the 200 configs of axpy/vec (%d + %d)", size,
          nrej);
    CHECK(total == size, "exhaustive gives every valid config (%d of %d)", total, size);
    CHECK(total > 0 && !dups(all, total), "exhaustive gives each config once");
    int invalid = 0;
    for (int i = 0; i < total; i++) {
        int ok;
        char why[256];
        if (tmpl_valid(T, "axpy/vec", all[i], &t, &dev, &ok, why, sizeof why) || !ok) invalid++;
    }
    CHECK(invalid == 0, "every config exhaustive gives is valid (%d invalid)", invalid);
    char **more;
    int got = -1;
    search_ask(s, 5, &more, &got);
    CHECK(got == 0, "then none (got %d)", got);
    free_names(more, got > 0 ? got : 0);
    CHECK(search_tell(s, all[0], "ok", 12.5) == 0 && search_tell(s, all[1], "timeout", 0) == 0, "search_tell accepts results");
    if (total > 0) {
        char *cfg;
        char why[256];
        int is_err = -1;
        int rc = search_rejected(s, 0, &cfg, why, sizeof why, &is_err);
        CHECK(rc == 0 && cfg && cfg[0] == '{' && is_err == 0 && why[0], "search_rejected(0): a constraint with a reason ('%s')", why);
        if (!rc) free(cfg);
    }
    free_names(all, total);
    search_free(s);

    s = search_new(T, "exhaustive", "axpy/vec", &t, &dev, 1, 10);
    total = s ? drain(s, 4, &all) : -1;
    CHECK(total == 10, "exhaustive with max_evals 10 stops at 10 (got %d)", total);
    if (total > 0) free_names(all, total);
    search_free(s);

    /* Random: seeded, no repeats, respects max_evals. */
    char **r1, **r2, **r3;
    search *a = search_new(T, "random", "axpy/vec", &t, &dev, 42, 0);
    search *b = search_new(T, "random", "axpy/vec", &t, &dev, 42, 0);
    search *c = search_new(T, "random", "axpy/vec", &t, &dev, 43, 0);
    CHECK(a && b && c, "search_new random x3");
    if (!a || !b || !c) return;
    int n1 = drain(a, 5, &r1), n2 = drain(b, 3, &r2), n3 = drain(c, 5, &r3);
    CHECK(n1 == size && n2 == size && n3 == size, "random without a cap gives the whole space (%d %d %d of %d)", n1, n2, n3, size);
    int same = n1 == n2, differ = 0;
    for (int i = 0; same && i < n1; i++) same = !strcmp(r1[i], r2[i]);
    for (int i = 0; i < n1 && i < n3; i++) differ |= strcmp(r1[i], r3[i]) != 0;
    CHECK(same, "random: the same seed gives the same order");
    CHECK(differ, "random: another seed gives another order");
    CHECK(!dups(r1, n1), "random never repeats a config");
    int in_order = 1;
    s = search_new(T, "exhaustive", "axpy/vec", &t, &dev, 1, 0);
    int ne = s ? drain(s, 50, &all) : 0;
    for (int i = 0; i < ne && i < n1; i++) in_order &= !strcmp(all[i], r1[i]);
    CHECK(!in_order, "random is not the enumeration order");
    if (ne > 0) free_names(all, ne);
    search_free(s);
    free_names(r1, n1);
    free_names(r2, n2);
    free_names(r3, n3);
    search_free(a);
    search_free(b);
    search_free(c);
    s = search_new(T, "random", "axpy/vec", &t, &dev, 7, 25);
    total = s ? drain(s, 10, &all) : -1;
    CHECK(total == 25 && !dups(all, total), "random with max_evals 25 gives 25 distinct configs (got %d)", total);
    if (total > 0) free_names(all, total);
    search_free(s);

    s = search_new(T, "nosuch", "axpy/vec", &t, &dev, 1, 0);
    CHECK(!s && has(tmpl_errmsg(T), "unknown search strategy 'nosuch'"), "unknown strategy: '%s'", tmpl_errmsg(T));
    s = search_new(T, "space", "axpy/vec", &t, &dev, 1, 0);
    CHECK(!s && has(tmpl_errmsg(T), "unknown search strategy"), "space.lua is not a strategy");
    s = search_new(T, "../search/random", "axpy/vec", &t, &dev, 1, 0);
    CHECK(!s, "a strategy name with a path is refused");
    search_free(s);
}

/* ---- broken templates ---- */

static void test_broken(void)
{
    tmpl *T = tmpl_open(broken);
    op_task t;
    long long n[] = { 4096 };
    int rc = tmpl_task(T, "bad", "f32", n, &t);
    CHECK(rc == 0, "fixture op 'bad' loads (%s)", rc ? tmpl_errmsg(T) : "ok");
    if (rc) { tmpl_close(T); return; }
    char **ops;
    int nops;
    if (!tmpl_ops(T, &ops, &nops)) {
        CHECK(nops == 2 && !strcmp(ops[0], "bad") && !strcmp(ops[1], "syntax"), "fixture ops: bad, syntax (%d)", nops);
        free_names(ops, nops);
    }
    kernel_src k;
    char *d = NULL;
    CHECK(!tmpl_default(T, "bad/good", &t, &dev, &d), "the fixture's working template loads");
    free(d);

    /* source() raises: the message names the file and line. */
    rc = tmpl_instantiate(T, "bad/raise_source", "{\"block\":64}", &t, &dev, "k", &k);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "templates/bad/raise_source.lua:5:") && has(tmpl_errmsg(T), "source exploded"),
          "a Lua error in source() names file:line and the message: '%s'", tmpl_errmsg(T));
    CHECK(!strchr(tmpl_errmsg(T), '\n'), "the Lua error is one line (no traceback)");
    CHECK(k.source == NULL, "a failed instantiate leaves no source");

    /* launch() gives a grid that cannot be evaluated or is zero. */
    const char *bad_grids[] = { "{\"mode\":0}", "{\"mode\":1}", "{\"mode\":2}" };
    const char *words[] = { "cdiv", "grid", "block" };
    for (int i = 0; i < 3; i++) {
        rc = tmpl_instantiate(T, "bad/zero_grid", bad_grids[i], &t, &dev, "k", &k);
        CHECK(rc == 0, "zero_grid %s instantiates (%s)", bad_grids[i], rc ? tmpl_errmsg(T) : "ok");
        if (rc) continue;
        plan_geom g;
        char err[256] = "";
        rc = kernel_geometry(&k, &t, &g, err, sizeof err);
        CHECK(rc == -1 && has(err, words[i]), "kernel_geometry of %s fails with a message: '%s'", bad_grids[i], err);
        kernel_src_free(&k);
    }

    /* carry() and span(): a config of the space, nil, or a clear error. */
    op_task t2;
    long long n2[] = { 8192 };
    char *out = NULL;
    if (tmpl_task(T, "bad", "f32", n2, &t2)) CHECK(0, "setup: a second task of 'bad'");
    typedef int (*remap_fn)(tmpl *, const char *, const char *, const op_task *, const op_task *, const device *, char **);
    const remap_fn fns[] = { tmpl_carry, tmpl_span };
    const char *hooks[] = { "carry", "span" };
    for (int h = 0; h < 2; h++) {
        out = NULL;
        rc = fns[h](T, "bad/carrier", "{\"block\":64,\"vec\":1}", &t, &t2, &dev, &out);
        CHECK(rc == 0 && out && !strcmp(out, "{\"block\":128,\"vec\":2}"), "%s gives the config for the new shape (%s)",
              hooks[h], rc ? tmpl_errmsg(T) : out);
        free(out);
        out = NULL;
        rc = fns[h](T, "bad/carrier", "{\"block\":1024,\"vec\":1}", &t, &t2, &dev, &out);
        CHECK(rc == 0 && out && !strcmp(out, "{\"block\":1024,\"vec\":1}"), "%s's nil: the config as it is", hooks[h]);
        free(out);
        const char *bad[] = { "{\"block\":128,\"vec\":1}", "{\"block\":256,\"vec\":1}", "{\"block\":512,\"vec\":1}" };
        const char *words[] = { "not a config or nil", "outside its space", "exploded" };
        for (int i = 0; i < 3; i++) {
            out = NULL;
            rc = fns[h](T, "bad/carrier", bad[i], &t, &t2, &dev, &out);
            char what[32];
            snprintf(what, sizeof what, "%s()", hooks[h]);
            CHECK(rc == -1 && !out && has(tmpl_errmsg(T), what) && has(tmpl_errmsg(T), words[i]),
                  "a %s that gives %s fails clearly: '%s'", hooks[h], words[i], tmpl_errmsg(T));
        }
    }

    /* A required field is missing: the load error names it. */
    rc = tmpl_default(T, "bad/missing_field", &t, &dev, &d);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "missing_field.lua") && has(tmpl_errmsg(T), "'default'"),
          "a template without default() does not load: '%s'", tmpl_errmsg(T));

    /* constraints() raising is recorded as an error, apart from a plain no. */
    search *s = search_new(T, "exhaustive", "bad/constraint_error", &t, &dev, 1, 0);
    CHECK(s != NULL, "a space whose constraints raise for some configs still builds (%s)", s ? "ok" : tmpl_errmsg(T));
    if (s) {
        CHECK(search_count(s) == 2 && search_nrejected(s) == 4, "2 valid, 4 rejected (got %d, %d)", search_size(s),
              search_nrejected(s));
        int errors = 0, plain = 0;
        for (int i = 0; i < search_nrejected(s); i++) {
            char *cfg = NULL, why[256] = "";
            int is_err = -1;
            if (search_rejected(s, i, &cfg, why, sizeof why, &is_err)) continue;
            if (is_err == 1) {
                errors++;
                CHECK(has(cfg, "\"vec\":4") && has(why, "constraint blew up") && has(why, "constraint_error.lua:5"),
                      "a raising constraint is kind error, with file:line: %s '%s'", cfg, why);
            } else if (is_err == 0) {
                plain++;
                CHECK(has(cfg, "\"vec\":2") && has(why, "vec 2 is not wanted"), "a plain no keeps its reason: %s '%s'", cfg, why);
            }
            free(cfg);
        }
        CHECK(errors == 2 && plain == 2, "2 rejected as errors, 2 as constraints (got %d, %d)", errors, plain);
        int ok = -1;
        char why[256] = "";
        rc = tmpl_valid(T, "bad/constraint_error", "{\"block\":64,\"vec\":4}", &t, &dev, &ok, why, sizeof why);
        CHECK(rc == -1 && has(tmpl_errmsg(T), "constraint blew up"), "tmpl_valid reports a raising constraint as an error");
        search_free(s);
    }

    /* The sandbox: no io, no os, no load. */
    rc = tmpl_instantiate(T, "bad/sandbox_io", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, "k", &k);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "sandbox_io.lua:4") && has(tmpl_errmsg(T), "io"),
          "io.open in a template fails: '%s'", tmpl_errmsg(T));
    unlink("/tmp/aitune-sandbox-escaped");
    rc = tmpl_instantiate(T, "bad/sandbox_os", "{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}", &t, &dev, "k", &k);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "sandbox_os.lua:4") && has(tmpl_errmsg(T), "os"),
          "os.execute in a template fails: '%s'", tmpl_errmsg(T));
    CHECK(access("/tmp/aitune-sandbox-escaped", F_OK) != 0, "and ran nothing");
    rc = tmpl_default(T, "bad/sandbox_load", &t, &dev, &d);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "sandbox_load.lua:3"), "load/dofile/require are absent: '%s'", tmpl_errmsg(T));

    /* An op file with a syntax error. */
    rc = tmpl_task(T, "syntax", "f32", n, &t);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "templates/syntax/op.lua:4:"), "an op.lua syntax error names file:line: '%s'",
          tmpl_errmsg(T));
    /* Still usable afterwards. */
    rc = tmpl_task(T, "bad", "f16", n, &t);
    CHECK(rc == 0 && t.args[0].esize == 2, "the state is usable after errors");
    tmpl_close(T);

    T = tmpl_open("/nonexistent-aitune-root");
    rc = tmpl_ops(T, &ops, &nops);
    CHECK(rc == -1 && has(tmpl_errmsg(T), "templates"), "a root without templates/: '%s'", tmpl_errmsg(T));
    tmpl_close(T);
    tmpl_close(NULL);
}

int main(int argc, char **argv)
{
    const char *r = argc > 1 ? argv[1] : getenv("AITUNE_ROOT") ? getenv("AITUNE_ROOT") : AITUNE_SOURCE_DIR;
    snprintf(root, sizeof root, "%s", r);
    snprintf(broken, sizeof broken, "%s/tests/fixtures/broken", root);
    if (device_assume("sm_90", &dev)) {
        printf("FAIL setup: device_assume sm_90\n");
        return 1;
    }
    tmpl *T = tmpl_open(root);
    test_ops(T);
    test_tasks(T);
    test_configs(T);
    test_instantiate(T);
    test_wgmma_overlap(T);
    test_swapab_box(T);
    test_swapab_carry(T);
    test_swapab_span(T);
    test_search(T);
    tmpl_close(T);
    test_broken();
    CHECK_DONE();
}
