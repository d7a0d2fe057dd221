/* registry_cubin.h: the compile cache in the registry (table cubins), and
** what a registry keeps of it and of the measurements when candidates have
** lost: a sweep trims the losers' kernels after each bucket, `aitune gc`
** drops every measurement and kernel no winner needs.
**
** A cached kernel is keyed by the hash of what it was compiled from
** (jit_key_options: source, options, NVRTC) and stored with the hash of
** its bytes (jit_hash). A row whose key or bytes do not match is not found:
** compiled again, then replaced. The hashes catch a cache damaged or
** rewritten by something that does not know to rewrite them too; they are
** no signature. Calls return 0 (or what they say) and -1 with reg_errmsg
** set. */
#ifndef REGISTRY_CUBIN_H
#define REGISTRY_CUBIN_H
#include "jit.h"
#include "registry.h"

/* Fill j's outputs (ok=1) if hash is cached with j's source and name and
** passes both checks: 1 found, 0 not (a registry older than schema 7, read
** as it is, has no hashes to check: nothing is found). */
int reg_cubin_get(reg *r, const char *hash, jit_job *j);
/* Store j's cubin under hash, with its bytes' hash, in place of any row of
** that hash. */
int reg_cubin_put(reg *r, const char *hash, const jit_job *j);
/* The cached source and entry name of a cubin (for emit): 1 found
** (*source malloc'd), 0 none. */
int reg_cubin_source(reg *r, const char *hash, char **source, char *name, int namecap);

/* Drop from the compile cache the kernels of candidates that lost: those
** named by measurements of buckets whose winner run stored, but for the
** buckets of (except_op, except_dtype) when given (a sweep still tuning
** them may compile the same kernels again for its next bucket). Kept
** always: winners', defaults' and finalists' kernels (retune races the
** finalists without compiling), and every kernel measured in a bucket
** with no winner yet (what a resume needs; a bucket's part is decided by
** its home's winner too, a part searched for a bucket that stayed whole).
** One statement: atomic. Adds to st what it dropped. */
typedef struct reg_trim_stats {
    long long cubins, bytes;
} reg_trim_stats;
int reg_cubin_trim(reg *r, long long run, const char *except_op, const char *except_dtype, reg_trim_stats *st);

/* Drop what no winner needs: measurements but the winners' own (and, with
** keep_finalists, the finalists' in each winner's runners_up; a split
** bucket's parts keep theirs in the bucket's measurements) and the
** cubins none of those, nor a winner or a default, name; then VACUUM
** (turning on incremental auto-vacuum) and truncate the WAL. */
typedef struct reg_gc_stats {
    long long measurements[2], cubins[2], bytes[2];   /* before, after */
} reg_gc_stats;
int reg_gc(reg *r, int keep_finalists, reg_gc_stats *st);

#endif
