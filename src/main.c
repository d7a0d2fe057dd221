/* main.c: the aitune command line. A table of commands, each with its usage;
** exit codes per util.h: 0 ok, 1 failure, 2 usage, 3 bad spec, template or
** registry input. */
#define _GNU_SOURCE
#include "aitune.h"
#include "cli.h"
#include "json.h"
#include "peers.h"
#include "emit.h"
#include "jit.h"
#include "registry_winner.h"
#include "registry_vendor.h"
#include "replay.h"
#include "sweep.h"
#include "sweep_vendor.h"
#include "tmpl.h"
#include "window.h"
#include "worker.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;
} cmd;

static const cmd *find_cmd(const char *name);

/* Command c's usage error (cli.h), its usage from the table. */
static int usage_error(const char *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_vusage_error(c, find_cmd(c)->usage, fmt, ap);
    va_end(ap);
    return rc;
}

/* Where templates/ and search/ are, and the registry: cli.h. */
static const char *root_dir(void) { return cli_root(); }
static const char *db_path(const char *flag) { return cli_db_path(flag); }

/* Options with getopt_long conventions (cli.h): -j4, --db=PATH, --. */
static int parse_opts(const char *c, int argc, char **argv, opt *opts, const char **pos, int maxpos, int *npos)
{
    return cli_parse(c, find_cmd(c)->usage, find_cmd(c)->summary, argc, argv, opts, pos, maxpos, npos);
}

static int parse_count(const char *c, const char *what, const char *s, long long lo, long long hi, long long *out)
{
    return cli_count(c, find_cmd(c)->usage, what, s, lo, hi, out);
}

/* Names that end up in C identifiers, comments and messages: an op
** ([a-z0-9_]) or a dtype (also '>', as in f32>bf16). */
static int is_word(const char *s, size_t max, const char *extra)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || strchr(extra, s[n])))
            return 0;
    return n > 0 && n <= max;
}

/* ---- commands ---- */

/* GPU g's facts as a JSON object (a static buffer). */
static const char *device_json(int g, const device *d)
{
    static char out[2048];
    jw j = { 0 };
    jw_obj(&j);
    jw_key(&j, "index");
    jw_int(&j, g);
    jw_key(&j, "name");
    jw_str(&j, d->name);
    jw_key(&j, "uuid");
    jw_str(&j, d->uuid);
    const char *keys[] = { "cc", "sms", "mem", "l2", "smem_optin" };
    long long vals[] = { d->cc, d->sms, d->mem, d->l2, d->smem_optin };
    for (int i = 0; i < 5; i++) {
        jw_key(&j, keys[i]);
        jw_int(&j, vals[i]);
    }
    jw_key(&j, "driver");
    jw_str(&j, d->driver);
    jw_key(&j, "cuda_driver");
    jw_int(&j, d->cuda_driver);
    jw_key(&j, "nvrtc");
    jw_str(&j, d->nvrtc);
    jw_end(&j);
    snprintf(out, sizeof out, "%s", jw_text(&j));
    jw_free(&j);
    return out;
}

static int cmd_devices(int argc, char **argv)
{
    opt opts[] = { { "--json", 0, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = parse_opts("devices", argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    int count = 1, shown = 0;
    for (int g = 0; g < count; g++) {
        worker *w = worker_new(g);
        device d;
        if (worker_hello(w, &d, NULL)) {
            error("no GPU: %s", worker_errmsg(w));
            fprintf(stderr, "hint: compile, emit, lookup and show work without one\n");
            worker_free(w);
            return EXIT_FAIL;
        }
        count = d.count > 0 ? d.count : 1;
        if (opts[0].set) {
            printf("%s%s%s", g ? "" : "[", device_json(g, &d), g + 1 < count ? ",\n" : "]\n");
        }
        else
            printf("GPU %d: %s, sm_%d, %d SMs, %.1f GB, L2 %.0f MB, %d KB shared memory per block, driver %s "
                   "(CUDA %d.%d), NVRTC %s\n        %s\n",
                   g, d.name, d.cc, d.sms, d.mem / 1e9, d.l2 / 1048576.0, d.smem_optin / 1024, d.driver,
                   d.cuda_driver / 1000, d.cuda_driver % 1000 / 10, d.nvrtc, d.uuid);
        shown++;
        worker_free(w);
    }
    return shown ? EXIT_OK : EXIT_FAIL;
}

static int sweep_like(const char *c, int argc, char **argv, int compile_only)
{
    opt opts[] = { { "--db", 1, 0, 0 }, { "--budget", 1, 0, 0 }, { "--max-evals", 1, 0, 0 }, { "--timeout", 1, 0, 0 },
                   { "--gpu", 1, 0, 0 }, { "-j", 1, 0, 0 }, { "--quiet", 0, 0, 0 }, { "-v", 0, 0, 0 },
                   { "--peers", 1, 0, 0 }, { "--shard", 1, 0, 0 }, { "--from-misses", 0, 0, 0 }, { "--gpus", 1, 0, 0 },
                   { "--keep-cubins", 0, 0, 0 }, { "--ahead", 1, 0, 0 }, { "--vendor", 1, 0, 0 }, { "--plan", 0, 0, 0 },
                   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = parse_opts(c, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return usage_error(c, "which spec? (e.g. specs/elementwise.yaml)");
    sweep_opts o = { .spec_path = pos[0], .db_path = db_path(opts[0].value), .root = root_dir(),
                     .compile_only = compile_only, .kernel_timeout = 10, .quiet = opts[6].set, .verbose = opts[7].set,
                     .peers_path = opts[8].value, .keep_cubins = opts[12].set, .count_only = opts[15].set };
    long long v;
    if (opts[1].set && (rc = cli_duration(c, find_cmd(c)->usage, "--budget", opts[1].value, "90s, 30m or 2h", &o.budget_s)))
        return rc;
    if (opts[2].set) { if ((rc = parse_count(c, "--max-evals", opts[2].value, 1, 100000000, &v))) return rc; o.max_evals = (int)v; }
    if (opts[3].set && (rc = cli_duration(c, find_cmd(c)->usage, "--timeout", opts[3].value, "10s", &o.kernel_timeout)))
        return rc;
    if (opts[4].set) { if ((rc = parse_count(c, "--gpu", opts[4].value, 0, 63, &v))) return rc; o.gpu = (int)v; }
    /* Every GPU by default; --gpu I is that one alone. */
    if (opts[11].set && (compile_only || opts[4].set))
        return usage_error(c, compile_only ? "--gpus is for sweep" : "--gpu and --gpus: pick one (--gpu I is --gpus with one GPU)");
    if (opts[11].set && sweep_parse_gpus(opts[11].value, &o.gpus))
        return usage_error(c, "--gpus '%s' is not all, a count N or a list of distinct GPUs like 0,1", opts[11].value);
    if (!compile_only && !opts[4].set && !opts[11].set) o.gpus.all = 1;
    if (opts[5].set) { if ((rc = parse_count(c, "-j", opts[5].value, 1, 1024, &v))) return rc; o.threads = (int)v; }
    if (opts[9].set && (compile_only || sweep_parse_shard(opts[9].value, &o.shard_i, &o.shard_n)))
        return usage_error(c, compile_only ? "--shard is for sweep" : "--shard '%s' is not i/n with 0 <= i < n", opts[9].value);
    if (opts[12].set && compile_only) return usage_error(c, "--keep-cubins is for sweep (compile keeps every cubin)");
    if (opts[13].set && compile_only) return usage_error(c, "--ahead is for sweep (compile compiles everything at once)");
    if (opts[13].set) {
        if ((rc = parse_count(c, "--ahead", opts[13].value, 0, 4096, &v))) return rc;
        o.ahead = v ? (int)v : -1;
    }
    if (opts[14].set && compile_only) return usage_error(c, "--vendor is for sweep (compile times nothing)");
    if (opts[15].set && !compile_only) return usage_error(c, "--plan is for compile (sweep's buckets: `aitune window --plan`)");
    if (opts[14].set && sweep_vendor_parse(opts[14].value, &o.vendor))
        return usage_error(c, "--vendor '%s' is not win, time or off", opts[14].value);
    void *misses = NULL;
    if (opts[10].set && (compile_only ? (rc = usage_error(c, "--from-misses is for sweep")) : (rc = window_from_misses(&o, &misses)))) {
        window_misses_free(misses);
        return rc;
    }
    strbuf cmdline = STRBUF_INIT;
    cli_command_line(argc, argv, &cmdline);
    o.command = sb_str(&cmdline);
    rc = sweep_run(&o);
    sb_free(&cmdline);
    window_misses_free(misses);
    return rc;
}

static int cmd_compile(int argc, char **argv) { return sweep_like("compile", argc, argv, 1); }
static int cmd_sweep(int argc, char **argv) { return sweep_like("sweep", argc, argv, 0); }

typedef struct show_ctx { int json, n; const peers *peers; reg *r; int bad; } show_ctx;

/* The winner's peer figure (--peers), on the metric the winner reports in:
** TFLOP/s when a peer has that figure for the bucket, else GB/s. */
static const peer *show_peer(const show_ctx *s, const winner *w, double *ratio)
{
    const peer *p = peers_find(s->peers, w->op, w->dtype, w->lo, w->hi, 1);
    if (p) *ratio = w->tflops / p->value;
    else if ((p = peers_find(s->peers, w->op, w->dtype, w->lo, w->hi, 0))) *ratio = w->gbps / p->value;
    return p;
}

/* Registry strings shown on a terminal: control bytes escaped. */
static const char *shown(strbuf *sb, const char *s)
{
    sb_reset(sb);
    sb_printable(sb, s ? s : "");
    return sb_str(sb);
}

static int show_row(const winner *w, void *p)
{
    show_ctx *s = p;
    /* The vendor's time at the winner's shape (registry_vendor.h), and how
    ** many times faster the winner is. */
    double vendor_us = 0;
    int has_vendor = reg_vendor_for_winner(s->r, w, &vendor_us);
    if (has_vendor < 0) {
        s->bad = 1;
        return 1;
    }
    double xv = has_vendor && w->median_us > 0 ? vendor_us / w->median_us : 0;
    if (s->json) {
        /* Everything from the registry is untrusted: strings escaped, the
        ** config copied only when it is well-formed JSON, numbers finite. */
        jw j = { 0 };
        jw_obj(&j);
        const char *keys[] = { "op", "arch", "dtype", "bucket", "lo", "hi", "template" };
        const char *vals[] = { w->op, w->arch, w->dtype, w->bucket, w->lo, w->hi, w->tmpl };
        for (int i = 0; i < 7; i++) {
            jw_key(&j, keys[i]);
            jw_str(&j, vals[i]);
        }
        jw_key(&j, "config");
        jw_raw(&j, w->config);
        const char *nkeys[] = { "median_us", "gbps", "tflops", "default_us", "margin" };
        double nvals[] = { w->median_us, w->gbps, w->tflops, w->default_us, w->margin };
        int decimals[] = { 4, 2, 4, 4, 4 };
        for (int i = 0; i < 5; i++) {
            jw_key(&j, nkeys[i]);
            jw_num(&j, nvals[i], decimals[i]);
        }
        jw_key(&j, "vendor_us");
        jw_num(&j, has_vendor ? vendor_us : NAN, 4);
        jw_key(&j, "x_vendor");
        jw_num(&j, xv > 0 ? xv : NAN, 4);
        jw_key(&j, "exhaustive");
        jw_bool(&j, w->exhaustive);
        jw_key(&j, "shape");
        jw_raw(&j, w->shape[0] ? w->shape : NULL);
        double ratio;
        const peer *pr = show_peer(s, w, &ratio);
        if (pr) {
            jw_key(&j, "peer");
            jw_obj(&j);
            jw_key(&j, "name");
            jw_str(&j, pr->name);
            jw_key(&j, "value");
            jw_num(&j, pr->value, 4);
            jw_key(&j, "ratio");
            jw_num(&j, ratio, 4);
            jw_end(&j);
        }
        jw_end(&j);
        printf("%s%s", s->n ? ",\n " : "[", jw_text(&j));
        jw_free(&j);
    } else {
        if (!s->n)
            printf("%-11s %-6s %-9s %-18s %11s %9s %8s %7s %8s  %s\n", "op", "arch", "dtype", "bucket", "median us", "GB/s",
                   "TFLOP/s", "vs dflt", "x vendor", "template config");
        char vs[16] = "-", xs[16] = "-", ps[48] = "";
        if (w->default_us > 0) snprintf(vs, sizeof vs, "%.2fx", w->default_us / w->median_us);
        if (xv > 0) snprintf(xs, sizeof xs, "%.2fx", xv);
        double ratio;
        const peer *pr = show_peer(s, w, &ratio);
        if (pr) snprintf(ps, sizeof ps, " (%.3fx %s)", ratio, pr->name);
        strbuf b[6] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
        printf("%-11s %-6s %-9s %-18s %11.2f %9.1f %8.3f %7s %8s  %s %s%s%s\n", shown(&b[0], w->op), shown(&b[1], w->arch),
               shown(&b[2], w->dtype), shown(&b[3], w->bucket), w->median_us, w->gbps, w->tflops, vs, xs,
               shown(&b[4], w->tmpl), shown(&b[5], w->config), w->exhaustive ? "" : " (not exhaustive)", ps);
        for (int i = 0; i < 6; i++) sb_free(&b[i]);
    }
    s->n++;
    return 0;
}

static int cmd_show(int argc, char **argv)
{
    opt opts[] = { { "--db", 1, 0, 0 }, { "--json", 0, 0, 0 }, { "--peers", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = parse_opts("show", argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    peers ps = { 0, NULL };
    char perr[512];
    if (opts[2].value && peers_load(opts[2].value, &ps, perr, sizeof perr)) {
        error("%s", perr);
        return EXIT_INPUT;
    }
    reg *r;
    if (reg_open(db_path(opts[0].value), 1, &r)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        peers_free(&ps);
        return EXIT_INPUT;
    }
    show_ctx s = { opts[1].set, 0, &ps, r, 0 };
    rc = reg_winners(r, show_row, &s);
    if (rc || s.bad) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        peers_free(&ps);
        return EXIT_INPUT;
    }
    if (s.json) printf("%s]\n", s.n ? "" : "[");
    else if (!s.n) printf("no winners yet in %s (run `aitune sweep SPEC`)\n", reg_path(r));
    reg_close(r);
    peers_free(&ps);
    return EXIT_OK;
}

/* OP --arch A --dtype T --shape S: shared by lookup and emit. */
typedef struct query {
    const char *op, *arch, *dtype;
    long long shape[CLI_MAXDIMS];
    int ndims;
} query;

static int parse_query(const char *c, opt *opts, const char **pos, int np, query *q)
{
    if (np != 1) return usage_error(c, "which op? (e.g. axpy)");
    q->op = pos[0];
    if (!opts[0].value) return usage_error(c, "--arch is required (e.g. --arch sm_90)");
    if (!opts[1].value) return usage_error(c, "--dtype is required (e.g. --dtype bf16)");
    if (!opts[2].value) return usage_error(c, "--shape is required (e.g. --shape 50000000)");
    q->arch = opts[0].value;
    q->dtype = opts[1].value;
    if (!is_word(q->op, 31, "")) return usage_error(c, "op '%s' is not a name like axpy", q->op);
    /* "" is emit's "the registry's one arch" (set by cmd_emit, never typed). */
    if (q->arch[0] ? !arch_known(q->arch) : strcmp(c, "emit") != 0)
        return usage_error(c, "--arch '%s' is not one of %s", q->arch, arch_list());
    if (!is_word(q->dtype, 15, ">")) return usage_error(c, "--dtype '%s' is not a name like bf16", q->dtype);
    /* Anything malformed on the command line is a usage error (exit 2);
    ** exit 3 is for what files hold. */
    return cli_shape(c, find_cmd(c)->usage, opts[2].value, q->shape, &q->ndims);
}

/* --shape gives one size per dim of the op, when its templates are at hand
** (libaitune cannot tell: its default level has no dims). */
static int check_dims(const char *c, const query *q, const char *db)
{
    int known = cli_check_op(root_dir(), db, q->op, q->dtype);
    if (known) return known;
    tmpl *T = tmpl_open(root_dir());
    int nd = 0, ndt, rc = 0;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (!tmpl_op_info(T, q->op, &nd, dims, &ndt, dts, 32) && nd != q->ndims) {
        strbuf names = STRBUF_INIT;
        for (int i = 0; i < nd; i++) sb_printf(&names, "%s%s", i ? ", " : "", dims[i]);
        rc = usage_error(c, "op '%s' has %d dim%s (%s); --shape gives %d", q->op, nd, nd == 1 ? "" : "s",
                         sb_str(&names), q->ndims);
        sb_free(&names);
    }
    tmpl_close(T);
    return rc;
}

static int cmd_lookup(int argc, char **argv)
{
    opt opts[] = { { "--arch", 1, 0, 0 }, { "--dtype", 1, 0, 0 }, { "--shape", 1, 0, 0 }, { "--db", 1, 0, 0 },
                   { "--json", 0, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    const char *c0 = "lookup";
    int np, rc = parse_opts(c0, argc, argv, opts, pos, 1, &np);
    query q;
    if (rc || (rc = parse_query("lookup", opts, pos, np, &q)) || (rc = check_dims(c0, &q, db_path(opts[3].value)))) return rc;
    aitune *h;
    if (aitune_open(db_path(opts[3].value), &h) != AITUNE_OK) {
        error("%s", aitune_errmsg(h));
        aitune_close(h);
        return EXIT_INPUT;
    }
    aitune_choice c;
    const char *hw = NULL;
    rc = aitune_lookup_gpu(h, q.op, q.arch, q.dtype, q.shape, q.ndims, NULL, &c, &hw);
    if (rc != AITUNE_OK) {
        error("%s", aitune_errmsg(h));
        aitune_close(h);
        return rc == AITUNE_MISUSE ? EXIT_USAGE : EXIT_INPUT;
    }
    strbuf b[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
    if (opts[4].set) {
        jw j = { 0 };
        jw_obj(&j);
        jw_key(&j, "level");
        jw_str(&j, aitune_level_name(c.level));
        jw_key(&j, "template");
        jw_str(&j, c.template_name);
        jw_key(&j, "config");
        jw_raw(&j, c.config);
        jw_key(&j, "bucket");
        jw_str(&j, c.bucket);
        jw_key(&j, "median_us");
        jw_num(&j, c.median_us, 4);
        jw_key(&j, "distance");
        jw_num(&j, c.distance, 3);
        jw_key(&j, "measured_on");
        jw_str(&j, hw && *hw ? hw : NULL);
        jw_end(&j);
        printf("%s\n", jw_text(&j));
        jw_free(&j);
    } else {
        const char *tn = shown(&b[0], c.template_name), *cf = shown(&b[1], c.config), *bk = shown(&b[2], c.bucket);
        const char *on = hw && *hw ? shown(&b[3], hw) : NULL;
        if (c.level == AITUNE_EXACT)
            printf("%s %s  (exact: tuned bucket %s, %.2f us%s%s)\n", tn, cf, bk, c.median_us, on ? " on " : "",
                   on ? on : "");
        else if (c.level == AITUNE_NEAREST)
            printf("%s %s  (nearest: no tuned bucket holds this shape; from bucket %s, %.2f log2 steps away%s%s)\n", tn,
                   cf, bk, c.distance, on ? "; measured on " : "", on ? on : "");
        else
            printf("%s %s  (default: nothing tuned for %s %s %s; the template's default)\n", tn, cf, q.op, q.arch,
                   q.dtype);
    }
    for (int i = 0; i < 4; i++) sb_free(&b[i]);
    aitune_close(h);
    return EXIT_OK;
}

static int cmd_emit(int argc, char **argv)
{
    opt opts[] = { { "--arch", 1, 0, 0 }, { "--dtype", 1, 0, 0 }, { "--shape", 1, 0, 0 }, { "--db", 1, 0, 0 },
                   { "-o", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    const char *c0 = "emit";
    int np, rc = parse_opts(c0, argc, argv, opts, pos, 1, &np);
    query q;
    /* Without --shape: every tuned bucket of the op, with a dispatcher. */
    int whole = !rc && !opts[2].value;
    if (whole) opts[2].value = "1";
    if (whole && !opts[0].value) opts[0].value = "";   /* emit takes the registry's one arch */
    if (rc || (rc = parse_query("emit", opts, pos, np, &q)) || (!whole && (rc = check_dims(c0, &q, db_path(opts[3].value))))) return rc;
    if (!opts[4].value) return usage_error("emit", "-o FILE is required (- for standard output)");
    emit_opts e = { .db_path = db_path(opts[3].value), .root = root_dir(), .op = q.op, .arch = q.arch,
                    .dtype = q.dtype, .shape = whole ? NULL : q.shape, .ndims = q.ndims, .out_path = opts[4].value };
    return emit_run(&e);
}

static int cmd_help(int argc, char **argv);

static const cmd commands[] = {
    { "devices", cmd_devices, "List each GPU: name, compute capability, SMs, memory, L2, driver and NVRTC.\n"
      "Needs a GPU and its driver; says so plainly when there is none.\n\n"
      "  --json       a JSON array, one object per GPU\n\n"
      "Exit: 0, 1 no GPU (or no driver), 2 usage.", "aitune devices [--json]" },
    { "compile", cmd_compile, "Compile every candidate of a spec into the cubin cache; needs no GPU. Each is instantiated\n"
      "from its template and compiled with NVRTC for the spec's arch (sm_90a by default), in parallel\n"
      "on all cores, into the registry's cubin cache. Prints a summary (counts, spills, slowest\n"
      "compiles) and each failure; -v prints every kernel's registers, spills, shared memory, compile\n"
      "time and ptxas warnings. Progress goes to stderr. A cached kernel is used only when its bytes\n"
      "and source match the hashes stored with it; any other is compiled again.\n\n"
      "It is a pure cache: it stores each kernel's cubin, source and ptxas report (tens of KB each, over\n"
      "500 MB for every candidate of specs/memory.yaml) and no measurement. A later sweep into the same\n"
      "registry takes its kernels from there; `aitune gc` drops what no winner, finalist or default needs.\n\n"
      "  --db PATH    the registry (default $AITUNE_DB, else ~/.local/share/aitune/registry.db)\n"
      "  --max-evals N  a seeded sample of N configs per template and bucket (overrides the spec)\n"
      "  -j N         compile threads (default: one per core)\n"
      "  -v           the full table: one row per kernel\n"
      "  --plan       count each bucket's and template's candidates and what compile would take of\n"
      "               them; compile nothing, open no registry\n"
      "  --quiet      no progress on stderr\n\n"
      "The spec's max_evals (or --max-evals) caps each template and bucket with a seeded sample; a\n"
      "bucket and template of more than 4096 candidates without a cap is refused (exit 3), saying what\n"
      "to set. Candidates stream: each is compiled, stored and let go as it lands, so memory stays\n"
      "small whatever the spec, and a killed compile keeps its work; Ctrl-C stops within a second.\n"
      "Exit: 0 done, 1 failure (a kernel did not compile; the registry cannot be written), 2 usage,\n"
      "3 bad spec or registry, 130 interrupted (resumable).",
      "aitune compile SPEC [--db PATH] [--max-evals N] [-j N] [-v] [--plan] [--quiet]" },
    { "sweep", cmd_sweep, "Tune a spec on the GPU, storing every measurement and each winner. For each (op, dtype,\n"
      "shape bucket), every candidate is verified against the op's reference on random inputs and\n"
      "timed (L2 flushed, median of settled samples; a task with `timing: stream` is timed as a\n"
      "chain of back-to-back launches over rotating input copies, as a decode loop runs;\n"
      "`timing: neighbour` as a model's graph runs it, another kernel before each launch: see\n"
      "docs/SPEC.md); each measurement is stored as it lands, and\n"
      "the top 5 are re-timed interleaved before the winner is stored. Ctrl-C stops after the\n"
      "candidate being timed, giving the compiles in flight up at once; running the same command\n"
      "again resumes: the buckets decided already are left as they are, the one cut is decided\n"
      "again from the measurements kept, and a finished sweep does nothing (it says so). Once a\n"
      "bucket has its winner, the cubins of the candidates that lost leave\n"
      "the registry (kept: winners', finalists' and defaults', and all of a bucket still being\n"
      "tuned); it prints the registry's size at the end.\n"
      "One sweep at a time per registry: another sweep, retune, check or window on it stops at once.\n\n"
      "  --db PATH        the registry (default $AITUNE_DB, else ~/.local/share/aitune/registry.db)\n"
      "  --budget D       stop after D (90s, 30m, 2h), shared by the buckets (each may use the time left\n"
      "                   over the buckets left); winners so far are kept, marked not exhaustive\n"
      "  --max-evals N    at most N candidates per bucket and template\n"
      "  --timeout D      a verification run longer than D is a hung kernel (default 10s)\n"
      "  --gpus all|N|I,J one worker per GPU, buckets handed to whichever GPU is free, each bucket\n"
      "                   measured and raced on one GPU; compiles share one pool (-j). all (default):\n"
      "                   every GPU the driver sees, which must be one model; N: GPUs 0..N-1; I,J,...:\n"
      "                   those GPUs, models may differ (each winner is keyed by the GPU model that\n"
      "                   measured it, so a bucket is tuned for one of them only)\n"
      "  --gpu I          GPU I alone\n"
      "  --shard I/N      only this shard of the buckets (spec order, dealt round-robin): run\n"
      "                   shards 0..N-1 on N machines, then `aitune merge` their registries\n"
      "  --from-misses    only the buckets of SPEC that hold shapes libaitune recorded as misses\n"
      "  -j N             compile threads, for all GPUs together (default: one per core)\n"
      "  --ahead N        candidates a search keeps compiling behind the one on the GPU: the strategy\n"
      "                   is asked for its next batch before the current one is timed (default: twice\n"
      "                   -j, shared by the GPUs, at most an eighth of the search's budget, at least\n"
      "                   8); 0 asks for a batch only once the last one is timed. A model-guided\n"
      "                   search picks the configs asked ahead without their results: its choices are\n"
      "                   repeatable for a seed and a depth, and a deeper look-ahead costs it quality\n"
      "  --quiet          no progress on stderr (a redrawn line on a terminal: buckets, candidates,\n"
      "                   best so far vs default, elapsed, ETA; else a line every 5 s)\n"
      "  --peers FILE     peer figures (JSON lines as bench/peers_*.py print them): each winner's\n"
      "                   ratio to the peer measured at a shape in its bucket (e.g. 1.004x cublas)\n"
      "  --keep-cubins    keep every candidate's cubin (the full compile cache, as `aitune compile`)\n"
      "  --vendor M       the vendor library (cuBLASLt, for the GEMM ops; opened at run time, or the file\n"
      "                   AITUNE_CUBLASLT names): win (default): timed at each bucket's shape as the\n"
      "                   candidates are, then raced against the bucket's (or each part's) winner, and\n"
      "                   where it is faster it holds the bucket (winner vendor/cublaslt: libaitune and\n"
      "                   emitted files call cuBLASLt there); time: timed only, for x vendor; off.\n"
      "                   Win or time, a bucket that holds (ranges, `hold: true`) also times it at the\n"
      "                   sizes hold races: a winner slower than cuBLASLt there is split and its parts\n"
      "                   searched where they lose, as for a faster finalist (docs/SPEC.md)\n\n"
      "Exit: 0 done, 1 failure (e.g. no GPU), 2 usage (e.g. a bad --gpus, a GPU it names that the host\n"
      "lacks, GPUs of different models under --gpus all or N), 3 bad spec, registry or peers file,\n"
      "130 interrupted (resumable); 1 also when another sweep holds the registry.",
      "aitune sweep SPEC [--db PATH] [--budget D] [--max-evals N] [--timeout D]\n"
      "       [--gpus all|N|I,J | --gpu I] [-j N] [--ahead N] [--quiet] [--shard I/N] [--from-misses]\n"
      "       [--peers FILE] [--keep-cubins] [--vendor win|time|off]" },
    { "show", cmd_show, "The registry's winners as a table, or as JSON. With --peers FILE (JSON lines as\n"
      "bench/peers_*.py print them: {\"case\": \"op:dtype:MxNxK\", \"cublas_tflops\": 774.7}), each winner's\n"
      "ratio to the peer measured at a shape in its bucket, in TFLOP/s where the peer has it, else GB/s.\n\n"
      "  --db PATH     the registry (read only)\n"
      "  --json        a JSON array, one object per winner\n"
      "  --peers FILE  peer figures, as above\n\n"
      "Exit: 0, 2 usage, 3 a registry or peers file that does not open.",
      "aitune show [--db PATH] [--json] [--peers FILE]" },
    { "lookup", cmd_lookup, "The config for a shape, and which level answered. The tuned bucket that holds it, else the\n"
      "nearest tuned bucket, else the template default. The same answer libaitune's aitune_lookup gives.\n"
      "--shape gives one size per dim, in the op's order: --shape 4096,1024.\n\n"
      "Exit: 0 answered, 2 usage (a malformed option; a --shape that is not one integer >= 1 per dim of\n"
      "the op), 3 a missing or bad registry, or nothing for the op, arch and dtype.",
      "aitune lookup OP --arch sm_90 --dtype bf16 --shape N[,M...] [--db PATH] [--json]" },
    { "emit", cmd_emit, "Write the chosen kernel as a standalone .cu file. It holds the kernel the registry chose\n"
      "for the shape (config in a comment) and an extern \"C\" host launch function\n"
      "aitune_<op>_<dtype>(args..., stream). It builds with plain\n"
      "nvcc -gencode=arch=compute_90a,code=sm_90a -c and needs nothing from aitune. Without --shape,\n"
      "every tuned bucket of the op, with a dispatcher that picks one by shape as libaitune does.\n\n"
      "  --dtype T     the dtype (required)\n"
      "  --arch A      the arch (default: the registry's one arch for the op)\n"
      "  --shape N     one size per dim, in the op's order (4096 or 4096,1024)\n"
      "  -o FILE       write FILE (replaced whole, atomically; never through a link), - for stdout\n"
      "  --db PATH     the registry (read only)\n\n"
      "Exit: 0, 1 when FILE cannot be written, 2 usage (an option, shape, op or dtype that is not\n"
      "one; a FILE that is not a regular file), 3 a missing or bad registry, or nothing tuned and no\n"
      "default for the op.",
      "aitune emit OP --dtype T [--arch A] [--shape N[,M...]] -o FILE [--db PATH]" },
    { "list", cmd_list, list_summary, list_usage },
    { "why", cmd_why, why_summary, why_usage },
    { "pin", cmd_pin, pin_summary, pin_usage },
    { "export", cmd_export, export_summary, export_usage },
    { "gc", cmd_gc, gc_summary, gc_usage },
    { "import", cmd_import, import_summary, import_usage },
    { "report", cmd_report, report_summary, report_usage },
    { "status", cmd_status, status_summary, status_usage },
    { "merge", cmd_merge, merge_summary, merge_usage },
    { "retune", cmd_retune, retune_summary, retune_usage },
    { "check", cmd_check, check_summary, check_usage },
    { "window", cmd_window, window_summary, window_usage },
    { "scan", cmd_scan, scan_summary, scan_usage },
    { "replay", replay_main, REPLAY_SUMMARY, REPLAY_USAGE },
    { "help", cmd_help, "Show the usage of a command.\n\nExit: 0, 2 for a command that is not one.",
      "aitune help [COMMAND]" },
    { NULL, NULL, NULL, NULL },
};

static const cmd *find_cmd(const char *name)
{
    for (const cmd *c = commands; c->name; c++)
        if (!strcmp(c->name, name)) return c;
    return NULL;
}

static void overview(FILE *f)
{
    fprintf(f, "usage: aitune COMMAND [ARGS]\n\n"
               "aitune makes CUDA kernels fast on the GPU they run on: it instantiates candidates from Lua\n"
               "templates, compiles them with NVRTC, verifies and times them on the GPU, and keeps the winners\n"
               "in a SQLite registry that applications query through libaitune.\n\ncommands:\n");
    /* Each command's first sentence, on one line of at most 100 columns: a
    ** longer one ends at its last ':' or ';' that fits, else at a word. */
    for (const cmd *c = commands; c->name; c++) {
        char line[128];
        int n = snprintf(line, sizeof line, "  %-9s ", c->name), word = 0, clause = 0;
        for (const char *p = c->summary; *p && n < 100; p++) {
            int space = *p == ' ' || *p == '\n';
            if (space) word = n;
            if (space && n && (line[n - 1] == ':' || line[n - 1] == ';')) clause = n - 1;
            line[n++] = space ? ' ' : *p;
            if (*p == '.' && (p == c->summary || p[-1] != '.') && (p[1] == ' ' || p[1] == '\n' || !p[1])) break;
        }
        if (n >= 100) n = clause ? clause : word;
        fprintf(f, "%.*s\n", n, line);
    }
    fprintf(f, "\nA typical window: aitune compile specs/elementwise.yaml; aitune sweep specs/elementwise.yaml;\n"
               "aitune show; aitune emit axpy --arch sm_90 --dtype f32 --shape 67108864 -o axpy.cu\n"
               "`aitune help COMMAND` shows a command's options.\n");
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) { overview(stdout); return EXIT_OK; }
    const cmd *c = find_cmd(argv[1]);
    if (!c) {
        error("no command '%s'", argv[1]);
        overview(stderr);
        return EXIT_USAGE;
    }
    printf("usage: %s\n\n%s\n", c->usage, c->summary);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "__worker")) return worker_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "__nvrtc")) return jit_helper_main();
    jit_use_helpers("__nvrtc");     /* a compiler crash costs one candidate, not the run */
    if (argc < 2) { overview(stderr); return EXIT_USAGE; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { overview(stdout); return EXIT_OK; }
    if (!strcmp(argv[1], "--version")) {
        printf("aitune %s (NVRTC %s)\n", AITUNE_TOOL_VERSION, jit_nvrtc_version());
        return EXIT_OK;
    }
    const cmd *c = find_cmd(argv[1]);
    if (!c) {
        error("no command '%s'", argv[1]);
        overview(stderr);
        return EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
