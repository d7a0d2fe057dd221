/* fuzz_import.c: libFuzzer harness for `aitune import` (import.c:
** cmd_import) over mutated Kernel Tuner T4 files, which people bring from
** other tools and other machines.
**
** The input is the file. When its first byte is '!', the rest is the file
** and the command line names the op, template, dtype, arch and shape
** (--op axpy --template vec --dtype f32 --arch sm_90 --shape 64), as for a
** Kernel Tuner file; otherwise the file must name them itself (aitune's own
** export). Each run imports into a fresh registry. What must hold:
** - the exit code is 0, 2 or 3 (1 only when the registry cannot be
**   written: never here);
** - a file that fails imports nothing;
** - what an import stores is what a sweep would: every measurement of a
**   known arch, with a bucket key aitune writes (bucket_key_parse), the
**   shape's (or a part of it), a config that is a JSON object, no control
**   characters in its error text, and a finite positive time when ok.
** The templates are loaded once (--wrap=tmpl_open, as fuzz_emit), from
** AITUNE_FUZZ_SOURCE when set (fuzz_db.h: fdb_source). */
#define _GNU_SOURCE
#include "cli.h"
#include "fuzz_db.h"
#include "registry_export.h"
#include "registry_measure.h"
#include "spec.h"
#include "tmpl.h"
#include "util.h"
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_import(int argc, char **argv);

static tmpl *shared_T;
tmpl *__real_tmpl_open(const char *root);
tmpl *__wrap_tmpl_open(const char *root);
void __wrap_tmpl_close(tmpl *T);

tmpl *__wrap_tmpl_open(const char *root)
{
    if (!shared_T) shared_T = __real_tmpl_open(root);
    return shared_T;
}

void __wrap_tmpl_close(tmpl *T) { (void)T; }

static char file_path[128];
static unsigned char *empty;    /* a fresh registry of this aitune, as bytes */
static size_t empty_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("AITUNE_HOME", fdb_source(), 1);
    fdb_setup("import", REG_SCHEMA_VERSION);
    snprintf(file_path, sizeof file_path, "%s/in.t4.json", fdb_dir());
    /* A registry as reg_open makes it, kept as bytes: each run starts from
    ** a copy instead of creating the schema again. */
    fdb_clear();
    reg *r;
    if (reg_open(fdb_path(), 0, &r)) abort();
    reg_close(r);
    sqlite3 *db;
    if (sqlite3_open(fdb_path(), &db) != SQLITE_OK) abort();
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    sqlite3_close(db);
    empty = (unsigned char *)read_regular_file(fdb_path(), 1 << 24, &empty_len);
    if (!empty) abort();
    __wrap_tmpl_open(fdb_source());
    return 0;
}

/* Every stored measurement is one a sweep could have stored. */
static void check_rows(int rc)
{
    sqlite3 *db;
    if (sqlite3_open_v2(fdb_path(), &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) abort();
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT arch, bucket, shape, config, status, median_us, error FROM measurements", -1, &st,
                           NULL) != SQLITE_OK)
        abort();
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n++;
        const char *arch = (const char *)sqlite3_column_text(st, 0);
        const char *bucket = (const char *)sqlite3_column_text(st, 1);
        const char *config = (const char *)sqlite3_column_text(st, 3);
        const char *status = (const char *)sqlite3_column_text(st, 4);
        const char *err = (const char *)sqlite3_column_text(st, 6);
        bucket_parsed k;
        char why[128];
        if (!arch_known(arch)) { fprintf(stderr, "fuzz_import: stored arch %s\n", arch ? arch : "(null)"); abort(); }
        if (!bucket || bucket_key_parse(bucket, &k, why, sizeof why)) {
            fprintf(stderr, "fuzz_import: stored bucket '%s': %s\n", bucket ? bucket : "(null)", why);
            abort();
        }
        if (!config || config[0] != '{') abort();
        for (const unsigned char *c = (const unsigned char *)err; c && *c; c++)
            if (*c < 0x20 && *c != '\n') { fprintf(stderr, "fuzz_import: a control byte in an error\n"); abort(); }
        double t = sqlite3_column_double(st, 5);
        if (status && !strcmp(status, "ok") && !(t > 0 && isfinite(t))) { fprintf(stderr, "fuzz_import: time %g\n", t); abort(); }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc && n) { fprintf(stderr, "fuzz_import: exit %d, yet %d rows stored\n", rc, n); abort(); }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int flags = size && data[0] == '!';
    FILE *f = fopen(file_path, "wb");
    if (!f) abort();
    if (size - (size_t)flags && fwrite(data + flags, 1, size - (size_t)flags, f) != size - (size_t)flags) abort();
    fclose(f);
    fdb_put(empty, empty_len);
    char db[128];
    snprintf(db, sizeof db, "%s", fdb_path());
    char *with[] = { "import", file_path, "--op", "axpy", "--template", "vec", "--dtype", "f32", "--arch", "sm_90",
                     "--shape", "64", "--db", db, NULL };
    char *without[] = { "import", file_path, "--db", db, NULL };
    int rc = flags ? cmd_import(14, with) : cmd_import(4, without);
    if (rc != 0 && rc != 2 && rc != 3) {
        fprintf(stderr, "fuzz_import: exit %d\n", rc);
        abort();
    }
    check_rows(rc);
    unlink(file_path);
    return 0;
}
