/* registry_decided.h: the buckets whose decision a sweep completed (table
** decided, db/migrations/015-decided.sql), so that a sweep run again (a
** resume after Ctrl-C, SIGTERM or a time limit, or a finished sweep run
** twice) leaves them as they are (sweep_resume.h says when). A row names
** the bucket (op, arch, dtype, key) and the hardware, the basis the
** decision was made on (text the sweep builds; compared, never parsed), the
** run that made it and how many winner rows that run stored for the bucket
** and its parts (0: none, no correct candidate).
**
** A row stands only while the registry still holds exactly those winner
** rows: the bucket's and its parts' on that hardware, every one written by
** that run. A retune, a merge that replaced a winner, or a winner deleted
** since, and the bucket is decided again. A registry older than schema 8
** (opened read-only, so not migrated) has no rows. Calls return 0 (1 found
** where said) and -1 with reg_errmsg set. */
#ifndef REGISTRY_DECIDED_H
#define REGISTRY_DECIDED_H
#include "registry.h"

/* Bucket (op, arch, dtype, bucket) decided by run on hardware hw (devices.hw)
** under basis: its winner rows are those run stored for it and its parts,
** counted here into *winners. Replaces the bucket's row of that hardware. */
int reg_decided_put(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                    const char *basis, long long run, int *winners);

/* Whether the bucket is decided on hw under basis and its row stands (see
** above): 1 (its *run and *winners), 0 not. */
int reg_decided_get(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                    const char *basis, long long *run, int *winners);

/* The bucket's row on hw, decided by run from, handed to run to: its winner
** rows were rewritten by run to (a pin: registry_winner.h) and the decision
** is to stand for them. *moved: 1 when there was such a row, else 0. */
int reg_decided_move(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                     long long from, long long to, int *moved);

#endif
