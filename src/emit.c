/* emit.c: see emit.h. */
#define _GNU_SOURCE
#include "emit.h"
#include "aitune.h"
#include "device.h"
#include "registry.h"
#include "tmpl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The n-th string of the JSON array under "key" in our own launch JSON. */
static int json_nth(const char *json, const char *key, int n, char *out, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    if (!p) return -1;
    p += strlen(pat);
    if (*p == '[') p++;
    for (int i = 0; i <= n; i++) {
        const char *q = strchr(p, '"');
        if (!q) return -1;
        const char *e = strchr(q + 1, '"');
        if (!e) return -1;
        if (i == n) {
            snprintf(out, cap, "%.*s", (int)(e - q - 1), q + 1);
            return 0;
        }
        p = e + 1;
    }
    return -1;
}

/* An expression of expr.h as C: its functions get the file's own names. */
static void c_expr(strbuf *sb, const char *e)
{
    for (const char *p = e; *p;) {
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
        if (!n) { sb_add(sb, p++, 1); continue; }
        if ((n == 4 && !strncmp(p, "cdiv", 4)) || (n == 3 && (!strncmp(p, "min", 3) || !strncmp(p, "max", 3))))
            sb_puts(sb, "aitune_");
        sb_add(sb, p, n);
        p += n;
    }
}

static void fn_name(char *out, size_t cap, const char *op, const char *dtype)
{
    snprintf(out, cap, "aitune_%s_", op);
    size_t at = strlen(out);
    for (const char *p = dtype; *p && at + 4 < cap; p++) {
        if (*p == '>') { memcpy(out + at, "_to_", 4); at += 4; }
        else out[at++] = *p;
    }
    out[at] = 0;
}

int emit_run(const emit_opts *o)
{
    aitune *h = NULL;
    int code = EXIT_FAIL;
    tmpl *T = NULL;
    reg *R = NULL;
    kernel_src k = { 0 };
    char *source = NULL;
    strbuf out = STRBUF_INIT;
    if (aitune_open(o->db_path, &h) != AITUNE_OK) {
        error("%s", aitune_errmsg(h));
        aitune_close(h);
        return EXIT_INPUT;
    }
    aitune_choice c;
    if (aitune_lookup(h, o->op, o->arch, o->dtype, o->shape, o->ndims, &c) != AITUNE_OK) {
        error("%s", aitune_errmsg(h));
        code = EXIT_INPUT;
        goto done;
    }
    T = tmpl_open(o->root);
    op_task task;
    if (tmpl_task(T, o->op, o->dtype, o->shape, &task)) { error("%s", tmpl_errmsg(T)); code = EXIT_INPUT; goto done; }
    char kname[64] = "";
    const char *launch = NULL;
    winner w = { 0 };
    if (c.level != AITUNE_DEFAULT) {
        if (reg_open(o->db_path, 1, &R)) { error("%s", reg_errmsg(R)); goto done; }
        char arch[16];
        arch_base(o->arch, arch);
        if (reg_winner_get(R, o->op, arch, o->dtype, c.bucket, &w) != 1 || !w.cubin[0]) {
            error("registry '%s': the winner of %s %s %s has no kernel stored", o->db_path, o->op, o->dtype, c.bucket);
            winner_free(&w);
            goto done;
        }
        if (reg_cubin_source(R, w.cubin, &source, kname, sizeof kname) != 1) {
            error("registry '%s': the cubin cache lacks the winner's source (%s)", o->db_path, w.cubin);
            winner_free(&w);
            goto done;
        }
        launch = w.launch;
        for (int i = 0; i < 3; i++) {
            if (json_nth(launch, "grid", i, k.grid[i], sizeof k.grid[i]) ||
                json_nth(launch, "block", i, k.block[i], sizeof k.block[i])) {
                error("registry '%s': bad launch geometry for %s %s %s", o->db_path, o->op, o->dtype, c.bucket);
                winner_free(&w);
                goto done;
            }
        }
        if (json_nth(launch, "smem", 0, k.smem, sizeof k.smem)) snprintf(k.smem, sizeof k.smem, "0");
        const char *cl = strstr(launch, "\"cluster\":[");
        if (cl) sscanf(cl + 11, "%d,%d,%d", &k.cluster[0], &k.cluster[1], &k.cluster[2]);
        const char *ws = strstr(launch, "\"workspace\":");
        if (ws) k.workspace = atoll(ws + 12);
    } else {
        device dev;
        if (device_assume(o->arch, &dev)) { error("no device facts for arch '%s'", o->arch); goto done; }
        snprintf(kname, sizeof kname, "aitune_%s_default", o->op);
        if (tmpl_instantiate(T, c.template_name, c.config, &task, &dev, kname, &k)) { error("%s", tmpl_errmsg(T)); goto done; }
        source = xstrdup(k.source);
    }
    char fn[96];
    fn_name(fn, sizeof fn, o->op, o->dtype);
    sb_printf(&out, "// Written by aitune %s: `aitune emit %s --arch %s --dtype %s`.\n", AITUNE_TOOL_VERSION, o->op,
              o->arch, o->dtype);
    sb_printf(&out, "// Chosen at level '%s'%s%s: template %s, config %s\n", aitune_level_name(c.level),
              c.bucket ? " from bucket " : "", c.bucket ? c.bucket : "", c.template_name, c.config);
    if (c.level != AITUNE_DEFAULT)
        sb_printf(&out, "// Measured %.2f us (%.1f GB/s) at shape %s; compile with nvcc -gencode=arch=compute_90a,code=sm_90a\n",
                  w.median_us, w.gbps, w.shape);
    sb_printf(&out, "// Standalone: nothing from aitune is needed to build or run it.\n\n");
    sb_puts(&out, source);
    /* Only the helpers the launch expressions use: no unused-function warnings. */
    strbuf exprs = STRBUF_INIT;
    for (int i = 0; i < 3; i++) sb_printf(&exprs, "%s %s ", k.grid[i], k.block[i]);
    sb_puts(&exprs, k.smem);
    sb_puts(&out, "\n");
    if (strstr(sb_str(&exprs), "cdiv("))
        sb_puts(&out, "static inline long long aitune_cdiv(long long a, long long b) { return (a + b - 1) / b; }\n");
    if (strstr(sb_str(&exprs), "min("))
        sb_puts(&out, "static inline long long aitune_min(long long a, long long b) { return a < b ? a : b; }\n");
    if (strstr(sb_str(&exprs), "max("))
        sb_puts(&out, "static inline long long aitune_max(long long a, long long b) { return a > b ? a : b; }\n");
    sb_puts(&out, "\n");
    sb_free(&exprs);
    sb_printf(&out, "// Launch on `stream`; returns the launch's error code.%s\n",
              k.workspace ? " ws: a zeroed device workspace of at least the bytes below." : "");
    if (k.workspace) sb_printf(&out, "// workspace bytes at the tuned shape: %lld\n", k.workspace);
    sb_printf(&out, "extern \"C\" cudaError_t %s(", fn);
    strbuf call = STRBUF_INIT;
    for (int i = 0; i < task.nargs; i++) {
        const op_arg *a = &task.args[i];
        const char *ct = !strcmp(a->dtype, "f32") ? "float" : "unsigned short";
        if (a->role == ROLE_IN) sb_printf(&out, "const %s* %s, ", ct, a->name);
        else if (a->role == ROLE_OUT || a->role == ROLE_INOUT) sb_printf(&out, "%s* %s, ", ct, a->name);
        else if (a->role == ROLE_SCALAR) sb_printf(&out, "float %s, ", a->name);
        else sb_printf(&out, "long long %s, ", a->name);
        sb_printf(&call, "%s%s", i ? ", " : "", a->name);
    }
    if (k.workspace) { sb_puts(&out, "void* ws, "); sb_puts(&call, ", ws"); }
    sb_puts(&out, "cudaStream_t stream)\n{\n    dim3 grid(");
    for (int i = 0; i < 3; i++) { sb_printf(&out, "%s(unsigned)(", i ? ", " : ""); c_expr(&out, k.grid[i]); sb_puts(&out, ")"); }
    sb_puts(&out, "), block(");
    for (int i = 0; i < 3; i++) { sb_printf(&out, "%s(unsigned)(", i ? ", " : ""); c_expr(&out, k.block[i]); sb_puts(&out, ")"); }
    sb_puts(&out, ");\n    size_t smem = (size_t)(");
    c_expr(&out, k.smem);
    sb_puts(&out, ");\n");
    /* Static plus dynamic shared memory past 48 KB needs the opt-in. */
    if (strcmp(k.smem, "0"))
        sb_printf(&out, "    if (smem > 0) {\n        cudaFuncAttributes fa;\n"
                        "        cudaError_t e = cudaFuncGetAttributes(&fa, %s);\n"
                        "        if (e == cudaSuccess && smem + fa.sharedSizeBytes > 48 * 1024)\n"
                        "            e = cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);\n"
                        "        if (e != cudaSuccess) return e;\n    }\n", kname, kname);
    if (k.cluster[0] * k.cluster[1] * k.cluster[2] > 1) {
        sb_printf(&out, "    cudaLaunchConfig_t cfg = {};\n    cudaLaunchAttribute at[1];\n"
                        "    at[0].id = cudaLaunchAttributeClusterDimension;\n"
                        "    at[0].val.clusterDim.x = %d; at[0].val.clusterDim.y = %d; at[0].val.clusterDim.z = %d;\n"
                        "    cfg.gridDim = grid; cfg.blockDim = block; cfg.dynamicSmemBytes = smem; cfg.stream = stream;\n"
                        "    cfg.attrs = at; cfg.numAttrs = 1;\n    return cudaLaunchKernelEx(&cfg, %s, %s);\n}\n",
                  k.cluster[0], k.cluster[1], k.cluster[2], kname, sb_str(&call));
    } else {
        sb_printf(&out, "    %s<<<grid, block, smem, stream>>>(%s);\n    return cudaGetLastError();\n}\n", kname, sb_str(&call));
    }
    sb_free(&call);
    winner_free(&w);
    if (!strcmp(o->out_path, "-")) {
        fwrite(out.buf, 1, out.len, stdout);
        code = EXIT_OK;
    } else {
        /* Write beside, then rename: no half-written file on failure. */
        char *tmp = xstrfmt("%s.tmp", o->out_path);
        FILE *f = fopen(tmp, "w");
        if (!f || fwrite(out.buf, 1, out.len, f) != out.len || fclose(f)) {
            error("cannot write '%s'", o->out_path);
            if (f) remove(tmp);
        } else if (rename(tmp, o->out_path)) {
            error("cannot write '%s'", o->out_path);
            remove(tmp);
        } else {
            fprintf(stderr, "wrote %s: %s (%s, level %s)\n", o->out_path, fn, c.config, aitune_level_name(c.level));
            code = EXIT_OK;
        }
        free(tmp);
    }
done:
    sb_free(&out);
    free(source);
    kernel_src_free(&k);
    reg_close(R);
    tmpl_close(T);
    aitune_close(h);
    return code;
}
