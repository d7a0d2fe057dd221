/* fuzz_db.c: see fuzz_db.h. */
#define _GNU_SOURCE
#include "fuzz_db.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char reg_schema_sql[];     /* build/gen/schema.c */

static char dir[64], path[96], wal[104], shm[104];
static unsigned char *empty_db;         /* a fresh loose registry, as bytes */
static size_t empty_len;

const char *fdb_dir(void) { return dir; }
const char *fdb_path(void) { return path; }

const char *fdb_source(void)
{
    static const char *src;
    if (src) return src;
    const char *s = getenv("AITUNE_FUZZ_SOURCE");
    s = s && *s ? s : AITUNE_SOURCE_DIR;
    /* A tree without templates would make every input a refused one: a
    ** run that finds nothing because it tests nothing. */
    char t[4096];
    struct stat st;
    snprintf(t, sizeof t, "%s/templates", s);
    if (stat(t, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "fuzz: no templates folder in '%s' (AITUNE_FUZZ_SOURCE names the aitune tree)\n", s);
        abort();
    }
    return src = s;
}

void fdb_clear(void)
{
    unlink(path);
    unlink(wal);
    unlink(shm);
}

void fdb_cleanup(void)
{
    fdb_clear();
    rmdir(dir);
}

int fdb_is_file(const uint8_t *data, size_t size)
{
    static const char magic[] = "SQLite format 3";
    return size >= sizeof magic && !memcmp(data, magic, sizeof magic);
}

/* Nothing from the previous input may survive: a -wal file left beside
** the database would be replayed into the next one. */
void fdb_put(const void *data, size_t len)
{
    fdb_clear();
    mkdir(dir, 0700);   /* libFuzzer may have removed nothing, or everything */
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    fclose(f);
}

/* The schema without NOT NULL: what a hostile or foreign tool may write. */
static void make_empty(int version)
{
    char *sql = strdup(reg_schema_sql);
    for (char *p; (p = strstr(sql, "NOT NULL"));) memset(p, ' ', 8);
    fdb_clear();
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) abort();
    /* Small pages: fewer bytes to copy and to mutate. */
    if (sqlite3_exec(db, "PRAGMA page_size=512; PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) abort();
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) abort();
    char v[96];
    snprintf(v, sizeof v, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '%d')", version);
    if (sqlite3_exec(db, v, NULL, NULL, NULL) != SQLITE_OK) abort();
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
    fdb_clear();
}

void fdb_setup(const char *tag, int version)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/aitune-fuzz-%s-%d", base, tag, (int)getpid());
    snprintf(path, sizeof path, "%s/reg.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    if (mkdir(dir, 0700) && access(dir, W_OK)) abort();
    make_empty(version);
    atexit(fdb_cleanup);
}

sqlite3 *fdb_begin(void)
{
    fdb_put(empty_db, empty_len);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) abort();
    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
    return db;
}

void fdb_end(sqlite3 *db)
{
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
}

int fdb_fields(const char *line, const char *end, const char **f, size_t *n, int max)
{
    int k = 0;
    const char *start = line;
    for (const char *p = line; k < max; p++) {
        if (p < end && *p == '\\') {
            if (p + 1 < end) p++;
            continue;
        }
        if (p == end || *p == '|') {
            f[k] = start;
            n[k++] = (size_t)(p - start);
            if (p == end) break;
            start = p + 1;
        }
    }
    return k;
}

char *fdb_text(const char *f, size_t n, size_t *len)
{
    if ((n == 1 && f[0] == '~') || (n && (f[0] == '#' || f[0] == '%' || f[0] == '!'))) return NULL;
    char *s = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = f[i];
        if (c == '\\' && i + 1 < n) {
            c = f[++i];
            c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == '0' ? '\0' : c == 'e' ? '\033' : c;
        }
        s[k++] = c;
    }
    s[k] = 0;
    if (len) *len = k;
    return s;
}

void fdb_bind(sqlite3_stmt *st, int i, const char *f, size_t n)
{
    /* The input is not NUL-terminated: numbers are read from a copy. */
    char num[64];
    size_t k = n > 1 ? (n - 1 < sizeof num - 1 ? n - 1 : sizeof num - 1) : 0;
    memcpy(num, f + (n > 0), k);
    num[k] = 0;
    size_t len;
    char *text;
    if (n == 1 && f[0] == '~') sqlite3_bind_null(st, i);
    else if (n && f[0] == '#') sqlite3_bind_int64(st, i, strtoll(num, NULL, 10));
    else if (n && f[0] == '%') sqlite3_bind_double(st, i, strtod(num, NULL));
    else if (n && f[0] == '!') sqlite3_bind_blob(st, i, f + 1, (int)n - 1, SQLITE_TRANSIENT);
    else if ((text = fdb_text(f, n, &len))) sqlite3_bind_text(st, i, text, (int)len, free);
}
