/* fuzz_emit.c: libFuzzer harness for `aitune emit` (emit.c: emit_run, one
** shape and the whole op) over a mutated registry, which people copy from
** anywhere and whose strings emit writes into C.
**
** Two kinds of input (rows as in fuzz_db.h):
** - a database file ("SQLite format 3" first), written as it is;
** - lines, each a row of a fresh registry whose tables lack NOT NULL:
**     e|op|arch|dtype|shape    what to emit (first "e" line; shape "64,1000",
**                              empty: the whole op; default softmax bf16,
**                              whole, arch from the registry)
**     w|op|arch|dtype|bucket|hw|dims|lo|hi|shape|template|config|median_us|cubin|launch
**     d|op|arch|dtype|template|config|cubin|launch
**     c|hash|source|options|kernel|cubin
**     m|key|value
** Then emit_run writes one scratch file (the folder holds nothing else).
** What must hold:
** - the exit code is 0, 1, 2 or 3; a failure says why on stderr and leaves
**   no file, a success leaves the file; never a temporary left behind;
** - everything emit prints is one line per message, no control bytes;
** - the templates' Lua stack is as emit found it (one handle serves every
**   run, as below);
** - in the file, apart from each kernel's source (the registry's code, as
**   the README's threat model says), only emit's own code: printable ASCII,
**   no backslash, no trigraph, only its own #include/#if lines, its two
**   string literals, and identifiers that emit.c's own text writes, that
**   start with aitune_, that are the op's dims and arguments, or that name
**   a kernel (after "::"). So a registry string can reach a comment, but
**   never code.
** The templates and emit.c's text come from AITUNE_FUZZ_SOURCE when set
** (fuzz_db.h: fdb_source). */
#define _GNU_SOURCE
#include "emit.h"
#include "fuzz_db.h"
#include "tmpl.h"
#include "util.h"
#include <dirent.h>
#include <lua.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const ops[] = { "softmax", "axpy", "gemm_nt", "reduce_all", "transpose" };
static const char *const archs[] = { "", "sm_90", "sm_90a", "sm_80", "sm_100a" };
static const char *const dtypes[] = { "bf16", "f32", "f16", "bf16>f32" };
#define NOPS (int)(sizeof ops / sizeof *ops)
#define NDTYPES (int)(sizeof dtypes / sizeof *dtypes)

static char out_path[128];
static int verbose;             /* FUZZ_EMIT_VERBOSE=1: say what emit did with each input */
static char **vocab;            /* identifiers in emit.c's string literals, sorted */
static int nvocab;
static int op_ndims[NOPS];
static op_task tasks[NOPS][NDTYPES];
static int task_ok[NOPS][NDTYPES];

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_id(int c) { return is_id0(c) || (c >= '0' && c <= '9'); }

/* The identifiers emit.c writes itself: those inside its string literals,
** and those of the names it takes from names.c (dtypes' C and tensor-map
** types). */
static void read_vocab_of(const char *file)
{
    char *path = xstrfmt("%s/src/%s", fdb_source(), file);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "fuzz_emit: cannot read %s\n", path); abort(); }
    strbuf src = STRBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_add(&src, buf, n);
    fclose(f);
    free(path);
    const char *s = sb_str(&src);
    static int cap;
    for (const char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '/') { p = strchr(p, '\n'); if (!p) break; continue; }
        if (p[0] == '/' && p[1] == '*') { p = strstr(p + 2, "*/"); if (!p) break; p++; continue; }
        if (*p == '\'') { p += p[1] == '\\' ? 3 : 2; continue; }   /* '"' and '\\' */
        if (*p != '"') continue;
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\') { p++; continue; }    /* \n, \", \\ */
            if (!is_id0(*p)) continue;
            const char *e = p;
            while (is_id(*e)) e++;
            if (nvocab == cap) vocab = xrealloc(vocab, sizeof *vocab * (size_t)(cap = cap ? 2 * cap : 256));
            vocab[nvocab++] = strndup(p, (size_t)(e - p));
            p = e - 1;
        }
        if (!*p) break;
    }
    sb_free(&src);
}

static void read_vocab(void)
{
    read_vocab_of("emit.c");
    read_vocab_of("names.c");
    qsort(vocab, (size_t)nvocab, sizeof *vocab, cmp_str);
}

static int in_vocab(const char *id)
{
    return bsearch(&id, vocab, (size_t)nvocab, sizeof *vocab, cmp_str) != NULL;
}

/* emit_run opens the templates and closes them again, and Lua loading them
** is most of its time: linked with -Wl,--wrap=tmpl_open,--wrap=tmpl_close,
** every run gets one handle, opened once (templates are trusted and the
** same for every input; emit is what is fuzzed, not tmpl.c's loading). */
tmpl *__real_tmpl_open(const char *root);
tmpl *__wrap_tmpl_open(const char *root);
void __wrap_tmpl_close(tmpl *T);
static tmpl *shared_T;

tmpl *__wrap_tmpl_open(const char *root)
{
    if (!shared_T) shared_T = __real_tmpl_open(root);
    return shared_T;
}

void __wrap_tmpl_close(tmpl *T) { (void)T; }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fdb_setup("emit", 3);
    verbose = getenv("FUZZ_EMIT_VERBOSE") != NULL;
    snprintf(out_path, sizeof out_path, "%s/out.cu", fdb_dir());
    read_vocab();
    /* The ops' signatures, from the templates (trusted, as emit takes them). */
    tmpl *T = __wrap_tmpl_open(fdb_source());
    for (int o = 0; o < NOPS; o++) {
        int ndt;
        char dims[TMPL_MAXDIMS][16], dts[32][16];
        if (tmpl_op_info(T, ops[o], &op_ndims[o], dims, &ndt, dts, 32)) op_ndims[o] = 1;
        long long shape[TMPL_MAXDIMS] = { 1, 1, 1, 1 };
        for (int d = 0; d < NDTYPES; d++) task_ok[o][d] = !tmpl_task(T, ops[o], dtypes[d], shape, &tasks[o][d]);
    }
    return 0;
}

/* ---- the registry ---- */

typedef struct target {
    int op, dtype;
    const char *arch;
    long long shape[4];
    int whole;
} target;

static int pick(const char *const *list, int n, const char *f, size_t len, int dflt)
{
    for (int i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], f, len)) return i;
    return dflt;
}

static void read_target(const char **f, const size_t *n, int nf, target *t)
{
    if (nf > 0) t->op = pick(ops, NOPS, f[0], n[0], 0);
    if (nf > 1) t->arch = archs[pick(archs, 5, f[1], n[1], 0)];
    if (nf > 2) t->dtype = pick(dtypes, NDTYPES, f[2], n[2], 0);
    if (nf > 3 && n[3]) {
        /* As the command line takes it: one size per dim, 1 to 2^62. */
        char s[128];
        snprintf(s, sizeof s, "%.*s", (int)(n[3] < 127 ? n[3] : 127), f[3]);
        char *p = s;
        for (int d = 0; d < 4; d++) {
            long long v = strtoll(p, &p, 10);
            t->shape[d] = v < 1 ? 1 : v > (1LL << 62) ? 1LL << 62 : v;
            if (*p == ',') p++;
        }
        t->whole = 0;
        if (!t->arch[0]) t->arch = "sm_90";   /* --shape needs --arch */
    }
}

static void load_rows(const char *text, size_t size, target *t)
{
    static const struct { char tag; int ncols; const char *sql; } kinds[] = {
        { 'w', 14, "INSERT OR REPLACE INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, "
                   "median_us, cubin, launch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
        { 'd', 7, "INSERT OR REPLACE INTO defaults (op, arch, dtype, template, config, cubin, launch) VALUES (?,?,?,?,?,?,?)" },
        { 'c', 5, "INSERT OR REPLACE INTO cubins (hash, source, options, kernel, cubin) VALUES (?,?,?,?,?)" },
        { 'm', 2, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)" },
    };
    sqlite3 *db = fdb_begin();
    sqlite3_stmt *st[4];
    for (int k = 0; k < 4; k++)
        if (sqlite3_prepare_v2(db, kinds[k].sql, -1, &st[k], NULL) != SQLITE_OK) abort();
    int have_target = 0;
    const char *end = text + size;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *f[FDB_MAXFIELDS];
        size_t n[FDB_MAXFIELDS];
        if (le - line >= 2 && line[1] == '|') {
            if (line[0] == 'e' && !have_target) {
                read_target(f, n, fdb_fields(line + 2, le, f, n, 4), t);
                have_target = 1;
            }
            for (int k = 0; k < 4; k++) {
                if (line[0] != kinds[k].tag) continue;
                int nf = fdb_fields(line + 2, le, f, n, kinds[k].ncols);
                for (int i = 1; i <= kinds[k].ncols; i++) {
                    if (i <= nf) fdb_bind(st[k], i, f[i - 1], n[i - 1]);
                    else sqlite3_bind_null(st[k], i);
                }
                sqlite3_step(st[k]);
                sqlite3_reset(st[k]);
                sqlite3_clear_bindings(st[k]);
            }
        }
        line = le + 1;
    }
    for (int k = 0; k < 4; k++) sqlite3_finalize(st[k]);
    fdb_end(db);
}

/* The kernel sources the registry holds, as emit reads them. */
static char **read_sources(int *n)
{
    *n = 0;
    char **out = NULL;
    sqlite3 *db;
    if (sqlite3_open_v2(fdb_path(), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT source FROM cubins", -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW) {
                const unsigned char *s = sqlite3_column_text(st, 0);
                if (!s) continue;
                out = xrealloc(out, sizeof *out * (size_t)(*n + 1));
                out[(*n)++] = xstrdup((const char *)s);
            }
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    return out;
}

/* ---- the checks ---- */

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_emit: " __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

static void check_code_line(const char *line, size_t len, const op_task *task)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        CHECK(c >= 0x20 && c < 0x7f, "a control byte (0x%02x) in emit's own lines: %.*s", c, (int)len, line);
        CHECK(c != '\\', "a backslash in emit's own lines: %.*s", (int)len, line);
        CHECK(!(c == '?' && i + 2 < len && line[i + 1] == '?' && strchr("=/'()!<>-", line[i + 2])),
              "a trigraph in emit's own lines: %.*s", (int)len, line);
    }
    if (len >= 2 && line[0] == '/' && line[1] == '/') return;   /* a comment: printable, one line */
    if (len && line[0] == '#') {
        static const char *const ok[] = { "#include <cuda.h>", "#include <cuda_runtime.h>", "#include <math.h>",
                                          "#include <stddef.h>", "#if CUDART_VERSION >= 12050", "#else", "#endif" };
        int found = 0;
        for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) found |= strlen(ok[k]) == len && !memcmp(ok[k], line, len);
        CHECK(found, "a directive emit does not write: %.*s", (int)len, line);
        return;
    }
    for (size_t i = 0; i < len;) {
        char c = line[i];
        if (c == '/' && i + 1 < len && line[i + 1] == '/') return;   /* the rest is a comment */
        CHECK(!(c == '/' && i + 1 < len && line[i + 1] == '*'), "a block comment: %.*s", (int)len, line);
        CHECK(c != '\'', "a character literal: %.*s", (int)len, line);
        if (c == '"') {
            const char *q = memchr(line + i + 1, '"', len - i - 1);
            CHECK(q, "an unterminated string: %.*s", (int)len, line);
            size_t n = (size_t)(q - line) - i - 1;
            const char *s = line + i + 1;
            CHECK((n == 1 && *s == 'C') || (n == 22 && !memcmp(s, "cuTensorMapEncodeTiled", 22)),
                  "a string emit does not write: %.*s", (int)len, line);
            i += n + 2;
        } else if (c >= '0' && c <= '9') {
            while (i < len && (is_id(line[i]) || line[i] == '.')) i++;
        } else if (is_id0(c)) {
            size_t e = i;
            while (e < len && is_id(line[e])) e++;
            char id[128];
            snprintf(id, sizeof id, "%.*s", (int)(e - i), line + i);
            int ok = !strncmp(id, "aitune_", 7) || in_vocab(id) || (i >= 2 && line[i - 1] == ':' && line[i - 2] == ':');
            for (int a = 0; !ok && a < task->nargs; a++) ok = !strcmp(id, task->args[a].name);
            for (int d = 0; !ok && d < task->ndims; d++) ok = !strcmp(id, task->dims[d]);
            CHECK(ok, "identifier '%s' is not emit's: %.*s", id, (int)len, line);
            i = e;
        } else {
            i++;
        }
    }
}

/* The file: emit's lines, and between "namespace aitune_kN {" and its
** closing line a kernel's source (a cached one exactly, or a template's). */
static void check_file(const char *text, size_t len, const op_task *task)
{
    CHECK(!strncmp(text, "// Written by aitune ", 21), "the file does not start with emit's header");
    CHECK(len && text[len - 1] == '\n', "the file does not end with a newline");
    int nsrc;
    char **src = read_sources(&nsrc);
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)(eol - p);
        int k = -1;
        if (n > 20 && !memcmp(p, "namespace aitune_k", 18) && p[18] >= '0' && p[18] <= '9') {
            char *q;
            k = (int)strtol(p + 18, &q, 10);
            if (q + 2 != eol || q[0] != ' ' || q[1] != '{') k = -1;
        }
        if (k >= 0) {
            char close[64];
            int cn = snprintf(close, sizeof close, "\n}  // namespace aitune_k%d\n", k);
            const char *body = eol + 1, *after = NULL;
            for (int i = 0; i < nsrc; i++) {
                size_t sl = strlen(src[i]);
                if ((size_t)(end - body) >= sl + (size_t)cn && !memcmp(body, src[i], sl) && !memcmp(body + sl, close, (size_t)cn) &&
                    (!after || body + sl + cn > after))
                    after = body + sl + cn;
            }
            if (!after) {   /* a template's source (the default level) */
                const char *c = memmem(body, (size_t)(end - body), close, (size_t)cn);
                CHECK(c, "kernel %d's namespace is not closed", k);
                after = c + cn;
            }
            /* #undef lines for the macros the source defined */
            while (after < end && !strncmp(after, "#undef ", 7)) {
                const char *u = after + 7, *ue = memchr(u, '\n', (size_t)(end - u));
                CHECK(ue && ue > u, "an empty #undef");
                for (const char *q = u; q < ue; q++) CHECK(is_id(*q), "#undef of no identifier");
                after = ue + 1;
            }
            p = after;
            continue;
        }
        check_code_line(p, n, task);
        p = eol + 1;
    }
    for (int i = 0; i < nsrc; i++) free(src[i]);
    free(src);
}

/* What emit printed: one line per message, nothing a terminal would run. */
static void check_messages(const char *msg, size_t len, int rc)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)msg[i];
        CHECK(c == '\n' || (c >= 0x20 && c != 0x7f), "a control byte (0x%02x) in emit's messages: %.*s", c, (int)len, msg);
    }
    CHECK(!len || msg[len - 1] == '\n', "a message without its newline: %.*s", (int)len, msg);
    if (rc) CHECK(memmem(msg, len, "aitune: error: ", 15), "emit failed (exit %d) without an error message", rc);
    else CHECK(!strncmp(msg, "wrote ", 6), "emit succeeded without saying what it wrote: %.*s", (int)len, msg);
}

/* Only the registry (and what SQLite keeps beside it) and the output. */
static void check_folder(void)
{
    DIR *d = opendir(fdb_dir());
    CHECK(d, "the scratch folder is gone");
    struct dirent *e;
    while ((e = readdir(d))) {
        static const char *const ok[] = { ".", "..", "reg.db", "reg.db-wal", "reg.db-shm", "reg.db-journal", "out.cu" };
        int found = 0;
        for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) found |= !strcmp(e->d_name, ok[k]);
        CHECK(found, "emit left '%s' behind", e->d_name);
    }
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    target t = { .op = 0, .dtype = 0, .arch = "", .shape = { 1, 1, 1, 1 }, .whole = 1 };
    if (fdb_is_file(data, size)) fdb_put(data, size);
    else load_rows((const char *)data, size, &t);
    unlink(out_path);
    emit_opts o = { .db_path = fdb_path(), .root = fdb_source(), .op = ops[t.op], .arch = t.arch,
                    .dtype = dtypes[t.dtype], .shape = t.whole ? NULL : t.shape, .ndims = t.whole ? 1 : op_ndims[t.op],
                    .out_path = out_path };
    /* emit's messages go to a buffer (sanitizer reports still reach fd 2). */
    char *msg = NULL;
    size_t msglen = 0;
    FILE *saved = stderr;
    stderr = open_memstream(&msg, &msglen);
    if (!stderr) abort();
    int rc = emit_run(&o);
    fclose(stderr);
    stderr = saved;
    if (verbose) fprintf(stderr, "fuzz_emit: %s %s %s: exit %d: %.*s", ops[t.op], t.arch, dtypes[t.dtype], rc, (int)msglen, msg);
    CHECK(rc >= 0 && rc <= 3, "emit exited %d", rc);
    check_messages(msg, msglen, rc);
    check_folder();
    struct stat sb;
    int exists = lstat(out_path, &sb) == 0;
    CHECK(exists == !rc, "emit exited %d %s a file", rc, exists ? "and left" : "without");
    if (!rc) {
        CHECK(S_ISREG(sb.st_mode), "the output is not a regular file");
        FILE *f = fopen(out_path, "rb");
        CHECK(f, "cannot read the output");
        char *text = malloc((size_t)sb.st_size + 1);
        size_t n = fread(text, 1, (size_t)sb.st_size, f);
        fclose(f);
        text[n] = 0;
        CHECK(task_ok[t.op][t.dtype], "emit wrote %s %s, which the templates do not know", ops[t.op], dtypes[t.dtype]);
        check_file(text, n, &tasks[t.op][t.dtype]);
        free(text);
    }
    free(msg);
    unlink(out_path);
    /* The handle outlives the run: emit must leave its Lua stack as it was. */
    CHECK(lua_gettop(tmpl_lua(shared_T)) == 0, "emit left %d values on the templates' Lua stack", lua_gettop(tmpl_lua(shared_T)));
    /* Lua's garbage of this run goes now, not in some later run: libFuzzer
    ** counts mallocs against frees per run to look for leaks. */
    lua_gc(tmpl_lua(shared_T), LUA_GCCOLLECT);
    /* libFuzzer may end with _Exit (no atexit): leave nothing behind. */
    fdb_cleanup();
    return 0;
}
