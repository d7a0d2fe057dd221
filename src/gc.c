/* gc.c: `aitune gc`: shrink a registry to what its winners need. A sweep
** keeps every measurement and every compiled candidate (resume and `why`
** use them); once the tuning is done, most of that is history. */
#define _GNU_SOURCE
#include "cli.h"
#include "registry.h"
#include <stdio.h>

const char gc_summary[] =
    "Drop what no winner needs, then VACUUM. That is the measurements of candidates that did not\n"
    "win and the cubins nothing kept names. Every winner stays launchable (its cubin, launch and config)\n"
    "and every winner's own measurement stays; with --keep-finalists so do the finalists of each\n"
    "race (their measurements and cubins), so `aitune why` still shows the race.\n"
    "Failed candidates, and the cubin cache of a compile-only registry, are dropped: run gc when a\n"
    "tuning window is over. Prints the size before and after.\n\n"
    "  --keep-finalists  keep each race's finalists too\n"
    "  --db PATH         the registry\n\n"
    "Exit: 0, 1 when the registry cannot be written, 3 when it does not open.";
const char gc_usage[] = "aitune gc [--keep-finalists] [--db PATH]";

static void mb(long long bytes, char *out, size_t cap)
{
    if (bytes >= 10LL << 20) snprintf(out, cap, "%.1f MB", bytes / 1048576.0);
    else snprintf(out, cap, "%.1f KB", bytes / 1024.0);
}

int cmd_gc(int argc, char **argv)
{
    opt opts[] = { { "--keep-finalists", 0, 0, 0 }, { "--db", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("gc", gc_usage, gc_summary, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    const char *db = cli_db_path(opts[1].value);
    if (!file_exists(db)) {
        error("no registry at '%s' (give --db)", db);
        return EXIT_INPUT;
    }
    reg *r;
    if (reg_open(db, 0, &r)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    reg_gc_stats s;
    if (reg_gc(r, opts[0].set, &s)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_FAIL;
    }
    reg_close(r);
    char a[32], b[32];
    mb(s.bytes[0], a, sizeof a);
    mb(s.bytes[1], b, sizeof b);
    printf("%s: %s -> %s\n", db, a, b);
    printf("  measurements %lld -> %lld, cubins %lld -> %lld%s\n", s.measurements[0], s.measurements[1], s.cubins[0],
           s.cubins[1], opts[0].set ? " (winners and finalists kept)" : " (winners kept)");
    return EXIT_OK;
}
