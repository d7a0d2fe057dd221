/* fuzz_registry.c: libFuzzer harness for the runtime's registry reader
** (rt.c: aitune_open + aitune_lookup), which applications run on registry
** files copied from anywhere.
**
** Two kinds of input:
** - a database file ("SQLite format 3" first): written to a temporary file
**   as it is, so the mutations reach the file format;
** - anything else: rows. A fresh registry whose tables lack NOT NULL gets
**   one row per line, "w|" for winners (op|arch|dtype|bucket|dims|lo|hi|
**   template|config|median_us) or "d|" for defaults (op|arch|dtype|
**   template|config); a field "~" is NULL, "#123" an integer, "%1.5" a
**   real, "!xx" a blob, anything else text with backslash escapes
**   (fuzz_db.h).
** Then the registry is opened and asked about a few shapes. Every call must
** return a status; a failed open must leave a message; an answer must be
** whole strings. */
#define _GNU_SOURCE
#include "aitune.h"
#include "fuzz_db.h"
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fdb_setup("registry", 1);
    return 0;
}

static void load_rows(const char *text, size_t size)
{
    sqlite3 *db = fdb_begin();
    sqlite3_stmt *w, *d;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO winners (op, arch, dtype, bucket, dims, lo, hi, template, "
                           "config, median_us) VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &w, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO defaults (op, arch, dtype, template, config) VALUES (?,?,?,?,?)",
                           -1, &d, NULL) != SQLITE_OK)
        abort();
    const char *end = text + size;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        if (le - line >= 2 && (line[0] == 'w' || line[0] == 'd') && line[1] == '|') {
            sqlite3_stmt *st = line[0] == 'w' ? w : d;
            int ncols = line[0] == 'w' ? 10 : 5;
            const char *f[FDB_MAXFIELDS];
            size_t n[FDB_MAXFIELDS];
            int nf = fdb_fields(line + 2, le, f, n, ncols);
            for (int i = 1; i <= ncols; i++) {
                if (i <= nf) fdb_bind(st, i, f[i - 1], n[i - 1]);
                else sqlite3_bind_null(st, i);
            }
            sqlite3_step(st);
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
        }
        line = le + 1;
    }
    sqlite3_finalize(w);
    sqlite3_finalize(d);
    fdb_end(db);
}

static void check_choice(const aitune_choice *c)
{
    /* Reading every byte: ASan catches a string that is not whole. */
    if (c->template_name && strlen(c->template_name) > (1u << 30)) abort();
    if (c->config && strlen(c->config) > (1u << 30)) abort();
    if (c->bucket && strlen(c->bucket) > (1u << 30)) abort();
    if (c->level != AITUNE_EXACT && c->level != AITUNE_NEAREST && c->level != AITUNE_DEFAULT) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fdb_is_file(data, size)) fdb_put(data, size);
    else load_rows((const char *)data, size);
    aitune *h = NULL;
    int rc = aitune_open(fdb_path(), &h);
    if (rc != AITUNE_OK) {
        const char *m = aitune_errmsg(h);
        if (!m || !*m) abort();
    } else {
        static const char *const ops[] = { "axpy", "transpose", "softmax", "", "x" };
        static const char *const archs[] = { "sm_90", "sm_90a", "sm_80", "" };
        static const char *const dtypes[] = { "f32", "bf16", "f32>bf16", "" };
        static const long long shapes[][4] = { { 64 }, { 100, 3 }, { 1, 1, 1, 1 }, { 1LL << 62, 7 },
                                               { 4096, 1024, 3, 9 } };
        int k = 0;
        for (int o = 0; o < 5; o++)
            for (int a = 0; a < 4; a++)
                for (int t = 0; t < 4; t++, k++) {
                    aitune_choice c;
                    const long long *s = shapes[k % 5];
                    int nd = 1 + k % 4;
                    if (aitune_lookup(h, ops[o], archs[a], dtypes[t], s, nd, &c) == AITUNE_OK) check_choice(&c);
                }
        int n;
        aitune_count(h, &n);
    }
    aitune_close(h);
    /* libFuzzer may end with _Exit (no atexit): leave nothing behind. */
    fdb_cleanup();
    return 0;
}
