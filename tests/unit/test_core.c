/*
** test_core: the small pure modules: util (durations, sizes, JSON strings,
** hashing), expr (launch expressions), bench's statistics and proto's
** messages over real pipes.
**
**     build/tests/test_core
*/
#define _GNU_SOURCE
#include "bench.h"
#include "check.h"
#include "expr.h"
#include "proto.h"
#include "json.h"
#include "util.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (1 + fabs(b)); }

/* ---- util ---- */

static void test_duration(void)
{
    CHECK(parse_duration("90s") == 90, "parse_duration 90s = %g", parse_duration("90s"));
    CHECK(parse_duration("10m") == 600, "parse_duration 10m = %g", parse_duration("10m"));
    CHECK(parse_duration("2h") == 7200, "parse_duration 2h = %g", parse_duration("2h"));
    CHECK(parse_duration("1h30m") == 5400, "parse_duration 1h30m = %g", parse_duration("1h30m"));
    CHECK(parse_duration("45") == 45, "parse_duration 45 (bare seconds) = %g", parse_duration("45"));
    const char *bad[] = { "bad", "", "10x", "m", "-5s", "10 m", "nan", NULL };
    for (const char **b = bad; *b; b++) {
        double v = parse_duration(*b);
        CHECK(v == -1, "parse_duration '%s' is -1 (got %g)", *b, v);
    }
}

static void test_fmt_size(void)
{
    char out[32];
    fmt_size(out, sizeof out, 67108864);
    CHECK_STR(out, "2^26", "fmt_size 2^26");
    fmt_size(out, sizeof out, 1);
    CHECK_STR(out, "2^0", "fmt_size 1");
    fmt_size(out, sizeof out, 1LL << 40);
    CHECK_STR(out, "2^40", "fmt_size 2^40");
    fmt_size(out, sizeof out, 1000);
    CHECK_STR(out, "1000", "fmt_size 1000");
    fmt_size(out, sizeof out, 0);
    CHECK_STR(out, "0", "fmt_size 0");
    fmt_size(out, sizeof out, 3 << 20);
    CHECK_STR(out, "3145728", "fmt_size 3*2^20");
}

static void test_json_str(void)
{
    jw w = { 0 };
    jw_str(&w, "a\"b\\c\nd\te\x01" "f/");
    CHECK_STR(jw_text(&w), "\"a\\\"b\\\\c\\nd\\te\\u0001f/\"", "jw_str escaping");
    jw_free(&w);
    jw_str(&w, "");
    CHECK_STR(jw_text(&w), "\"\"", "jw_str of empty");
    jw_free(&w);
    jw_str(&w, "caf\xc3\xa9");
    CHECK_STR(jw_text(&w), "\"caf\xc3\xa9\"", "jw_str keeps UTF-8 bytes");
    jw_free(&w);
    /* Structure: commas, escaped keys, nesting, layout white space. */
    jw_obj(&w);
    jw_key(&w, "a\"b");
    jw_int(&w, -3);
    jw_space(&w, "\n");
    jw_key(&w, "list");
    jw_arr(&w);
    jw_bool(&w, 1);
    jw_space(&w, "\n  ");
    jw_obj(&w);
    jw_end(&w);
    jw_null(&w);
    jw_real(&w, 0.1);
    jw_end(&w);
    jw_end(&w);
    CHECK_STR(jw_text(&w), "{\"a\\\"b\":-3,\n\"list\":[true,\n  {},null,0.10000000000000001]}", "jw: members, items, keys escaped");
    CHECK(!w.oom && json_valid(jw_text(&w)), "jw: the text is valid JSON");
    jw_free(&w);
    for (int i = 0; i <= JSON_MAXDEPTH; i++) jw_arr(&w);
    CHECK(w.oom, "jw: nesting past JSON_MAXDEPTH is refused");
    jw_free(&w);
    jw_end(&w);
    CHECK(w.oom, "jw: closing what is not open is refused");
    jw_free(&w);
    strbuf e = STRBUF_INIT;
    CHECK_STR(sb_str(&e), "", "sb_str of an empty strbuf is \"\"");
    sb_printf(&e, "%d-%s", 42, "x");
    sb_add(&e, "\0z", 2);
    CHECK(e.len == 6 && !memcmp(e.buf, "42-x\0z", 6) && e.buf[6] == 0, "sb_printf + sb_add keep binary bytes and a terminator");
    sb_free(&e);
}

static void test_hash(void)
{
    char hex[17];
    hash_hex(hash_str(HASH_INIT, ""), hex);
    CHECK_STR(hex, "af63bd4c8601b7df", "hash_str(\"\") is FNV-1a of one NUL");
    hash_hex(hash_bytes(HASH_INIT, "a", 1), hex);
    CHECK_STR(hex, "af63dc4c8601ec8c", "hash_bytes(\"a\") is FNV-1a 64");
    hash_hex(hash_str(HASH_INIT, "axpy/vec"), hex);
    CHECK_STR(hex, "bb42dd05027aee0e", "hash_str(\"axpy/vec\") is stable");
    uint64_t a = hash_str(hash_str(HASH_INIT, "ab"), "c"), b = hash_str(hash_str(HASH_INIT, "a"), "bc");
    CHECK(a != b, "chained hash_str separates (\"ab\",\"c\") from (\"a\",\"bc\")");
    hash_hex(0x1, hex);
    CHECK_STR(hex, "0000000000000001", "hash_hex pads to 16 digits");
}

static void test_arch_base(void)
{
    struct { const char *in, *want; } cases[] = {
        { "sm_90a", "sm_90" }, { "sm_100f", "sm_100" }, { "sm_90", "sm_90" }, { "sm_80", "sm_80" },
        { "sm_120a", "sm_120" }, { "sm_90aa", "sm_90aa" }, { "sm_a", "sm_a" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[16];
        memset(out, 'X', sizeof out);
        arch_base(cases[i].in, out);
        CHECK(!strcmp(out, cases[i].want), "arch_base('%s') = '%s' (want '%s')", cases[i].in, out, cases[i].want);
    }
    char out[16];
    arch_base("sm_90_with_a_very_long_suffix", out);
    CHECK(strlen(out) == 15, "arch_base truncates to 15 characters ('%s')", out);
}

/* ---- expr ---- */

static long long ev(const char *s, long long n, int *rc, char *err)
{
    const char *names[] = { "n", "rows" };
    long long vals[] = { n, 7 };
    long long out = -999;
    *rc = expr_eval(s, 2, names, vals, &out, err, 256);
    return out;
}

static void test_expr(void)
{
    char err[256];
    int rc;
    const char *g = "max(1, min(cdiv(n, 2048), 264))";
    struct { long long n, want; } cases[] = {
        { 1, 1 }, { 2048, 1 }, { 2049, 2 }, { 1 << 20, 264 }, { 264 * 2048, 264 }, { 263 * 2048 + 1, 264 },
        { 100 * 2048, 100 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long long v = ev(g, cases[i].n, &rc, err);
        CHECK(rc == 0 && v == cases[i].want, "expr %s at n=%lld = %lld (want %lld)", g, cases[i].n, v, cases[i].want);
    }
    struct { const char *s; long long want; } arith[] = {
        { "2+3*4", 14 }, { "(2+3)*4", 20 }, { "10-2-3", 5 }, { "2*3+4*5", 26 }, { "-3+5", 2 },
        { "2*-3", -6 }, { " n * rows ", 70 }, { "cdiv(n,3)", 4 }, { "cdiv(9,3)", 3 }, { "min(rows, n)", 7 },
        { "max(n-20, 0)", 0 }, { "cdiv(n*rows, 16) + 1", 6 },
    };
    for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++) {
        long long v = ev(arith[i].s, 10, &rc, err);
        CHECK(rc == 0 && v == arith[i].want, "expr '%s' with n=10, rows=7 = %lld (want %lld)", arith[i].s, v, arith[i].want);
    }

    err[0] = 0;
    long long v = ev("n + m", 10, &rc, err);
    CHECK(rc == -1 && strstr(err, "unknown name 'm'"), "unknown name is an error naming it: '%s'", err);
    CHECK(strstr(err, "column 5") != NULL, "unknown name: the column is where the name starts (5 in 'n + m'): '%s'", err);
    err[0] = 0;
    v = ev("cdiv(n, 0)", 10, &rc, err);
    CHECK(rc == -1 && strstr(err, "cdiv"), "cdiv by 0 is an error: '%s'", err);
    v = ev("cdiv(n, rows - 7)", 10, &rc, err);
    CHECK(rc == -1, "cdiv by an expression that is 0 is an error: '%s'", err);
    (void)v;
    const char *bad[] = { "", "2 +", "n n", "(n", "max(1)", "min(1, 2", "3 $ 4", "cdiv n", NULL };
    for (const char **b = bad; *b; b++) {
        err[0] = 0;
        long long out = 12345;
        const char *names[] = { "n" };
        long long vals[] = { 10 };
        rc = expr_eval(*b, 1, names, vals, &out, err, sizeof err);
        CHECK(rc == -1 && err[0] && strstr(err, "column") && out == 12345, "malformed '%s' fails with a column and leaves *out: '%s'", *b, err);
    }
    /* A small error buffer is not overrun. */
    char small[8];
    memset(small, 'X', sizeof small);
    const char *names[] = { "n" };
    long long vals[] = { 10 }, out;
    rc = expr_eval("n + some_long_unknown_name", 1, names, vals, &out, small, 6);
    CHECK(rc == -1 && small[5] == 0 && small[6] == 'X', "error text is truncated to errcap");
}

/* ---- bench statistics ---- */

static void test_stats(void)
{
    stats s;
    double odd[] = { 5, 1, 3 };
    stats_of(odd, 3, &s);
    CHECK(s.n == 3 && s.median == 3 && s.min == 1 && s.max == 5, "stats_of odd: median %g min %g max %g n %d", s.median, s.min, s.max, s.n);
    CHECK(near(s.spread, 2.0 / 3.0), "stats_of odd: spread (IQR/median) %g, want 0.6667", s.spread);
    CHECK(odd[0] == 5 && odd[1] == 1 && odd[2] == 3, "stats_of leaves the samples in their order");
    double even[] = { 4, 1, 3, 2 };
    stats_of(even, 4, &s);
    CHECK(s.n == 4 && near(s.median, 2.5) && s.min == 1 && s.max == 4, "stats_of even: median %g (want 2.5)", s.median);
    CHECK(near(s.spread, 0.6), "stats_of even: spread %g, want 0.6", s.spread);
    double one[] = { 7 };
    stats_of(one, 1, &s);
    CHECK(s.n == 1 && s.median == 7 && s.min == 7 && s.max == 7 && s.spread == 0, "stats_of one sample");
    stats_of(one, 0, &s);
    CHECK(s.n == 0 && s.median == 0, "stats_of no samples is all zero");
    double same[6] = { 2, 2, 2, 2, 2, 2 };
    stats_of(same, 6, &s);
    CHECK(s.spread == 0 && s.median == 2, "stats_of constant samples: spread 0");

    double x[40];
    for (int i = 0; i < 40; i++) x[i] = 10 + (i % 3) * 0.001;
    CHECK(stats_settled(x, 20, 10, 0.005), "stats_settled: a steady series has settled");
    CHECK(!stats_settled(x, 10, 10, 0.005), "stats_settled: n <= batch never settles");
    for (int i = 10; i < 20; i++) x[i] = 20;
    CHECK(!stats_settled(x, 20, 10, 0.005), "stats_settled: a jump in the last batch has not settled");
    for (int i = 0; i < 40; i++) x[i] = i < 30 ? 10 : 10.02;
    CHECK(stats_settled(x, 40, 10, 0.005), "stats_settled: a small late shift within tol has settled");

    int n3[3] = { 12, 13, 12 };
    CHECK(bench_race_done(n3, 3, 12, 0.3, 0.25), "bench_race_done: past the time, every slot with its samples");
    CHECK(!bench_race_done(n3, 3, 12, 0.2, 0.25), "bench_race_done: not before the time");
    n3[2] = 11;
    CHECK(!bench_race_done(n3, 3, 12, 5.0, 0.25), "bench_race_done: not while a slot lacks samples, however long");
    CHECK(bench_race_done(n3, 2, 12, 5.0, 0.25), "bench_race_done: counts only the race's own slots");
    CHECK(!bench_race_done(n3, 2, 12, 5.0, 0), "bench_race_done: without a time, a race runs all its rounds");
    wire_time q;
    wire_race_init(&q);
    CHECK(q.rounds == WIRE_RACE_ROUNDS && q.min_samples == WIRE_RACE_MIN && q.max_seconds == WIRE_RACE_SECONDS &&
              q.warmup == 3 && q.nslots == 0,
          "wire_race_init: a race's rounds, samples and time over the defaults (%d %d %g)", q.rounds, q.min_samples,
          q.max_seconds);
}

/* ---- proto ---- */

static int pipe_pair(int fds[2])
{
    if (pipe(fds)) {
        printf("FAIL setup: pipe\n");
        exit(1);
    }
    return 0;
}

static void test_proto(void)
{
    int fds[2];
    pipe_pair(fds);
    conn c = { fds[0], STRBUF_INIT };
    unsigned char blob[64];
    for (int i = 0; i < 64; i++) blob[i] = (unsigned char)(i * 7);
    memcpy(blob + 10, "\n\n\0\n\n", 5);
    blob[0] = 0;

    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "load");
    msg_kv(&h, "slot", "%d", 3);
    msg_kv(&h, "name", "%s", "aitune_axpy_1234");
    msg_kv(&h, "ratio", "%.3f", 0.125);
    CHECK(msg_send(fds[1], &h, blob, sizeof blob) == 0, "msg_send with a blob");
    sb_reset(&h);
    msg_kv(&h, "cmd", "verify");
    msg_kv(&h, "error", "%s", "line one\nline two\rthree");
    CHECK(msg_send(fds[1], &h, NULL, 0) == 0, "msg_send a second message into the same pipe");
    sb_reset(&h);
    msg_kv(&h, "cmd", "time");
    CHECK(msg_send(fds[1], &h, "\n\n", 2) == 0, "msg_send a third message whose blob is a blank line");

    msg m;
    int rc = msg_read(&c, &m, 2);
    CHECK(rc == 0, "msg_read first message: rc %d", rc);
    CHECK_STR(msg_get(&m, "cmd"), "load", "first message cmd");
    CHECK(msg_int(&m, "slot", -1) == 3, "msg_int slot = %lld", msg_int(&m, "slot", -1));
    CHECK_STR(msg_get(&m, "name"), "aitune_axpy_1234", "first message name");
    CHECK(near(msg_num(&m, "ratio", 0), 0.125), "msg_num ratio");
    CHECK(msg_get(&m, "absent") == NULL && msg_int(&m, "absent", 77) == 77 && msg_num(&m, "absent", 1.5) == 1.5,
          "absent keys give NULL and the defaults");
    CHECK(m.blob_len == sizeof blob && m.blob && !memcmp(m.blob, blob, sizeof blob),
          "blob with NUL and blank lines arrives intact (%zu bytes)", m.blob_len);
    msg_free(&m);
    rc = msg_read(&c, &m, 2);
    CHECK(rc == 0 && msg_get(&m, "cmd") && !strcmp(msg_get(&m, "cmd"), "verify"), "second message read from the same buffer");
    CHECK_STR(msg_get(&m, "error"), "line one line two three", "a newline in a value is flattened to a space");
    CHECK(m.n == 2 && m.blob_len == 0, "second message has 2 keys (got %d) and no blob", m.n);
    msg_free(&m);
    rc = msg_read(&c, &m, 2);
    CHECK(rc == 0 && m.blob_len == 2 && !memcmp(m.blob, "\n\n", 2) && m.n >= 1, "third message: blob of a blank line");
    msg_free(&m);

    /* Nothing to read: timeout, bounded. */
    double t0 = now_s();
    rc = msg_read(&c, &m, 0.3);
    double dt = now_s() - t0;
    CHECK(rc == -2, "msg_read on an idle pipe times out: rc %d", rc);
    CHECK(dt >= 0.25 && dt < 1.5, "the timeout took %.2f s (asked 0.3)", dt);

    /* A header without its full blob, then silence: timeout, not a partial message. */
    const char *part = "cmd=load\nblob=100\n\nonly-some-bytes";
    CHECK(write(fds[1], part, strlen(part)) == (ssize_t)strlen(part), "write a truncated message");
    t0 = now_s();
    rc = msg_read(&c, &m, 0.3);
    CHECK(rc == -2 && now_s() - t0 < 1.5, "a message whose blob never completes times out: rc %d", rc);

    /* EOF. */
    close(fds[1]);
    rc = msg_read(&c, &m, 2);
    CHECK(rc == -1, "msg_read at end of file returns -1 (got %d)", rc);
    close(fds[0]);
    sb_free(&c.in);
    sb_free(&h);

    /* A message that arrives in pieces, from another process. */
    pipe_pair(fds);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        const char *a = "cmd=hel", *b = "lo\nname=Fake", *d = " GPU\nblob=3\n\nxyz";
        if (write(fds[1], a, strlen(a)) < 0) _exit(1);
        usleep(100000);
        if (write(fds[1], b, strlen(b)) < 0) _exit(1);
        usleep(100000);
        if (write(fds[1], d, strlen(d)) < 0) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    conn c2 = { fds[0], STRBUF_INIT };
    rc = msg_read(&c2, &m, 5);
    CHECK(rc == 0 && msg_get(&m, "cmd") && !strcmp(msg_get(&m, "cmd"), "hello") && msg_get(&m, "name") &&
          !strcmp(msg_get(&m, "name"), "Fake GPU") && m.blob_len == 3 && !memcmp(m.blob, "xyz", 3),
          "a message written in three pieces is read whole");
    msg_free(&m);
    rc = msg_read(&c2, &m, 5);
    CHECK(rc == -1, "then end of file (rc %d)", rc);
    waitpid(pid, NULL, 0);
    close(fds[0]);
    sb_free(&c2.in);

    /* Writing to a closed pipe fails instead of killing us. */
    signal(SIGPIPE, SIG_IGN);
    pipe_pair(fds);
    close(fds[0]);
    strbuf q = STRBUF_INIT;
    msg_kv(&q, "cmd", "quit");
    CHECK(msg_send(fds[1], &q, NULL, 0) == -1, "msg_send to a closed pipe returns -1");
    close(fds[1]);
    sb_free(&q);
}

int main(void)
{
    test_duration();
    test_fmt_size();
    test_json_str();
    test_hash();
    test_arch_base();
    test_expr();
    test_stats();
    test_proto();
    CHECK_DONE();
}
