/* progress.c: see progress.h. */
#define _GNU_SOURCE
#include "progress.h"
#include "util.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct progress {
    FILE *f;
    char what[16];
    int mode, width;
    double interval, (*clock)(void);
    double t0, last_draw;
    double t_phase;             /* when the counts began (progress_buckets): the ETA's clock */
    char phase[32];             /* progress_phase */
    int drawn;                  /* a terminal line is on screen */
    int buckets_total, buckets_started;
    long long planned, done;    /* candidates, the whole run */
    int in_bucket;              /* a bucket is in hand (fields below) */
    long long bucket_planned, bucket_done;
    double best_us, default_us; /* the bucket in hand */
    char bucket[128];
    char note[160];
    /* A sweep on several GPUs: each lane holds its own bucket; the counts
    ** above and the drawing are the run's (root's). */
    progress *root;             /* the run: itself, or the lane's run */
    char name[16];              /* a lane's: "GPU 1" */
    progress *lanes[PROGRESS_MAX_LANES];
    int nlanes;
    pthread_mutex_t mu;         /* root's: held by every call on the run or a lane */
    /* progress_start_ticker: a thread that draws when due, whatever the
    ** run is doing (waiting on a compile, a worker, a count). */
    pthread_t ticker;
    pthread_cond_t wake;
    int ticking, stop, ended;   /* ended: progress_end; nothing is drawn after it */
};

/* Every call takes the run's lock: lanes live on threads of their own. */
static progress *lock(progress *p)
{
    progress *r = p->root;
    pthread_mutex_lock(&r->mu);
    return r;
}

static void unlock(progress *r) { pthread_mutex_unlock(&r->mu); }

static int term_width(FILE *f)
{
    struct winsize ws;
    if (!ioctl(fileno(f), TIOCGWINSZ, &ws) && ws.ws_col > 0) return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int n = c ? atoi(c) : 0;
    return n > 0 ? n : 80;
}

int progress_term_width(FILE *f)
{
    return isatty(fileno(f)) ? term_width(f) : 0;
}

void progress_put_line(FILE *f, const char *line)
{
    int w = progress_term_width(f);
    int n = (int)strlen(line);
    if (w > 1 && n > w - 1) n = w - 1;
    fprintf(f, "%.*s\n", n, line);
}

progress *progress_new_with(FILE *f, const char *what, int mode, int width, double interval_s, double (*clock)(void))
{
    progress *p = xcalloc(1, sizeof *p);
    p->f = f;
    snprintf(p->what, sizeof p->what, "%s", what);
    p->mode = mode;
    p->width = width < 20 ? 20 : width;
    p->interval = interval_s;
    p->clock = clock ? clock : now_s;
    p->t0 = p->t_phase = p->last_draw = p->clock();
    p->root = p;
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

progress *progress_lane(progress *p, const char *name)
{
    if (!p) return NULL;
    progress *r = lock(p);
    progress *l = NULL;
    if (r->nlanes < PROGRESS_MAX_LANES) {
        l = xcalloc(1, sizeof *l);
        l->root = r;
        snprintf(l->name, sizeof l->name, "%s", name);
        r->lanes[r->nlanes++] = l;
    }
    unlock(r);
    return l;
}

progress *progress_new(FILE *f, const char *what)
{
    int tty = isatty(fileno(f));
    const char *iv = getenv("AITUNE_PROGRESS_INTERVAL");
    double interval = iv && *iv ? atof(iv) : 5;
    return progress_new_with(f, what, tty ? PROGRESS_TTY : PROGRESS_LINES, tty ? term_width(f) : 1000,
                             tty ? 0.1 : interval, NULL);
}

void progress_free(progress *p)
{
    if (!p || p->root != p) return;     /* a lane goes with its run */
    progress_end(p);
    for (int i = 0; i < p->nlanes; i++) free(p->lanes[i]);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void progress_fmt_duration(double s, char *out, int cap)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t < 60) snprintf(out, (size_t)cap, "%lds", t);
    else if (t < 3600) snprintf(out, (size_t)cap, "%ldm%02lds", t / 60, t % 60);
    else snprintf(out, (size_t)cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

/* The fraction of the run done: buckets finished plus the share of the one
** in hand its planned candidates say; without buckets, candidates alone. */
static double in_hand(const progress *b)
{
    double in = b->bucket_planned > 0 ? (double)b->bucket_done / (double)b->bucket_planned : 0;
    return in > 1 ? 1 : in;
}

static double fraction(const progress *p)
{
    if (p->nlanes && p->buckets_total > 0 && p->buckets_started > 0) {
        /* Buckets finished are those started and no longer in a lane's hand. */
        double f = p->buckets_started;
        for (int i = 0; i < p->nlanes; i++)
            if (p->lanes[i]->in_bucket) f += in_hand(p->lanes[i]) - 1;
        return f / p->buckets_total;
    }
    if (p->buckets_total > 0 && p->buckets_started > 0) {
        double in = p->bucket_planned > 0 ? (double)p->bucket_done / (double)p->bucket_planned : 0;
        if (in > 1) in = 1;
        return (p->buckets_started - 1 + in) / p->buckets_total;
    }
    return p->planned > 0 ? (double)p->done / (double)p->planned : 0;
}

int progress_format(const progress *p, char *out, int cap)
{
    double now = p->clock(), el = now - p->t0, ph = now - p->t_phase;
    char e[16], eta[16] = "?";
    progress_fmt_duration(el, e, sizeof e);
    double fr = fraction(p);
    /* An estimate needs a little history: 2% of the phase or 5 seconds. */
    if (fr >= 1) snprintf(eta, sizeof eta, "0s");
    else if (fr > 0.02 || (fr > 0 && ph > 5)) progress_fmt_duration(ph * (1 - fr) / fr, eta, sizeof eta);
    /* What matters most comes first, as a narrow terminal cuts the end:
    ** counts and time, then the bucket and its best, then the note. */
    char line[512];
    int n = snprintf(line, sizeof line, "%s%s%s%s:", p->what, p->phase[0] ? " (" : "", p->phase, p->phase[0] ? ")" : "");
    if (p->buckets_total > 0 && p->nlanes)
        n += snprintf(line + n, sizeof line - (size_t)n, " bucket %d/%d, %lld candidates,", p->buckets_started,
                      p->buckets_total, p->done);
    else if (p->buckets_total > 0)
        n += snprintf(line + n, sizeof line - (size_t)n, " bucket %d/%d, %lld/%lld candidates (%lld in all),",
                      p->buckets_started, p->buckets_total, p->bucket_done,
                      p->bucket_planned > p->bucket_done ? p->bucket_planned : p->bucket_done, p->done);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, " %lld/%lld,", p->done, p->planned > p->done ? p->planned : p->done);
    n += snprintf(line + n, sizeof line - (size_t)n, " %s elapsed, ETA %s", e, eta);
    /* Each lane's bucket in turn (the note would not fit beside them). */
    for (int i = 0; i < (p->nlanes ? p->nlanes : 1) && n < (int)sizeof line; i++) {
        const progress *b = p->nlanes ? p->lanes[i] : p;
        if (p->nlanes && !b->in_bucket) continue;
        if (p->nlanes) n += snprintf(line + n, sizeof line - (size_t)n, "; %s %s %lld/%lld", b->name, b->bucket,
                                     b->bucket_done, b->bucket_planned > b->bucket_done ? b->bucket_planned : b->bucket_done);
        else if (b->bucket[0]) n += snprintf(line + n, sizeof line - (size_t)n, "; %s", b->bucket);
        if (b->best_us > 0 && n < (int)sizeof line) {
            n += snprintf(line + n, sizeof line - (size_t)n, " best %.2f us", b->best_us);
            if (b->default_us > 0 && n < (int)sizeof line)
                n += snprintf(line + n, sizeof line - (size_t)n, " (%.2fx default)", b->default_us / b->best_us);
        }
    }
    if (p->mode == PROGRESS_TTY && !p->nlanes && p->note[0] && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " | %s", p->note);
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    /* Never wider than the terminal: the last column stays free, so the
    ** cursor does not wrap and \r returns to this line. */
    int w = p->width - 1;
    if (n > w) n = w;
    if (n >= cap) n = cap - 1;
    memcpy(out, line, (size_t)n);
    out[n] = 0;
    return n;
}

static void draw(progress *p)
{
    if (p->ended) return;
    char line[512];
    progress_format(p, line, sizeof line);
    if (p->mode == PROGRESS_TTY) {
        fprintf(p->f, "\r\033[K%s", line);
        p->drawn = 1;
    } else {
        fprintf(p->f, "%s\n", line);
    }
    fflush(p->f);
    p->last_draw = p->clock();
}

static void tick(progress *r)
{
    double now = r->clock();
    if (now - r->last_draw >= r->interval || (r->mode == PROGRESS_TTY && !r->drawn)) draw(r);
}

static void clear(progress *r)
{
    if (!r->drawn) return;
    fprintf(r->f, "\r\033[K");
    fflush(r->f);
    r->drawn = 0;
}

void progress_tick(progress *p)
{
    if (!p) return;
    progress *r = lock(p);
    tick(r);
    unlock(r);
}

void progress_buckets(progress *p, int total)
{
    if (!p) return;
    progress *r = lock(p);
    r->buckets_total = total;
    r->buckets_started = 0;
    r->planned = r->done = 0;
    r->in_bucket = 0;
    r->bucket_planned = r->bucket_done = 0;
    r->bucket[0] = 0;
    r->t_phase = r->clock();
    unlock(r);
}

void progress_phase(progress *p, const char *word)
{
    if (!p) return;
    progress *r = lock(p);
    snprintf(r->phase, sizeof r->phase, "%s", word);
    unlock(r);
}

void progress_bucket(progress *p, const char *label)
{
    if (!p) return;
    progress *r = lock(p);
    r->buckets_started++;
    p->in_bucket = 1;
    p->bucket_planned = p->bucket_done = 0;
    p->best_us = p->default_us = 0;
    p->note[0] = 0;
    snprintf(p->bucket, sizeof p->bucket, "%s", label);
    if (r->mode == PROGRESS_TTY && !r->ended) draw(r);   /* a new bucket is news: not held back by the ticker's last draw */
    else tick(r);
    unlock(r);
}

void progress_plan(progress *p, long long n)
{
    if (!p) return;
    progress *r = lock(p);
    r->planned += n;
    if (p->in_bucket) p->bucket_planned += n;
    unlock(r);
}

void progress_done(progress *p, double time_us, int is_default)
{
    if (!p) return;
    progress *r = lock(p);
    r->done++;
    p->bucket_done++;
    if (time_us > 0) {
        if (p->best_us <= 0 || time_us < p->best_us) p->best_us = time_us;
        if (is_default) p->default_us = time_us;
    }
    tick(r);
    unlock(r);
}

void progress_note(progress *p, const char *text)
{
    if (!p) return;
    progress *r = lock(p);
    snprintf(p->note, sizeof p->note, "%s", text);
    tick(r);
    unlock(r);
}

void progress_clear(progress *p)
{
    if (!p) return;
    progress *r = lock(p);
    clear(r);
    unlock(r);
}

void progress_put(progress *p, FILE *f, const char *line)
{
    progress *r = p ? lock(p) : NULL;
    if (r) clear(r);
    progress_put_line(f, line);
    fflush(f);
    if (r) unlock(r);
}

void progress_print(progress *p, FILE *f, const char *text)
{
    progress *r = p ? lock(p) : NULL;
    if (r) clear(r);
    fputs(text, f);
    fflush(f);
    if (r) unlock(r);
}

static void *ticker_main(void *arg)
{
    progress *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r->wake, &r->mu, &ts);
        if (!r->stop) tick(r);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

void progress_start_ticker(progress *p)
{
    if (!p || p->root != p || p->ticking || p->ended) return;
    pthread_cond_init(&p->wake, NULL);
    p->ticking = !pthread_create(&p->ticker, NULL, ticker_main, p);
    if (!p->ticking) pthread_cond_destroy(&p->wake);
}

void progress_end(progress *p)
{
    if (!p) return;
    progress *r = p->root;
    if (r->ticking) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->ticker, NULL);
        pthread_cond_destroy(&r->wake);
        r->ticking = 0;
    }
    progress *l = lock(r);
    clear(l);
    l->ended = 1;
    unlock(l);
}

void compile_tally_add(compile_tally *t, const char *label, int spills, double ms, int cached, int failed, int warned)
{
    t->kernels++;
    t->failed += failed != 0;
    t->cached += cached != 0;
    t->warned += warned != 0;
    if (spills > 0) {
        t->spilling++;
        if (spills > t->max_spill) {
            t->max_spill = spills;
            snprintf(t->max_spill_label, sizeof t->max_spill_label, "%s", label);
        }
    }
    if (cached || failed) return;
    t->total_ms += ms;
    /* Keep the five slowest, slowest first. */
    int n = (int)(sizeof t->slow / sizeof t->slow[0]), i = n;
    while (i > 0 && ms > t->slow[i - 1].ms) i--;
    if (i == n) return;
    memmove(&t->slow[i + 1], &t->slow[i], sizeof t->slow[0] * (size_t)(n - 1 - i));
    t->slow[i].ms = ms;
    snprintf(t->slow[i].label, sizeof t->slow[i].label, "%s", label);
}

void compile_tally_print(const compile_tally *t, FILE *f)
{
    char line[512];
    snprintf(line, sizeof line, "%d kernels: %d compiled (%.1f s of compile time), %d from the cubin cache, %d failed",
             t->kernels, t->kernels - t->cached - t->failed, t->total_ms / 1000, t->cached, t->failed);
    progress_put_line(f, line);
    if (t->spilling)
        snprintf(line, sizeof line, "%d spill registers (the sweep prunes them); most: %d bytes, %s", t->spilling,
                 t->max_spill, t->max_spill_label);
    else
        snprintf(line, sizeof line, "no kernel spills registers");
    progress_put_line(f, line);
    if (t->warned) {
        snprintf(line, sizeof line, "%d with ptxas warnings", t->warned);
        progress_put_line(f, line);
    }
    if (t->slow[0].ms > 0) {
        progress_put_line(f, "slowest compiles:");
        for (int i = 0; i < 5 && t->slow[i].ms > 0; i++) {
            snprintf(line, sizeof line, "  %8.1f ms  %s", t->slow[i].ms, t->slow[i].label);
            progress_put_line(f, line);
        }
    }
    progress_put_line(f, "(aitune compile -v lists every kernel)");
}
