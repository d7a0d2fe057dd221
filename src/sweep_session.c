/* sweep_session.c: see sweep_session.h. */
#define _GNU_SOURCE
#include "sweep_session.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    if (interrupted) {
        /* A second signal: abandon the candidate in flight at once. The
        ** worker dies with us; the registry is consistent after each write. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    interrupted = 1;
}

void sw_signals(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

int sw_interrupted(void) { return interrupted; }
void sw_op_time(sw *S, const char *op, double s)
{
    int i = 0;
    while (i < S->nops && strcmp(S->op_name[i], op)) i++;
    if (i == S->nops) {
        if (S->nops == 32) return;
        snprintf(S->op_name[S->nops++], sizeof S->op_name[0], "%s", op);
    }
    S->op_s[i] += s;
}

static const char *statuses[] = { "ok", "constraint", "compile", "runtime", "timeout", "wrong", NULL };

void sw_count_status(sw *S, const char *st)
{
    for (int i = 0; statuses[i]; i++)
        if (!strcmp(statuses[i], st)) S->by_status[i]++;
}

static FILE *trace_out;     /* AITUNE_TRACE */

void sw_trace_open(void)
{
    const char *tp = getenv("AITUNE_TRACE");
    if (tp && *tp && !(trace_out = fopen(tp, "a"))) warning("AITUNE_TRACE '%s': %s", tp, strerror(errno));
    if (trace_out) setvbuf(trace_out, NULL, _IOLBF, 0);
}

void sw_trace_close(void)
{
    if (trace_out) fclose(trace_out);
    trace_out = NULL;
}

int sw_tracing(void) { return trace_out != NULL; }

void sw_trace(sw *S, const char *fmt, ...)
{
    if (!trace_out) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(trace_out, "%.4f gpu=%d %s\n", now_s() - S->t0, S->gpu, line);
}

int sw_out_of_budget(sw *S)
{
    double t = now_s();
    if (S->budget_s > 0 && t - S->t0 > S->budget_s) S->budget_hit = 1;
    if (S->share_end > 0 && t > S->share_end) S->share_hit = 1;
    return S->budget_hit || S->share_hit || interrupted;
}

int sw_search_over(sw *S)
{
    if (sw_out_of_budget(S)) return 1;
    if (S->search_end > 0 && now_s() > S->search_end) S->search_hit = 1;
    return S->search_hit;
}

int sw_bucket_cut(const sw *S)
{
    return S->budget_hit || S->share_hit || S->search_hit || sw_interrupted();
}

void sw_note(sw *S, const char *fmt, ...)
{
    char note[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof note, fmt, ap);
    va_end(ap);
    if (note[0]) progress_note(S->P, note);
    else progress_clear(S->P);
}

void sw_say(sw *S, const char *fmt, ...)
{
    strbuf b = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    if (S->tag[0] && b.len && b.buf[b.len - 1] == '\n') {
        b.buf[--b.len] = 0;
        sb_printf(&b, "%s\n", S->tag);
    }
    progress_print(S->P, stdout, sb_str(&b));
    sb_free(&b);
}

void sw_verb(const sweep_opts *o, char out[16])
{
    const char *c = o->command && !strncmp(o->command, "aitune ", 7) ? o->command + 7 : "";
    snprintf(out, 16, "%.*s", (int)strcspn(c, " "), c);
    if (!out[0]) snprintf(out, 16, "%s", o->compile_only ? "compile" : "sweep");
}

void sw_summary(sw *S)
{
    worker_stats ws = S->ws;
    char v[16];
    sw_verb(S->o, v);
    fprintf(stderr, "%s: %d candidates evaluated", v, S->evaluated);
    if (S->resumed) fprintf(stderr, " (%d already in the registry)", S->resumed);
    for (int i = 0; statuses[i]; i++)
        if (S->by_status[i]) fprintf(stderr, ", %d %s", S->by_status[i], statuses[i]);
    fprintf(stderr, "; %d compiled, %d from the cache; %d rejected by constraints; %d winners; %.1f s\n", S->compiled,
            S->cache_hits, S->rejected, S->winners, now_s() - S->t0);
    if (S->kept)
        fprintf(stderr, "resume: %d bucket%s decided by earlier runs left as %s (%d winner%s), %d decided now\n",
                S->kept, S->kept == 1 ? "" : "s", S->kept == 1 ? "it was" : "they were", S->kept_winners,
                S->kept_winners == 1 ? "" : "s", S->decided_now);
    if (S->nops > 1) {
        fprintf(stderr, "time per op:");
        for (int i = 0; i < S->nops; i++) fprintf(stderr, "%s %s %.1f s", i ? "," : "", S->op_name[i], S->op_s[i]);
        fprintf(stderr, "\n");
    }
    /* A part's own search may run for a bucket that stays whole (a split on
    ** trial); the worst loss after is the stored winners' over every size
    ** raced, the parts' included. */
    char searched[96] = "";
    if (S->searched)
        snprintf(searched, sizeof searched, ", %d part%s searched (%d candidate%s)", S->searched,
                 S->searched == 1 ? "" : "s", S->searched_evals, S->searched_evals == 1 ? "" : "s");
    const char *bar = S->vendor_bars ? "the fastest finalist or the vendor" : "the fastest finalist";
    if (S->held && !S->split)
        fprintf(stderr, "hold: %d bucket%s probed at other sizes than their own, %d winner%s changed%s; the worst loss "
                "of a winner against %s there: %.1f%% before, %.1f%% after\n", S->held,
                S->held == 1 ? "" : "s", S->moved, S->moved == 1 ? "" : "s", searched, bar, 100 * S->hold_before,
                100 * S->hold_final);
    char again[48] = "";
    if (S->resplit) snprintf(again, sizeof again, ", %d part%s split again", S->resplit, S->resplit == 1 ? "" : "s");
    if (S->held && S->split)
        fprintf(stderr, "hold: %d bucket%s probed at other sizes than their own, %d winner%s changed, %d bucket%s split "
                "in %d parts%s%s; the worst loss of a winner against %s there: %.1f%% before, %.1f%% "
                "after hold, %.1f%% after splitting\n", S->held, S->held == 1 ? "" : "s", S->moved,
                S->moved == 1 ? "" : "s", S->split, S->split == 1 ? "" : "s", S->parts, again, searched, bar,
                100 * S->hold_before, 100 * S->hold_after, 100 * S->hold_final);
    if (S->holds_cut)
        fprintf(stderr, "hold: hold/split cut by the budget in %d bucket%s: %s winners are those chosen before the cut "
                "(the race's, or the parts' among their candidates), not exhaustive; the next run holds %s again\n",
                S->holds_cut, S->holds_cut == 1 ? "" : "s", S->holds_cut == 1 ? "its" : "their",
                S->holds_cut == 1 ? "it" : "them");
    if (S->broken_before || S->broken_after)
        fprintf(stderr, "hold: winners wrong or failing at a probed shape: %d before, %d after\n", S->broken_before,
                S->broken_after);
    char vline[256];
    sweep_vendor_summary(&S->V, vline, sizeof vline);
    fputs(vline, stderr);
    if (S->trimmed.cubins)
        fprintf(stderr, "registry: %.1f MB, after dropping %lld cubins of candidates that lost (%.1f MB; "
                "--keep-cubins keeps them)\n", reg_disk_bytes(S->R, 1) / 1048576.0, S->trimmed.cubins,
                S->trimmed.bytes / 1048576.0);
    int workers = S->nlanes > 1 ? S->nlanes : 1;   /* one per GPU */
    if (ws.starts > workers || ws.crashes || ws.timeouts || ws.sticky)
        fprintf(stderr, "worker%s: %d restarts (%d crashes, %d hung kernels killed, %d lost contexts)\n",
                workers > 1 ? "s" : "", ws.starts - workers, ws.crashes, ws.timeouts, ws.sticky);
}

void sw_add_counts(sw *S, const sw *L)
{
    S->evaluated += L->evaluated;
    S->resumed += L->resumed;
    S->compiled += L->compiled;
    S->cache_hits += L->cache_hits;
    for (int i = 0; i < 8; i++) S->by_status[i] += L->by_status[i];
    S->rejected += L->rejected;
    S->winners += L->winners;
    S->decided_now += L->decided_now;
    S->retuned += L->retuned;
    S->escalated += L->escalated;
    S->checked += L->checked;
    S->regressed += L->regressed;
    S->held += L->held;
    S->moved += L->moved;
    S->split += L->split;
    S->parts += L->parts;
    S->resplit += L->resplit;
    S->searched += L->searched;
    S->searched_evals += L->searched_evals;
    if (L->hold_final > S->hold_final) S->hold_final = L->hold_final;
    S->vendor_bars += L->vendor_bars;
    if (L->hold_before > S->hold_before) S->hold_before = L->hold_before;
    if (L->hold_after > S->hold_after) S->hold_after = L->hold_after;
    S->broken_before += L->broken_before;
    S->broken_after += L->broken_after;
    sweep_vendor_add(&S->V, &L->V);
    for (int i = 0; i < L->nops; i++) sw_op_time(S, L->op_name[i], L->op_s[i]);
    S->budget_hit |= L->budget_hit;
    S->shares_cut += L->shares_cut;
    S->holds_cut += L->holds_cut;
    S->ws.starts += L->ws.starts;
    S->ws.crashes += L->ws.crashes;
    S->ws.timeouts += L->ws.timeouts;
    S->ws.sticky += L->ws.sticky;
    if (!S->code) S->code = L->code;
}
