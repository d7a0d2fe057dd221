/* gc.c: `aitune gc`: shrink a registry to what its winners need. A sweep
** keeps every measurement (resume and `why` use them) and the kernels of
** winners, finalists and defaults; `aitune compile` and `sweep
** --keep-cubins` keep every kernel. Once the tuning is done, most of that
** is history. */
#define _GNU_SOURCE
#include "cli.h"
#include "registry_cubin.h"
#include <stdio.h>

const char gc_summary[] =
    "Drop what no winner needs, then VACUUM. That is the measurements of candidates that lost and\n"
    "the cubins nothing kept names. Every winner stays launchable (its cubin, launch and config), as\n"
    "does each default; the finalists of each race keep their measurements and cubins, so `aitune\n"
    "why` still shows the race and `aitune retune` races them again without compiling.\n"
    "Failed candidates, and the cubin cache of a compile-only registry or of `sweep --keep-cubins`,\n"
    "are dropped: run gc when a tuning window is over. Prints the size before and after.\n\n"
    "  --winners-only    drop the finalists too (retune then compiles them again)\n"
    "  --keep-finalists  keep each race's finalists (the default)\n"
    "  --db PATH         the registry\n\n"
    "Exit: 0, 1 when the registry cannot be written, 2 usage, 3 when it does not open.";
const char gc_usage[] = "aitune gc [--winners-only | --keep-finalists] [--db PATH]";

static void mb(long long bytes, char *out, size_t cap)
{
    if (bytes >= 10LL << 20) snprintf(out, cap, "%.1f MB", bytes / 1048576.0);
    else snprintf(out, cap, "%.1f KB", bytes / 1024.0);
}

int cmd_gc(int argc, char **argv)
{
    opt opts[] = { { "--keep-finalists", 0, 0, 0 }, { "--db", 1, 0, 0 }, { "--winners-only", 0, 0, 0 },
                   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("gc", gc_usage, gc_summary, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    if (opts[0].set && opts[2].set) return cli_usage_error("gc", gc_usage, "--keep-finalists or --winners-only, not both");
    int finalists = !opts[2].set;
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
    if (reg_gc(r, finalists, &s)) {
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
           s.cubins[1], finalists ? " (winners, finalists and defaults kept)" : " (winners and defaults kept)");
    return EXIT_OK;
}
