/* fuzz_db.h: what the registry harnesses (fuzz_registry, fuzz_emit) share:
** a scratch registry file per process, and rows written into a loose
** registry (the schema without NOT NULL) from lines of text.
**
** A line is FIELD|FIELD|...; a field "~" is NULL, "#123" an integer,
** "%1.5" a real, "!xx" a blob, anything else text, where a backslash takes
** the next byte as it is ("\|" a bar, "\\" a backslash) except "\n", "\r",
** "\t", "\0" and "\e" (newline, carriage return, tab, NUL, escape). */
#ifndef FUZZ_DB_H
#define FUZZ_DB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define FDB_MAXFIELDS 24

/* Once, from LLVMFuzzerInitialize: a private folder (in /dev/shm where it
** can) for the registry <dir>/reg.db, whose empty form has schema_version
** `version`. */
void fdb_setup(const char *tag, int version);
const char *fdb_dir(void);
const char *fdb_path(void);
/* The aitune tree whose templates (and sources) a harness reads: the
** environment's AITUNE_FUZZ_SOURCE, so the binaries run from a copy of the
** tree at another path (another machine), else the tree they were built
** from (AITUNE_SOURCE_DIR). Aborts, saying so, when it has no templates/. */
const char *fdb_source(void);

/* An input that is a whole database file ("SQLite format 3" first). */
int fdb_is_file(const uint8_t *data, size_t size);
/* The registry file is exactly these bytes (no -wal or -shm beside it). */
void fdb_put(const void *data, size_t len);
/* A fresh empty loose registry, open with no journal, in a transaction. */
sqlite3 *fdb_begin(void);
void fdb_end(sqlite3 *db);

/* Split [line, end) at unescaped bars: up to max fields; returns the count. */
int fdb_fields(const char *line, const char *end, const char **f, size_t *n, int max);
/* Bind field (f, n) as parameter i, decoded as above. */
void fdb_bind(sqlite3_stmt *st, int i, const char *f, size_t n);
/* The text a field decodes to (NUL-terminated; caller frees), NULL for "~"
** and for the typed forms. */
char *fdb_text(const char *f, size_t n, size_t *len);

/* Remove the registry and whatever SQLite left beside it; the folder stays
** until fdb_cleanup. */
void fdb_clear(void);
void fdb_cleanup(void);

#endif
