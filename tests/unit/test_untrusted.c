/* test_untrusted.c: the helpers that keep untrusted specs, registries and
** paths in their place (util.c): JSON output, one-line messages, strict
** sizes, known archs, reading and writing only regular files. */
#define _GNU_SOURCE
#include "check.h"
#include "json.h"
#include "util.h"
#include "aitune.h"
#include "dbguard.h"
#include "registry.h"
#include "spec.h"
#include "expr.h"
#include "jit.h"
#include "tmpl.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_json(void)
{
    jw w = { 0 };
    jw_str(&w, "a\"b\\c\nd\te\x01\x1b[31m\x7f");
    CHECK_STR(jw_text(&w), "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001b[31m\\u007f\"", "control bytes and quotes escaped");
    CHECK(json_valid(jw_text(&w)), "an escaped string is valid JSON");
    jw_free(&w);
    jw_str(&w, NULL);
    CHECK_STR(jw_text(&w), "null", "a NULL string is null, never (null)");
    jw_free(&w);
    jw_str(&w, "\xc3\xa9\xff");
    CHECK_STR(jw_text(&w), "\"\xc3\xa9\\u00ff\"", "UTF-8 kept, a stray byte escaped");
    CHECK(json_valid(jw_text(&w)), "a string with a stray byte is still valid JSON");
    jw_free(&w);
    jw_arr(&w);
    jw_num(&w, 0.0 / 0.0, 2);
    jw_num(&w, HUGE_VAL, 2);
    jw_num(&w, 1.5, 2);
    jw_real(&w, -HUGE_VAL);
    jw_end(&w);
    CHECK_STR(jw_text(&w), "[null,null,1.50,null]", "NaN and infinity are null");
    jw_free(&w);

    const char *good[] = { "{}", "[]", "{\"block\":256,\"vec\":4}", " [1, -2.5e3, true, false, null, \"x\\u00e9\"] ",
                           "{\"a\":{\"b\":[{}]}}", "0", "\"s\"" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(json_valid(good[i]), "valid JSON: %s", good[i]);
    const char *bad[] = { "", "{", "{\"a\":1}}", "{\"a\":1} x", "{\"a\":1}\n{\"b\":2}", "{a:1}", "[1,]", "01",
                          "1.", "\"\n\"", "\"\\x\"", "nul", "{\"a\":1,}", "}{\"x\":system(\"id\")}", "[\"\xff\"]",
                          "1e", "--1", "\"\\u12g4\"" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(!json_valid(bad[i]), "invalid JSON refused: case %zu", i);
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[199] = 0;
    char deep_ok[200];
    snprintf(deep_ok, sizeof deep_ok, "%.*s%.*s", 60, deep, 60, deep + 100);
    deep[199] = ']';
    char deep_all[201];
    memcpy(deep_all, deep, 200);
    deep_all[200] = 0;
    CHECK(json_valid(deep_ok), "60 levels of nesting are fine");
    CHECK(!json_valid(deep_all), "100 levels of nesting are refused (cap 64)");

    jw_arr(&w);
    jw_raw(&w, "{\"block\":256}");
    jw_raw(&w, "{\"block\":256}, \"x\": 1");
    jw_raw(&w, NULL);
    jw_end(&w);
    CHECK_STR(jw_text(&w), "[{\"block\":256},\"{\\\"block\\\":256}, \\\"x\\\": 1\",null]",
              "raw JSON copied when valid, quoted when not, null for NULL");
    jw_free(&w);
}

static void test_printable(void)
{
    strbuf sb = STRBUF_INIT;
    sb_printable(&sb, "key\n\x1b]0;pwned\x07 ok\t\\");
    CHECK_STR(sb_str(&sb), "key\\n\\x1b]0;pwned\\x07 ok\\t\\", "control bytes escaped on one line");
    sb_free(&sb);
    char msg[32] = "a\nb";
    printable_inplace(msg, sizeof msg);
    CHECK_STR(msg, "a\\nb", "in place");
    char small[6] = "\x01\x02\x03";
    printable_inplace(small, sizeof small);
    CHECK(strlen(small) == 5 && !strchr(small, 1) && !strchr(small, 2), "in place, truncated to the buffer: %s", small);
}

static void test_parse_size(void)
{
    long long v = -1;
    CHECK(parse_size("4096", 4, 1, 1LL << 62, &v) == 0 && v == 4096, "4096");
    CHECK(parse_size("9223372036854775807", 19, 1, 0x7fffffffffffffffLL, &v) == 0 && v == 0x7fffffffffffffffLL,
          "INT64_MAX itself");
    CHECK(parse_size("9223372036854775808", 19, 1, 0x7fffffffffffffffLL, &v) == -1, "INT64_MAX + 1 overflows");
    CHECK(parse_size("99999999999999999999", 20, 1, 1LL << 62, &v) == -1, "20 nines overflow");
    CHECK(parse_size("0", 1, 1, 100, &v) == -2, "0 is out of range");
    const char *bad[] = { "1.5", "-5", "+5", " 5", "5 ", "0x10", "1e3", "", "5k" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(parse_size(bad[i], strlen(bad[i]), 1, 100, &v) == -1, "'%s' is not a size", bad[i]);
}

static void test_arch(void)
{
    const char *good[] = { "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(arch_known(good[i]), "%s is known", good[i]);
    const char *bad[] = { "sm_90 -DX=1", "sm_90a\n", "sm_9", "sm_99", "compute_90", "sm_90b", "", "sm_90a;", "SM_90" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(!arch_known(bad[i]), "arch case %zu is refused", i);
    CHECK(!arch_known(NULL), "NULL is no arch");
    CHECK(strstr(arch_list(), "sm_90a") != NULL, "the list names sm_90a");
}

static void test_files(const char *dir)
{
    char path[512], link_path[512], fifo[512];
    snprintf(path, sizeof path, "%s/out.cu", dir);
    snprintf(link_path, sizeof link_path, "%s/link.cu", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);

    CHECK(write_regular_file(path, "one\n", 4) == 0, "write a new file");
    size_t len = 0;
    char *got = read_regular_file(path, 100, &len);
    CHECK(got && len == 4 && !strcmp(got, "one\n"), "read it back");
    free(got);
    chmod(path, 0640);
    CHECK(write_regular_file(path, "two\n", 4) == 0, "replace a regular file");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "the old mode is kept");
    got = read_regular_file(path, 3, &len);
    CHECK(!got && errno == EFBIG, "a file over the cap is refused (EFBIG)");
    free(got);

    /* A symlink at the path: neither followed nor replaced. */
    char target[512];
    snprintf(target, sizeof target, "%s/target", dir);
    int fd = open(target, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) { if (write(fd, "keep", 4) != 4) {} close(fd); }
    if (symlink(target, link_path) == 0) {
        CHECK(write_regular_file(link_path, "evil", 4) == -1 && errno == EINVAL, "a symlink at the path is refused");
        got = read_regular_file(target, 100, &len);
        CHECK(got && !strcmp(got, "keep"), "the link's target is untouched");
        free(got);
        struct stat lst;
        CHECK(lstat(link_path, &lst) == 0 && S_ISLNK(lst.st_mode), "the link is still a link");
    } else {
        SKIP("symlinks: cannot make one here");
    }
    if (mkfifo(fifo, 0600) == 0) {
        CHECK(write_regular_file(fifo, "x", 1) == -1 && errno == EINVAL, "a FIFO at the path is refused");
        got = read_regular_file(fifo, 100, &len);
        CHECK(!got && errno == EINVAL, "reading a FIFO is refused without blocking");
        CHECK(check_regular_path(fifo) == -1 && errno == EINVAL, "check_regular_path refuses a FIFO");
    } else {
        SKIP("FIFO: cannot make one here");
    }
    CHECK(write_regular_file(dir, "x", 1) == -1 && errno == EINVAL, "a directory at the path is refused");
    got = read_regular_file("/dev/zero", 1 << 20, &len);
    CHECK(!got && errno == EINVAL, "/dev/zero is refused, not read until memory runs out");
    CHECK(check_regular_path("/dev/null") == -1 && errno == EINVAL, "check_regular_path refuses /dev/null");
    CHECK(check_regular_path(path) == 0, "check_regular_path takes a regular file");
    char absent[512];
    snprintf(absent, sizeof absent, "%s/absent.db", dir);
    CHECK(check_regular_path(absent) == 0, "check_regular_path takes an absent path");
    /* No temporary is left behind, whatever happened above. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '\\.tmp$'", dir);
    CHECK(system(cmd) != 0, "no temporary file is left behind");
    snprintf(cmd, sizeof cmd, "%s/nodir/x.cu", dir);
    CHECK(write_regular_file(cmd, "x", 1) == -1 && errno == ENOENT, "a missing folder fails with ENOENT");
}

/* The streaming writer every -o uses (issue 31): kept whole or not at all. */
static void test_outfile(const char *dir)
{
    char path[512], link_path[512], target[512];
    snprintf(path, sizeof path, "%s/stream.out", dir);
    snprintf(link_path, sizeof link_path, "%s/stream.link", dir);
    snprintf(target, sizeof target, "%s/stream.target", dir);
    outfile o;
    CHECK(out_open(&o, path) == 0 && o.f && o.f != stdout, "out_open of a new path gives a temporary");
    fputs("half", o.f);
    CHECK(access(path, F_OK) != 0, "nothing is at the path before out_close");
    CHECK(out_close(&o, 0) == 0 && access(path, F_OK) != 0, "out_close without keep leaves nothing");
    CHECK(out_open(&o, path) == 0, "out_open again");
    fputs("whole\n", o.f);
    CHECK(out_close(&o, 1) == 0, "out_close with keep");
    size_t len;
    char *got = read_regular_file(path, 100, &len);
    CHECK(got && !strcmp(got, "whole\n"), "the file holds what was written");
    free(got);
    mode_t um = umask(027);
    unlink(path);
    CHECK(out_open(&o, path) == 0 && out_close(&o, 1) == 0, "a new file with umask 027");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "its mode is 0666 & ~umask: %o", st.st_mode & 0777);
    umask(um);
    int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { if (write(fd, "keep", 4) != 4) {} close(fd); }
    if (symlink(target, link_path) == 0) {
        CHECK(out_open(&o, link_path) == -1 && errno == EINVAL && strstr(o.why, "symbolic link"),
              "out_open refuses a link: %s", o.why ? o.why : "(null)");
        out_close(&o, 0);
        /* A link swapped in while writing is not replaced either. */
        unlink(path);
        CHECK(out_open(&o, path) == 0, "out_open of a path that becomes a link");
        fputs("evil", o.f);
        CHECK(symlink(target, path) == 0, "the link appears meanwhile");
        CHECK(out_close(&o, 1) == -1 && strstr(o.why, "symbolic link"), "out_close does not rename over it");
        struct stat lst;
        CHECK(lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode), "the link is still a link");
        got = read_regular_file(target, 100, &len);
        CHECK(got && !strcmp(got, "keep"), "its target is untouched");
        free(got);
        unlink(path);
    } else {
        SKIP("symlinks: cannot make one here");
    }
    CHECK(out_open(&o, "-") == 0 && o.f == stdout && out_close(&o, 1) == 0, "- is standard output");
    CHECK(strstr(read_errstr(EFBIG, (size_t)256 << 20), "256 MB") != NULL, "read_errstr names the cap");
    CHECK(!strcmp(read_errstr(EINVAL, 1), "not a regular file"), "read_errstr: not a regular file");
}

extern const char reg_schema_sql[];

static sqlite3 *raw_open(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) printf("FAIL cannot open %s\n", path);
    return db;
}

static int count_misses(const char *op, const char *arch, const char *dtype, long long shapes, long long calls,
                        void *ctx)
{
    (void)op, (void)arch, (void)dtype, (void)shapes;
    if (ctx) *(long long *)ctx += calls;
    return 0;
}

/* What a registry file may hold and how long a query may run (dbguard.h). */
static void test_dbguard(const char *dir)
{
    char *n = dbguard_name("file:x?mode=memory");
    CHECK_STR(n, "./file:x?mode=memory", "a relative name gets ./ (no URI starts so)");
    free(n);
    n = dbguard_name("/tmp/file:x");
    CHECK_STR(n, "/tmp/file:x", "an absolute name is kept");
    free(n);

    /* The bound stops a query that never ends, and the next one runs. */
    sqlite3 *db = raw_open(":memory:");
    dbguard_budget b;
    dbguard_bound(db, &b, 1000000);
    double t0 = now_s();
    int rc = sqlite3_exec(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                              "SELECT count(*) FROM c WHERE x < 0", NULL, NULL, NULL);
    CHECK(rc == SQLITE_INTERRUPT && b.hit, "a recursive query stops at the bound: rc %d hit %d", rc, b.hit);
    CHECK(now_s() - t0 < 5, "within seconds: %.2f s", now_s() - t0);
    rc = sqlite3_exec(db, "SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                          "WHERE x < 1000) SELECT x FROM c)", NULL, NULL, NULL);
    CHECK(rc == SQLITE_OK && !b.hit, "the next statement has its own budget: rc %d", rc);
    sqlite3_close(db);

    /* The trigger names libaitune allows are the schema's. */
    db = raw_open(":memory:");
    sqlite3_exec(db, reg_schema_sql, NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name", -1, &st, NULL);
    int i = 0, same = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        same &= dbguard_trigger_names[i] && !strcmp(dbguard_trigger_names[i], (const char *)sqlite3_column_text(st, 0));
        if (dbguard_trigger_names[i]) i++;
    }
    sqlite3_finalize(st);
    CHECK(same && !dbguard_trigger_names[i], "dbguard_trigger_names are db/schema.sql's triggers");
    char why[512];
    CHECK(dbguard_check(db, NULL, why, sizeof why) == 0, "the schema itself passes");
    sqlite3_exec(db, "CREATE VIEW v AS SELECT 1", NULL, NULL, NULL);
    CHECK(dbguard_check(db, NULL, why, sizeof why) == -1 && strstr(why, "view 'v'"), "a view is refused: %s", why);
    sqlite3_close(db);

    /* The tool: a statement past reg_bound fails and says why. */
    char path[600];
    snprintf(path, sizeof path, "%s/bound.db", dir);
    reg *r;
    CHECK(reg_open(path, 0, &r) == 0, "a new registry: %s", reg_errmsg(r));
    reg_close(r);
    db = raw_open(path);
    sqlite3_exec(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) "
                     "INSERT INTO misses (op, arch, dtype, shape) SELECT 'axpy', 'sm_90', 'f32', x FROM c",
                 NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK(reg_open(path, 1, &r) == 0, "open it again: %s", reg_errmsg(r));
    reg_bound(r, 2000);
    CHECK(reg_misses_by_op(r, count_misses, NULL) == -1 && strstr(reg_errmsg(r), "stopped after 2000 steps"),
          "a statement past the bound fails: %s", reg_errmsg(r));
    reg_bound(r, DBGUARD_TOOL_STEPS);
    long long calls = 0;
    CHECK(reg_misses_by_op(r, count_misses, &calls) == 0 && calls == 5000, "within the bound it reads them all");
    reg_close(r);

    /* libaitune: a view is refused with a message; a corrupt set load says why. */
    snprintf(path, sizeof path, "%s/view.db", dir);
    db = raw_open(path);
    sqlite3_exec(db, reg_schema_sql, NULL, NULL, NULL);
    sqlite3_exec(db, "DROP TABLE winners; CREATE VIEW winners AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                     "SELECT x + 1 FROM c) SELECT 'a' AS op, 'sm_90' AS arch, 'f32' AS dtype, 'n=2^6' AS bucket, "
                     "'n' AS dims, '64' AS lo, '128' AS hi, 'vec' AS template, '{}' AS config, 1.0 AS median_us, "
                     "'' AS hw, '{\"n\":64}' AS shape FROM c WHERE x < 0", NULL, NULL, NULL);
    sqlite3_close(db);
    aitune *h;
    rc = aitune_open(path, &h);
    CHECK(rc == AITUNE_CORRUPT && strstr(aitune_errmsg(h), "view 'winners'"), "aitune_open refuses a view: %d %s", rc,
          aitune_errmsg(h));
    aitune_close(h);

    snprintf(path, sizeof path, "%s/corrupt.db", dir);
    db = raw_open(path);
    sqlite3_exec(db, reg_schema_sql, NULL, NULL, NULL);
    sqlite3_exec(db, "PRAGMA journal_mode = DELETE; BEGIN", NULL, NULL, NULL);
    for (int k = 0; k < 3000; k++) {
        char *sql = sqlite3_mprintf("INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, "
                                    "config, median_us, launch) VALUES ('axpy', 'sm_90', 'f32', 'n=%d', 'n', '%d', "
                                    "'%d', '{\"n\":%d}', 'axpy/vec', '{\"block\":64}', 1.5, '{}')", k, k + 1, k + 2,
                                    k + 1);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    int root = 0;
    sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = 'winners'", -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW) root = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* The winners table's root page (an interior page over 3000 rows):
    ** its cell pointers point nowhere. */
    int fd = open(path, O_WRONLY);
    char junk[4000];
    memset(junk, 0xee, sizeof junk);
    CHECK(root > 1 && fd >= 0 && pwrite(fd, junk, sizeof junk, (off_t)(root - 1) * 4096 + 12) == (ssize_t)sizeof junk,
          "corrupt the winners' root page %d", root);
    if (fd >= 0) close(fd);
    rc = aitune_open(path, &h);
    if (rc == AITUNE_OK) {
        aitune_choice c;
        long long shape[1] = { 5 };
        rc = aitune_lookup(h, "axpy", "sm_90", "f32", shape, 1, &c);
    }
    CHECK(rc == AITUNE_CORRUPT && strstr(aitune_errmsg(h), "registry") && strstr(aitune_errmsg(h), "malformed"),
          "a corrupt set: AITUNE_CORRUPT with a message: %d '%s'", rc, aitune_errmsg(h));
    aitune_close(h);
}

/* Bucket keys read back from a registry (merge's check): every key aitune
** writes parses, to its edges; others do not. */
static void test_bucket_keys(void)
{
    char names[SPEC_MAXDIMS][16] = { "m", "n", "k" }, key[96], why[128];
    long long lo[3] = { 4096, 1, 64 }, rep[3] = { 4097, 1, 64 };
    bucket_parsed k;
    CHECK(bucket_key(3, names, lo, rep, key, sizeof key) == 0 && bucket_key_parse(key, &k, why, sizeof why) == 0 &&
          k.ndims == 3 && !k.part && k.lo[0] == 4096 && k.cls[0] == 1 && k.lo[1] == 1 && k.cls[2] == 0,
          "'%s' parses back", key);
    bucket b = { .ndims = 1, .lo = { 4096 }, .hi = { 8192 }, .rep = { 4097 }, .align = { 1 } };
    snprintf(b.key, sizeof b.key, "n=2^12:align1");
    bucket parts[16];
    int n = bucket_split(&b, 1, parts), all = n == 2;
    for (int i = 0; i < n; i++)
        all &= bucket_key_parse(parts[i].key, &k, why, sizeof why) == 0 && k.part && k.corner[0] == parts[i].lo[0];
    CHECK(all, "split parts' keys parse to their corners (%s, %s)", parts[0].key, parts[1].key);
    const char *bad[] = { "n=04096", "n=6144:align1", "m=2^4,n=6144/2^4,6000", "n=0", "n=2^12:align3", "n=2^12/4096", "n=2^12/", "n=2^12/5760,1", "N=2^12", "n=2^12,",
                          "n=2^12:align1x", "=2^12", "n=2^-1", "n=2^12/05760", "n=2^99", "a=2^1,b=2^1,c=2^1,d=2^1,e=2^1,f=2^1,g=2^1" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(bucket_key_parse(bad[i], &k, why, sizeof why) == -1, "'%s' is refused: %s", bad[i], why);
}

static void test_expr_limits(void)
{
    long long v;
    char err[256];
    const char *names[] = { "n" };
    long long vals[] = { 1LL << 40 };
    CHECK(expr_eval("n*n", 1, names, vals, &v, err, sizeof err) == -1 && strstr(err, "overflow"),
          "n*n at n=2^40 overflows: %s", err);
    CHECK(expr_eval("99999999999999999999", 0, NULL, NULL, &v, err, sizeof err) == -1, "a literal too large");
    CHECK(expr_eval("cdiv(n, 0)", 1, names, vals, &v, err, sizeof err) == -1, "cdiv by zero");
    CHECK(expr_eval("9223372036854775807 + 1", 0, NULL, NULL, &v, err, sizeof err) == -1, "sum overflow");
    CHECK(expr_eval("-(0-9223372036854775807-1)", 0, NULL, NULL, &v, err, sizeof err) == -1, "negation overflow");
    char deep[4096];
    memset(deep, '(', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    CHECK(expr_eval(deep, 0, NULL, NULL, &v, err, sizeof err) == -1 && strstr(err, "nested"),
          "deep nesting is refused, not a stack overflow");
    CHECK(expr_eval("cdiv(n, 256) * 256", 1, names, vals, &v, err, sizeof err) == 0 && v == (1LL << 40), "normal");
}

/* An arch that smuggles options never reaches NVRTC (issue 14 item 7). */
static void test_jit_arch(void)
{
    jit_job j;
    memset(&j, 0, sizeof j);
    j.source = xstrdup("extern \"C\" __global__ void k(int *x) {\n#ifdef X\n*x = X;\n#endif\n}\n");
    snprintf(j.name, sizeof j.name, "k");
    snprintf(j.arch, sizeof j.arch, "sm_90a -DX=1");
    jit_compile(&j);
    CHECK(!j.ok && j.error && strstr(j.error, "unknown arch"), "jit refuses arch 'sm_90a -DX=1': %s",
          j.error ? j.error : "(null)");
    jit_job_clear(&j);
}

/* Buffer sizes that wrap in Lua's integers are refused (item 8). */
static void test_sizes(void)
{
    tmpl *T = tmpl_open(AITUNE_SOURCE_DIR);
    op_task t;
    long long ok_shape[2] = { 4096, 1024 };
    CHECK(tmpl_task(T, "transpose", "f32", ok_shape, &t) == 0, "transpose 4096x1024 resolves");
    CHECK(tmpl_task_bytes(&t) == 2LL * 4096 * 1024 * 4, "its buffers: %lld bytes", tmpl_task_bytes(&t));
    /* 2^40 * (2^40 + 1) wraps to 2^40 in 64 bits: a small, wrong buffer. */
    long long wrap[2] = { 1LL << 40, (1LL << 40) + 1 };
    int rc = tmpl_task(T, "transpose", "f32", wrap, &t);
    CHECK(rc == -1 && strstr(tmpl_errmsg(T), "overflows"), "2^40 x (2^40+1) is refused: %s", tmpl_errmsg(T));
    long long zero[2] = { 1LL << 32, 1LL << 32 };
    rc = tmpl_task(T, "transpose", "f32", zero, &t);
    CHECK(rc == -1 && strstr(tmpl_errmsg(T), "overflows"), "2^32 x 2^32 (wraps to 0) is refused: %s", tmpl_errmsg(T));
    long long bytes[2] = { 1LL << 31, 1LL << 31 };
    rc = tmpl_task(T, "transpose", "f32", bytes, &t);
    CHECK(rc == -1 && strstr(tmpl_errmsg(T), "overflows"), "2^62 elements of 4 bytes are refused: %s", tmpl_errmsg(T));
    long long big[1] = { 1LL << 40 };
    CHECK(tmpl_task(T, "axpy", "f32", big, &t) == 0 && tmpl_task_bytes(&t) == (1LL << 43),
          "axpy at 2^40 resolves (8 TB: for the device check to refuse)");
    tmpl_close(T);
}

int main(void)
{
    char dir[] = "/tmp/aitune-untrusted-XXXXXX";
    if (!mkdtemp(dir)) { printf("FAIL mkdtemp\n"); return 1; }
    test_json();
    test_printable();
    test_parse_size();
    test_arch();
    test_files(dir);
    test_outfile(dir);
    test_dbguard(dir);
    test_bucket_keys();
    test_expr_limits();
    test_jit_arch();
    test_sizes();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
    CHECK_DONE();
}
