/* expr.c: a recursive-descent evaluator for the grammar in expr.h. */
#include "expr.h"
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef struct parser {
    const char *s, *p;
    int n;
    const char *const *names;
    const long long *values;
    char *err;
    int errcap;
    int failed;
    int depth;
    int checking;           /* expr_check: names are 1, no value errors */
} parser;

/* Expressions come from templates and, through emit and the runtime, from
** registries: nesting is capped (no stack overflow) and every step is
** checked for overflow (no wrapped sizes, no undefined behaviour). */
#define EXPR_MAXDEPTH 64

static long long fail(parser *ps, const char *what)
{
    if (!ps->failed) {
        /* The expression may come from a registry: quote it on one line,
        ** control characters shown as '?', at most 120 bytes. */
        char q[128];
        size_t i = 0;
        for (; ps->s[i] && i < 120; i++) q[i] = (unsigned char)ps->s[i] < 0x20 || ps->s[i] == 0x7f ? '?' : ps->s[i];
        q[i] = 0;
        snprintf(ps->err, (size_t)ps->errcap, "%s at column %d of '%s%s'", what, (int)(ps->p - ps->s) + 1, q,
                 ps->s[i] ? "..." : "");
    }
    ps->failed = 1;
    return 0;
}

static void skip(parser *ps) { while (isspace((unsigned char)*ps->p)) ps->p++; }

static int eat(parser *ps, char c)
{
    skip(ps);
    if (*ps->p != c) return 0;
    ps->p++;
    return 1;
}

static long long sum(parser *ps);

static long long call(parser *ps, const char *fn)
{
    if (!eat(ps, '(')) return fail(ps, "expected '('");
    long long a = sum(ps);
    if (!eat(ps, ',')) return fail(ps, "expected ','");
    long long b = sum(ps);
    if (!eat(ps, ')')) return fail(ps, "expected ')'");
    if (ps->failed) return 0;
    if (!strcmp(fn, "min")) return a < b ? a : b;
    if (!strcmp(fn, "max")) return a > b ? a : b;
    if (ps->checking) return 1;
    if (b <= 0) return fail(ps, "cdiv by a non-positive number");
    /* Ceiling division without a + b - 1, which can overflow. */
    return a / b + (a % b > 0);
}

static long long atom(parser *ps)
{
    skip(ps);
    if (ps->failed) return 0;
    if (ps->depth >= EXPR_MAXDEPTH) return fail(ps, "nested too deeply");
    if (eat(ps, '(')) {
        ps->depth++;
        long long v = sum(ps);
        ps->depth--;
        if (!eat(ps, ')')) return fail(ps, "expected ')'");
        return v;
    }
    if (eat(ps, '-')) {
        ps->depth++;
        long long v = atom(ps);
        ps->depth--;
        if (v == LLONG_MIN) return fail(ps, "overflow");
        return -v;
    }
    if (isdigit((unsigned char)*ps->p)) {
        long long v = 0;
        while (isdigit((unsigned char)*ps->p)) {
            int d = *ps->p - '0';
            if (v > (LLONG_MAX - d) / 10) return fail(ps, "number too large");
            v = v * 10 + d;
            ps->p++;
        }
        return v;
    }
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        const char *start = ps->p;
        char name[64];
        int k = 0;
        while ((isalnum((unsigned char)*ps->p) || *ps->p == '_') && k < 63) name[k++] = *ps->p++;
        name[k] = 0;
        if (!strcmp(name, "cdiv") || !strcmp(name, "min") || !strcmp(name, "max")) {
            ps->depth++;
            long long v = call(ps, name);
            ps->depth--;
            return v;
        }
        for (int i = 0; i < ps->n; i++)
            if (!strcmp(ps->names[i], name)) return ps->checking ? 1 : ps->values[i];
        char msg[96];
        snprintf(msg, sizeof msg, "unknown name '%s'", name);
        ps->p = start;      /* the column where the name starts */
        return fail(ps, msg);
    }
    return fail(ps, *ps->p ? "unexpected character" : "unexpected end");
}

static long long product(parser *ps)
{
    long long v = atom(ps);
    while (!ps->failed && eat(ps, '*')) {
        long long w = atom(ps);
        if (__builtin_mul_overflow(v, w, &v)) return fail(ps, "overflow");
    }
    return v;
}

static long long sum(parser *ps)
{
    long long v = product(ps);
    while (!ps->failed) {
        if (eat(ps, '+')) {
            if (__builtin_add_overflow(v, product(ps), &v)) return fail(ps, "overflow");
        } else if (eat(ps, '-')) {
            if (__builtin_sub_overflow(v, product(ps), &v)) return fail(ps, "overflow");
        } else {
            return v;
        }
    }
    return 0;
}

int expr_eval(const char *s, int n, const char *const *names, const long long *values,
              long long *out, char *err, int errcap)
{
    parser ps = { s, s, n, names, values, err, errcap, 0, 0, 0 };
    long long v = sum(&ps);
    skip(&ps);
    if (*ps.p && !ps.failed) fail(&ps, "unexpected trailing text");
    if (ps.failed) return -1;
    *out = v;
    return 0;
}

int expr_check(const char *s, int n, const char *const *names, char *err, int errcap)
{
    parser ps = { s, s, n, names, NULL, err, errcap, 0, 0, 1 };
    sum(&ps);
    skip(&ps);
    if (*ps.p && !ps.failed) fail(&ps, "unexpected trailing text");
    return ps.failed ? -1 : 0;
}
