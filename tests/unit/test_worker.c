/*
** test_worker: the parent side of the GPU worker (worker.c) against the fake
** worker (tests/unit/fake_worker.c), which crashes, hangs or refuses on cue:
** restarts, replays, deadlines and error messages, without a GPU; and the
** typed messages (wire.h) read back as written, malformed ones refused.
**
**     build/tests/test_worker [FAKE_WORKER]   (default: fake_worker beside this binary)
*/
#define _GNU_SOURCE
#include "check.h"
#include "util.h"
#include "worker.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fake[1024], dir[256], state[400];

/* Launch plans (plan.h) as the parent sends them. */
#define PLAN_HEAD "{\"v\":2,\"kernel\":\"k\",\"dims\":[\"n\"],\"args\":[{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\"}," \
    "{\"name\":\"y\",\"role\":\"inout\",\"dtype\":\"f32\"},{\"name\":\"a\",\"role\":\"scalar\"},{\"name\":\"n\",\"role\":\"dim\"}]," \
    "\"grid\":[\"cdiv(n,256)\",\"1\",\"1\"],\"block\":[\"256\",\"1\",\"1\"],\"cluster\":[\"1\",\"1\",\"1\"],\"smem\":\"0\","
#define PLAN_AXPY PLAN_HEAD "\"params\":[{\"kind\":\"ptr\",\"arg\":\"x\"},{\"kind\":\"ptr\",\"arg\":\"y\"}," \
    "{\"kind\":\"f32\",\"arg\":\"a\"},{\"kind\":\"dim\",\"expr\":\"n\"}]}"
#define PLAN_TMAP PLAN_HEAD "\"params\":[{\"kind\":\"tmap\",\"arg\":\"x\",\"dims\":[\"n\"],\"box\":[64],\"swizzle\":0}," \
    "{\"kind\":\"ptr\",\"arg\":\"y\"},{\"kind\":\"i32\",\"expr\":\"n\"},{\"kind\":\"workspace\",\"size\":\"n*4\"}]}"
#define PLAN_BAD PLAN_HEAD "\"params\":[{\"kind\":\"dim\",\"expr\":\"n); system(\\\"x\\\"\"}]}"

static int has(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

/* A fresh fake: mode, and a verify count starting at 0. */
static void use_mode(const char *mode)
{
    setenv("FAKE_MODE", mode, 1);
    unlink(state);
    char p[450];
    snprintf(p, sizeof p, "%s.log", state);
    unlink(p);
}

static int fake_pid(void)
{
    char p[450];
    snprintf(p, sizeof p, "%s.pid", state);
    FILE *f = fopen(p, "r");
    int pid = -1;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1) pid = -1;
        fclose(f);
    }
    return pid;
}

/* Gone: no such process, or a zombie nobody has reaped yet. */
static int process_gone(int pid)
{
    if (pid <= 0) return 0;
    for (int i = 0; i < 20; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH) return 1;
        char p[64], buf[256];
        snprintf(p, sizeof p, "/proc/%d/stat", pid);
        FILE *f = fopen(p, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            const char *rp = strrchr(buf, ')');
            if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X')) return 1;
        }
        usleep(50000);
    }
    return 0;
}

/* The commands the fake with pid got, in order, space-separated. */
static void fake_log(int pid, char *out, size_t cap)
{
    char p[450], line[128];
    snprintf(p, sizeof p, "%s.log", state);
    out[0] = 0;
    FILE *f = fopen(p, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        int lp;
        char cmd[64];
        if (sscanf(line, "%d %63s", &lp, cmd) == 2 && lp == pid) {
            size_t at = strlen(out);
            snprintf(out + at, cap - at, "%s%s", at ? " " : "", cmd);
        }
    }
    fclose(f);
}

static int request(worker *w, const char *cmd, const char *k2, const char *v2, msg *r, double timeout)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "%s", cmd);
    if (k2) msg_kv(&h, k2, "%s", v2);
    int rc = worker_request(w, &h, NULL, 0, r, timeout);
    sb_free(&h);
    return rc;
}

static const char *status_of(const msg *r) { return msg_get(r, "status") ? msg_get(r, "status") : "(none)"; }

static int load(worker *w, int slot, const char *name)
{
    wire_load l = { .slot = slot, .name = name, .plan = PLAN_AXPY };
    return worker_load(w, &l, "CUBIN", 5, 5) == WORKER_OK;
}

static op_arg arg(const char *name, int role, const char *dtype, long long count, double value)
{
    op_arg a = { .role = role, .esize = dtype[0] ? 4 : 0, .count = count, .value = value };
    snprintf(a.name, sizeof a.name, "%s", name);
    snprintf(a.dtype, sizeof a.dtype, "%s", dtype);
    return a;
}

/* The task axpy at n = 100, as the parent sends it. */
static wire_task axpy_task(void)
{
    wire_task t = { .seed = 7, .nargs = 4, .rtol = 1e-5, .atol = 1e-6, .name = "ref", .ndims = 1, .shape = { 100 },
                    .plan = PLAN_AXPY };
    t.args[0] = arg("x", ROLE_IN, "f32", 100, 0);
    t.args[1] = arg("y", ROLE_INOUT, "f32", 100, 0);
    t.args[1].init = INIT_UNIFORM;
    t.args[2] = arg("a", ROLE_SCALAR, "", 0, 2.5);
    t.args[3] = arg("n", ROLE_DIM, "", 0, 100);
    return t;
}

/* A worker with support and a task set up. */
static worker *ready(void)
{
    worker *w = worker_new(0);
    device d;
    if (worker_hello(w, &d, NULL)) {
        CHECK(0, "setup: hello: %s", worker_errmsg(w));
        return w;
    }
    unsigned char sup[1000];
    memset(sup, 0xab, sizeof sup);
    wire_task t = axpy_task();
    if (worker_set_support(w, sup, sizeof sup) || worker_task(w, &t, "REF", 3))
        CHECK(0, "setup: support and task: %s", worker_errmsg(w));
    return w;
}

static void test_hello(void)
{
    use_mode("ok");
    worker *w = worker_new(0);
    device d;
    memset(&d, 0x55, sizeof d);
    strbuf env = STRBUF_INIT;
    int rc = worker_hello(w, &d, &env);
    CHECK(rc == 0, "worker_hello with the fake (%s)", rc ? worker_errmsg(w) : "ok");
    CHECK_STR(d.name, "Fake GPU", "device name");
    CHECK(d.cc == 90 && d.sms == 132 && d.l2 == 52428800 && d.mem == 85899345920LL && d.count == 1,
          "device facts: cc %d, %d SMs, L2 %lld, mem %lld, count %d", d.cc, d.sms, d.l2, d.mem, d.count);
    CHECK(!strcmp(d.nvrtc, "13.0") && !strcmp(d.driver, "fake") && d.cuda_driver == 13000 && d.real == 1,
          "toolchain facts: nvrtc %s, driver %s", d.nvrtc, d.driver);
    CHECK(d.smem_optin == 232448 && d.regs_per_sm == 65536, "smem opt-in and registers per SM");
    CHECK_STR(sb_str(&env), "{\"fake\":true}", "env JSON from hello");
    sb_free(&env);
    worker_stats s = worker_counts(w);
    CHECK(s.starts == 1 && s.crashes == 0 && s.timeouts == 0 && s.sticky == 0, "counts after hello: 1 start");
    int pid1 = fake_pid();
    rc = worker_hello(w, &d, NULL);
    CHECK(rc == 0 && worker_counts(w).starts == 2, "a second hello starts a fresh worker (starts %d)", worker_counts(w).starts);
    CHECK(process_gone(pid1), "and the first one is gone");
    int pid2 = fake_pid();
    worker_free(w);
    CHECK(process_gone(pid2), "worker_free ends the worker process");
    worker_free(NULL);
}

static void test_requests(void)
{
    use_mode("ok");
    worker *w = ready();
    CHECK(load(w, 0, "kern_a") && load(w, 1, "kern_b"), "load two slots");
    CHECK(worker_verify(w, 0, 5) == WORKER_OK, "verify: ok");
    wire_time q;
    wire_time_init(&q);
    q.nslots = 2;
    q.slots[0] = 0;
    q.slots[1] = 1;
    q.rounds = 30;
    stats st[2];
    int rc = worker_time(w, &q, st, 5);
    double want = 10 + (double)(hash_str(HASH_INIT, "kern_b") % 1000) / 10.0;
    CHECK(rc == WORKER_OK && st[0].median > 0 && st[0].n == 20, "time two slots: both timed (rc %d)", rc);
    CHECK(st[1].median > want - 1e-3 && st[1].median < want + 1e-3, "slot 1's time is the fake's for kern_b (%g, want %g)",
          st[1].median, want);
    double gbps = 0;
    CHECK(worker_copy(w, 1 << 20, &gbps, 5) == WORKER_OK && gbps == 3000.0, "copy: the ceiling (%g GB/s)", gbps);
    /* A 4 MB blob through the pipe both ways of the protocol. */
    size_t big = 4u << 20;
    unsigned char *blob = xmalloc(big);
    memset(blob, 0x5a, big);
    CHECK(worker_set_support(w, blob, big) == 0, "a 4 MB support blob goes through");
    free(blob);
    msg r;
    rc = request(w, "frobnicate", NULL, NULL, &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "error") && has(msg_get(&r, "error"), "frobnicate"),
          "an unknown command is answered with an error");
    if (rc == WORKER_OK) msg_free(&r);
    CHECK(worker_verify(w, 9, 5) == WORKER_ERROR && has(worker_errmsg(w), "empty slot"),
          "a refused request is WORKER_ERROR with the worker's text: '%s'", worker_errmsg(w));
    CHECK(worker_counts(w).starts == 1, "no restarts in a clean session");
    worker_free(w);

    /* A worker that lies about times: the slot's time is zeros, and the
    ** message quotes what came. */
    use_mode("lie");
    w = ready();
    CHECK(load(w, 0, "kern_a"), "lie: load");
    wire_time_init(&q);
    q.nslots = 1;
    rc = worker_time(w, &q, st, 5);
    CHECK(rc == WORKER_OK && st[0].median == 0 && st[0].n == 0 && has(worker_errmsg(w), "t0='abc'"),
          "lie: a time that does not parse is zeros: '%s'", worker_errmsg(w));
    rc = worker_time(w, &q, st, 5);
    CHECK(rc == WORKER_OK && st[0].median == 0 && has(worker_errmsg(w), "t0='(missing)'"),
          "lie: and a missing one: '%s'", worker_errmsg(w));
    worker_free(w);
}

static void test_crash(const char *mode, const char *how1, const char *how2)
{
    use_mode(mode);
    worker *w = ready();
    int pid1 = fake_pid();
    msg r;
    CHECK(load(w, 0, "kern_a"), "%s: load", mode);
    int rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "ok"), "%s: verify 1 is ok", mode);
    if (rc == WORKER_OK) msg_free(&r);
    rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_DIED, "%s: verify 2 returns WORKER_DIED (rc %d)", mode, rc);
    CHECK(has(worker_errmsg(w), how1) || has(worker_errmsg(w), how2), "%s: the message says how it died: '%s'", mode,
          worker_errmsg(w));
    CHECK(r.n == 0 && r.blob == NULL, "%s: the reply holds nothing", mode);
    worker_stats s = worker_counts(w);
    CHECK(s.starts == 1 && s.crashes == 1, "%s: counts after the crash: starts %d, crashes %d", mode, s.starts, s.crashes);
    CHECK(process_gone(pid1), "%s: the crashed process is gone", mode);
    /* The next request restarts it and replays support and task first. */
    CHECK(load(w, 0, "kern_a"), "%s: the next request (load) restarts the worker", mode);
    rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "ok"),
          "%s: verify after the restart is ok, so support and task were replayed (%s: %s)", mode, status_of(&r),
          rc == WORKER_OK && msg_get(&r, "error") ? msg_get(&r, "error") : "");
    if (rc == WORKER_OK) msg_free(&r);
    s = worker_counts(w);
    CHECK(s.starts == 2 && s.crashes == 1, "%s: counts: starts %d (want 2), crashes %d (want 1)", mode, s.starts, s.crashes);
    int pid2 = fake_pid();
    char log[256];
    fake_log(pid2, log, sizeof log);
    CHECK(pid2 != pid1 && !strcmp(log, "hello support task load verify"), "%s: the new worker got: %s", mode, log);
    worker_free(w);
}

static void test_hang(void)
{
    use_mode("hang_verify:1");
    setenv("FAKE_HANG_S", "20", 1);
    worker *w = ready();
    int pid = fake_pid();
    CHECK(load(w, 0, "kern_a"), "hang: load");
    msg r;
    double t0 = now_s();
    int rc = request(w, "verify", "slot", "0", &r, 1.0);
    double dt = now_s() - t0;
    CHECK(rc == WORKER_TIMEOUT, "hang: a hung verify returns WORKER_TIMEOUT (rc %d)", rc);
    CHECK(dt >= 0.9 && dt < 3.0, "hang: after about the timeout (%.2f s for 1 s)", dt);
    CHECK(has(worker_errmsg(w), "no answer within 1 s"), "hang: the message: '%s'", worker_errmsg(w));
    worker_stats s = worker_counts(w);
    CHECK(s.timeouts == 1 && s.crashes == 0, "hang: counts: timeouts %d, crashes %d", s.timeouts, s.crashes);
    CHECK(process_gone(pid), "hang: the hung process (pid %d) is gone after the timeout", pid);
    /* And the worker comes back for the next request. */
    CHECK(load(w, 0, "kern_a"), "hang: the next request restarts the worker");
    rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "ok"), "hang: verify 2 on the new worker is ok");
    if (rc == WORKER_OK) msg_free(&r);
    worker_free(w);
    if (!process_gone(pid)) kill(pid, SIGKILL);   /* do not leave it behind */
    unsetenv("FAKE_HANG_S");
}

static void test_sticky_wrong(void)
{
    use_mode("sticky_verify:1,wrong_verify:2");
    worker *w = ready();
    int pid = fake_pid();
    CHECK(load(w, 0, "kern_a"), "sticky: load");
    int rc = worker_verify(w, 0, 5);
    CHECK(rc == WORKER_ERROR && has(worker_errmsg(w), "ILLEGAL_ADDRESS"), "sticky: the reply arrives with its error (%d: %s)", rc,
          worker_errmsg(w));
    CHECK(worker_counts(w).sticky == 1, "sticky: counted as a lost context (%d)", worker_counts(w).sticky);
    CHECK(process_gone(pid), "sticky: the process is ended");
    CHECK(load(w, 0, "kern_a"), "sticky: the next request restarts");
    rc = worker_verify(w, 0, 5);
    CHECK(rc == WORKER_WRONG && has(worker_errmsg(w), "differ"), "wrong: a wrong answer is WORKER_WRONG with its text (%d: %s)",
          rc, worker_errmsg(w));
    worker_stats s = worker_counts(w);
    CHECK(s.starts == 2 && s.crashes == 0 && s.sticky == 1, "sticky: counts: starts %d, crashes %d, sticky %d", s.starts, s.crashes,
          s.sticky);
    worker_free(w);
}

static void test_nogpu(void)
{
    use_mode("nogpu");
    worker *w = worker_new(0);
    device d;
    int rc = worker_hello(w, &d, NULL);
    CHECK(rc == -1, "nogpu: worker_hello fails");
    CHECK(has(worker_errmsg(w), "cuInit failed: no GPU"), "nogpu: with the worker's message: '%s'", worker_errmsg(w));
    int pid = fake_pid();
    CHECK(process_gone(pid), "nogpu: the refusing worker is not left running");
    msg r;
    rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_DIED && has(worker_errmsg(w), "no GPU"), "nogpu: a request fails too: '%s'", worker_errmsg(w));
    worker_free(w);

    /* A worker command that does not exist. */
    setenv("AITUNE_WORKER", "/nonexistent/aitune-fake-worker", 1);
    w = worker_new(0);
    rc = worker_hello(w, &d, NULL);
    CHECK(rc == -1 && has(worker_errmsg(w), "did not start") && has(worker_errmsg(w), "127"),
          "a missing worker program: '%s'", worker_errmsg(w));
    worker_free(w);
    setenv("AITUNE_WORKER", fake, 1);
}

/* The parent sends plans, the worker binds them: a tensor-map plan loads, a
** hostile one is refused with the plan's own message. */
static void test_plans(void)
{
    use_mode("ok");
    worker *w = ready();
    wire_load l = { .slot = 1, .name = "k", .plan = PLAN_TMAP };
    int rc = worker_load(w, &l, "CUBIN", 5, 5);
    CHECK(rc == WORKER_OK, "a plan with a tensor map, an i32 and a workspace binds (%d: %s)", rc, rc ? worker_errmsg(w) : "");
    l.plan = PLAN_BAD;
    rc = worker_load(w, &l, "CUBIN", 5, 5);
    CHECK(rc == WORKER_ERROR && has(worker_errmsg(w), "launch plan: param 0 (dim)"), "a plan with a hostile expression is refused: %s",
          worker_errmsg(w));
    worker_free(w);
}

/* A message as the other end reads it: h (and blob) through a pipe. */
static int through(const strbuf *h, const char *blob, msg *m)
{
    int fd[2];
    if (pipe(fd)) return -1;
    int rc = msg_send(fd[1], h, blob, blob ? strlen(blob) : 0);
    close(fd[1]);
    conn c = { fd[0], STRBUF_INIT };
    if (!rc) rc = msg_read(&c, m, 5);
    sb_free(&c.in);
    close(fd[0]);
    return rc;
}

/* t's task message with key's line replaced by key=val. */
static void put_task_but(strbuf *out, const wire_task *t, const char *key, const char *val)
{
    strbuf h = STRBUF_INIT;
    wire_put_task(&h, t);
    size_t k = strlen(key);
    for (char *line = strtok(h.buf, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, key, k) || line[k] != '=') sb_printf(out, "%s\n", line);
    sb_printf(out, "%s=%s\n", key, val);
    sb_free(&h);
}

/* Each message read back as written (wire.h), and what a reader refuses. */
static void test_wire(void)
{
    strbuf h = STRBUF_INIT;
    msg m;
    wire_task t = axpy_task(), u;
    t.stream = 1;
    char err[128];
    wire_put_task(&h, &t);
    int rc = through(&h, "REF", &m);
    CHECK(rc == 0 && wire_cmd(&m) == WIRE_TASK && m.blob_len == 3, "a task goes through with its blob");
    rc = rc ? -1 : wire_get_task(&m, &u, err, sizeof err);
    CHECK(rc == 0 && u.seed == 7 && u.nargs == 4 && u.rtol == 1e-5 && u.atol == 1e-6 && u.ndims == 1 && u.shape[0] == 100 &&
              u.stream == 1 && !strcmp(u.name, "ref") && u.plan && !strcmp(u.plan, PLAN_AXPY),
          "task: its fields read back (%s)", rc ? err : "ok");
    int same = 1;
    for (int i = 0; i < 4; i++)
        same &= !strcmp(u.args[i].name, t.args[i].name) && u.args[i].role == t.args[i].role &&
                !strcmp(u.args[i].dtype, t.args[i].dtype) && u.args[i].esize == t.args[i].esize &&
                u.args[i].count == t.args[i].count && u.args[i].init == t.args[i].init && u.args[i].value == t.args[i].value;
    CHECK(same, "task: every argument reads back (roles, dtypes, a scalar's value, an input's distribution)");
    msg_free(&m);

    struct { const char *key, *val, *want; } bad[] = {
        { "nargs", "0", "task: bad nargs" },       { "nargs", "17", "task: bad nargs" },
        { "timing", "warm", "task: bad timing" },  { "shape", "x", "task: bad shape" },
        { "shape", "", "task: no shape" },         { "arg2", "a boss - 0 0 normal 2.5", "task: bad arg2" },
        { "arg1", "y inout f32 4", "task: bad arg1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strbuf e = STRBUF_INIT;
        put_task_but(&e, &t, bad[i].key, bad[i].val);
        rc = through(&e, NULL, &m);
        rc = rc ? 0 : wire_get_task(&m, &u, err, sizeof err);
        CHECK(rc == -1 && !strcmp(err, bad[i].want), "task with %s='%s' refused: '%s'", bad[i].key, bad[i].val, rc ? err : "accepted");
        msg_free(&m);
        sb_free(&e);
    }

    sb_reset(&h);
    wire_time q, r;
    wire_time_init(&q);
    q.nslots = 3;
    q.slots[0] = 2;
    q.slots[1] = 0;
    q.slots[2] = 15;
    q.rounds = 30;
    q.max_seconds = 1.5;
    wire_put_time(&h, &q);
    rc = through(&h, NULL, &m);
    if (!rc) wire_get_time(&m, &r);
    CHECK(rc == 0 && wire_cmd(&m) == WIRE_TIME && r.nslots == 3 && r.slots[0] == 2 && r.slots[2] == 15 && r.rounds == 30 &&
              r.max_seconds == 1.5 && r.warmup == 3 && r.min_samples == 10 && r.max_samples == 200 && r.settle == 0.005,
          "time: slots and options read back");
    msg_free(&m);

    sb_reset(&h);
    stats st[2] = { { 12.5, 12.25, 13.0, 0.01, 20 }, { 7.0, 6.5, 8.0, 0.125, 30 } }, got;
    wire_put_times(&h, st, 2);
    msg_kv(&h, "t2", "abc");
    msg_kv(&h, "t3", "0 0 0 0 5");
    msg_kv(&h, "t4", "inf 1 1 0 5");
    rc = through(&h, NULL, &m);
    wire_reply rp;
    wire_get_reply(&m, &rp);
    CHECK(rc == 0 && rp.status == WIRE_OK, "times: the reply is ok");
    CHECK(!wire_get_times(&m, 1, &got) && got.median == 7.0 && got.min == 6.5 && got.max == 8.0 && got.spread == 0.125 &&
              got.n == 30, "times: slot 1's statistics read back");
    CHECK(wire_get_times(&m, 2, &got) == -1 && got.median == 0 && got.n == 0, "times: one that does not parse is refused, zeroed");
    CHECK(wire_get_times(&m, 3, &got) == -1 && wire_get_times(&m, 4, &got) == -1 && wire_get_times(&m, 5, &got) == -1,
          "times: a zero or infinite median, or none, is refused");
    msg_free(&m);

    sb_reset(&h);
    wire_put_reply(&h, WIRE_WRONG, "12 of 64 differ", 1);
    rc = through(&h, NULL, &m);
    wire_get_reply(&m, &rp);
    CHECK(rc == 0 && rp.status == WIRE_WRONG && !strcmp(rp.error, "12 of 64 differ") && rp.sticky, "reply: wrong, its text, sticky");
    msg_free(&m);
    sb_reset(&h);
    msg_kv(&h, "gbps", "1");
    rc = through(&h, NULL, &m);
    wire_get_reply(&m, &rp);
    CHECK(rc == 0 && rp.status == WIRE_ERROR && !strcmp(rp.text, "error") && !rp.error && !rp.sticky,
          "reply: no status is an error");
    msg_free(&m);

    sb_reset(&h);
    device d = { .cc = 90, .sms = 132, .mem = 85899345920LL, .l2 = 52428800, .count = 2, .cuda_driver = 13000 }, e;
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    snprintf(d.uuid, sizeof d.uuid, "GPU-1234");
    wire_put_device(&h, &d, "{\"x\":1}");
    strbuf env = STRBUF_INIT;
    rc = through(&h, NULL, &m);
    wire_get_device(&m, &e, &env);
    CHECK(rc == 0 && !strcmp(e.name, d.name) && !strcmp(e.uuid, d.uuid) && e.cc == 90 && e.sms == 132 && e.mem == d.mem &&
              e.l2 == d.l2 && e.count == 2 && e.cuda_driver == 13000 && e.real == 1 && !strcmp(sb_str(&env), "{\"x\":1}"),
          "hello: the device's facts read back");
    sb_free(&env);
    msg_free(&m);

    sb_reset(&h);
    wire_load l = { .slot = 3, .name = "k", .plan = "{}" }, lr;
    wire_put_load(&h, &l);
    rc = through(&h, "CUBIN", &m);
    wire_get_load(&m, &lr);
    CHECK(rc == 0 && wire_cmd(&m) == WIRE_LOAD && lr.slot == 3 && !strcmp(lr.name, "k") && !strcmp(lr.plan, "{}"),
          "load: slot, name and plan read back");
    msg_free(&m);
    sb_reset(&h);
    wire_put_cmd(&h, WIRE_UNLOAD);
    rc = through(&h, NULL, &m);
    wire_get_load(&m, &lr);
    CHECK(rc == 0 && lr.slot == -1 && !lr.name && !lr.plan && wire_get_slot(&m) == -1, "load: absent fields read as absent");
    msg_free(&m);
    sb_reset(&h);
    msg_kv(&h, "cmd", "frob");
    rc = through(&h, NULL, &m);
    CHECK(rc == 0 && wire_cmd(&m) == WIRE_UNKNOWN && !strcmp(wire_cmd_text(&m), "frob"), "an unknown command is WIRE_UNKNOWN");
    msg_free(&m);
    sb_free(&h);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        snprintf(fake, sizeof fake, "%s", argv[1]);
    } else {
        char exe[900];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(fake, sizeof fake, "%s/fake_worker", exe);
    }
    if (access(fake, X_OK)) {
        printf("FAIL setup: no fake worker at %s (build it: make build/tests/fake_worker)\n", fake);
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/aitune-test-worker-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL setup: mkdtemp\n");
        return 1;
    }
    snprintf(state, sizeof state, "%s/state", dir);
    setenv("AITUNE_WORKER", fake, 1);
    setenv("FAKE_STATE", state, 1);
    test_wire();
    test_hello();
    test_requests();
    test_plans();
    test_crash("crash_verify:2", "exited with code 1", "exited with code 1");
    test_crash("segv_verify:2", "signal 11", "code 139");
    test_hang();
    test_sticky_wrong();
    test_nogpu();
    char p[450];
    const char *suffix[] = { "", ".pid", ".log" };
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", state, suffix[i]);
        unlink(p);
    }
    rmdir(dir);
    CHECK_DONE();
}
