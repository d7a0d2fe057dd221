/* registry_merge.h: `aitune merge`'s registry side: another registry's rows
** merged into this one, the input checked whole first, since it is
** untrusted (a shard someone else wrote, a file someone sent). */
#ifndef REGISTRY_MERGE_H
#define REGISTRY_MERGE_H
#include "registry.h"

/* Merge the registry at path into r, in one transaction: devices and runs
** matched by content (their ids are local), measurements and cubins that r
** lacks, the winner of each (op, arch, dtype, bucket, hardware) with the
** lower time (ties: the smaller config text, so the order of inputs does not
** matter; a split bucket's parts replace its unsplit winner of the same
** hardware), defaults r lacks, misses with the larger count, and the
** vendor's times r lacks (registry_vendor.h). Merging the same input again
** adds nothing. The input is untrusted and never written:
** it is copied (read-only) into a temporary registry beside r's file,
** migrated there if older, and checked whole before anything of it is
** merged: integrity_check, its schema (reg_open), one row per key, finite
** positive times (winners, runners-up, ok measurements), names, archs and
** templates, bucket keys that fit their dims, edges and shapes
** (bucket_key_parse), and each split bucket's parts tiling it. A failed
** check merges nothing and names the input and the row. */
typedef struct reg_merge_stats {
    long long devices, runs, measurements, cubins, winners, misses, vendor;   /* vendor: vendor_times rows */
} reg_merge_stats;
int reg_merge(reg *r, const char *path, reg_merge_stats *st);

#endif
