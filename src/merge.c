/* merge.c: `aitune merge OUT IN...`: combine registries, e.g. the shards of
** one sweep (`aitune sweep --shard i/n`) written on several machines. The
** work is reg_merge's, one input at a time, each in its own transaction. */
#define _GNU_SOURCE
#include "cli.h"
#include "registry_merge.h"
#include <stdio.h>
#include <string.h>

const char merge_summary[] =
    "Merge registries IN... into OUT (created if absent). Devices and runs are matched by content, not\n"
    "by their local ids; measurements, cubins and defaults OUT lacks are added; for each (op, arch,\n"
    "dtype, bucket, GPU) the winner with the lower time is kept (a tie: the smaller config, so the\n"
    "order of inputs does not matter); misses keep the larger count; the vendor's times OUT lacks are\n"
    "added. Merging an input again adds nothing. Each input is read, never written: copied beside OUT\n"
    "(an older one migrated in the copy) and checked whole before anything of it is merged: its pages\n"
    "(integrity_check), its schema, one row per key, finite positive times, names, archs, bucket keys\n"
    "that fit their edges and shapes, and split buckets whose parts cover them. An input that fails\n"
    "is named with what is wrong, and nothing of it is merged.\n\n"
    "Exit: 0, 1 when OUT cannot be written, 2 usage, 3 when an input is not a registry or fails a\n"
    "check.";
const char merge_usage[] = "aitune merge OUT IN...";

#define MERGE_MAXIN 4096

int cmd_merge(int argc, char **argv)
{
    opt opts[] = { { 0, 0, 0, 0 } };
    static const char *pos[MERGE_MAXIN];
    int np, rc = cli_parse("merge", merge_usage, merge_summary, argc, argv, opts, pos, MERGE_MAXIN, &np);
    if (rc) return rc;
    if (np < 2) return cli_usage_error("merge", merge_usage, "%s", np ? "which registries to merge into it?" : "merge into which registry?");
    for (int i = 1; i < np; i++) {
        if (!file_exists(pos[i])) {
            error("no registry at '%s'", pos[i]);
            return EXIT_INPUT;
        }
        if (!strcmp(pos[i], pos[0])) return cli_usage_error("merge", merge_usage, "'%s' is the output", pos[i]);
    }
    reg *r;
    int orc = reg_open(pos[0], 0, &r);
    if (orc) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return orc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
    }
    for (int i = 1; i < np && !rc; i++) {
        reg_merge_stats st = { 0 };
        int mrc = reg_merge(r, pos[i], &st);
        if (mrc) {
            error("%s", reg_errmsg(r));
            rc = mrc == REG_NOTWRITABLE ? EXIT_FAIL : EXIT_INPUT;
            break;
        }
        printf("%s: +%lld measurements, +%lld winners, +%lld cubins, +%lld runs, +%lld devices, %lld misses, "
               "+%lld vendor times\n", pos[i], st.measurements, st.winners, st.cubins, st.runs, st.devices, st.misses,
               st.vendor);
    }
    reg_close(r);
    return rc;
}
