/* retune.c: `aitune retune SPEC` and `aitune check SPEC`.
**
** retune brings stale winners back to fresh at a
** fraction of a sweep's cost. The buckets of SPEC whose winner is stale on
** this GPU (identity_stale, as `aitune status` says) race their stored
** finalists again; only a bucket whose ranking moved beyond the noise
** margin, or whose finalist now fails, is searched again (sweep_tune.c,
** retune_bucket).
**
** check is the golden suite to run after a driver change: each winner of
** this GPU in SPEC is verified and timed again against its recorded time
** (sweep_tune.c, check_bucket); a slower one beyond the noise margin, or one
** that now fails, is a regression. A winner is timed the way it was
** recorded (reg_winner_stream), whatever the spec's timing says now. */
#define _GNU_SOURCE
#include "cli.h"
#include "identity.h"
#include "jit.h"
#include "registry_winner.h"
#include "sweep.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char retune_summary[] =
    "Re-measure the stale buckets of SPEC on this GPU and toolchain. A bucket is stale when its winner\n"
    "was measured on another GPU, driver, CUDA driver API, NVRTC or aitune, or from template sources\n"
    "since changed (see `aitune status`). Its stored finalists (winner and runners-up) are compiled,\n"
    "verified and timed again, then raced: the winner is kept when it is still fastest within the\n"
    "noise margin; when another finalist beats it by more, or a finalist fails, the bucket is searched\n"
    "again as `aitune sweep` would. Prints old vs new time per bucket. Buckets never tuned are left to\n"
    "`aitune sweep`.\n\n"
    "  --noise PCT     the margin, in percent (default 3)\n"
    "  --all           every tuned bucket of SPEC, stale or not\n"
    "  --budget D      stop after D (e.g. 30m); the spec's budget otherwise\n"
    "  --gpu N         the GPU (default 0)\n"
    "  --db PATH       the registry\n"
    "  --quiet         no progress on stderr\n\n"
    "Exit: 0, 1 failure (e.g. no GPU), 2 usage, 3 bad spec or registry, 130 interrupted.";
const char retune_usage[] = "aitune retune SPEC [--noise PCT] [--all] [--budget D] [--gpu N] [--db PATH] [--quiet]";

typedef struct retune_ctx {
    winner_stamps st;
    int all;
    const char *root;
} retune_ctx;

/* A bucket is retuned when it has a winner and none of this GPU's is
** fresh: this GPU's own winner is stale, or only other GPUs have one. */
static int want(void *vctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    const char *bucket = b->key;
    retune_ctx *c = vctx;
    char hw[256];
    identity_hw(dev, hw, sizeof hw);
    int any;
    int mine = winner_stamps_find(&c->st, op, arch, dtype, bucket, hw, &any);
    if (!any) return 0;
    if (c->all || mine < 0) return 1;
    return winner_stamp_stale(&c->st.w[mine], dev, c->root);
}

/* check: the buckets where this GPU has a winner. */
static int want_mine(void *vctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    const char *bucket = b->key;
    retune_ctx *c = vctx;
    char hw[256];
    identity_hw(dev, hw, sizeof hw);
    int any;
    return winner_stamps_find(&c->st, op, arch, dtype, bucket, hw, &any) >= 0;
}

const char check_summary[] =
    "Re-time every winner of this GPU in SPEC against the time it was recorded with: each is verified\n"
    "and timed again (the measurement is kept; winners are not changed). A winner slower than its\n"
    "record by more than the noise margin, or one that now fails verification, is flagged. Run it\n"
    "after a driver change, or in CI as a golden suite. A winner is timed the way it was recorded\n"
    "(flush, stream or neighbour, from its measurements), even if the spec's `timing` says\n"
    "otherwise now; its line then says so (re-racing with the new method is retune's work).\n\n"
    "  --noise PCT     the margin, in percent (default 3)\n"
    "  --gpu N         the GPU (default 0)\n"
    "  --db PATH       the registry\n"
    "  --quiet         no progress on stderr\n\n"
    "Exit: 0 no regression, 1 a regression or failure, 2 usage, 3 bad spec or registry.";
const char check_usage[] = "aitune check SPEC [--noise PCT] [--gpu N] [--db PATH] [--quiet]";

static int retune_like(const char *cmd, int argc, char **argv, int check);
int cmd_retune(int argc, char **argv) { return retune_like("retune", argc, argv, 0); }
int cmd_check(int argc, char **argv) { return retune_like("check", argc, argv, 1); }

static int retune_like(const char *cmd, int argc, char **argv, int check)
{
    opt opts[] = { { "--noise", 1, 0, 0 }, { "--all", 0, 0, 0 }, { "--budget", 1, 0, 0 }, { "--gpu", 1, 0, 0 },
                   { "--db", 1, 0, 0 }, { "--quiet", 0, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse(cmd, check ? check_usage : retune_usage, check ? check_summary : retune_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (check && (opts[1].set || opts[2].set))
        return cli_usage_error(cmd, check_usage, "%s is for retune", opts[1].set ? "--all" : "--budget");
    if (np != 1) return cli_usage_error(cmd, check ? check_usage : retune_usage, "which spec? (the buckets to look at)");
    retune_ctx c = { .all = opts[1].set, .root = cli_root() };
    sweep_opts o = { .spec_path = pos[0], .db_path = cli_db_path(opts[4].value), .root = c.root, .kernel_timeout = 10,
                     .quiet = opts[5].set, .retune = !check, .check = check, .noise = 0.03, .want = check ? want_mine : want,
                     .want_ctx = &c };
    if (opts[0].set) {
        char *end;
        double v = strtod(opts[0].value, &end);
        if (end == opts[0].value || (*end && strcmp(end, "%")) || !(v >= 0 && v <= 1000))
            return cli_usage_error(cmd, check ? check_usage : retune_usage, "--noise '%s' is not a percentage in [0, 1000]", opts[0].value);
        o.noise = v / 100;
    }
    if (opts[2].set && (rc = cli_duration(cmd, check ? check_usage : retune_usage, "--budget", opts[2].value, "90s, 30m or 2h",
                                          &o.budget_s)))
        return rc;
    if (opts[3].set) {
        long long v;
        if ((rc = cli_count(cmd, check ? check_usage : retune_usage, "--gpu", opts[3].value, 0, 63, &v))) return rc;
        o.gpu = (int)v;
    }
    if (!file_exists(o.db_path)) {
        error("no registry at '%s' (give --db; `aitune sweep` makes one)", o.db_path);
        return EXIT_INPUT;
    }
    reg *r;
    int orc = reg_open(o.db_path, 0, &r);
    if (orc || reg_winner_identities(r, winner_stamps_add, &c.st)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return orc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
    }
    reg_close(r);
    strbuf cmdline = STRBUF_INIT;
    cli_command_line(argc, argv, &cmdline);
    o.command = sb_str(&cmdline);
    rc = sweep_run(&o);
    sb_free(&cmdline);
    winner_stamps_free(&c.st);
    return rc;
}
