/* registry_decided.c: see registry_decided.h. */
#define _GNU_SOURCE
#include "registry_decided.h"
#include "registry_sql.h"

/* Schema 8 has the table; an older registry opened read-only does not. */
static int has_table(reg *r) { return reg_version(r) >= 8; }

/* The winner rows w of a decided row d's bucket and its parts on d's
** hardware. */
#define FAMILY "FROM winners w WHERE w.op = d.op AND w.arch = d.arch AND w.dtype = d.dtype AND w.hw = d.hw AND " \
               REG_IN_HOME("w.bucket", "d.bucket")

int reg_decided_put(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                    const char *basis, long long run, int *winners)
{
    *winners = 0;
    if (!has_table(r)) return reg_fail(r, "has no decided table (schema %d): open it for writing", reg_version(r));
    sqlite3_stmt *st = reg_prep(r,
        "INSERT OR REPLACE INTO decided (op, arch, dtype, bucket, hw, basis, winners, run) "
        "SELECT ?1, ?2, ?3, ?4, ?5, ?6, (SELECT count(*) FROM winners WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND "
        "hw = ?5 AND run = ?7 AND " REG_IN_HOME("bucket", "?4") "), ?7 "
        "RETURNING winners");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    reg_bind(st, 5, hw);
    reg_bind(st, 6, basis);
    sqlite3_bind_int64(st, 7, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *winners = sqlite3_column_int(st, 0);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot record a decided bucket");
}

int reg_decided_get(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                    const char *basis, long long *run, int *winners)
{
    *run = 0;
    *winners = 0;
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = reg_prep(r,
        "SELECT d.run, d.winners, (SELECT count(*) " FAMILY "), (SELECT count(*) " FAMILY " AND w.run = d.run) "
        "FROM decided d WHERE d.op = ?1 AND d.arch = ?2 AND d.dtype = ?3 AND d.bucket = ?4 AND d.hw = ?5 AND "
        "d.basis = ?6 AND typeof(d.run) = 'integer' AND d.run > 0 AND typeof(d.winners) = 'integer'");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    reg_bind(st, 5, hw);
    reg_bind(st, 6, basis);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW) {
        long long n = sqlite3_column_int64(st, 1);
        found = n >= 0 && sqlite3_column_int64(st, 2) == n && sqlite3_column_int64(st, 3) == n;
        if (found) {
            *run = sqlite3_column_int64(st, 0);
            *winners = (int)n;
        }
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? found : reg_dbfail(r, "cannot read the decided buckets");
}

int reg_decided_move(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                     long long from, long long to, int *moved)
{
    *moved = 0;
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = reg_prep(r, "UPDATE decided SET run = ?7 WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND bucket = ?4 "
                                   "AND hw = ?5 AND run = ?6");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    reg_bind(st, 5, hw);
    sqlite3_bind_int64(st, 6, from);
    sqlite3_bind_int64(st, 7, to);
    if (reg_done(r, st, "cannot hand a decided bucket to a pin")) return -1;
    *moved = sqlite3_changes(reg_db(r)) > 0;
    return 0;
}
