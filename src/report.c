/* report.c: `aitune report`: one self-contained HTML page (inline CSS and
** SVG, no scripts, nothing fetched) about a registry: per op, the winners'
** table, the speedup of each winner over its template default, the GB/s
** each reached against a ceiling, and each bucket's search convergence
** (best time so far against evaluations). */
#define _GNU_SOURCE
#include "cli.h"
#include "json.h"
#include "registry_measure.h"
#include "registry_scan.h"
#include "registry_vendor.h"
#include "registry_winner.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char report_summary[] =
    "Write a self-contained HTML report of the registry. Inline SVG, no scripts, no network. Per op:\n"
    "the winners' table; the speedup of each bucket's winner over the template default; the GB/s it\n"
    "reached against the ceiling (TFLOP/s for compute-bound ops such as GEMM); each winner against\n"
    "the vendor library (x vendor: cuBLASLt's time at the winner's shape over the winner's, where the\n"
    "sweep timed it); each bucket's search convergence (best time so far against evaluations,\n"
    "relative to the final best).\n\n"
    "  -o FILE        the HTML file to write (required; - for standard output)\n"
    "  --op OP        only this op\n"
    "  --ceiling G    the copy ceiling in GB/s drawn on the bandwidth plots (a sweep prints it)\n"
    "  --db PATH      the registry\n\n"
    "Exit: 0, 1 when the file cannot be written, 2 for a usage error or an unknown op, 3 for a\n"
    "registry that does not open.";
const char report_usage[] = "aitune report -o FILE [--op OP] [--ceiling GBPS] [--db PATH]";

static const char *const palette[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };
#define NPAL (int)(sizeof palette / sizeof palette[0])

/* Text for HTML and SVG: the five characters that mean something there. */
static void esc(strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': sb_puts(sb, "&lt;"); break;
        case '>': sb_puts(sb, "&gt;"); break;
        case '&': sb_puts(sb, "&amp;"); break;
        case '"': sb_puts(sb, "&quot;"); break;
        case '\'': sb_puts(sb, "&#39;"); break;
        default: sb_add(sb, s, 1);
        }
    }
}

typedef struct row {
    winner w;
    double *best;               /* best time so far after each evaluation */
    int nbest;
} row;

typedef struct rows { row *r; int n; const char *op; } rows;

static int keep_winner(const winner *w, void *ctx)
{
    rows *rs = ctx;
    if (rs->op && strcmp(rs->op, w->op)) return 0;
    rs->r = xrealloc(rs->r, sizeof *rs->r * (size_t)(rs->n + 1));
    row *x = &rs->r[rs->n++];
    memset(x, 0, sizeof *x);
    x->w = *w;
    x->w.config = xstrdup(w->config ? w->config : "");
    x->w.runners_up = NULL;
    x->w.launch = NULL;
    return 0;
}

static int add_eval(const char *status, double us, void *ctx)
{
    row *x = ctx;
    double prev = x->nbest ? x->best[x->nbest - 1] : -1;
    double b = !strcmp(status, "ok") && us > 0 && isfinite(us) && (prev < 0 || us < prev) ? us : prev;
    x->best = xrealloc(x->best, sizeof *x->best * (size_t)(x->nbest + 1));
    x->best[x->nbest++] = b;
    return 0;
}

/* A number as the page shows it: "n/a" for an infinity or NaN (a registry
** may hold them), never "inf" in a table or an SVG attribute. */
static void number(strbuf *s, const char *fmt, double v)
{
    if (isfinite(v)) sb_printf(s, fmt, v);
    else sb_puts(s, "n/a");
}

/* A value axis's top: a round number above max. */
static double nice_top(double max)
{
    if (!(max > 0)) return 1;
    double p = pow(10, floor(log10(max))), steps[] = { 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
    for (int i = 0; i < 10; i++)
        if (steps[i] * p >= max * 1.05) return steps[i] * p;
    return 10 * p;
}

enum { W = 760, H = 280, ML = 64, MR = 16, MT = 30, MB = 84 };

static void axes(strbuf *s, const char *title, const char *ylabel, double top, const char *klass)
{
    sb_printf(s, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
                 "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>", klass, W, H, W, H, W, H);
    sb_printf(s, "<text x=\"%d\" y=\"18\" class=\"title\">", ML);
    esc(s, title);
    sb_printf(s, "</text><text x=\"14\" y=\"%d\" class=\"axis\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">",
              MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2);
    esc(s, ylabel);
    sb_puts(s, "</text>");
    for (int i = 0; i <= 4; i++) {
        double v = top * i / 4;
        int y = H - MB - (int)((H - MT - MB) * i / 4.0);
        sb_printf(s, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                     "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%.4g</text>",
                  ML, W - MR, y, y, ML - 6, y + 4, v);
    }
    sb_printf(s, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>", ML, W - MR, H - MB, H - MB);
}

/* Bars, one per row, with an optional reference line (ref > 0). */
static void bars(strbuf *s, const char *title, const char *ylabel, rows *rs, double *vals, double ref,
                 const char *reflabel, const char *color, const char *klass)
{
    double max = ref;
    for (int i = 0; i < rs->n; i++) if (isfinite(vals[i]) && vals[i] > max) max = vals[i];
    double top = nice_top(max);
    axes(s, title, ylabel, top, klass);
    double slot = (double)(W - ML - MR) / (rs->n ? rs->n : 1);
    for (int i = 0; i < rs->n; i++) {
        const winner *w = &rs->r[i].w;
        double x = ML + slot * i + slot * 0.15, bw = slot * 0.7;
        double h = vals[i] > 0 && isfinite(vals[i]) ? (H - MT - MB) * vals[i] / top : 0;
        sb_printf(s, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                  x, H - MB - h, bw, h, color);
        esc(s, w->dtype);
        sb_puts(s, " ");
        esc(s, w->bucket);
        sb_puts(s, ": ");
        number(s, "%.4g", vals[i]);
        sb_puts(s, "</title></rect>");
        double lx = x + bw / 2;
        sb_printf(s, "<text class=\"label\" x=\"%.1f\" y=\"%d\" transform=\"rotate(-40 %.1f %d)\" text-anchor=\"end\">", lx,
                  H - MB + 14, lx, H - MB + 14);
        esc(s, w->dtype);
        sb_puts(s, " ");
        esc(s, w->bucket);
        sb_puts(s, "</text>");
    }
    if (ref > 0) {
        double y = H - MB - (H - MT - MB) * ref / top;
        sb_printf(s, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"6 4\"/>"
                     "<text x=\"%d\" y=\"%.1f\" class=\"tick\" fill=\"#d62728\">",
                  ML, W - MR, y, y, ML + 4, y - 4);
        esc(s, reflabel);
        sb_puts(s, "</text>");
    }
    sb_puts(s, "</svg>\n");
}

/* Each bucket's best time so far over its final best, against evaluations. */
static void convergence(strbuf *s, const char *op, rows *rs)
{
    int maxn = 1;
    double maxr = 1;
    for (int i = 0; i < rs->n; i++) {
        row *x = &rs->r[i];
        if (x->nbest > maxn) maxn = x->nbest;
        double fin = x->nbest ? x->best[x->nbest - 1] : -1;
        for (int k = 0; k < x->nbest && fin > 0; k++)
            if (x->best[k] > 0 && x->best[k] / fin > maxr) maxr = x->best[k] / fin;
    }
    if (maxr > 4) maxr = 4;     /* the first few evaluations are off the chart */
    double top = nice_top(maxr);
    char title[128];
    snprintf(title, sizeof title, "%s: search convergence (best so far / final best)", op);
    axes(s, title, "x final best", top, "convergence");
    for (int i = 0; i < rs->n; i++) {
        row *x = &rs->r[i];
        double fin = x->nbest ? x->best[x->nbest - 1] : -1;
        if (fin <= 0) continue;
        sb_printf(s, "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"", palette[i % NPAL]);
        for (int k = 0; k < x->nbest; k++) {
            if (x->best[k] <= 0) continue;
            double r = x->best[k] / fin;
            if (r > top) r = top;
            sb_printf(s, "%.1f,%.1f ", ML + (double)(W - ML - MR) * (k + 1) / maxn, H - MB - (H - MT - MB) * r / top);
        }
        sb_puts(s, "\"><title>");
        esc(s, x->w.dtype);
        sb_puts(s, " ");
        esc(s, x->w.bucket);
        sb_puts(s, "</title></polyline>");
        if (i < 12) {   /* a legend below the axis */
            int lx = ML + (i % 4) * 170, ly = H - MB + 34 + (i / 4) * 16;
            sb_printf(s, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" class=\"tick\">",
                      lx, ly - 4, palette[i % NPAL], lx + 16, ly);
            esc(s, x->w.dtype);
            sb_puts(s, " ");
            esc(s, x->w.bucket);
            sb_puts(s, "</text>");
        }
    }
    sb_printf(s, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">evaluations (up to %d)</text></svg>\n", W - MR,
              H - MB + 16, maxn);
}

/* A scanned size (registry_scan.h) of one op, as report plots it: the
** series is its dtype and the sizes of the dims that do not vary. */
typedef struct scan_pt {
    char series[160];
    long long v[MAXDIMS];
    int nv;
    double x_vendor, us;
    int hole;
} scan_pt;

typedef struct scan_pts {
    scan_pt *p;
    int n, cap;
    char dims[MAXDIMS][32];
    int nd;
} scan_pts;

static int keep_scan(const reg_scan *sc, void *ctx)
{
    scan_pts *P = ctx;
    json *sh = NULL;
    char err[64];
    if (json_parse(sc->shape, &sh, err, sizeof err) || sh->type != JSON_OBJ || sh->n < 1 || sh->n > MAXDIMS) {
        json_free(sh);
        return 0;   /* not a shape scan wrote: left out of the plot */
    }
    if (P->n == P->cap) P->p = xrealloc(P->p, sizeof *P->p * (size_t)(P->cap = P->cap ? 2 * P->cap : 64));
    scan_pt *q = &P->p[P->n];
    memset(q, 0, sizeof *q);
    int ok = 1;
    for (int d = 0; d < sh->n; d++) {
        ok &= sh->items[d].type == JSON_NUM && sh->items[d].is_int;
        q->v[d] = sh->items[d].i;
        if (!P->nd) snprintf(P->dims[d], sizeof P->dims[d], "%s", sh->keys[d]);
    }
    if (!P->nd) P->nd = sh->n;
    q->nv = sh->n;
    q->us = sc->median_us;
    q->x_vendor = sc->vendor_us > 0 && sc->median_us > 0 ? sc->vendor_us / sc->median_us : 0;
    q->hole = sc->hole;
    snprintf(q->series, sizeof q->series, "%s %s", sc->dtype, timing_name(sc->stream));
    json_free(sh);
    if (ok && q->nv == P->nd) P->n++;
    return 0;
}

/* x vendor (or the time, where no vendor was raced) over the dim the scan
** varied most, a line per series; holes in red. */
static void scan_plot(strbuf *s, reg *r, const char *op)
{
    scan_pts P = { 0 };
    if (reg_scan_each(r, op, keep_scan, &P) || !P.n) {
        free(P.p);
        return;
    }
    /* The dim with the most distinct sizes is the x axis; the others name
    ** the series. */
    int xd = 0, most = 0;
    for (int d = 0; d < P.nd; d++) {
        int distinct = 0;
        for (int i = 0; i < P.n; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) seen = P.p[j].v[d] == P.p[i].v[d];
            distinct += !seen;
        }
        if (distinct > most) { most = distinct; xd = d; }
    }
    int vendor = 0;
    long long xmax = 1;
    double ymax = 1;
    for (int i = 0; i < P.n; i++) {
        scan_pt *q = &P.p[i];
        vendor |= q->x_vendor > 0;
        if (q->v[xd] > xmax) xmax = q->v[xd];
        size_t at = strlen(q->series);
        for (int d = 0; d < P.nd && at < sizeof q->series; d++)
            if (d != xd) at += (size_t)snprintf(q->series + at, sizeof q->series - at, " %s=%lld", P.dims[d], q->v[d]);
    }
    for (int i = 0; i < P.n; i++) {
        double y = vendor ? P.p[i].x_vendor : P.p[i].us;
        if (y > ymax) ymax = y;
    }
    double top = nice_top(ymax);
    char title[192];
    snprintf(title, sizeof title, "%s: the registry's answer at every size scanned, %s (aitune scan)", op,
             vendor ? "x the vendor raced beside it" : "its time");
    axes(s, title, vendor ? "x vendor" : "us", top, "scan");
    int nseries = 0;
    for (int i = 0; i < P.n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++) first = strcmp(P.p[j].series, P.p[i].series) != 0;
        if (!first) continue;
        const char *color = palette[nseries % NPAL];
        sb_printf(s, "<polyline class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" points=\"", color);
        for (int j = i; j < P.n; j++) {
            if (strcmp(P.p[j].series, P.p[i].series)) continue;
            double y = vendor ? P.p[j].x_vendor : P.p[j].us;
            sb_printf(s, "%.1f,%.1f ", ML + (double)(W - ML - MR) * (double)P.p[j].v[xd] / (double)xmax,
                      H - MB - (H - MT - MB) * (y > top ? top : y) / top);
        }
        sb_puts(s, "\"><title>");
        esc(s, P.p[i].series);
        sb_puts(s, "</title></polyline>");
        if (nseries < 8) {
            int lx = ML + (nseries % 2) * 340, ly = H - MB + 34 + (nseries / 2) * 16;
            sb_printf(s, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" class=\"tick\">",
                      lx, ly - 4, color, lx + 16, ly);
            esc(s, P.p[i].series);
            sb_puts(s, "</text>");
        }
        nseries++;
    }
    for (int i = 0; i < P.n; i++) {
        if (!P.p[i].hole) continue;
        double y = vendor ? P.p[i].x_vendor : P.p[i].us;
        sb_printf(s, "<circle class=\"hole\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#d62728\"><title>hole at %s=%lld</title>"
                     "</circle>", ML + (double)(W - ML - MR) * (double)P.p[i].v[xd] / (double)xmax,
                  H - MB - (H - MT - MB) * (y > top ? top : y) / top, P.dims[xd], P.p[i].v[xd]);
    }
    if (vendor) {
        double y = H - MB - (H - MT - MB) * 1.0 / top;
        sb_printf(s, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"6 4\"/>", ML,
                  W - MR, y, y);
    }
    sb_printf(s, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%s (1 .. %lld)</text></svg>\n", W - MR,
              H - MB + 16, P.dims[xd], xmax);
    free(P.p);
}

static void op_section(strbuf *s, reg *r, rows *all, const char *op, double ceiling)
{
    rows rs = { NULL, 0, op };
    for (int i = 0; i < all->n; i++)
        if (!strcmp(all->r[i].w.op, op)) {
            rs.r = xrealloc(rs.r, sizeof *rs.r * (size_t)(rs.n + 1));
            rs.r[rs.n++] = all->r[i];
        }
    for (int i = 0; i < rs.n; i++) {
        winner *w = &rs.r[i].w;
        reg_bucket_history(r, w->op, w->arch, w->dtype, w->bucket, add_eval, &rs.r[i]);
    }
    /* Compute-bound ops (more than 10 flops per byte moved, e.g. GEMM) are
    ** plotted in TFLOP/s, memory-bound ones in GB/s. */
    double *speed = xcalloc((size_t)rs.n, sizeof *speed), *gbps = xcalloc((size_t)rs.n, sizeof *gbps);
    double flops = 0, bytes = 0;
    for (int i = 0; i < rs.n; i++) {
        winner *w = &rs.r[i].w;
        speed[i] = w->default_us > 0 && w->median_us > 0 ? w->default_us / w->median_us : 0;
        if (!isfinite(speed[i])) speed[i] = 0;
        if (isfinite(w->tflops)) flops += w->tflops * 1e3;
        if (isfinite(w->gbps)) bytes += w->gbps;
    }
    int compute = bytes > 0 && flops / bytes > 10;
    for (int i = 0; i < rs.n; i++) gbps[i] = compute ? rs.r[i].w.tflops : rs.r[i].w.gbps;
    /* x vendor: the vendor's time at each winner's shape over the winner's. */
    double *xv = xcalloc((size_t)rs.n, sizeof *xv);
    int nvendor = 0;
    for (int i = 0; i < rs.n; i++) {
        winner *w = &rs.r[i].w;
        double us = 0;
        if (reg_vendor_for_winner(r, w, &us) == 1 && w->median_us > 0) {
            xv[i] = us / w->median_us;
            nvendor++;
        }
    }
    sb_puts(s, "<section class=\"op\" id=\"op-");
    esc(s, op);
    sb_puts(s, "\"><h2>");
    esc(s, op);
    sb_printf(s, "</h2>\n<p>%d tuned bucket%s.</p>\n", rs.n, rs.n == 1 ? "" : "s");
    char title[160], ref[64] = "";
    snprintf(title, sizeof title, "%s: speedup of the winner over the template default", op);
    bars(s, title, "x default", &rs, speed, 1, "default = 1x", "#1f77b4", "speedup");
    if (compute) {
        snprintf(title, sizeof title, "%s: TFLOP/s reached", op);
        bars(s, title, "TFLOP/s", &rs, gbps, 0, "", "#2ca02c", "throughput");
    } else {
        snprintf(title, sizeof title, "%s: GB/s reached%s", op, ceiling > 0 ? " against the copy ceiling" : "");
        if (ceiling > 0) snprintf(ref, sizeof ref, "ceiling %.0f GB/s", ceiling);
        bars(s, title, "GB/s", &rs, gbps, ceiling, ref, "#2ca02c", "bandwidth");
    }
    if (nvendor) {
        snprintf(title, sizeof title, "%s: the winner against the vendor (cuBLASLt, same shape, same timing)", op);
        bars(s, title, "x vendor", &rs, xv, 1, "vendor = 1x", "#9467bd", "vendor");
    }
    convergence(s, op, &rs);
    scan_plot(s, r, op);
    sb_puts(s, "<table><tr><th>arch</th><th>dtype</th><th>bucket</th><th>median us</th><th>GB/s</th>");
    if (ceiling > 0) sb_puts(s, "<th>% ceiling</th>");
    sb_puts(s, "<th>TFLOP/s</th><th>vs default</th><th>x vendor</th><th>evaluations</th><th>template and config</th></tr>\n");
    for (int i = 0; i < rs.n; i++) {
        winner *w = &rs.r[i].w;
        sb_puts(s, "<tr><td>");
        esc(s, w->arch);
        sb_puts(s, "</td><td>");
        esc(s, w->dtype);
        sb_puts(s, "</td><td>");
        esc(s, w->bucket);
        sb_puts(s, "</td><td>");
        number(s, "%.2f", w->median_us);
        sb_puts(s, "</td><td>");
        number(s, "%.1f", w->gbps);
        sb_puts(s, "</td>");
        if (ceiling > 0) {
            sb_puts(s, "<td>");
            number(s, "%.1f%%", 100 * w->gbps / ceiling);
            sb_puts(s, "</td>");
        }
        sb_puts(s, "<td>");
        number(s, "%.3f", w->tflops);
        sb_printf(s, "</td><td>%s%.2fx</td>", speed[i] > 0 ? "" : "? ", speed[i]);
        if (xv[i] > 0 && isfinite(xv[i])) sb_printf(s, "<td>%.2fx</td>", xv[i]);
        else sb_puts(s, "<td>-</td>");
        sb_printf(s, "<td>%d</td><td><code>", rs.r[i].nbest);
        esc(s, w->tmpl);
        sb_puts(s, " ");
        esc(s, w->config);
        sb_printf(s, "</code>%s</td></tr>\n", w->exhaustive ? "" : " (not exhaustive)");
    }
    sb_puts(s, "</table></section>\n");
    /* The history arrays belong to the rows of all (copied by value). */
    for (int i = 0, k = 0; i < all->n; i++)
        if (!strcmp(all->r[i].w.op, op)) all->r[i] = rs.r[k++];
    free(speed);
    free(gbps);
    free(xv);
    free(rs.r);
}

int cmd_report(int argc, char **argv)
{
    opt opts[] = { { "-o", 1, 0, 0 }, { "--op", 1, 0, 0 }, { "--ceiling", 1, 0, 0 }, { "--db", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("report", report_usage, report_summary, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    if (!opts[0].value) return cli_usage_error("report", report_usage, "-o FILE is required (- for standard output)");
    double ceiling = 0;
    if (opts[2].value) {
        char *end;
        ceiling = strtod(opts[2].value, &end);
        if (*end || !(ceiling > 0))
            return cli_usage_error("report", report_usage, "--ceiling '%s' is not a positive GB/s", opts[2].value);
    }
    const char *db = cli_db_path(opts[3].value);
    if (opts[1].value && (rc = cli_check_op(cli_root(), db, opts[1].value, NULL))) return rc;
    reg *r;
    if (!file_exists(db) || reg_open(db, 1, &r)) {
        if (!file_exists(db)) error("no registry at '%s' (run `aitune sweep SPEC`, or give --db)", db);
        else error("%s", reg_errmsg(r)), reg_close(r);
        return EXIT_INPUT;
    }
    rows all = { NULL, 0, opts[1].value };
    if (reg_winners(r, keep_winner, &all)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    strbuf s = STRBUF_INIT;
    sb_puts(&s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>aitune report</title>\n<style>\n"
                "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
                "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\n"
                "svg{display:block;margin:12px 0;border:1px solid #eee}\n"
                "svg .title{font-size:14px;font-weight:bold}svg .tick,svg .label{font-size:11px}svg .axis{font-size:12px}\n"
                "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}\n"
                "td:last-child,th:last-child{text-align:left}code{font-size:11px}\n"
                "</style></head><body>\n<h1>aitune report</h1>\n<p>Registry <code>");
    esc(&s, db);
    sb_printf(&s, "</code>: %d winner%s.", all.n, all.n == 1 ? "" : "s");
    if (!all.n) sb_puts(&s, " Nothing is tuned yet: run <code>aitune sweep SPEC</code>.");
    sb_puts(&s, "</p>\n");
    for (int i = 0; i < all.n; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(all.r[k].w.op, all.r[i].w.op);
        if (!seen) op_section(&s, r, &all, all.r[i].w.op, ceiling);
    }
    sb_puts(&s, "</body></html>\n");
    reg_close(r);
    for (int i = 0; i < all.n; i++) {
        winner_free(&all.r[i].w);
        free(all.r[i].best);
    }
    free(all.r);
    /* Written whole or not at all. */
    const char *path = opts[0].value;
    outfile o;
    int bad = out_open(&o, path);
    if (!bad) bad = fwrite(sb_str(&s), 1, s.len, o.f) != s.len;
    if (out_close(&o, !bad) || bad) {
        error("cannot write '%s': %s", cli_shown(path), o.why ? o.why : strerror(errno));
        bad = 1;
    }
    sb_free(&s);
    return bad ? EXIT_FAIL : EXIT_OK;
}
