/*
** test_worker: the parent side of the GPU worker (worker.c) against the fake
** worker (tests/unit/fake_worker.c), which crashes, hangs or refuses on cue:
** restarts, replays, deadlines and error messages, without a GPU.
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

static int load(worker *w, int slot, const char *name)
{
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "load");
    msg_kv(&h, "slot", "%d", slot);
    msg_kv(&h, "name", "%s", name);
    msg_kv(&h, "plan", "%s", PLAN_AXPY);
    msg r;
    int rc = worker_request(w, &h, "CUBIN", 5, &r, 5);
    sb_free(&h);
    int ok = rc == WORKER_OK && msg_get(&r, "status") && !strcmp(msg_get(&r, "status"), "ok");
    if (rc == WORKER_OK) msg_free(&r);
    return ok;
}

static const char *status_of(const msg *r) { return msg_get(r, "status") ? msg_get(r, "status") : "(none)"; }

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
    strbuf h = STRBUF_INIT;
    msg_kv(&h, "cmd", "task");
    msg_kv(&h, "nargs", "0");
    msg_kv(&h, "shape", "100");
    msg_kv(&h, "plan", "%s", PLAN_AXPY);
    if (worker_set_support(w, sup, sizeof sup) || worker_set_task(w, &h, "REF", 3))
        CHECK(0, "setup: support and task: %s", worker_errmsg(w));
    sb_free(&h);
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
    msg r;
    int rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "ok"), "verify: ok");
    if (rc == WORKER_OK) msg_free(&r);
    rc = request(w, "time", "slots", "0,1", &r, 5);
    CHECK(rc == WORKER_OK && msg_get(&r, "t0") && msg_get(&r, "t1"), "time two slots: t0 and t1");
    if (rc == WORKER_OK) {
        double want = 10 + (double)(hash_str(HASH_INIT, "kern_b") % 1000) / 10.0, got = 0;
        sscanf(msg_get(&r, "t1") ? msg_get(&r, "t1") : "", "%lf", &got);
        CHECK(got > want - 1e-3 && got < want + 1e-3, "t1 is the fake's time for kern_b (%g, want %g)", got, want);
        msg_free(&r);
    }
    /* A 4 MB blob through the pipe both ways of the protocol. */
    size_t big = 4u << 20;
    unsigned char *blob = xmalloc(big);
    memset(blob, 0x5a, big);
    CHECK(worker_set_support(w, blob, big) == 0, "a 4 MB support blob goes through");
    free(blob);
    rc = request(w, "frobnicate", NULL, NULL, &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "error") && has(msg_get(&r, "error"), "frobnicate"),
          "an unknown command is answered with an error");
    if (rc == WORKER_OK) msg_free(&r);
    CHECK(worker_counts(w).starts == 1, "no restarts in a clean session");
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
    msg r;
    int rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "error") && has(msg_get(&r, "error"), "ILLEGAL_ADDRESS"),
          "sticky: the reply arrives with its error");
    if (rc == WORKER_OK) msg_free(&r);
    CHECK(worker_counts(w).sticky == 1, "sticky: counted as a lost context (%d)", worker_counts(w).sticky);
    CHECK(process_gone(pid), "sticky: the process is ended");
    CHECK(load(w, 0, "kern_a"), "sticky: the next request restarts");
    rc = request(w, "verify", "slot", "0", &r, 5);
    CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "wrong") && has(msg_get(&r, "error"), "differ"),
          "wrong: a wrong answer is a reply, status wrong");
    if (rc == WORKER_OK) msg_free(&r);
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
    const char *plans[] = { PLAN_TMAP, PLAN_BAD };
    for (int i = 0; i < 2; i++) {
        strbuf h = STRBUF_INIT;
        msg_kv(&h, "cmd", "load");
        msg_kv(&h, "slot", "1");
        msg_kv(&h, "name", "k");
        msg_kv(&h, "plan", "%s", plans[i]);
        msg r;
        int rc = worker_request(w, &h, "CUBIN", 5, &r, 5);
        sb_free(&h);
        if (i == 0)
            CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "ok"), "a plan with a tensor map, an i32 and a workspace binds (%s: %s)",
                  rc == WORKER_OK ? status_of(&r) : "no reply", rc == WORKER_OK && msg_get(&r, "error") ? msg_get(&r, "error") : "");
        else
            CHECK(rc == WORKER_OK && !strcmp(status_of(&r), "error") && has(msg_get(&r, "error"), "launch plan: param 0 (dim)"),
                  "a plan with a hostile expression is refused: %s", rc == WORKER_OK && msg_get(&r, "error") ? msg_get(&r, "error") : "?");
        if (rc == WORKER_OK) msg_free(&r);
    }
    worker_free(w);
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
