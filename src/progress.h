/* progress.h: what a long command (sweep, compile) tells the person waiting
** for it, on stderr: buckets and candidates done out of how many, the bucket
** in hand, the best time so far against the template default, elapsed time
** and an estimate of what is left.
**
** On a terminal one line is redrawn in place (at most ten times a second),
** cut to the terminal's width; otherwise a plain line is written every
** interval seconds (5 by default, $AITUNE_PROGRESS_INTERVAL), so logs of
** batch jobs show the sweep is alive without a line per candidate.
**
** The clock is injectable so tests can drive time. Nothing here allocates
** after progress_new (but progress_lane); calling any function with a NULL progress is a no-op,
** which is what a quiet run passes. */
#ifndef PROGRESS_H
#define PROGRESS_H
#include <stdio.h>

typedef struct progress progress;

enum progress_mode { PROGRESS_TTY, PROGRESS_LINES };

/* what: "sweep" or "compile", the line's first word. The mode and width
** come from f: a terminal (and its width) or not. */
progress *progress_new(FILE *f, const char *what);
/* For tests: an explicit mode, width (columns) and clock. */
progress *progress_new_with(FILE *f, const char *what, int mode, int width, double interval_s, double (*clock)(void));
void progress_free(progress *p);

/* A sweep on several GPUs: a lane of p (name: "GPU 1") for one thread to
** report its buckets and candidates through, as it would through p. The
** counts are the run's; the line shows each lane's bucket in hand. Every
** call on p and its lanes is thread-safe; lanes are freed with p. NULL
** past PROGRESS_MAX_LANES (the caller then reports nothing). */
#define PROGRESS_MAX_LANES 16
progress *progress_lane(progress *p, const char *name);

/* The number of buckets the run (or its phase: compile counts the spec's
** candidates first) will visit; the counts start again from 0, and the
** ETA from now. */
void progress_buckets(progress *p, int total);
/* The phase of the run, a few words shown after the command's name in
** every line, terminal or not ("compile (counting candidates): ..."); ""
** none. */
void progress_phase(progress *p, const char *words);
/* A bucket starts (its label: "softmax bf16 rows=2^14,cols=2^8"); the
** previous one, if any, counts as done. */
void progress_bucket(progress *p, const char *label);
/* n more candidates are planned in the bucket in hand (or in the run,
** before any bucket started). */
void progress_plan(progress *p, long long n);
/* One candidate done: its time when it measured ok (else <= 0), and
** whether it is the template default. */
void progress_done(progress *p, double time_us, int is_default);
/* What is happening now (a candidate's template and config): shown at the
** end of the terminal line, never in the periodic lines. */
void progress_note(progress *p, const char *text);

/* Draw if due: the terminal line at most every 0.1 s, a plain line every
** interval. progress_done and progress_bucket call it. */
void progress_tick(progress *p);
/* Erase the terminal line so other output can be written; the next tick
** draws it again. */
void progress_clear(progress *p);
/* Write text (whole lines) to f with the terminal line out of its way: no
** lane can draw between the erase and the write. p NULL: just the write. */
void progress_print(progress *p, FILE *f, const char *text);
/* Draw when due from a thread of p's own, whatever the run is doing
** (waiting on a compile, a worker, a count), until progress_end: so a run
** off a terminal writes its line every interval in every phase. */
void progress_start_ticker(progress *p);
/* The run is over: the ticker stopped, the terminal line erased for good,
** and nothing drawn after (the summary follows). */
void progress_end(progress *p);

/* The status line for the time now, cut to the width; returns its length. */
int progress_format(const progress *p, char *out, int cap);

/* "42s", "3m05s", "2h07m": a duration for people. */
void progress_fmt_duration(double s, char *out, int cap);

/* progress_put_line with the terminal line out of its way, as
** progress_print. */
void progress_put(progress *p, FILE *f, const char *line);

/* The width of the terminal f is, or 0 when it is not one. */
int progress_term_width(FILE *f);
/* Write line and a newline to f, cut to the terminal's width when f is one. */
void progress_put_line(FILE *f, const char *line);

/* `aitune compile`'s summary: counts, spills and the slowest compiles,
** gathered one kernel at a time. */
typedef struct compile_tally {
    int kernels, failed, cached, spilling, warned;
    int max_spill;
    char max_spill_label[160];
    double total_ms;
    struct { double ms; char label[160]; } slow[5];
} compile_tally;

void compile_tally_add(compile_tally *t, const char *label, int spills, double ms, int cached, int failed, int warned);
/* A few lines, none wider than 100 columns (or the terminal). */
void compile_tally_print(const compile_tally *t, FILE *f);

#endif
