/* pin.c: `aitune pin`: one of a bucket's finalists made its winner, chosen
** by a measurement the sweep cannot make (the application's own step,
** timed with each finalist in turn: aitune.racing.race). --list prints the
** finalists (the winner, then its runners-up) and whether each still has
** its kernel; a pin writes the finalist's winner row, its kernel the one
** the sweep compiled and measured (the bucket's ok measurement of that
** config whose cubin is kept), its launch plan made again from the
** template at the bucket's shape, and checked to be the plan of that very
** source. The row, the run that records the pin and the hand-over of the
** sweep's record of the bucket (registry_decided.h) are one transaction,
** written under the sweep lock. */
#define _GNU_SOURCE
#include "cli.h"
#include "plan.h"
#include "json.h"
#include "registry_cubin.h"
#include "registry_decided.h"
#include "registry_measure.h"
#include "registry_winner.h"
#include "spec.h"
#include "sweep_cand.h"
#include "tmpl.h"
#include "vendor.h"
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char pin_summary[] =
    "Make one of a bucket's finalists its winner, or list them. For a finalist chosen by a measurement\n"
    "the sweep cannot make: the application's own step (aitune.racing.race) timed with each finalist\n"
    "in turn, where the sweep's ranking (its `timing`, neighbour or stream) does not hold.\n\n"
    "--list prints one JSON object a line, the winner first, then each runner-up of its race, fastest\n"
    "first: {\"template\", \"config\", \"median_us\" (the race's time), \"winner\", \"kernel\"}; kernel is\n"
    "whether the registry still holds an ok measurement of that config in the bucket whose cubin is\n"
    "kept and which the template still makes at the bucket's shape: only such a finalist can be pinned.\n"
    "A vendor row (vendor/cublaslt) is listed with kernel false: pinning to or from one is refused.\n\n"
    "A pin writes the finalist's winner row: its template, config and kernel (the measurement's cubin),\n"
    "its time in the sweep's race (median_us; GB/s and TFLOP/s from the old winner's bytes and flops),\n"
    "margin = the fastest other finalist's race time over its own - 1 (negative when the sweep timed\n"
    "another faster), the runners-up the old ones without it and with the old winner, and the\n"
    "launch plan made from the template at the bucket's shape; the default's time, exhaustive, GPU,\n"
    "shape and edges are the old row's. A run row records the command as typed (--note with it) and\n"
    "the winner points at it (`aitune why` shows it). One transaction, under the sweep lock. A part of\n"
    "a split bucket (KEY as `aitune show` prints it: n=2^12/5760) is pinned alone, its siblings kept.\n"
    "Pinning the winner again does nothing and says so.\n\n"
    "What later commands do with a pinned bucket: `aitune sweep` of the same spec run again leaves it\n"
    "(the sweep's record of the bucket is handed to the pin, so the same basis finds it decided);\n"
    "a changed basis (spec, options, toolchain, templates, scan holes) decides it again by the spec's\n"
    "timing, undoing the pin, and so does the next sweep after a part of a split bucket is pinned (the\n"
    "whole bucket is decided again). `retune` and `window` re-race a stale (or, with `retune --all`,\n"
    "any) pinned bucket's finalists by the spec's timing: the pin stays while it is within the noise\n"
    "margin of the fastest, else the bucket is searched again and the pin is lost; `window` also\n"
    "goes on with a search that was cut short (not exhaustive), deciding the bucket again. Pin again\n"
    "after any of them.\n\n"
    "  --dtype T        the dtype (required)\n"
    "  --bucket KEY     the bucket, as `aitune show` prints it (required)\n"
    "  --list           list the finalists (read only)\n"
    "  --template NAME  the finalist's template (gemm_nt/swapab) ...\n"
    "  --config JSON    ... and config, as --list prints it (compared as canonical JSON)\n"
    "  --arch A         the arch (needed when the registry has the bucket for several)\n"
    "  --note TEXT      why, recorded with the command (e.g. \"raced in the model's decode step:\n"
    "                   6.86 ms against 7.05 ms\")\n"
    "  --db PATH        the registry\n\n"
    "Exit: 0 listed or pinned (or the finalist is the winner already), 1 the registry cannot be\n"
    "written (read-only, or another sweep holds it), 2 usage (a missing or malformed option, bad JSON\n"
    "in --config, an op, dtype, template or key that is not one), 3 the registry does not open or is\n"
    "not one, the bucket has no winner, the config is not one of its finalists, its kernel is gone, or\n"
    "it is a vendor row.";
const char pin_usage[] = "aitune pin OP --dtype T --bucket KEY (--list | --template NAME --config JSON) [--arch A]\n"
                         "       [--note TEXT] [--db PATH]";

typedef struct finalist {
    char tmpl[64];
    char *config;           /* canonical where the template knows it, else the registry's text */
    double median_us;
    int known;              /* the template is the op's and knows the config */
    int kernel;             /* pinnable: cubin and plan below */
    char cubin[17];
    char *plan;
    char why[512];          /* kernel 0: why */
} finalist;

typedef struct pinner {
    const char *op, *dtype, *key, *db;
    tmpl *T;
    reg *R;
    winner *fam;            /* the bucket's family on its hardware (the bucket itself, or its parts) */
    int nfam, at;           /* fam[at] is KEY's */
    char hw[256], sources[4096];
    finalist *f;            /* the winner first */
    int nf;
    op_task task;
    device dev;
} pinner;

static int fail3(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail3(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error("%s", msg);
    return EXIT_INPUT;
}

/* config as the template's canonical JSON into *out (malloc'd): 1, or 0 with
** why when the template does not know it; -1 a Lua failure (tmpl_errmsg). */
static int canonical(tmpl *T, const char *tname, const char *config, char **out, char *why, int cap)
{
    *out = NULL;
    int ok = 0;
    if (!json_valid(config)) return snprintf(why, (size_t)cap, "not JSON"), 0;
    if (tmpl_config_known(T, tname, config, &ok, why, cap)) return snprintf(why, (size_t)cap, "%s", tmpl_errmsg(T)), 0;
    if (!ok) return 0;
    strbuf sb = STRBUF_INIT;
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    int rc = tmpl_push_config(T, config) || tmpl_config_json(T, -1, &sb);
    lua_settop(L, top);
    if (rc) {
        snprintf(why, (size_t)cap, "%s", tmpl_errmsg(T));
        sb_free(&sb);
        return 0;
    }
    *out = sb.buf ? sb.buf : xstrdup("{}");
    return 1;
}

/* Whether name is a template of the op (a registry's text, or the user's). */
static int op_template(tmpl *T, const char *op, const char *name)
{
    char **ts;
    int n, found = 0;
    if (tmpl_templates(T, op, &ts, &n)) return 0;
    for (int i = 0; i < n; i++) {
        found |= !strcmp(ts[i], name);
        free(ts[i]);
    }
    free(ts);
    return found;
}

static void add_finalist(pinner *P, const char *tname, const char *config, double us)
{
    P->f = xrealloc(P->f, sizeof *P->f * (size_t)(P->nf + 1));
    finalist *f = &P->f[P->nf++];
    memset(f, 0, sizeof *f);
    snprintf(f->tmpl, sizeof f->tmpl, "%s", tname);
    f->median_us = us;
    char why[256] = "";
    f->known = !vendor_is_template(tname) && op_template(P->T, P->op, tname) &&
               canonical(P->T, tname, config, &f->config, why, sizeof why) == 1;
    if (!f->config) f->config = xstrdup(config);
    if (vendor_is_template(tname)) snprintf(f->why, sizeof f->why, "the vendor's row (cuBLASLt) has no kernel to pin");
    else if (!f->known) snprintf(f->why, sizeof f->why, "not a config of the op's templates here: %s", why[0] ? why : "unknown template");
}

static int race_cb(const char *tname, const char *config, double us, void *ctx)
{
    add_finalist(ctx, tname, config, us);
    return 0;
}

/* The bucket's cubins of ok measurements of finalist f. */
typedef struct hashes { const finalist *f; char (*h)[17]; int n; } hashes;

static int measured(const measurement *m, void *ctx)
{
    hashes *hs = ctx;
    if (strcmp(m->status, "ok") || strcmp(m->tmpl, hs->f->tmpl) || !m->config || strcmp(m->config, hs->f->config) ||
        strlen(m->cubin) != 16)
        return 0;
    for (int i = 0; i < hs->n; i++)
        if (!strcmp(hs->h[i], m->cubin)) return 0;
    hs->h = xrealloc(hs->h, sizeof *hs->h * (size_t)(hs->n + 1));
    snprintf(hs->h[hs->n++], 17, "%s", m->cubin);
    return 0;
}

/* Finalist f's kernel: an ok measurement of it in the bucket whose cubin is
** kept and whose source the template makes again at the bucket's shape
** (under the cubin's kernel name), so the plan made here is that kernel's.
** 0 (f->kernel says which), -1 a registry failure. */
static int find_kernel(pinner *P, finalist *f)
{
    if (!f->known) return 0;
    const winner *w = &P->fam[P->at];
    hashes hs = { .f = f };
    if (reg_bucket_measurements(P->R, P->op, w->arch, P->dtype, P->key, measured, &hs)) return error("%s", reg_errmsg(P->R));
    snprintf(f->why, sizeof f->why, "no ok measurement of it is left in the bucket");
    for (int i = 0; i < hs.n && !f->kernel; i++) {
        char *src = NULL, kname[64];
        int got = reg_cubin_source(P->R, hs.h[i], &src, kname, sizeof kname);
        if (got < 0) {
            free(hs.h);
            return error("%s", reg_errmsg(P->R));
        }
        if (!got || !src) {
            snprintf(f->why, sizeof f->why, "its cubin (%s) is no longer in the registry", hs.h[i]);
            free(src);
            continue;
        }
        kernel_src ks = { 0 };
        char err[256];
        plan_geom g;
        if (!plan_ident(kname)) {
            snprintf(f->why, sizeof f->why, "its cubin (%s) names kernel '%s', not a C name", hs.h[i], cli_shown(kname));
        } else if (tmpl_instantiate(P->T, f->tmpl, f->config, &P->task, &P->dev, kname, &ks)) {
            snprintf(f->why, sizeof f->why, "the template does not make it at the bucket's shape: %s", tmpl_errmsg(P->T));
        } else if (!ks.source || strcmp(ks.source, src)) {
            snprintf(f->why, sizeof f->why, "the template makes another source than its cubin's (%s): the templates or the "
                     "GPU's facts changed since the sweep", hs.h[i]);
        } else if (kernel_geometry(&ks, &P->task, &g, err, sizeof err) || !(f->plan = cand_plan_json(&ks, err, sizeof err))) {
            snprintf(f->why, sizeof f->why, "no launch plan at the bucket's shape: %s", err);
        } else {
            f->kernel = 1;
            snprintf(f->cubin, sizeof f->cubin, "%s", hs.h[i]);
        }
        kernel_src_free(&ks);
        free(src);
    }
    free(hs.h);
    return 0;
}

/* The identity of KEY's winners: the (arch, hardware) rows it has. */
typedef struct ident_scan {
    const char *op, *dtype, *key, *arch;
    int n;
    char archs[4][16], hw[4][256], sources[4096];
} ident_scan;

static int ident_cb(const reg_winner_identity *w, void *ctx)
{
    ident_scan *s = ctx;
    char base[16];
    arch_base(w->arch, base);
    if (strcmp(w->op, s->op) || strcmp(w->dtype, s->dtype) || strcmp(w->bucket, s->key) || (s->arch && strcmp(base, s->arch)))
        return 0;
    if (s->n < 4) {
        snprintf(s->archs[s->n], sizeof s->archs[0], "%s", w->arch);
        snprintf(s->hw[s->n], sizeof s->hw[0], "%s", w->hw);
        if (!s->n) snprintf(s->sources, sizeof s->sources, "%s", w->sources);
    }
    s->n++;
    return 0;
}

/* The op's dims from the winner's shape ({"m":8,...}) into the task. */
static int bucket_task(pinner *P, const winner *w)
{
    int nd, ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(P->T, P->op, &nd, dims, &ndt, dts, 32)) return fail3("%s", tmpl_errmsg(P->T));
    json *doc;
    char err[160];
    if (json_parse(w->shape, &doc, err, sizeof err))
        return fail3("registry '%s': %s %s %s: its shape is not JSON: %s", P->db, P->op, P->dtype, cli_shown(P->key), err);
    long long shape[TMPL_MAXDIMS];
    int bad = 0;
    for (int d = 0; d < nd && !bad; d++) {
        const json *v = json_get(doc, dims[d]);
        bad = !v || v->type != JSON_NUM || !v->is_int || v->i < 1 || v->i > (1LL << 48);
        if (!bad) shape[d] = v->i;
    }
    json_free(doc);
    if (bad)
        return fail3("registry '%s': %s %s %s: its shape %s does not give the op's dims", P->db, P->op, P->dtype,
                     cli_shown(P->key), cli_shown(w->shape));
    if (tmpl_task(P->T, P->op, P->dtype, shape, &P->task)) return fail3("%s", tmpl_errmsg(P->T));
    /* The GPU's facts: the arch's (device.h), with what the winner's run
    ** recorded of the GPU that measured it. */
    if (device_assume(w->arch, &P->dev)) return fail3("registry '%s': no device facts for arch '%s'", P->db, cli_shown(w->arch));
    reg_run ru;
    if (w->run > 0 && reg_run_get(P->R, w->run, &ru) == 1 && ru.device_id > 0 && ru.dev.sms > 0 && ru.dev.cc == P->dev.cc) {
        snprintf(P->dev.name, sizeof P->dev.name, "%s", ru.dev.name);
        snprintf(P->dev.uuid, sizeof P->dev.uuid, "%s", ru.dev.uuid);
        P->dev.sms = ru.dev.sms;
        P->dev.mem = ru.dev.mem;
        P->dev.l2 = ru.dev.l2;
    }
    return 0;
}

/* f's template, config and race time as members of the object j is in. */
static void finalist_members(jw *j, const finalist *f)
{
    jw_key(j, "template");
    jw_str(j, f->tmpl);
    jw_key(j, "config");
    if (json_valid(f->config)) jw_raw(j, f->config);
    else jw_str(j, f->config);
    jw_key(j, "median_us");
    jw_num(j, f->median_us, 3);
}

static void list_line(const finalist *f, int winner)
{
    jw j = { 0 };
    jw_obj(&j);
    finalist_members(&j, f);
    jw_key(&j, "winner");
    jw_bool(&j, winner);
    jw_key(&j, "kernel");
    jw_bool(&j, f->kernel);
    jw_end(&j);
    printf("%s\n", jw_text(&j));
    jw_free(&j);
}

/* The new row of KEY: finalist f in place of the old winner. */
static void pinned_row(pinner *P, const finalist *f, long long run, winner *nw)
{
    const winner *old = &P->fam[P->at];
    *nw = *old;
    snprintf(nw->tmpl, sizeof nw->tmpl, "%s", f->tmpl);
    nw->config = f->config;
    snprintf(nw->cubin, sizeof nw->cubin, "%s", f->cubin);
    nw->launch = f->plan;
    nw->median_us = f->median_us;
    /* Bytes and flops are the bucket's shape's, whoever moves them. */
    nw->gbps = old->median_us > 0 ? old->gbps * old->median_us / f->median_us : 0;
    nw->tflops = old->median_us > 0 ? old->tflops * old->median_us / f->median_us : 0;
    double second = 0;
    jw ru = { 0 };
    jw_arr(&ru);
    for (int i = 0; i < P->nf; i++) {
        const finalist *o = &P->f[i];
        if (o == f) continue;
        if (!second || o->median_us < second) second = o->median_us;
        jw_obj(&ru);
        finalist_members(&ru, o);
        jw_end(&ru);
    }
    jw_end(&ru);
    nw->margin = second > 0 && f->median_us > 0 ? second / f->median_us - 1 : -1;   /* below 0: the sweep timed another faster */
    nw->runners_up = xstrdup(jw_text(&ru));
    jw_free(&ru);
    nw->run = run;
}

int cmd_pin(int argc, char **argv)
{
    opt opts[] = { { "--dtype", 1, 0, 0 }, { "--bucket", 1, 0, 0 }, { "--list", 0, 0, 0 }, { "--template", 1, 0, 0 },
                   { "--config", 1, 0, 0 }, { "--arch", 1, 0, 0 }, { "--note", 1, 0, 0 }, { "--db", 1, 0, 0 },
                   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("pin", pin_usage, pin_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return cli_usage_error("pin", pin_usage, "which op? (e.g. gemm_nt)");
    if (!opts[0].value) return cli_usage_error("pin", pin_usage, "--dtype is required (e.g. --dtype bf16)");
    if (!opts[1].value) return cli_usage_error("pin", pin_usage, "--bucket is required (as `aitune show` prints it)");
    int list = opts[2].set;
    if (list && (opts[3].set || opts[4].set || opts[6].set))
        return cli_usage_error("pin", pin_usage, "--list takes no --template, --config or --note");
    if (!list && (!opts[3].value || !opts[4].value))
        return cli_usage_error("pin", pin_usage, "give --list, or --template and --config");
    pinner P = { .op = pos[0], .dtype = opts[0].value, .key = opts[1].value, .db = cli_db_path(opts[7].value) };
    const char *tname = opts[3].value, *config = opts[4].value;
    if (!list && (!json_valid(config) || config[strspn(config, " \t\r\n")] != '{'))
        return cli_usage_error("pin", pin_usage, "--config '%s' is not a JSON object", config);
    char why[256];
    bucket_parsed bp;
    if (bucket_key_parse(P.key, &bp, why, sizeof why))
        return cli_usage_error("pin", pin_usage, "--bucket '%s' is not a bucket key: %s", P.key, why);
    char arch[16] = "";
    if (opts[5].value) {
        if (!arch_known(opts[5].value)) return cli_usage_error("pin", pin_usage, "--arch '%s' is not an arch aitune knows", opts[5].value);
        arch_base(opts[5].value, arch);
    }
    P.T = tmpl_open(cli_root());
    if (!P.T) {
        error("cannot open the templates under '%s'", cli_root());
        return EXIT_INPUT;
    }
    int nd, ndt, known_dtype = 0;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(P.T, P.op, &nd, dims, &ndt, dts, 32)) {
        tmpl_close(P.T);
        return cli_usage_error("pin", pin_usage, "op '%s' has no templates here (`aitune list` shows the ops)", P.op);
    }
    for (int i = 0; i < ndt; i++) known_dtype |= !strcmp(dts[i], P.dtype);
    if (!known_dtype) {
        tmpl_close(P.T);
        return cli_usage_error("pin", pin_usage, "op '%s' has no dtype '%s'", P.op, P.dtype);
    }
    if (!list && !vendor_is_template(tname) && !op_template(P.T, P.op, tname)) {
        tmpl_close(P.T);
        return cli_usage_error("pin", pin_usage, "'%s' is not a template of %s (`aitune list %s`)", tname, P.op, P.op);
    }
    strbuf cmdline = STRBUF_INIT;
    cli_command_line(argc, argv, &cmdline);
    rc = EXIT_OK;
    if (!file_exists(P.db)) {
        rc = fail3("no registry at '%s' (give --db)", P.db);
        goto out;
    }
    if (!list && (rc = reg_sweep_lock(P.db, sb_str(&cmdline)))) goto out;
    int orc = reg_open(P.db, list, &P.R);
    if (orc) {
        error("%s", reg_errmsg(P.R));
        rc = orc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
        goto out;
    }
    /* The bucket's winner: one arch, one GPU model. */
    ident_scan is = { .op = P.op, .dtype = P.dtype, .key = P.key, .arch = arch[0] ? arch : NULL };
    if (reg_winner_identities(P.R, ident_cb, &is)) {
        rc = fail3("%s", reg_errmsg(P.R));
        goto out;
    }
    if (!is.n) {
        rc = fail3("registry '%s': %s %s bucket %s%s%s has no winner (`aitune show` lists the buckets)", P.db, P.op, P.dtype,
                   cli_shown(P.key), arch[0] ? " on " : "", arch);
        goto out;
    }
    for (int i = 1; i < is.n && i < 4 && !rc; i++) {
        char a0[16], ai[16];
        arch_base(is.archs[0], a0);
        arch_base(is.archs[i], ai);
        if (strcmp(a0, ai))
            rc = cli_usage_error("pin", pin_usage, "%s %s bucket %s has winners for %s and %s: give --arch", P.op, P.dtype,
                                 P.key, a0, ai);
        else if (strcmp(is.hw[0], is.hw[i]))
            rc = fail3("registry '%s': %s %s bucket %s has winners of several GPU models (%s; %s): pin takes one", P.db, P.op,
                       P.dtype, cli_shown(P.key), cli_shown(is.hw[0]), cli_shown(is.hw[i]));
    }
    if (rc) goto out;
    snprintf(P.hw, sizeof P.hw, "%s", is.hw[0]);
    snprintf(P.sources, sizeof P.sources, "%s", is.sources);
    char home[96];
    bucket_home(P.key, home, sizeof home);
    if (reg_winner_family(P.R, P.op, is.archs[0], P.dtype, home, P.hw, &P.fam, &P.nfam)) {
        rc = fail3("%s", reg_errmsg(P.R));
        goto out;
    }
    P.at = -1;
    for (int i = 0; i < P.nfam; i++)
        if (!strcmp(P.fam[i].bucket, P.key) && !strcmp(P.fam[i].arch, is.archs[0])) P.at = i;
    if (P.at < 0) {
        rc = fail3("registry '%s': %s %s bucket %s: its winner row went away while read", P.db, P.op, P.dtype, cli_shown(P.key));
        goto out;
    }
    const winner *w = &P.fam[P.at];
    if ((rc = bucket_task(&P, w))) goto out;
    /* The finalists: the winner, then its race's runners-up, fastest first. */
    add_finalist(&P, w->tmpl, w->config ? w->config : "{}", w->median_us);
    if (reg_winner_race(P.R, P.op, w->arch, P.dtype, P.key, race_cb, &P)) {
        rc = fail3("%s", reg_errmsg(P.R));
        goto out;
    }
    for (int i = 0; i < P.nf; i++)
        if (find_kernel(&P, &P.f[i])) {
            rc = EXIT_INPUT;
            goto out;
        }
    if (list) {
        for (int i = 0; i < P.nf; i++) list_line(&P.f[i], i == 0);
        goto out;
    }
    /* The finalist asked for. */
    char *want = NULL;
    int got = vendor_is_template(tname) ? 0 : canonical(P.T, tname, config, &want, why, sizeof why);
    finalist *f = NULL;
    for (int i = 0; i < P.nf && got == 1 && !f; i++)
        if (!strcmp(P.f[i].tmpl, tname) && !strcmp(P.f[i].config, want)) f = &P.f[i];
    free(want);
    if (vendor_is_template(tname) || vendor_is_template(w->tmpl)) {
        rc = fail3("%s %s bucket %s: pinning %s the vendor's row (%s) is not supported", P.op, P.dtype, cli_shown(P.key),
                   vendor_is_template(tname) ? "to" : "from", vendor_is_template(tname) ? tname : cli_shown(w->tmpl));
        goto out;
    }
    if (!f) {
        rc = fail3("%s %s bucket %s: %s %s is not one of its finalists%s%s (`aitune pin %s --dtype %s --bucket %s --list`)",
                   P.op, P.dtype, cli_shown(P.key), cli_shown(tname), cli_shown(config), got == 1 ? "" : ": ",
                   got == 1 ? "" : why, P.op, P.dtype, cli_shown(P.key));
        goto out;
    }
    if (f == &P.f[0]) {
        printf("pin: %s %s %s: %s %s is the winner already; nothing changed\n", P.op, P.dtype, cli_shown(P.key),
               cli_shown(f->tmpl), cli_shown(f->config));
        goto out;
    }
    if (!f->kernel) {
        rc = fail3("%s %s bucket %s: %s %s cannot be pinned: %s", P.op, P.dtype, cli_shown(P.key), cli_shown(f->tmpl),
                   cli_shown(f->config), f->why);
        goto out;
    }
    /* One transaction: the run, the family with KEY's row replaced, the
    ** sweep's record of the bucket handed to the pin. */
    long long run = 0, old_run = w->run;
    winner *rows = xmalloc(sizeof *rows * (size_t)P.nfam);
    memcpy(rows, P.fam, sizeof *rows * (size_t)P.nfam);
    int moved = 0, bad = reg_begin(P.R);
    if (!bad) bad = reg_run_begin(P.R, sb_str(&cmdline), NULL, 0, w->device, "{}", &run);
    if (!bad && P.sources[0]) bad = reg_run_sources(P.R, run, P.sources);
    winner nw;
    if (!bad) {
        pinned_row(&P, f, run, &nw);
        rows[P.at] = nw;
        bad = reg_winners_put(P.R, home, rows, P.nfam);
        free(nw.runners_up);
    }
    if (!bad && P.nfam == 1 && !strcmp(P.key, home))
        bad = reg_decided_move(P.R, P.op, w->arch, P.dtype, home, P.hw, old_run, run, &moved);
    if (!bad) bad = reg_run_end(P.R, run, "ok");
    if (!bad) bad = reg_commit(P.R);
    free(rows);
    if (bad) {
        reg_rollback(P.R);
        error("%s", reg_errmsg(P.R));
        rc = EXIT_FAIL;
        goto out;
    }
    printf("pin: %s %s %s: %s %s %.2f us (was %s %s %.2f us)\n", P.op, P.dtype, cli_shown(P.key), cli_shown(f->tmpl),
           cli_shown(f->config), f->median_us, cli_shown(P.f[0].tmpl), cli_shown(P.f[0].config), P.f[0].median_us);
out:
    for (int i = 0; i < P.nf; i++) {
        free(P.f[i].config);
        free(P.f[i].plan);
    }
    free(P.f);
    for (int i = 0; i < P.nfam; i++) winner_free(&P.fam[i]);
    free(P.fam);
    if (P.R) reg_close(P.R);
    tmpl_close(P.T);
    sb_free(&cmdline);
    return rc;
}
