/* sweep.c: see sweep.h. The run's frame: the spec, the lanes, the registry,
** the compile pool, the progress line, and the run's end; the work is the
** modules' (sweep.h lists them). */
#define _GNU_SOURCE
#include "sweep.h"
#include "sweep_compile.h"
#include "sweep_lanes.h"
#include "sweep_resume.h"
#include "sweep_scan.h"
#include "sweep_space.h"
#include "sweep_task.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reg_signature_fn over the templates: the op's dims and arguments. */
static int op_signature(void *ctx, const char *op, const char *dtype, int *ndims, char dims[][64], int *nargs,
                        struct plan_arg *args)
{
    tmpl *T = ctx;
    long long shape[TMPL_MAXDIMS] = { 1, 1, 1, 1 };
    op_task t;
    if (tmpl_task(T, op, dtype, shape, &t)) return -1;
    *ndims = t.ndims;
    for (int d = 0; d < t.ndims; d++) snprintf(dims[d], 64, "%s", t.dims[d]);
    *nargs = t.nargs;
    for (int i = 0; i < t.nargs; i++) {
        memset(&args[i], 0, sizeof args[i]);
        snprintf(args[i].name, sizeof args[i].name, "%s", t.args[i].name);
        args[i].role = t.args[i].role;
        if (args[i].role <= ROLE_INOUT) {
            snprintf(args[i].dtype, sizeof args[i].dtype, "%s", t.args[i].dtype);
            args[i].esize = t.args[i].esize;
        }
    }
    return 0;
}

/* The progress line (the run's; with several GPUs the lanes' are views of it). */
static void open_progress(sw *S, hub *H)
{
    const sweep_opts *o = S->o;
    if (o->quiet) return;
    S->P = S->run_P = progress_new(stderr, o->scan ? "scan" : o->compile_only ? "compile" : "sweep");
    progress_start_ticker(S->P);
    for (int i = 0; i < H->nlanes && H->nlanes > 1; i++) {
        char name[16];
        snprintf(name, sizeof name, "GPU %d", H->lanes[i]->gpu);
        H->lanes[i]->P = progress_lane(S->P, name);
    }
}

/* compile's device: the facts of the spec's arch, assumed (no GPU). */
static int assume_device(sw *S)
{
    if (device_assume(S->arch, &S->dev)) {
        error("spec '%s': no device facts for arch '%s' (known: sm_80, sm_90)", S->o->spec_path, S->sp.arch);
        return EXIT_INPUT;
    }
    snprintf(S->dev.nvrtc, sizeof S->dev.nvrtc, "%s", jit_nvrtc_version());
    return 0;
}

/* Whether the registry, as it is before this run takes it, records every
** bucket this run wants decided on its basis: a look, read-only (no
** registry is made, none migrated), answered again once the run holds it
** (open_run). A registry that does not open decides nothing here. */
static int all_decided_before(sw *S, hub *H)
{
    if (!file_exists(S->o->db_path)) return 0;
    reg *R;
    int left = -1;
    if (!reg_open(S->o->db_path, 1, &R)) left = lanes_decided(S, H, R);
    reg_close(R);
    return left == 0 && H->nwanted > 0;
}

/* Everything a run needs before its first bucket: the spec checked
** against the templates, the lanes (their workers: a sweep without a GPU
** stops here, before the registry is touched), the progress line, each
** bucket's space within bounds (sweep_space.h; compile --plan stops here),
** the registry (one connection per lane), the compile pool. Returns 0 or
** the exit code (said). */
static int open_run(sw *S, hub *H)
{
    const sweep_opts *o = S->o;
    S->budget_s = o->budget_s > 0 ? o->budget_s : S->sp.budget_s;
    arch_base(S->sp.arch, S->arch);
    S->T = tmpl_open(o->root);
    int code;
    if (task_check_spec(S)) return EXIT_INPUT;
    if ((code = o->compile_only ? assume_device(S) : lanes_start(S, H))) return code;
    open_progress(S, H);
    sw_signals();   /* counting a large space stops at Ctrl-C */
    if (o->count_only) return 0;
    /* A sweep run again whose buckets are all decided on its basis
    ** (sweep_resume.h) ran this same spec with these templates: its
    ** spaces passed the check then. */
    int done = resume_applies(o) && all_decided_before(S, H);
    if (!o->plan_only && !o->check && !o->scan && !done && (code = space_check(S))) return code;
    if (!o->compile_only && !o->plan_only && (code = reg_sweep_lock(o->db_path, o->command))) return code;
    int orc = reg_open(o->db_path, 0, &S->R);
    if (orc) {
        error("%s", reg_errmsg(S->R));
        return orc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
    }
    /* Launch plans of a registry written by 0.1 become version-2 plans. */
    int converted, unconverted;
    if (reg_migrate_plans(S->R, op_signature, S->T, &converted, &unconverted)) {
        error("%s", reg_errmsg(S->R));
        return EXIT_FAIL;
    }
    if (converted || unconverted)
        fprintf(stderr, "registry: %d launch plans from aitune 0.1 migrated%s\n", converted,
                unconverted ? "; some could not be (their ops are gone): emit and libaitune refuse those" : "");
    for (int i = 1; i < H->nlanes; i++)
        if (reg_open(o->db_path, 0, &H->lanes[i]->R)) {
            error("%s", reg_errmsg(H->lanes[i]->R));
            return EXIT_FAIL;
        }
    /* One pool for every GPU's compiles: -j is the host's budget. Ctrl-C
    ** gives up what it compiles at once (its helpers killed): the sweep
    ** stops after the candidate being timed, not after NVRTC. */
    S->pool = jit_pool_new(o->threads);
    jit_pool_stop_when(S->pool, sw_interrupted);
    for (int i = 1; i < H->nlanes; i++) H->lanes[i]->pool = S->pool;
    /* Now that the registry is this run's (its lock held): the buckets
    ** decided already, left as they are. */
    int left = o->compile_only ? 0 : lanes_buckets(S);
    if (resume_applies(o)) {
        if ((left = lanes_decided(S, H, S->R)) < 0) {
            error("%s", reg_errmsg(S->R));
            return EXIT_FAIL;
        }
        S->kept = H->nkept;
        S->kept_winners = H->kept_winners;
        if (done && left && (code = space_check(S))) return code;   /* another process moved it since the look */
    }
    progress_buckets(S->P, left);   /* the run's, after the counting */
    return 0;
}

/* aitune compile: every candidate of the spec compiled, for the spec's arch. */
static int compile_only(sw *S)
{
    int rc = compile_run(S);
    int code = rc < 0 ? EXIT_FAIL : rc;
    progress_end(S->P);
    sw_summary(S);
    if (sw_interrupted()) {
        fprintf(stderr, "aitune: interrupted; what was compiled is cached: run the same command again to go on\n");
        code = 130;
    }
    return code;
}

/* The end of a sweep that ran: the losers' cubins dropped, the summary, each
** lane's run record closed with the outcome. Returns the exit code. */
static int finish_run(sw *S, hub *H, int code)
{
    const sweep_opts *o = S->o;
    /* Interrupted, the (op, dtype) in hand stays whole: its next buckets
    ** may share the kernels its decided ones lost with. */
    for (int i = 0; i < H->nlanes && !sw_interrupted(); i++)
        if (H->lanes[i]->run_id && !o->keep_cubins &&
            reg_cubin_trim(S->R, H->lanes[i]->run_id, NULL, NULL, &S->trimmed)) {
            error("%s", reg_errmsg(S->R));
            code = EXIT_FAIL;
            break;
        }
    if (!sw_interrupted() && !code && lanes_trim_kept(S, H)) code = EXIT_FAIL;
    progress_end(S->P);
    if (!o->scan) sw_summary(S);   /* scan says its own (sweep_scan.c) */
    if (o->check) {
        printf("check: %d winner%s checked: %d ok, %d regressed or failed\n", S->checked, S->checked == 1 ? "" : "s",
               S->checked - S->regressed, S->regressed);
        if (S->regressed && !code) code = EXIT_FAIL;
    } else if (o->retune)
        printf("retune: %d stale bucket%s re-raced, %d searched again\n", S->retuned, S->retuned == 1 ? "" : "s",
               S->escalated);
    const char *outcome = sw_interrupted() ? "interrupted" : code ? "failed" : S->budget_hit || S->shares_cut ? "budget" : "ok";
    for (int i = 0; i < H->nlanes; i++) reg_run_end(H->lanes[i]->R, H->lanes[i]->run_id, outcome);
    if (S->budget_hit) fprintf(stderr, "aitune: the budget ran out; winners so far are stored, marked not exhaustive\n");
    else if (S->shares_cut)
        fprintf(stderr, "aitune: %d bucket%s stopped at %s share of the budget (the time left over the buckets left); "
                        "%s winners are marked not exhaustive\n", S->shares_cut, S->shares_cut == 1 ? "" : "s",
                S->shares_cut == 1 ? "its" : "their", S->shares_cut == 1 ? "its" : "their");
    if (sw_interrupted()) {
        fprintf(stderr, "aitune: interrupted; what was measured is kept: run the same command again to resume\n");
        code = 130;
    }
    return code;
}

/* Every bucket the run wants is decided already (sweep_resume.h): no GPU
** work, no run recorded; one line says so (and one more when the earlier
** runs' losers' cubins are dropped now, as their end would have). */
static int nothing_to_do(sw *S, hub *H)
{
    int code = lanes_trim_kept(S, H) ? EXIT_FAIL : 0;
    progress_end(S->P);
    char v[16];
    sw_verb(S->o, v);
    fprintf(stderr, "%s: nothing to do: %s %d bucket%s %s decided in the registry already (%d winner%s); "
            "0 candidates evaluated\n", v, H->nkept == 1 ? "its" : "all", H->nkept, H->nkept == 1 ? "" : "s",
            H->nkept == 1 ? "is" : "are", H->kept_winners, H->kept_winners == 1 ? "" : "s");
    if (S->trimmed.cubins)
        fprintf(stderr, "registry: %.1f MB, after dropping %lld cubins of candidates that lost (%.1f MB; "
                "--keep-cubins keeps them)\n", reg_disk_bytes(S->R, 1) / 1048576.0, S->trimmed.cubins,
                S->trimmed.bytes / 1048576.0);
    return code;
}

int sweep_run(const sweep_opts *o)
{
    sw S0, *S = &S0;
    hub H0, *H = &H0;
    memset(S, 0, sizeof *S);
    memset(H, 0, sizeof *H);
    S->o = o;
    S->t0 = now_s();
    char err[768];
    if (spec_load(o->spec_path, &S->sp, err, sizeof err)) {
        fprintf(stderr, "aitune: error: %s\n", err);
        return EXIT_INPUT;
    }
    if (o->peers_path && peers_load(o->peers_path, &S->peers, err, sizeof err)) {
        fprintf(stderr, "aitune: error: %s\n", err);
        spec_free(&S->sp);
        peers_free(&S->peers);
        return EXIT_INPUT;
    }
    pthread_mutex_init(&H->mu, NULL);
    int code = open_run(S, H);
    if (code == 130) fprintf(stderr, "aitune: interrupted before any work began\n");
    if (!code && o->count_only) {
        if ((code = space_plan(S)) == 130) fprintf(stderr, "aitune: interrupted\n");
    } else if (!code) {
        sw_trace_open();
        if (o->compile_only) {
            code = compile_only(S);
        } else if (resume_applies(o) && H->nwanted && H->nkept == H->nwanted) {
            code = nothing_to_do(S, H);
        } else if (!o->plan_only && lanes_begin(H)) {
            /* plan_only: the worker said which GPU this is; nothing is
            ** recorded. Ctrl-C during the engine's compile: the run ends
            ** as an interrupted one. */
            code = sw_interrupted() ? finish_run(S, H, EXIT_FAIL) : EXIT_FAIL;
        } else if (o->scan) {
            code = scan_run(S);
            code = finish_run(S, H, code);
        } else {
            lanes_run(S, H);
            code = S->code;
            if (!o->plan_only) code = finish_run(S, H, code);
        }
    }
    sw_trace_close();
    progress_free(S->run_P);
    lanes_free(H);
    sb_free(&S->env);
    if (S->W) worker_free(S->W);
    jit_pool_free(S->pool);
    reg_close(S->R);
    tmpl_close(S->T);
    spec_free(&S->sp);
    peers_free(&S->peers);
    return code;
}
