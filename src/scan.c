/* scan.c: the `aitune scan` command (sweep_scan.h does the work). */
#define _GNU_SOURCE
#include "cli.h"
#include "spec.h"
#include "sweep.h"
#include "sweep_scan.h"
#include "sweep_vendor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char scan_summary[] =
    "Time what an application gets at every size of the spec's ranges: at each size, the registry's\n"
    "answer (the winner libaitune would launch on this GPU) is verified and timed there, raced\n"
    "against the vendor library (cuBLASLt, for the GEMM ops) in the same task, the spec's way (flush\n"
    "or stream). A size where the answer is slower than the vendor, more than 5% slower than the best\n"
    "candidate the registry measured at that size, or has no time, is a HOLE. Each size's row is kept\n"
    "in the registry (`report` plots x vendor over each dim; `window` schedules the holes first); the\n"
    "summary gives each op's holes, geomean and worst x vendor. A range dim ({range: [lo, hi]}) takes\n"
    "every size, or a sample; other dims take their values.\n\n"
    "  --sample N      N sizes of each range, evenly spread, plus its ends, each log2 bucket's\n"
    "                  first and last sizes and the sizes it was tuned at\n"
    "  --step N        lo, lo + N, lo + 2N, ... and hi (--step 61 over [256, 8192])\n"
    "  --vendor off    no vendor race (the answers timed alone)\n"
    "  --plan          print the sizes each task would scan, and their count; needs no GPU\n"
    "  --gpu N         the GPU (default 0)\n"
    "  --timeout D     seconds a verification run may take (default 10s)\n"
    "  --db PATH       the registry\n"
    "  --quiet         no progress on stderr\n\n"
    "Exit: 0 scanned (holes or not), 1 failure (e.g. no GPU), 2 usage, 3 bad spec or registry,\n"
    "130 interrupted (the sizes scanned so far are kept).";
const char scan_usage[] = "aitune scan SPEC [--sample N | --step N] [--vendor off] [--plan] [--gpu N]\n"
                          "       [--timeout D] [--db PATH] [--quiet]";

/* --plan: each task's sizes per dim, and how many shapes. */
static int scan_plan(const char *path, const scan_pick *pick)
{
    spec sp;
    char err[768];
    if (spec_load(path, &sp, err, sizeof err)) {
        error("%s", err);
        return EXIT_INPUT;
    }
    long long *sz = xcalloc(SCAN_MAXSIZES, sizeof *sz);
    int code = EXIT_OK;
    for (int i = 0; i < sp.ntasks && !code; i++) {
        const spec_task *t = &sp.tasks[i];
        long long total = 1;
        strbuf line = STRBUF_INIT;
        for (int d = 0; d < t->ndims; d++) {
            int n = scan_sizes(&t->dims[d], pick, sz, SCAN_MAXSIZES);
            if (n < 0) {
                error("spec '%s' line %d: dim '%s': more than %d sizes (give --sample N or --step N)", path,
                      t->dims[d].line, t->dims[d].name, SCAN_MAXSIZES);
                code = EXIT_USAGE;
                break;
            }
            total *= n;
            sb_printf(&line, "%s%s: %d size%s", d ? "; " : "", t->dims[d].name, n, n == 1 ? "" : "s");
            /* Every size up to 16; else the first 8 and the last 4. */
            for (int j = 0; j < n; j++) {
                if (n > 16 && j == 8) sb_puts(&line, " ...");
                if (n <= 16 || j < 8 || j >= n - 4) sb_printf(&line, "%s%lld", j ? " " : " (", sz[j]);
            }
            if (n) sb_puts(&line, ")");
        }
        if (!code) printf("%s %s (line %d): %lld shape%s x %d dtype%s; %s\n", t->op, t->dtypes[0], t->line, total,
                          total == 1 ? "" : "s", t->ndtypes, t->ndtypes == 1 ? "" : "s", sb_str(&line));
        sb_free(&line);
    }
    free(sz);
    spec_free(&sp);
    return code;
}

int cmd_scan(int argc, char **argv)
{
    opt opts[] = { { "--sample", 1, 0, 0 }, { "--step", 1, 0, 0 }, { "--vendor", 1, 0, 0 }, { "--plan", 0, 0, 0 },
                   { "--gpu", 1, 0, 0 }, { "--timeout", 1, 0, 0 }, { "--db", 1, 0, 0 }, { "--quiet", 0, 0, 0 },
                   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("scan", scan_usage, scan_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return cli_usage_error("scan", scan_usage, "which spec? (the ranges to scan)");
    sweep_opts o = { .spec_path = pos[0], .db_path = cli_db_path(opts[6].value), .root = cli_root(), .scan = 1,
                     .kernel_timeout = 10, .quiet = opts[7].set };
    char *end;
    if (opts[0].set && opts[1].set) return cli_usage_error("scan", scan_usage, "--sample and --step: pick one");
    if (opts[0].set) {
        long v = strtol(opts[0].value, &end, 10);
        if (*end || end == opts[0].value || v < 2 || v > SCAN_MAXSIZES)
            return cli_usage_error("scan", scan_usage, "--sample '%s' must be an integer in [2, %d]", opts[0].value,
                                   SCAN_MAXSIZES);
        o.scan_pick.sample = (int)v;
    }
    if (opts[1].set) {
        long long v = strtoll(opts[1].value, &end, 10);
        if (*end || end == opts[1].value || v < 1 || v > (1LL << 40))
            return cli_usage_error("scan", scan_usage, "--step '%s' must be an integer >= 1", opts[1].value);
        o.scan_pick.step = v;
    }
    if (opts[2].set) {
        if (strcmp(opts[2].value, "off"))
            return cli_usage_error("scan", scan_usage, "--vendor '%s': the only choice is off", opts[2].value);
        o.vendor = SWEEP_VENDOR_OFF;
    } else {
        o.vendor = SWEEP_VENDOR_TIME;   /* raced, never stored as a winner */
    }
    if (opts[3].set) return scan_plan(o.spec_path, &o.scan_pick);
    if (opts[4].set) {
        long v = strtol(opts[4].value, &end, 10);
        if (*end || end == opts[4].value || v < 0 || v > 63)
            return cli_usage_error("scan", scan_usage, "--gpu '%s' must be an integer in [0, 63]", opts[4].value);
        o.gpu = (int)v;
    }
    if (opts[5].set && (o.kernel_timeout = parse_duration(opts[5].value)) <= 0)
        return cli_usage_error("scan", scan_usage, "--timeout '%s' is not a duration like 10s", opts[5].value);
    if (!file_exists(o.db_path)) {
        error("no registry at '%s' (give --db; `aitune sweep` makes one)", o.db_path);
        return EXIT_INPUT;
    }
    strbuf cmdline = STRBUF_INIT;
    sb_puts(&cmdline, "aitune");
    for (int i = 0; i < argc; i++) sb_printf(&cmdline, " %s", argv[i]);
    o.command = sb_str(&cmdline);
    rc = sweep_run(&o);
    sb_free(&cmdline);
    return rc;
}
