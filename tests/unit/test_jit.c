/*
** test_jit: NVRTC compilation (jit.c) for sm_90a: real compiles of tiny
** kernels (no GPU needed), the ptxas report parser on canned logs, the
** thread pool and the cache key.
**
**     build/tests/test_jit
*/
#define _GNU_SOURCE
#include "check.h"
#include "jit.h"
#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

static const char *tiny =
    "extern \"C\" __global__ void tiny(float* __restrict__ y, const float* __restrict__ x, float a, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static void job(jit_job *j, const char *src, const char *name, const char *arch)
{
    memset(j, 0, sizeof *j);
    j->source = xstrdup(src);
    snprintf(j->name, sizeof j->name, "%s", name);
    snprintf(j->arch, sizeof j->arch, "%s", arch);
}

static void test_compile(void)
{
    jit_job j;
    job(&j, tiny, "tiny", "sm_90a");
    jit_compile(&j);
    CHECK(j.done == 1, "jit_compile marks the job done");
    CHECK(j.ok == 1, "a tiny valid kernel compiles for sm_90a (%s)", j.error ? j.error : "ok");
    CHECK(j.cubin && j.cubin_len > 100, "the cubin is not empty (%zu bytes)", j.cubin_len);
    CHECK(j.cubin && j.cubin_len > 4 && !memcmp(j.cubin, "\x7f" "ELF", 4), "the cubin is an ELF image");
    CHECK(j.registers > 0 && j.registers < 64, "the ptxas report gives registers (%d)", j.registers);
    CHECK(j.spills == 0, "no spills (%d)", j.spills);
    CHECK(j.ms > 0, "compile time recorded (%.1f ms)", j.ms);
    CHECK(has(j.log, "Used"), "the log holds the ptxas -v report");
    CHECK(j.error == NULL, "no error text on success");
    jit_job_clear(&j);
    CHECK(j.source == NULL && j.cubin == NULL && j.done == 0, "jit_job_clear resets the job");

    /* Shared memory shows up in the report. */
    job(&j,
        "extern \"C\" __global__ void sm(float* y) {\n"
        "  __shared__ float t[1024];\n"
        "  t[threadIdx.x] = y[threadIdx.x];\n"
        "  __syncthreads();\n"
        "  y[threadIdx.x] = t[1023 - threadIdx.x];\n"
        "}\n",
        "sm", "sm_90a");
    jit_compile(&j);
    CHECK(j.ok && j.smem == 4096, "static shared memory is reported (%d bytes)", j.smem);
    jit_job_clear(&j);

    /* A syntax error: not ok, one line naming the error. */
    job(&j, "extern \"C\" __global__ void broken(float* y) { y[0] = ; }\n", "broken", "sm_90a");
    jit_compile(&j);
    CHECK(j.done == 1 && j.ok == 0, "a kernel with a syntax error does not compile");
    CHECK(j.error && has(j.error, "error") && !strchr(j.error, '\n'), "its error is one line mentioning 'error': '%s'",
          j.error ? j.error : "(null)");
    CHECK(j.cubin == NULL && j.cubin_len == 0, "and there is no cubin");
    CHECK(j.log && j.log[0], "the full log is kept");
    jit_job_clear(&j);

    /* An arch NVRTC does not know. */
    job(&j, tiny, "tiny", "sm_999");
    jit_compile(&j);
    CHECK(j.ok == 0 && j.error && j.error[0] && !strchr(j.error, '\n'), "an unknown arch fails with one line: '%s'",
          j.error ? j.error : "(null)");
    jit_job_clear(&j);
    /* A virtual arch gives PTX, not a cubin. */
    job(&j, tiny, "tiny", "compute_90");
    jit_compile(&j);
    CHECK(j.ok == 0 && j.error && has(j.error, "cubin"), "a virtual arch is refused: '%s'", j.error ? j.error : "(null)");
    jit_job_clear(&j);

    /* setmaxnreg without known register count: ptxas says C7508, which
    ** aitune treats as a failure (the kernel is not what was asked for). */
    job(&j,
        "extern \"C\" __global__ void warp_spec(float* x) {\n"
        "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n"
        "  x[threadIdx.x] = 1.0f;\n"
        "}\n",
        "warp_spec", "sm_90a");
    jit_compile(&j);
    CHECK(has(j.log, "C7508"), "ptxas reports C7508 for setmaxnreg without launch bounds");
    CHECK(j.ok == 0 && has(j.error, "C7508"), "a C7508 compile is not ok and says why: '%s'", j.error ? j.error : "(null)");
    jit_job_clear(&j);
}

static void test_report(void)
{
    jit_job j;
    memset(&j, 0, sizeof j);
    const char *log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas info    : Function properties for k\n"
        "    16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 368 bytes cmem[0]\n"
        "ptxas info    : Compile time = 12.3 ms\n";
    CHECK(jit_parse_report(log, &j) == 0, "jit_parse_report finds a report");
    CHECK(j.registers == 255, "registers = %d (want 255)", j.registers);
    CHECK(j.spills == 44, "spills = stores + loads = %d (want 44)", j.spills);
    CHECK(j.smem == 49152, "smem = %d (want 49152)", j.smem);
    CHECK(j.stack == 16, "stack = %d (want 16)", j.stack);

    memset(&j, 0, sizeof j);
    const char *clean =
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 10 registers, used 0 barriers\n";
    j.smem = j.stack = j.spills = 77;
    CHECK(jit_parse_report(clean, &j) == 0 && j.registers == 10 && j.spills == 0 && j.smem == 0 && j.stack == 0,
          "a clean report: 10 registers, no spills, smem or stack (%d %d %d %d)", j.registers, j.spills, j.smem, j.stack);

    memset(&j, 0, sizeof j);
    CHECK(jit_parse_report("nvrtc: error: something\n", &j) == -1, "a log without a report: -1");
    CHECK(jit_parse_report("", &j) == -1, "an empty log: -1");
    /* A fatal warning in a log does not confuse the resource parse. */
    const char *warn =
        "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem\n";
    memset(&j, 0, sizeof j);
    CHECK(jit_parse_report(warn, &j) == 0 && j.registers == 168 && j.spills == 16 && j.smem == 1024,
          "a log with C7508 still parses (%d regs, %d spills, %d smem)", j.registers, j.spills, j.smem);

    /* jit_check_log: the report must be the kernel's own. */
    char *e;
    memset(&j, 0, sizeof j);
    snprintf(j.name, sizeof j.name, "k");
    j.log = (char *)log;
    e = jit_check_log(&j);
    CHECK(!e && j.registers == 255 && j.spills == 44, "the kernel's own report is accepted (%s)", e ? e : "ok");
    free(e);
    snprintf(j.name, sizeof j.name, "other");
    e = jit_check_log(&j);
    CHECK(e && strstr(e, "does not describe kernel 'other'"), "a report of another kernel is an error: %s", e ? e : "(none)");
    free(e);
    snprintf(j.name, sizeof j.name, "k");
    char warned[1024];
    snprintf(warned, sizeof warned, "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n%s", warn);
    j.log = warned;
    e = jit_check_log(&j);
    CHECK(e && strstr(e, "C7508"), "a fatal ptxas warning is an error: %s", e ? e : "(none)");
    free(e);
    j.log = (char *)"";
    j.registers = 5;
    e = jit_check_log(&j);
    CHECK(!e && j.registers == -1 && j.spills == 0, "no report at all (a tool suppressed it): accepted, registers unknown (%d)",
          j.registers);
    free(e);
}

static void test_pool(void)
{
    jit_pool *p = jit_pool_new(2);
    enum { N = 6 };
    jit_job jobs[N];
    for (int i = 0; i < N; i++) {
        char src[512], name[32];
        snprintf(name, sizeof name, "k%d", i);
        snprintf(src, sizeof src,
                 "extern \"C\" __global__ void %s(float* y, long long n) {\n"
                 "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  if (i < n) y[i] = y[i] * %d.0f + %d.0f;\n}\n",
                 name, i + 1, i);
        job(&jobs[i], src, name, "sm_90a");
        jit_submit(p, &jobs[i]);
    }
    /* Wait out of order: the last first. */
    int ok = 0, done = 0;
    for (int i = N - 1; i >= 0; i--) {
        jit_wait(p, &jobs[i]);
        done += jobs[i].done == 1;
        ok += jobs[i].ok == 1 && jobs[i].cubin_len > 0;
    }
    CHECK(done == N, "all %d pool jobs done (%d)", N, done);
    CHECK(ok == N, "all %d pool jobs compiled (%d)", N, ok);
    for (int i = 0; i < N; i++) jit_job_clear(&jobs[i]);
    /* A job that fails in the pool is done, not stuck. */
    jit_job bad;
    job(&bad, "this is not CUDA", "bad", "sm_90a");
    jit_submit(p, &bad);
    jit_wait(p, &bad);
    CHECK(bad.done == 1 && bad.ok == 0 && bad.error, "a failing pool job is done with an error");
    jit_job_clear(&bad);
    /* Freeing the pool with work queued waits for it. */
    jit_job late[3];
    for (int i = 0; i < 3; i++) {
        job(&late[i], tiny, "tiny", "sm_90a");
        jit_submit(p, &late[i]);
    }
    jit_pool_free(p);
    int fin = 0;
    for (int i = 0; i < 3; i++) {
        fin += late[i].done == 1;
        jit_job_clear(&late[i]);
    }
    CHECK(fin == 3, "jit_pool_free finishes the queued jobs (%d of 3)", fin);
    jit_pool_free(NULL);
    p = jit_pool_new(0);
    jit_job one;
    job(&one, tiny, "tiny", "sm_90a");
    jit_submit(p, &one);
    jit_wait(p, &one);
    CHECK(one.done && one.ok, "a pool of one thread per core (threads 0) compiles");
    jit_job_clear(&one);
    jit_pool_free(p);
}

/* A kernel that takes NVRTC a while (a long unrolled loop), so jobs
** submitted behind it on a one-thread pool stay queued. */
static const char *slow =
    "extern \"C\" __global__ void slow(float* y, long long n) {\n"
    "  float a = y[threadIdx.x];\n"
    "  #pragma unroll\n"
    "  for (int i = 0; i < 512; i++) a = a * 1.0001f + (float)(i % 7) * y[(threadIdx.x + i) % 32];\n"
    "  y[threadIdx.x] = a;\n"
    "}\n";

static void keyed(jit_job *j, const char *src, const char *name)
{
    job(j, src, name, "sm_90a");
    jit_key(src, name, "sm_90a", j->key);
}

/* Jobs of one key in the pool at once compile once; queued jobs can be
** cancelled one by one, and a job waiting on a cancelled one compiles in
** its place. */
static void test_pool_keys(void)
{
    jit_pool *p = jit_pool_new(1);
    CHECK(jit_pool_threads(p) == 1, "jit_pool_threads says how many threads (%d)", jit_pool_threads(p));
    jit_job blocker, a, b, c, solo, d;
    keyed(&blocker, slow, "slow");
    jit_submit(p, &blocker);
    keyed(&a, tiny, "tiny");
    keyed(&b, tiny, "tiny");
    keyed(&c, tiny, "tiny");
    jit_submit(p, &a);
    jit_submit(p, &b);
    jit_submit(p, &c);
    job(&solo, tiny, "tiny", "sm_90a");     /* no key: compiles on its own */
    jit_submit(p, &solo);
    keyed(&d, tiny, "tiny");
    jit_submit(p, &d);
    /* a is queued behind the blocker: cancelling it hands its place to b. */
    CHECK(jit_cancel(p, &a) == 1 && a.done && !a.ok && a.error && !strcmp(a.error, "cancelled"),
          "a queued job is cancelled (%s)", a.error ? a.error : "no error");
    CHECK(jit_cancel(p, &d) == 1 && d.done && !d.ok, "a job waiting on another of its key is cancelled");
    jit_wait(p, &c);
    jit_wait(p, &b);
    jit_wait(p, &solo);
    CHECK(b.ok && !b.shared && b.cubin_len > 0, "the first job waiting on a cancelled one compiled in its place");
    CHECK(c.ok && c.shared && c.cubin_len == b.cubin_len && !memcmp(c.cubin, b.cubin, b.cubin_len) && c.cubin != b.cubin,
          "a job of the same key gets a copy of the result, not a compile of its own");
    CHECK(c.registers == b.registers && c.ms == b.ms && c.log && c.log != b.log, "the copy has the ptxas report and log");
    CHECK(solo.ok && !solo.shared, "a job without a key compiles on its own");
    jit_wait(p, &blocker);
    CHECK(blocker.ok && blocker.t_start > 0, "the slow job compiled (%.0f ms)", blocker.ms);
    CHECK(jit_cancel(p, &blocker) == 0, "a done job is not cancelled");
    jit_job_clear(&b);   /* a result's owner may free it at once: the copy is c's own */
    CHECK(c.cubin && c.log, "the copy outlives the job it came from");
    jit_job *all[] = { &blocker, &a, &c, &solo, &d };
    for (int i = 0; i < 5; i++) jit_job_clear(all[i]);
    /* Same key, different text (a hash collision): compiled apart. */
    jit_job x, y;
    keyed(&x, tiny, "tiny");
    keyed(&y, tiny, "tiny");
    free(y.source);
    y.source = xstrfmt("// another\n%s", tiny);
    jit_submit(p, &x);
    jit_submit(p, &y);
    jit_wait(p, &x);
    jit_wait(p, &y);
    CHECK(x.ok && y.ok && !x.shared && !y.shared, "a key with another text compiles on its own");
    jit_job_clear(&x);
    jit_job_clear(&y);
    jit_pool_free(p);
}

static int is_hex16(const char *s)
{
    if (strlen(s) != 16) return 0;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s)) return 0;
    return 1;
}

static void test_key(void)
{
    char a[17], b[17], c[17], d[17], e[17];
    jit_key(tiny, "tiny", "sm_90a", a);
    jit_key(tiny, "tiny", "sm_90a", b);
    CHECK(is_hex16(a), "jit_key is 16 lowercase hex digits ('%s')", a);
    CHECK(!strcmp(a, b), "jit_key is stable");
    jit_key("// changed\n", "tiny", "sm_90a", c);
    jit_key(tiny, "tiny2", "sm_90a", d);
    jit_key(tiny, "tiny", "sm_90", e);
    CHECK(strcmp(a, c) != 0, "jit_key changes with the source");
    CHECK(strcmp(a, d) != 0, "jit_key changes with the kernel name");
    CHECK(strcmp(a, e) != 0, "jit_key changes with the arch");
    const char *v = jit_nvrtc_version();
    int maj = 0, min = 0;
    CHECK(v && sscanf(v, "%d.%d", &maj, &min) == 2 && maj >= 11, "jit_nvrtc_version is like 13.0 ('%s')", v ? v : "");
    CHECK(has(jit_options("sm_90a"), "--gpu-architecture=sm_90a") && has(jit_options("sm_90a"), "-v"),
          "jit_options names the arch and asks for the ptxas report ('%s')", jit_options("sm_90a"));
}

int main(void)
{
    test_compile();
    test_report();
    test_pool();
    test_pool_keys();
    test_key();
    CHECK_DONE();
}
