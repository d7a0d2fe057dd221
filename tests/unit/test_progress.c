/* test_progress: the progress line's contents, its estimate, its width, and
** when it is drawn, on a clock the test drives. */
#define _GNU_SOURCE
#include "check.h"
#include "progress.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double fake_now;
static double fake_clock(void)
{
    double v;
    __atomic_load(&fake_now, &v, __ATOMIC_SEQ_CST);   /* the ticker's thread reads it too */
    return v;
}

/* What the progress wrote to its stream so far. */
static char *written(FILE *f, char **buf)
{
    fflush(f);
    return *buf;
}

int main(void)
{
    char d[16];
    progress_fmt_duration(42.4, d, sizeof d);
    CHECK_STR(d, "42s", "seconds");
    progress_fmt_duration(185, d, sizeof d);
    CHECK_STR(d, "3m05s", "minutes and seconds");
    progress_fmt_duration(7620, d, sizeof d);
    CHECK_STR(d, "2h07m", "hours and minutes");
    progress_fmt_duration(-3, d, sizeof d);
    CHECK_STR(d, "0s", "a negative duration is 0s");

    /* A sweep of 4 buckets, in plain-line mode every 10 s. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fake_now = 100;
    progress *p = progress_new_with(f, "sweep", PROGRESS_LINES, 1000, 10, fake_clock);
    progress_buckets(p, 4);
    char line[512];
    progress_format(p, line, sizeof line);
    CHECK_STR(line, "sweep: bucket 0/4, 0/0 candidates (0 in all), 0s elapsed, ETA ?", "before anything starts");
    progress_bucket(p, "axpy f32 n=2^6");
    progress_plan(p, 10);
    fake_now = 101;
    progress_done(p, 5.0, 1);       /* the default */
    progress_done(p, 4.0, 0);
    progress_done(p, -1, 0);        /* a failure */
    progress_done(p, 2.5, 0);
    progress_format(p, line, sizeof line);
    CHECK_STR(line, "sweep: bucket 1/4, 4/10 candidates (4 in all), 1s elapsed, ETA 9s; axpy f32 n=2^6 best 2.50 us (2.00x default)",
              "best so far against the default; ETA from 0.4 of 1 bucket of 4 in 1 s: 0.1 done");
    CHECK(written(f, &buf)[0] == 0, "no plain line before the interval");
    fake_now = 111;
    progress_done(p, 3.0, 0);
    CHECK(strstr(written(f, &buf), "sweep: bucket 1/4, 5/10 candidates (5 in all), 11s elapsed") && strchr(buf, '\n'),
          "a plain line once the interval passed: %s", buf);
    CHECK(!strchr(buf, '\r') && !strchr(buf, '\033'), "plain lines have no terminal control codes");
    size_t before = strlen(buf);
    progress_note(p, "axpy/vec {\"block\":64}");
    CHECK(strlen(written(f, &buf)) == before, "a note alone draws nothing before the interval");
    CHECK(!strstr(buf, "block"), "plain lines never carry the note");
    progress_bucket(p, "axpy f32 n=2^7");
    progress_format(p, line, sizeof line);
    CHECK(strstr(line, "bucket 2/4, 0/0 candidates (5 in all),") && strstr(line, "; axpy f32 n=2^7") && !strstr(line, "best"),
          "a new bucket starts afresh: %s", line);
    progress_plan(p, 4);
    progress_done(p, 9, 0);
    progress_done(p, 8, 0);
    progress_format(p, line, sizeof line);
    /* 1.5 of 4 buckets in 11 s: 11 * 2.5 / 1.5 = 18.3 s left. */
    CHECK(strstr(line, "11s elapsed, ETA 18s") != NULL, "ETA counts finished buckets: %s", line);
    progress_free(p);
    fclose(f);
    free(buf);

    /* Two GPUs: each lane's bucket on the line, the run's counts and ETA. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fake_now = 0;
    p = progress_new_with(f, "sweep", PROGRESS_LINES, 1000, 10, fake_clock);
    progress_buckets(p, 4);
    progress *g0 = progress_lane(p, "GPU 0"), *g1 = progress_lane(p, "GPU 1");
    CHECK(g0 && g1 && g0 != p, "lanes are views of their own");
    progress_bucket(g0, "axpy f32 n=2^6");
    progress_plan(g0, 4);
    progress_bucket(g1, "axpy f32 n=2^7");
    progress_plan(g1, 2);
    fake_now = 10;
    progress_done(g0, 5.0, 1);
    progress_done(g0, 2.5, 0);
    progress_done(g1, 7.0, 0);
    progress_format(p, line, sizeof line);
    /* Half of each of 2 buckets in hand, of 4, in 10 s: 0.25 done, 30 s left. */
    CHECK_STR(line, "sweep: bucket 2/4, 3 candidates, 10s elapsed, ETA 30s; GPU 0 axpy f32 n=2^6 2/4 best 2.50 us "
              "(2.00x default); GPU 1 axpy f32 n=2^7 1/2 best 7.00 us", "both lanes' buckets");
    progress_done(g1, 6.0, 0);
    progress_bucket(g1, "axpy f32 n=2^8");
    progress_format(p, line, sizeof line);
    CHECK(strstr(line, "bucket 3/4, 4 candidates,") && strstr(line, "GPU 1 axpy f32 n=2^8 0/0") && !strstr(line, "7.00"),
          "a lane's next bucket replaces its last: %s", line);
    size_t at = strlen(written(f, &buf));
    progress_print(g0, f, "axpy f32 n=2^6 winner\n");
    CHECK(strstr(written(f, &buf) + at, "winner\n") != NULL, "a lane prints a line through the run");
    progress_free(g0);      /* no-op: lanes go with their run */
    progress_free(p);
    fclose(f);
    free(buf);

    /* Candidates alone (compile): no buckets, a plan. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fake_now = 0;
    p = progress_new_with(f, "compile", PROGRESS_LINES, 1000, 10, fake_clock);
    progress_plan(p, 200);
    fake_now = 20;
    for (int i = 0; i < 50; i++) progress_done(p, 0, 0);
    progress_format(p, line, sizeof line);
    CHECK_STR(line, "compile: 50/200, 20s elapsed, ETA 1m00s", "compile counts kernels");
    progress_free(p);
    fclose(f);
    free(buf);

    /* A terminal: redrawn in place, cut to the width, erased at the end. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fake_now = 0;
    p = progress_new_with(f, "sweep", PROGRESS_TTY, 40, 0.1, fake_clock);
    progress_buckets(p, 2);
    progress_bucket(p, "softmax bf16 rows=2^14,cols=2^15");
    CHECK(!strncmp(written(f, &buf), "\r\033[K", 4), "a terminal line starts by erasing the line");
    progress_format(p, line, sizeof line);
    CHECK(strlen(line) == 39, "the line is cut to the width less one column: %zu '%s'", strlen(line), line);
    fake_now = 0.05;
    size_t n1 = strlen(written(f, &buf));
    progress_done(p, 1, 0);
    CHECK(strlen(written(f, &buf)) == n1, "no redraw within 0.1 s");
    fake_now = 0.2;
    progress_note(p, "softmax/tma {\"block\":256}");
    CHECK(strlen(written(f, &buf)) > n1, "a redraw after 0.1 s");
    const char *last = strrchr(buf, '\r');
    CHECK(last && strlen(last) <= 4 + 39, "every drawn line fits the terminal");
    fake_now = 0.25;
    size_t n0 = strlen(written(f, &buf));
    progress_bucket(p, "softmax bf16 rows=2^14,cols=2^16");
    CHECK(strlen(written(f, &buf)) > n0 && strstr(buf + n0, "bucket 2/2"),
          "a new bucket is drawn at once, 0.05 s after the last draw (a ticker's draw does not hold it back)");
    progress_clear(p);
    CHECK(!strcmp(written(f, &buf) + strlen(buf) - 4, "\r\033[K"), "clear erases the line");
    size_t n2 = strlen(buf);
    progress_end(p);
    CHECK(strlen(written(f, &buf)) == n2, "nothing more to erase once cleared");
    progress_free(p);
    fclose(f);
    free(buf);

    /* Phases and the ticker: a compile counting its spec's candidates,
    ** then compiling; lines come from the ticker while nothing reports. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fake_now = 0;
    p = progress_new_with(f, "compile", PROGRESS_LINES, 1000, 10, fake_clock);
    progress_phase(p, "counting candidates");
    progress_buckets(p, 3);
    progress_bucket(p, "gemm_nt bf16 m=2^4,n=2^12,k=2^12");
    progress_format(p, line, sizeof line);
    CHECK(!strncmp(line, "compile (counting candidates): bucket 1/3, ", 43), "the phase follows the command's name: %s", line);
    progress_start_ticker(p);
    double t20 = 20;
    __atomic_store(&fake_now, &t20, __ATOMIC_SEQ_CST);
    usleep(500 * 1000);     /* the ticker wakes every 0.1 s: the interval has passed */
    progress_phase(p, "");
    progress_buckets(p, 1);
    progress_bucket(p, "gemm_nt bf16 m=2^4,n=2^12,k=2^12");
    progress_plan(p, 7);
    progress_format(p, line, sizeof line);
    CHECK(!strncmp(line, "compile: bucket 1/1, 0/7 candidates (0 in all), 20s elapsed", 59),
          "progress_buckets starts the counts again, the phase gone: %s", line);
    progress_end(p);
    CHECK(strstr(written(f, &buf), "compile (counting candidates): bucket 1/3,") != NULL,
          "the ticker drew a line though nothing was reported: '%s'", buf);
    size_t n3 = strlen(buf);
    for (int i = 0; i < 3; i++) progress_done(p, 0, 0);
    double t99 = 99;
    __atomic_store(&fake_now, &t99, __ATOMIC_SEQ_CST);
    progress_tick(p);
    CHECK(strlen(written(f, &buf)) == n3, "nothing is drawn after progress_end (the summary follows)");
    progress_free(p);
    fclose(f);
    free(buf);

    /* NULL: a quiet run. */
    progress_bucket(NULL, "x");
    progress_done(NULL, 1, 1);
    progress_note(NULL, "x");
    progress_free(NULL);
    CHECK(1, "a NULL progress is a no-op");
    CHECK_DONE();
}
