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
**   real, "!xx" a blob, anything else text.
** Then the registry is opened and asked about a few shapes. Every call must
** return a status; a failed open must leave a message; an answer must be
** whole strings. */
#define _GNU_SOURCE
#include "aitune.h"
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char reg_schema_sql[];     /* build/gen/schema.c */

static char path[64];
static unsigned char *empty_db;         /* a fresh loose registry, as bytes */
static size_t empty_len;

static char wal[80], shm[80];

/* Nothing from the previous input may survive: a -wal file left beside
** the database would be replayed into the next one. */
static void put_file(const void *data, size_t len)
{
    unlink(wal);
    unlink(shm);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    fclose(f);
}

/* The schema without NOT NULL: what a hostile or foreign tool may write. */
static void make_empty(void)
{
    char *sql = strdup(reg_schema_sql);
    for (char *p; (p = strstr(sql, "NOT NULL"));) memset(p, ' ', 8);
    unlink(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) abort();
    /* Small pages: fewer bytes to copy and to mutate. */
    if (sqlite3_exec(db, "PRAGMA page_size=512; PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) abort();
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) abort();
    if (sqlite3_exec(db, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '1')", NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(db);
    free(sql);
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    fseek(f, 0, SEEK_END);
    empty_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    empty_db = malloc(empty_len);
    if (fread(empty_db, 1, empty_len, f) != empty_len) abort();
    fclose(f);
}

static void cleanup(void)
{
    unlink(path);
    unlink(wal);
    unlink(shm);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/aitune-fuzz-%d.db", dir, (int)getpid());
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    make_empty();
    atexit(cleanup);
    return 0;
}

static void bind_field(sqlite3_stmt *st, int i, const char *f, size_t n)
{
    /* The input is not NUL-terminated: numbers are read from a copy. */
    char num[64];
    size_t k = n > 1 ? (n - 1 < sizeof num - 1 ? n - 1 : sizeof num - 1) : 0;
    memcpy(num, f + (n > 0), k);
    num[k] = 0;
    if (n == 1 && f[0] == '~') sqlite3_bind_null(st, i);
    else if (n && f[0] == '#') sqlite3_bind_int64(st, i, strtoll(num, NULL, 10));
    else if (n && f[0] == '%') sqlite3_bind_double(st, i, strtod(num, NULL));
    else if (n && f[0] == '!') sqlite3_bind_blob(st, i, f + 1, (int)n - 1, SQLITE_TRANSIENT);
    else sqlite3_bind_text(st, i, f, (int)n, SQLITE_TRANSIENT);
}

static void load_rows(const char *text, size_t size)
{
    put_file(empty_db, empty_len);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) abort();
    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
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
            const char *f = line + 2;
            for (int i = 1; i <= ncols; i++) {
                const char *bar = f < le ? memchr(f, '|', (size_t)(le - f)) : NULL;
                const char *fe = bar ? bar : le;
                if (f <= le) bind_field(st, i, f, (size_t)(fe - f));
                else sqlite3_bind_null(st, i);
                f = fe + 1;
            }
            sqlite3_step(st);
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
        }
        line = le + 1;
    }
    sqlite3_finalize(w);
    sqlite3_finalize(d);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
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
    static const char magic[] = "SQLite format 3";
    if (size >= sizeof magic && !memcmp(data, magic, sizeof magic)) put_file(data, size);
    else load_rows((const char *)data, size);
    aitune *h = NULL;
    int rc = aitune_open(path, &h);
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
    cleanup();
    return 0;
}
