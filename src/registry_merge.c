/* registry_merge.c: see registry_merge.h. An input is a shard someone
** else wrote: it is copied (read-only) into a temporary registry beside the
** output, migrated there if older, and checked there, whole, before one row
** of it is merged: integrity, schema (reg_open), one row per key, names and
** archs, finite positive times, bucket keys that fit their edges and shapes,
** and a split bucket's parts that partition it. */
#define _GNU_SOURCE
#include "registry_merge.h"
#include "registry_sql.h"
#include "registry_vendor.h"
#include "dbguard.h"
#include "jit.h"
#include "json.h"
#include "spec.h"
#include "vendor.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One merge step: sql, then how many rows it changed into *n. */
static int merge_step(reg *r, const char *sql, const char *what, long long *n)
{
    int before = sqlite3_total_changes(reg_db(r));
    if (reg_exec(r, sql, what)) return -1;
    if (n) *n += sqlite3_total_changes(reg_db(r)) - before;
    return 0;
}

/* A name as the spec allows (op, dtype, dim): [a-z0-9_], within cap. */
static int good_name(const char *s, size_t cap)
{
    if (!s || !*s || strlen(s) >= cap) return 0;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '_') return 0;
    return 1;
}

/* "op/impl" of op. */
static int good_template(const char *t, const char *op)
{
    size_t n = strlen(op);
    return t && strlen(t) < 64 && !strncmp(t, op, n) && t[n] == '/' && good_name(t + n + 1, 64);
}

/* "64,4096" into v[0, n): exactly n decimal sizes >= 1. */
static int edge_list(const char *s, long long *v, int n)
{
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(s, ",");
        if (parse_size(s, len, 1, 1LL << 62, &v[i])) return -1;
        s += len;
        if (i + 1 < n && *s++ != ',') return -1;
    }
    return *s ? -1 : 0;
}

/* The sizes of a shape object ({"n": 64}) for the key's dims, in order. */
static int shape_sizes(const char *shape, const bucket_parsed *k, long long *v)
{
    json *doc;
    char err[128];
    if (!shape || json_parse(shape, &doc, err, sizeof err)) return -1;
    int rc = doc->type == JSON_OBJ && doc->n == k->ndims ? 0 : -1;
    for (int d = 0; d < k->ndims && !rc; d++) {
        const json *x = json_get(doc, k->names[d]);
        if (!x || x->type != JSON_NUM || !x->is_int || x->i < 1) rc = -1;
        else v[d] = x->i;
    }
    json_free(doc);
    return rc;
}

typedef struct part_box {
    char *family;               /* op, arch, dtype, home, hw */
    int ndims;
    long long lo[SPEC_MAXDIMS], hi[SPEC_MAXDIMS], home_span[SPEC_MAXDIMS];   /* the home's widths */
} part_box;

/* A winner's key against its dims, edges and shape: 0, or -1 with why. A
** part's box is appended to parts. */
static int check_winner_key(const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                            const char *dims, const char *lo, const char *hi, const char *shape, char *why, int cap,
                            part_box **parts, int *nparts)
{
    bucket_parsed k;
    char kwhy[128];
    if (!bucket || strlen(bucket) >= 96 || bucket_key_parse(bucket, &k, kwhy, sizeof kwhy))
        return snprintf(why, (size_t)cap, "bucket key is not one aitune writes (%s)", bucket ? kwhy : "none"), -1;
    /* dims: the key's names, in its order. */
    char want[SPEC_MAXDIMS * 17] = "";
    for (int d = 0; d < k.ndims; d++) snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", d ? "," : "", k.names[d]);
    if (!dims || strcmp(dims, want)) return snprintf(why, (size_t)cap, "dims '%.40s' are not the key's", dims ? dims : ""), -1;
    long long l[SPEC_MAXDIMS], h[SPEC_MAXDIMS], rep[SPEC_MAXDIMS];
    if (!lo || !hi || edge_list(lo, l, k.ndims) || edge_list(hi, h, k.ndims))
        return snprintf(why, (size_t)cap, "edges '%.40s' to '%.40s' are not %d sizes each", lo ? lo : "", hi ? hi : "",
                        k.ndims), -1;
    if (shape_sizes(shape, &k, rep)) return snprintf(why, (size_t)cap, "shape is not a size per dim of the key"), -1;
    for (int d = 0; d < k.ndims; d++) {
        long long top = bucket_parsed_hi(&k, d);   /* [lo, 2 lo), or an exact dim's [lo, lo + 1) */
        if (!k.part && (l[d] != k.lo[d] || h[d] != top))
            return snprintf(why, (size_t)cap, "edges of dim %s are [%lld, %lld), the key's [%lld, %lld)", k.names[d], l[d],
                            h[d], k.lo[d], top), -1;
        if (k.part && (l[d] != k.corner[d] || l[d] < k.lo[d] || h[d] <= l[d] || h[d] > top))
            return snprintf(why, (size_t)cap, "part's dim %s [%lld, %lld) is not its corner's inside [%lld, %lld)",
                            k.names[d], l[d], h[d], k.lo[d], top), -1;
        if (rep[d] < l[d] || rep[d] >= h[d])
            return snprintf(why, (size_t)cap, "shape's %s = %lld is outside its edges", k.names[d], rep[d]), -1;
    }
    if (!k.part) {
        char key[96], names[SPEC_MAXDIMS][16];
        memcpy(names, k.names, sizeof names);
        if (bucket_key_exact(k.ndims, names, k.lo, rep, k.exact, key, sizeof key) || strcmp(key, bucket))
            return snprintf(why, (size_t)cap, "its shape's key is '%s'", key), -1;
        return 0;
    }
    *parts = xrealloc(*parts, sizeof **parts * (size_t)(*nparts + 1));
    part_box *b = &(*parts)[(*nparts)++];
    char home[96];
    bucket_home(bucket, home, sizeof home);
    b->family = xstrfmt("%s %s %s %s %s", op, arch, dtype, home, hw);
    b->ndims = k.ndims;
    memcpy(b->lo, l, sizeof l);
    memcpy(b->hi, h, sizeof h);
    for (int d = 0; d < k.ndims; d++) b->home_span[d] = bucket_parsed_hi(&k, d) - k.lo[d];
    return 0;
}

static int cmp_family(const void *a, const void *b)
{
    return strcmp(((const part_box *)a)->family, ((const part_box *)b)->family);
}

/* The parts of each split bucket tile it: two or more, disjoint, their
** volumes adding up to the bucket's (each lies inside it already). */
static int check_partitions(part_box *p, int n, char *why, int cap)
{
    if (n) qsort(p, (size_t)n, sizeof *p, cmp_family);   /* qsort(NULL, 0) is undefined */
    for (int a = 0, b; a < n; a = b) {
        for (b = a; b < n && !strcmp(p[a].family, p[b].family); b++) {}
        if (b - a > 4096) return snprintf(why, (size_t)cap, "%s is split in %d parts", p[a].family, b - a), -1;
        unsigned __int128 vol = 0, home = 1;
        for (int d = 0; d < p[a].ndims; d++) home *= (unsigned __int128)p[a].home_span[d];
        for (int i = a; i < b; i++) {
            unsigned __int128 v = 1;
            for (int d = 0; d < p[i].ndims; d++) v *= (unsigned __int128)(p[i].hi[d] - p[i].lo[d]);
            vol += v;
            for (int j = a; j < i; j++) {
                int overlap = p[i].ndims == p[j].ndims;
                for (int d = 0; d < p[i].ndims && overlap; d++)
                    overlap = p[i].lo[d] < p[j].hi[d] && p[j].lo[d] < p[i].hi[d];
                if (overlap) return snprintf(why, (size_t)cap, "%s: two of its parts overlap", p[a].family), -1;
            }
        }
        if (b - a < 2 || vol != home)
            return snprintf(why, (size_t)cap, "%s: its %d part%s do not cover the bucket", p[a].family, b - a,
                            b - a == 1 ? "" : "s"), -1;
    }
    return 0;
}

/* Whether a time column's value is a finite positive number. */
#define POSITIVE(c) "(typeof(" c ") IN ('integer', 'real') AND " c " > 0 AND " c " < 1e300)"

/* Run sql on in; any row it returns is a problem, described by its first
** column. */
static int first_problem(reg *in, const char *sql, const char *what, char *why, int cap)
{
    sqlite3_stmt *st = reg_prep(in, sql);
    if (!st) return snprintf(why, (size_t)cap, "cannot check %s: %.300s", what, sqlite3_errmsg(reg_db(in))), -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        snprintf(why, (size_t)cap, "%s: %s", what, (const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        snprintf(why, (size_t)cap, "cannot check %s: %s", what, sqlite3_errmsg(reg_db(in)));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* A winner's template: "op/impl", or the vendor's for an op it serves. */
static int good_winner_template(const char *t, const char *op, const char *dtype)
{
    return good_template(t, op) || (t && vendor_is_template(t) && vendor_kind(op, dtype) >= 0);
}

/* One row per key, and each row's values in range, by SQL. */
static int check_keys_and_values(reg *in, char *why, int cap)
{
    /* One row per key: a table made without its primary key could hold two
    ** winners of one bucket, and which one a merge kept would depend on the
    ** order rows are read. */
    static const char *const keys[][2] = {
        { "winners", "op, arch, dtype, bucket, hw" }, { "defaults", "op, arch, dtype" }, { "cubins", "hash" },
        { "misses", "op, arch, dtype, shape" }, { "devices", "uuid, driver, cuda_driver, nvrtc" }, { "meta", "key" },
        { "vendor_times", "op, arch, dtype, bucket, shape, hw, timing" },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *sql = xstrfmt("SELECT printf('two rows of one key (%s)') FROM %s GROUP BY %s HAVING count(*) > 1 LIMIT 1",
                            keys[i][1], keys[i][0], keys[i][1]);
        int bad = first_problem(in, sql, keys[i][0], why, cap);
        free(sql);
        if (bad) return -1;
    }
    static const char *const rows[][2] = {
        { "winners", "SELECT printf('%s %s %s %s: median_us %s is not a finite positive time', op, arch, dtype, bucket, "
                     "quote(median_us)) FROM winners WHERE NOT " POSITIVE("median_us") " LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: default_us %s is not a finite positive time', op, arch, dtype, bucket, "
                     "quote(default_us)) FROM winners WHERE default_us IS NOT NULL AND NOT " POSITIVE("default_us")
                     " LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: a runner-up without a finite positive time', op, arch, dtype, bucket) "
                     "FROM winners w WHERE runners_up IS NOT NULL AND (NOT json_valid(runners_up) OR "
                     "json_type(runners_up) <> 'array' OR EXISTS (SELECT 1 FROM json_each(w.runners_up) f WHERE NOT "
                     POSITIVE("json_extract(f.value, '$.median_us')") ")) LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: its config is not a JSON object', op, arch, dtype, bucket) FROM winners "
                     "WHERE NOT json_valid(config) OR json_type(config) <> 'object' LIMIT 1" },
        { "measurements", "SELECT printf('row %d: status %s is not ok, constraint, compile, runtime, timeout or wrong', "
                          "id, quote(status)) FROM measurements WHERE status NOT IN ('ok', 'constraint', 'compile', "
                          "'runtime', 'timeout', 'wrong') LIMIT 1" },
        { "measurements", "SELECT printf('row %d: %s is not a finite positive time', id, quote(CASE WHEN NOT "
                          POSITIVE("median_us") " THEN median_us WHEN NOT " POSITIVE("min_us") " THEN min_us "
                          "ELSE max_us END)) FROM measurements WHERE status = 'ok' AND NOT (" POSITIVE("median_us")
                          " AND (min_us IS NULL OR " POSITIVE("min_us") ") AND (max_us IS NULL OR " POSITIVE("max_us")
                          ")) LIMIT 1" },
        { "measurements", "SELECT printf('row %d: a time of %s where status %s has none', id, quote(median_us), status) "
                          "FROM measurements WHERE status <> 'ok' AND median_us IS NOT NULL AND NOT "
                          POSITIVE("median_us") " LIMIT 1" },
        { "measurements", "SELECT printf('row %d: its config is not a JSON object', id) FROM measurements "
                          "WHERE NOT json_valid(config) OR json_type(config) <> 'object' LIMIT 1" },
        { "misses", "SELECT printf('%s %s %s: count %s is not a positive number', op, arch, dtype, quote(count)) "
                    "FROM misses WHERE typeof(count) <> 'integer' OR count < 1 LIMIT 1" },
        { "cubins", "SELECT printf('%s is not a hash of 16 hex digits', quote(hash)) FROM cubins WHERE length(hash) <> 16 "
                    "OR hash GLOB '*[^0-9a-f]*' LIMIT 1" },
        /* The vendor's times: a later merge keeps the first row of a key,
        ** so a row must be one the worker could have written. */
        { "vendor_times", "SELECT printf('%s %s %s %s: status %s is not ok, wrong or runtime', op, arch, dtype, bucket, "
                          "quote(status)) FROM vendor_times WHERE status IS NULL OR status NOT IN ('ok', 'wrong', "
                          "'runtime') LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: timing %s is not " TIMING_NAMES "', op, arch, dtype, bucket, "
                          "quote(timing)) FROM vendor_times WHERE timing IS NULL OR timing NOT IN ('" TIMING_FLUSH "', '"
                          TIMING_STREAM "', '" TIMING_NEIGHBOUR "') LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: %s is not a finite positive time', op, arch, dtype, bucket, "
                          "quote(CASE WHEN NOT " POSITIVE("median_us") " THEN median_us WHEN NOT " POSITIVE("min_us")
                          " THEN min_us ELSE max_us END)) FROM vendor_times WHERE status = 'ok' AND NOT ("
                          POSITIVE("median_us") " AND (min_us IS NULL OR " POSITIVE("min_us") ") AND (max_us IS NULL "
                          "OR " POSITIVE("max_us") ")) LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: a time of %s where status %s has none', op, arch, dtype, bucket, "
                          "quote(median_us), status) FROM vendor_times WHERE status <> 'ok' AND median_us IS NOT NULL "
                          "AND NOT " POSITIVE("median_us") " LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: no hardware or library', op, arch, dtype, bucket) FROM vendor_times "
                          "WHERE typeof(hw) <> 'text' OR hw = '' OR typeof(library) <> 'text' LIMIT 1" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (first_problem(in, rows[i][1], rows[i][0], why, cap)) return -1;
    return 0;
}

/* A winner p of a whole bucket beside the winners of its own parts, of the
** same hardware, in db ("" or "main."): a check refuses one, a merge drops
** it (the parts win). */
#define BESIDE_ITS_PARTS(db) "instr(p.bucket, " BUCKET_PART_SQL ") = 0 AND EXISTS (SELECT 1 FROM " db "winners c " \
    "WHERE c.op = p.op AND c.arch = p.arch AND c.dtype = p.dtype AND c.hw = p.hw AND " REG_PART_OF("c.bucket", "p.bucket") ")"

/* Each winner's names and bucket key, and the parts of each split bucket
** tiling it. */
static int check_winner_rows(reg *in, char *why, int cap)
{
    part_box *parts = NULL;
    int nparts = 0, bad = 0;
    sqlite3_stmt *st = reg_prep(in, "SELECT op, arch, dtype, bucket, hw, dims, lo, hi, shape, template FROM winners");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[10];
        for (int i = 0; i < 10; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        char kwhy[256];
        if (!good_name(f[0], 32) || !arch_known(f[1]) || !good_name(f[2], 16) || !good_winner_template(f[9], f[0], f[2]))
            bad = snprintf(why, (size_t)cap, "winners: %.32s %.16s %.16s: not an op, arch, dtype and template aitune "
                           "knows the form of", f[0] ? f[0] : "", f[1] ? f[1] : "", f[2] ? f[2] : "");
        else if (check_winner_key(f[0], f[1], f[2], f[3], f[4] ? f[4] : "", f[5], f[6], f[7], f[8], kwhy, sizeof kwhy,
                                  &parts, &nparts))
            bad = snprintf(why, (size_t)cap, "winners: %s %s %s %.96s: %s", f[0], f[1], f[2], f[3] ? f[3] : "", kwhy);
    }
    if (!bad && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read winners: %s", sqlite3_errmsg(reg_db(in)));
    sqlite3_finalize(st);
    if (!bad && check_partitions(parts, nparts, why, cap)) bad = 1;
    for (int i = 0; i < nparts; i++) free(parts[i].family);
    free(parts);
    /* A split bucket's winner beside its own parts, of one hardware. */
    if (!bad)
        bad = first_problem(in, "SELECT printf('%s %s %s %s: a winner beside its own parts', p.op, p.arch, p.dtype, "
                                "p.bucket) FROM winners p WHERE " BESIDE_ITS_PARTS("") " LIMIT 1", "winners", why, cap);
    return bad ? -1 : 0;
}

/* Rows of a table that name a bucket and a shape timed for it
** (measurements, vendor_times): names, arch, a bucket key aitune writes,
** a shape inside it. sql selects a label, op, arch, dtype, bucket, shape and
** template (NULL: none to check). */
static int check_shape_rows(reg *in, const char *table, const char *sql, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st = reg_prep(in, sql);
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[7];
        for (int i = 0; i < 7; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        const char *label = f[0] ? f[0] : "";
        bucket_parsed k;
        long long rep[SPEC_MAXDIMS];
        char kwhy[128] = "";
        if (!good_name(f[1], 32) || !arch_known(f[2]) || !good_name(f[3], 16) ||
            (sqlite3_column_type(st, 6) != SQLITE_NULL && !good_template(f[6], f[1])))
            bad = snprintf(why, (size_t)cap, "%s: %.64s: not an op, arch, dtype and template aitune knows the form of",
                           table, label);
        else if (!f[4] || strlen(f[4]) >= 96 || bucket_key_parse(f[4], &k, kwhy, sizeof kwhy) ||
                 shape_sizes(f[5], &k, rep))
            bad = snprintf(why, (size_t)cap, "%s: %.64s: bucket '%.96s' %s", table, label, f[4] ? f[4] : "",
                           kwhy[0] ? kwhy : "does not fit its shape");
        for (int d = 0; !bad && d < k.ndims; d++)
            if (rep[d] < k.lo[d] || rep[d] >= bucket_parsed_hi(&k, d))
                bad = snprintf(why, (size_t)cap, "%s: %.64s: its shape is outside bucket '%s'", table, label, f[4]);
    }
    if (!bad && st && rc != SQLITE_DONE)
        bad = snprintf(why, (size_t)cap, "cannot read %s: %s", table, sqlite3_errmsg(reg_db(in)));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* A cubin's bytes are the ones hashed with it (an older shard's have no
** hash: compile checks those before it uses one). */
static int check_cubin_rows(reg *in, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st = reg_prep(in, "SELECT hash, cubin, cubin_hash FROM cubins WHERE cubin_hash IS NOT NULL");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char sum[17] = "";
        const void *blob = sqlite3_column_blob(st, 1);
        if (blob) jit_hash(blob, (size_t)sqlite3_column_bytes(st, 1), sum);
        if (!blob || strcmp(sum, (const char *)sqlite3_column_text(st, 2)))
            bad = snprintf(why, (size_t)cap, "cubins: %.16s: its bytes are not the ones hashed with it",
                           (const char *)sqlite3_column_text(st, 0));
    }
    if (!bad && st && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read cubins: %s", sqlite3_errmsg(reg_db(in)));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* The names of defaults and misses. */
static int check_name_rows(reg *in, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st =
        reg_prep(in, "SELECT op, arch, dtype, template FROM defaults UNION ALL SELECT op, arch, dtype, NULL FROM misses");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[4];
        for (int i = 0; i < 4; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        if (!good_name(f[0], 32) || !arch_known(f[1]) || !good_name(f[2], 16) ||
            (sqlite3_column_type(st, 3) != SQLITE_NULL && !good_template(f[3], f[0])))
            bad = snprintf(why, (size_t)cap, "%s: %.32s %.16s %.16s: not an op, arch, dtype and template aitune "
                           "knows the form of", sqlite3_column_type(st, 3) != SQLITE_NULL ? "defaults" : "misses",
                           f[0] ? f[0] : "", f[1] ? f[1] : "", f[2] ? f[2] : "");
    }
    if (!bad && st && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read: %s", sqlite3_errmsg(reg_db(in)));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* The whole input, before a row of it is merged. (scans are not merged:
** what one GPU saw at each size is its own.) */
static int check_input(reg *in, char *why, int cap)
{
    return check_keys_and_values(in, why, cap) || check_winner_rows(in, why, cap) ||
                   check_shape_rows(in, "measurements",
                                    "SELECT 'row ' || id, op, arch, dtype, bucket, shape, template FROM measurements", why,
                                    cap) ||
                   check_shape_rows(in, "vendor_times",
                                    "SELECT op || ' ' || arch || ' ' || dtype || ' ' || bucket, op, arch, dtype, bucket, "
                                    "shape, NULL FROM vendor_times", why, cap) ||
                   check_cubin_rows(in, why, cap) || check_name_rows(in, why, cap)
               ? -1
               : 0;
}

/* The input at path, copied into a new registry beside r's file (the copy
** is ours: migrated and checked there, the input never written), its name
** into *copy. 0, or -1 with r's message saying why. */
static int merge_copy(reg *r, const char *path, char **copy)
{
    *copy = NULL;
    reg *in;
    if (reg_open(path, 1, &in)) {
        const char *e = strstr(reg_errmsg(in), "': ");
        reg_fail(r, "cannot merge '%s': %s", path, e ? e + 3 : reg_errmsg(in));
        reg_close(in);
        return -1;
    }
    /* A corrupt page would merge as whatever it happens to read as. */
    sqlite3_stmt *ic = reg_prep(in, "PRAGMA integrity_check(1)");
    int rc = ic ? sqlite3_step(ic) : SQLITE_ERROR;
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(ic, 0) : NULL;
    if (!res || strcmp(res, "ok")) {
        /* SQLite's report spans lines ("*** in database main ***\nPage 5: ..."):
        ** reg_fail keeps the refusal one line; the first 200 bytes say enough. */
        reg_fail(r, "cannot merge '%s': it is damaged (integrity_check: %.200s)", path,
                 res ? res : sqlite3_errmsg(reg_db(in)));
        sqlite3_finalize(ic);
        reg_close(in);
        return -1;
    }
    sqlite3_finalize(ic);
    const char *rpath = reg_path(r), *slash = strrchr(rpath, '/');
    char *tmp = xstrfmt("%.*s.aitune-merge-XXXXXX", slash ? (int)(slash - rpath + 1) : 0, rpath);
    int fd = mkstemp(tmp);
    sqlite3 *out = NULL;
    char *name = fd >= 0 ? dbguard_name(tmp) : NULL;
    rc = fd < 0 ? SQLITE_CANTOPEN : sqlite3_open_v2(name, &out, SQLITE_OPEN_READWRITE, NULL);
    free(name);
    if (fd >= 0) close(fd);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(out, "main", reg_db(in), "main") : NULL;
    if (b) {
        sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
    }
    rc = out ? sqlite3_errcode(out) : rc;
    if (rc != SQLITE_OK) reg_fail(r, "cannot copy '%s' to check it: %s", path, out ? sqlite3_errmsg(out) : strerror(errno));
    sqlite3_close(out);
    reg_close(in);
    if (rc != SQLITE_OK) {
        if (fd >= 0) unlink(tmp);
        free(tmp);
        return -1;
    }
    *copy = tmp;
    return 0;
}

static void merge_drop(char *copy)
{
    if (!copy) return;
    char *side[] = { xstrfmt("%s-wal", copy), xstrfmt("%s-shm", copy) };
    unlink(copy);
    for (int i = 0; i < 2; i++) {
        unlink(side[i]);
        free(side[i]);
    }
    free(copy);
}

int reg_merge(reg *r, const char *path, reg_merge_stats *st)
{
    /* The input read once, into a copy: migrated to this schema and
    ** checked whole before anything of it reaches r. */
    char *copy;
    if (merge_copy(r, path, &copy)) return -1;
    reg *in;
    char why[768];
    int orc = reg_open(copy, 0, &in);
    if (orc) reg_fail(r, "cannot merge '%s': %s", path, strstr(reg_errmsg(in), "': ") ? strstr(reg_errmsg(in), "': ") + 3 : reg_errmsg(in));
    else if (check_input(in, why, sizeof why)) orc = reg_fail(r, "cannot merge '%s': %s", path, why);
    reg_close(in);
    if (orc) {
        merge_drop(copy);
        return -1;
    }
    char *attach = dbguard_name(copy);
    sqlite3_stmt *at = reg_prep(r, "ATTACH DATABASE ? AS src");
    if (at) reg_bind(at, 1, attach);
    free(attach);
    if (!at || reg_done(r, at, "cannot attach the input")) {
        merge_drop(copy);
        return -1;
    }
    /* Local ids map through content: a device by its fingerprint, a run by
    ** when it began, its command, seed and device. */
    static const char *const steps[][2] = {
        { "BEGIN IMMEDIATE", "cannot lock the output" },
        { "INSERT OR IGNORE INTO devices (name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc) "
          "SELECT name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc FROM src.devices",
          "devices" },
        { "CREATE TEMP TABLE devmap AS SELECT s.id AS src, m.id AS dst FROM src.devices s JOIN main.devices m "
          "ON m.uuid = s.uuid AND m.driver = s.driver AND m.cuda_driver = s.cuda_driver AND m.nvrtc = s.nvrtc",
          "devices" },
        { "INSERT INTO main.runs (command, spec_hash, version, seed, device, env, started, ended, outcome, sources) "
          "SELECT s.command, s.spec_hash, s.version, s.seed, dm.dst, s.env, s.started, s.ended, s.outcome, s.sources "
          "FROM src.runs s LEFT JOIN temp.devmap dm ON dm.src = s.device WHERE NOT EXISTS (SELECT 1 FROM main.runs m "
          "WHERE m.started = s.started AND m.command = s.command AND m.seed = s.seed AND m.device IS dm.dst)",
          "runs" },
        { "CREATE TEMP TABLE runmap AS SELECT s.id AS src, (SELECT min(m.id) FROM main.runs m WHERE m.started = s.started "
          "AND m.command = s.command AND m.seed = s.seed AND m.device IS dm.dst) AS dst "
          "FROM src.runs s LEFT JOIN temp.devmap dm ON dm.src = s.device",
          "runs" },
        { "INSERT OR IGNORE INTO main.cubins SELECT * FROM src.cubins", "cubins" },
        { "INSERT INTO main.measurements (" REG_MEASURE_COLS("") ", timing) "
          "SELECT " REG_MEASURE_DATA("s.") ", dm.dst, rm.dst, s.timing FROM src.measurements s LEFT JOIN temp.devmap dm ON dm.src = s.device "
          "LEFT JOIN temp.runmap rm ON rm.src = s.run WHERE NOT EXISTS (SELECT 1 FROM main.measurements m "
          "WHERE m.op = s.op AND m.arch = s.arch AND m.dtype = s.dtype AND m.bucket = s.bucket AND m.device IS dm.dst "
          "AND m.config_hash = s.config_hash AND m.template = s.template AND m.shape = s.shape AND m.status = s.status "
          "AND m.run IS rm.dst AND m.median_us IS s.median_us AND m.timing = s.timing) ORDER BY s.id",
          "measurements" },
        { "INSERT OR REPLACE INTO main.winners (" REG_WINNER_COLS("") ", hw) "
          "SELECT " REG_WINNER_DATA("s.") ", dm.dst, rm.dst, s.hw FROM src.winners s LEFT JOIN temp.devmap dm ON dm.src = s.device LEFT JOIN temp.runmap rm ON rm.src = s.run "
          "WHERE s.hw <> '' AND NOT EXISTS (SELECT 1 FROM main.winners m WHERE m.op = s.op AND m.arch = s.arch "
          "AND m.dtype = s.dtype AND m.bucket = s.bucket AND m.hw = s.hw AND (m.median_us < s.median_us "
          "OR (m.median_us = s.median_us AND m.config <= s.config)))",
          "winners" },
        /* A split bucket's parts beat its unsplit winner of the same
        ** hardware, whichever registry had which: never both. */
        { "DELETE FROM main.winners AS p WHERE " BESIDE_ITS_PARTS("main."),
          "split buckets" },
        { "INSERT OR IGNORE INTO main.defaults (op, arch, dtype, template, config, cubin, launch) "
          "SELECT op, arch, dtype, template, config, cubin, launch FROM src.defaults", "defaults" },
        { "INSERT INTO main.misses (op, arch, dtype, shape, count) SELECT op, arch, dtype, shape, count FROM src.misses "
          "WHERE true ON CONFLICT (op, arch, dtype, shape) DO UPDATE SET count = max(count, excluded.count) "
          "WHERE excluded.count > count",
          "misses" },
        { reg_vendor_merge_sql, "vendor times" },
        { "DROP TABLE temp.devmap", "cleanup" },
        { "DROP TABLE temp.runmap", "cleanup" },
        { "COMMIT", "cannot commit the merge" },
    };
    /* Devices are counted by rows: their trigger's update counts as a change. */
    long long *counts[] = { NULL, NULL, NULL, &st->runs, NULL, &st->cubins, &st->measurements, &st->winners,
                            NULL, NULL, &st->misses, &st->vendor, NULL, NULL, NULL };
    long long ndev0 = reg_count(r, "main.devices");
    int rc = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !rc; i++) {
        char what[96];
        snprintf(what, sizeof what, "cannot merge '%s' (%s)", path, steps[i][1]);
        rc = merge_step(r, steps[i][0], what, counts[i]);
    }
    if (rc) {
        sqlite3_exec(reg_db(r), "ROLLBACK", NULL, NULL, NULL);
        sqlite3_exec(reg_db(r), "DROP TABLE IF EXISTS temp.devmap; DROP TABLE IF EXISTS temp.runmap", NULL, NULL, NULL);
    } else {
        st->devices = reg_count(r, "main.devices") - ndev0;
    }
    sqlite3_exec(reg_db(r), "DETACH DATABASE src", NULL, NULL, NULL);
    merge_drop(copy);
    return rc;
}
