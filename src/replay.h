/* replay.h: search strategies run against recorded landscapes, without a
** GPU (`aitune replay`, tests/sim/).
**
** A landscape is what an exhaustive sweep measured for one (op, template,
** arch, dtype, bucket): every config with its status, time and compile
** cost. A strategy (search/<name>.lua) runs against it as if on the GPU:
** each config it asks for is "compiled and timed" by looking it up, and the
** cost the real sweep paid (compile time, load and verify, timed samples)
** is added to a simulated wall clock. Seeded, so a replay is reproducible.
**
** The landscape file (text, tab-separated, one row per config):
**   # aitune landscape v1           first line
**   # ... any comment lines (where it came from; "synthetic" if it is)
**   op template arch dtype bucket status time_us compile_ms config
**   gemm gemm/simt sm_90 bf16 m=2^12 ok 812.5 410 {"bm":128,...}
** The header line names the columns (any order); those shown are required,
** spread, registers, spills, smem are optional. status: ok | compile |
** runtime | timeout | wrong (constraint rows are skipped: never run);
** time_us is the median for ok rows (anything, e.g. 0, otherwise). Rows of
** one (op, template, arch, dtype, bucket) form one landscape, in the order
** they first appear (the order of buckets is the order of neighbours for
** warm start). `aitune replay export` writes one from a registry.
**
** The metric (replay_score, computed in one place): for a strategy's
** best-so-far b after k evaluations, the random search's expected best
** R(k) (exact, without repeats) and the optimum O, the fraction of the gap
** closed is (R(k) - b) / (R(k) - O): 0 no better than random, 1 optimal.
** Failures count as the slowest ok time. The same by wall time, with R
** estimated over seeded random orders. Plus evaluations to reach within 3%
** and 1% of O. Over seeds: mean and a 95% interval (Student's t). */
#ifndef REPLAY_H
#define REPLAY_H

typedef struct land_row {
    char *config;
    char status[12];
    double time_us, compile_ms, spread;
    int registers, spills, smem;
} land_row;

typedef struct landscape {
    char op[32], tmpl[64], arch[16], dtype[16], bucket[96];
    int n;
    land_row *rows;
} landscape;

/* Read a landscape file: *out holds *n landscapes (replay_free them). On
** failure returns -1 with a message in err naming the file and line. The
** file must be a regular file of at most INPUT_MAXBYTES (util.h); it loads
** in time linear in its rows. */
int replay_load(const char *path, landscape **out, int *n, char *err, int errcap);
void replay_free(landscape *ls, int n);

/* What the real sweep pays per candidate, in milliseconds of wall time. */
typedef struct replay_cost {
    double compile_par;     /* compiles running in parallel (the batch) */
    double overhead_ms;     /* load, verify against the reference */
    int samples;            /* timed launches */
    double flush_us;        /* L2 flush before each */
    double timeout_ms;      /* what a hung kernel costs */
} replay_cost;
extern const replay_cost replay_default_cost;
double replay_cost_ms(const replay_cost *c, const land_row *r);

/* ---- the metric ---- */

/* Each row's value for the metric: its time if ok, else the slowest ok time
** (0 everywhere if no row is ok: nothing to tune). */
double replay_values(const landscape *l, double *value);
/* exp[k-1] = random search's expected best value after k draws without
** repeats from value[0, n), k = 1..n. Exact. */
void replay_random_expected(const double *value, int n, double *exp);
/* The fraction of the gap between random (r) and the optimum (opt) that a
** best-so-far b closes: (r - b) / (r - opt); 1 when r is already opt and b
** is too, 0 when r is opt and b is not. */
double replay_gap_closed(double r, double b, double opt);
/* Mean and 95% interval (Student's t) of x[0, n). */
void replay_mean_ci(const double *x, int n, double *mean, double *lo, double *hi);

/* One run: best[i] the best-so-far value and wall[i] the simulated seconds
** after evaluation i + 1, for i < n. */
typedef struct replay_trace {
    int n;
    double *best, *wall;
} replay_trace;
void replay_trace_free(replay_trace *t);

/* The budgets the metric is read at, as fractions of the space (by
** evaluations) and of an exhaustive sweep's wall time (by time). */
#define REPLAY_NFRAC 5
extern const double replay_frac[REPLAY_NFRAC];

typedef struct replay_score {
    double gap_evals[REPLAY_NFRAC];  /* NAN where the run stopped before that budget */
    double gap_time[REPLAY_NFRAC];
    int evals_to3, evals_to1;       /* 0: not reached */
    double wall_to3;                /* seconds; 0: not reached */
} replay_score;

/* Score a trace against a landscape's values (n of them), its random
** expectation by evaluations (exp, n) and by time (rand_t: the expected
** best at replay_frac[i] of total_s seconds). */
void replay_score_trace(const replay_trace *t, const double *value, int n, const double *exp,
                        const double *rand_t, double total_s, replay_score *out);
/* rand_t for replay_score_trace: the mean best of `rounds` seeded random
** orders at each replay_frac[i] * total_s, where cost[i] is row i's cost in
** seconds and total_s their sum. */
void replay_random_by_time(const double *value, const double *cost, int n, int rounds, unsigned long long seed,
                           double *rand_t, double *total_s);

/* Merge the landscapes of one (op, arch, dtype, bucket) into one whose
** template is "*": each config gains "template" (its template) and "-" for
** the params its template lacks (search_join_config). Replaces *ls. */
struct tmpl;
int replay_join(struct tmpl *T, landscape **ls, int *n, char *err, int errcap);

/* `aitune replay`: the command (argv[0] is "replay"). */
int replay_main(int argc, char **argv);
#define REPLAY_SUMMARY \
    "Run search strategies against recorded landscapes, as if on the GPU, and score them. Each\n" \
    "config a strategy asks for is looked up in the landscape and its real costs (compile, verify,\n" \
    "timed samples) are added to a simulated clock. Scores: the fraction of the gap between random\n" \
    "search's expected best-so-far and the optimum closed at 1, 2, 5, 10, 20% of the space (by\n" \
    "evaluations, and by an exhaustive sweep's wall time), and evaluations to within 3% and 1%, as\n" \
    "mean [95% interval] over seeds. Needs no GPU.\n\n" \
    "  --strategy S,...  strategies (default anneal,genetic,model,local,random)\n" \
    "  --seeds N         seeds per strategy and landscape (default 20)\n" \
    "  --seed S          the first seed (default 1)\n" \
    "  --budget F        the share of each space a run may evaluate (default 0.2)\n" \
    "  --batch N         configs asked at a time (default 8, as the sweep)\n" \
    "  --ahead N         ask a batch whenever fewer than N asked configs are untold behind the one\n" \
    "                    evaluated next, as a sweep's --ahead (default 0: when all are told)\n" \
    "  --warm K          warm start: the K fastest configs of the neighbouring buckets first\n" \
    "  --only TEXT       only landscapes whose op, template or bucket contains TEXT\n" \
    "  --joint           one landscape per (op, arch, dtype, bucket) across its templates: each\n" \
    "                    config carries \"template\", and params a template lacks are \"-\"\n" \
    "                    (how a sweep with `joint: true` searches a bucket)\n" \
    "  --tsv             one line per figure, tab-separated (for scripts)\n" \
    "  --trace           every evaluation of every run\n\n" \
    "aitune replay export writes a registry's measurements as a landscape file (the newest\n" \
    "measurement of each config; record an exhaustive sweep first):\n" \
    "  --db PATH         the registry (default $AITUNE_DB, else ~/.local/share/aitune/registry.db)\n" \
    "  --op OP           only this op\n" \
    "  -o FILE           write here (default stdout; replaced whole, never through a link)\n\n" \
    "Exit: 0, 1 when a run fails or FILE cannot be written, 2 usage (an option, a strategy that is\n" \
    "not one), 3 a landscape (a regular file of at most 256 MB) or registry that is not one."
#define REPLAY_USAGE                                                                                        \
    "aitune replay LANDSCAPE... [--strategy S,...] [--seeds N] [--seed S] [--budget F] [--batch N]\n"     \
    "       [--ahead N] [--warm K] [--only TEXT] [--joint] [--tsv] [--trace]\n"                           \
    "       aitune replay export [--db PATH] [--op OP] [-o FILE]"

#endif
