/* json.c: see json.h. A recursive-descent parser into a small tree. */
#include "json.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *s, *p;
    char *err;
    int errcap;
    int failed;
} jp;

static int jfail(jp *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jfail(jp *P, const char *fmt, ...)
{
    if (P->failed) return -1;
    P->failed = 1;
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(P->err, (size_t)P->errcap, "JSON: %s at offset %d", what, (int)(P->p - P->s));
    return -1;
}

static void ws(jp *P)
{
    while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r') P->p++;
}

static void free_inner(json *v)
{
    if (!v) return;
    free(v->str);
    for (int i = 0; i < v->n; i++) {
        if (v->keys) free(v->keys[i]);
        if (v->items) free_inner(&v->items[i]);
    }
    free(v->keys);
    free(v->items);
    memset(v, 0, sizeof *v);
}

void json_free(json *v)
{
    if (!v) return;
    free_inner(v);
    free(v);
}

static int hex4(jp *P, unsigned *u)
{
    *u = 0;
    for (int i = 0; i < 4; i++) {
        char c = *P->p++;
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return jfail(P, "bad \\u escape");
        *u = *u * 16 + d;
    }
    return 0;
}

/* A string at P->p (on the opening quote) into a new buffer. */
static int string(jp *P, char **out)
{
    P->p++;
    size_t cap = 16, len = 0;
    char *b = malloc(cap);
    if (!b) return jfail(P, "out of memory");
    for (;;) {
        unsigned char c = (unsigned char)*P->p;
        unsigned u = 0;
        char enc[4];
        int n = 1;
        if (c == '"') { P->p++; break; }
        if (c == 0) { free(b); return jfail(P, "unterminated string"); }
        if (c < 0x20) { free(b); return jfail(P, "control character in a string"); }
        if (c != '\\') {
            enc[0] = (char)c;
            P->p++;
        } else {
            P->p++;
            char e = *P->p++;
            switch (e) {
            case '"': enc[0] = '"'; break;
            case '\\': enc[0] = '\\'; break;
            case '/': enc[0] = '/'; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'n': enc[0] = '\n'; break;
            case 'r': enc[0] = '\r'; break;
            case 't': enc[0] = '\t'; break;
            case 'u':
                if (hex4(P, &u)) { free(b); return -1; }
                if (u >= 0xD800 && u < 0xDC00) {
                    unsigned lo;
                    if (P->p[0] != '\\' || P->p[1] != 'u') { free(b); return jfail(P, "lone surrogate"); }
                    P->p += 2;
                    if (hex4(P, &lo)) { free(b); return -1; }
                    if (lo < 0xDC00 || lo > 0xDFFF) { free(b); return jfail(P, "lone surrogate"); }
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                } else if (u >= 0xDC00 && u <= 0xDFFF) {
                    free(b);
                    return jfail(P, "lone surrogate");
                }
                if (u == 0) { free(b); return jfail(P, "\\u0000 in a string"); }
                if (u < 0x80) enc[0] = (char)u;
                else if (u < 0x800) { enc[0] = (char)(0xC0 | (u >> 6)); enc[1] = (char)(0x80 | (u & 63)); n = 2; }
                else if (u < 0x10000) {
                    enc[0] = (char)(0xE0 | (u >> 12)); enc[1] = (char)(0x80 | ((u >> 6) & 63));
                    enc[2] = (char)(0x80 | (u & 63)); n = 3;
                } else {
                    enc[0] = (char)(0xF0 | (u >> 18)); enc[1] = (char)(0x80 | ((u >> 12) & 63));
                    enc[2] = (char)(0x80 | ((u >> 6) & 63)); enc[3] = (char)(0x80 | (u & 63)); n = 4;
                }
                break;
            default:
                free(b);
                return jfail(P, "bad escape");
            }
        }
        if (len + (size_t)n + 1 > cap) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (!nb) { free(b); return jfail(P, "out of memory"); }
            b = nb;
        }
        memcpy(b + len, enc, (size_t)n);
        len += (size_t)n;
    }
    b[len] = 0;
    *out = b;
    return 0;
}

static int number(jp *P, json *v)
{
    const char *start = P->p;
    int integral = 1;
    if (*P->p == '-') P->p++;
    if (*P->p == '0') {
        P->p++;
        if (*P->p >= '0' && *P->p <= '9') return jfail(P, "leading zero");
    } else if (*P->p >= '1' && *P->p <= '9') {
        while (*P->p >= '0' && *P->p <= '9') P->p++;
    } else {
        return jfail(P, "bad number");
    }
    if (*P->p == '.') {
        integral = 0;
        P->p++;
        if (!(*P->p >= '0' && *P->p <= '9')) return jfail(P, "bad number");
        while (*P->p >= '0' && *P->p <= '9') P->p++;
    }
    if (*P->p == 'e' || *P->p == 'E') {
        integral = 0;
        P->p++;
        if (*P->p == '+' || *P->p == '-') P->p++;
        if (!(*P->p >= '0' && *P->p <= '9')) return jfail(P, "bad number");
        while (*P->p >= '0' && *P->p <= '9') P->p++;
    }
    v->type = JSON_NUM;
    v->num = strtod(start, NULL);
    if (!isfinite(v->num)) return jfail(P, "number out of range");
    if (integral) {
        errno = 0;
        v->i = strtoll(start, NULL, 10);
        v->is_int = errno == 0;
    }
    return 0;
}

static int value(jp *P, json *v, int depth);

static int push(jp *P, json *v, int *cap)
{
    if (v->n < *cap) return 0;
    int nc = *cap ? *cap * 2 : 4;
    json *ni = realloc(v->items, sizeof *ni * (size_t)nc);
    if (!ni) return jfail(P, "out of memory");
    v->items = ni;
    if (v->type == JSON_OBJ) {
        char **nk = realloc(v->keys, sizeof *nk * (size_t)nc);
        if (!nk) return jfail(P, "out of memory");
        v->keys = nk;
    }
    *cap = nc;
    return 0;
}

static int container(jp *P, json *v, int depth)
{
    int obj = *P->p == '{';
    char close = obj ? '}' : ']';
    v->type = obj ? JSON_OBJ : JSON_ARR;
    if (depth >= JSON_MAXDEPTH) return jfail(P, "nested deeper than %d", JSON_MAXDEPTH);
    P->p++;
    ws(P);
    if (*P->p == close) { P->p++; return 0; }
    int cap = 0;
    for (;;) {
        if (push(P, v, &cap)) return -1;
        json *it = &v->items[v->n];
        memset(it, 0, sizeof *it);
        if (obj) {
            ws(P);
            if (*P->p != '"') return jfail(P, "expected a key");
            char *k;
            if (string(P, &k)) return -1;
            for (int i = 0; i < v->n; i++)
                if (!strcmp(v->keys[i], k)) {
                    free(k);
                    return jfail(P, "duplicate key");
                }
            v->keys[v->n] = k;
            ws(P);
            if (*P->p != ':') { v->n++; return jfail(P, "expected ':'"); }
            P->p++;
        }
        v->n++;   /* counted before parsing, so a failure frees what it built */
        if (value(P, it, depth + 1)) return -1;
        ws(P);
        if (*P->p == ',') { P->p++; continue; }
        if (*P->p == close) { P->p++; return 0; }
        return jfail(P, "expected ',' or '%c'", close);
    }
}

static int value(jp *P, json *v, int depth)
{
    ws(P);
    char c = *P->p;
    if (c == '{' || c == '[') return container(P, v, depth);
    if (c == '"') { v->type = JSON_STR; return string(P, &v->str); }
    if (c == '-' || (c >= '0' && c <= '9')) return number(P, v);
    if (!strncmp(P->p, "true", 4)) { v->type = JSON_BOOL; v->b = 1; P->p += 4; return 0; }
    if (!strncmp(P->p, "false", 5)) { v->type = JSON_BOOL; P->p += 5; return 0; }
    if (!strncmp(P->p, "null", 4)) { v->type = JSON_NULL; P->p += 4; return 0; }
    return jfail(P, c ? "unexpected character" : "unexpected end");
}

int json_parse(const char *text, json **out, char *err, int errcap)
{
    *out = NULL;
    if (!text) { snprintf(err, (size_t)errcap, "JSON: no text"); return -1; }
    if (strlen(text) > JSON_MAXLEN) { snprintf(err, (size_t)errcap, "JSON: longer than %d bytes", JSON_MAXLEN); return -1; }
    jp P = { text, text, err, errcap, 0 };
    json *v = calloc(1, sizeof *v);
    if (!v) { snprintf(err, (size_t)errcap, "JSON: out of memory"); return -1; }
    if (value(&P, v, 0) == 0) {
        ws(&P);
        if (*P.p) jfail(&P, "trailing text");
    }
    if (P.failed) { json_free(v); return -1; }
    *out = v;
    return 0;
}

const json *json_get(const json *o, const char *key)
{
    if (!o || o->type != JSON_OBJ) return NULL;
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) return &o->items[i];
    return NULL;
}

/* ---- checking ---- */

/* Length of the well-formed UTF-8 sequence at p (1 to 4), or 0: no
** overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; min = 0x80; c &= 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; min = 0x800; c &= 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    return n;
}

/* A recursive-descent check of RFC 8259 JSON, depth capped. */
typedef struct jscan { const unsigned char *p; int depth; } jscan;

static void js_ws(jscan *j) { while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r') j->p++; }

static int js_value(jscan *j);

static int js_string(jscan *j)
{
    if (*j->p != '"') return 0;
    j->p++;
    for (;;) {
        unsigned char c = *j->p;
        if (c == '"') { j->p++; return 1; }
        if (c < 0x20) return 0;          /* also the terminator */
        if (c == '\\') {
            c = *++j->p;
            if (c == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit(j->p[i])) return 0;
                j->p += 5;
            } else if (c && strchr("\"\\/bfnrt", c)) {
                j->p++;
            } else {
                return 0;
            }
            continue;
        }
        int n = utf8_len(j->p);
        if (!n) return 0;
        j->p += n;
    }
}

static int js_number(jscan *j)
{
    if (*j->p == '-') j->p++;
    if (*j->p == '0') j->p++;
    else if (*j->p >= '1' && *j->p <= '9') while (isdigit(*j->p)) j->p++;
    else return 0;
    if (*j->p == '.') {
        j->p++;
        if (!isdigit(*j->p)) return 0;
        while (isdigit(*j->p)) j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-') j->p++;
        if (!isdigit(*j->p)) return 0;
        while (isdigit(*j->p)) j->p++;
    }
    return 1;
}

static int js_word(jscan *j, const char *w)
{
    size_t n = strlen(w);
    if (strncmp((const char *)j->p, w, n)) return 0;
    j->p += n;
    return 1;
}

static int js_value(jscan *j)
{
    js_ws(j);
    unsigned char c = *j->p;
    if (c == '{' || c == '[') {
        if (++j->depth > 64) return 0;
        char close = c == '{' ? '}' : ']';
        j->p++;
        js_ws(j);
        if (*j->p == close) { j->p++; j->depth--; return 1; }
        for (;;) {
            if (c == '{') {
                js_ws(j);
                if (!js_string(j)) return 0;
                js_ws(j);
                if (*j->p++ != ':') return 0;
            }
            if (!js_value(j)) return 0;
            js_ws(j);
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p != close) return 0;
            j->p++;
            j->depth--;
            return 1;
        }
    }
    if (c == '"') return js_string(j);
    if (c == '-' || isdigit(c)) return js_number(j);
    return js_word(j, "true") || js_word(j, "false") || js_word(j, "null");
}

int json_valid(const char *s)
{
    if (!s) return 0;
    jscan j = { (const unsigned char *)s, 0 };
    if (!js_value(&j)) return 0;
    js_ws(&j);
    return *j.p == 0;
}

/* ---- writing ---- */

static void jw_put(jw *w, const char *s, size_t n)
{
    if (w->oom) return;
    if (w->len + n + 1 > w->cap) {
        size_t nc = w->cap ? w->cap : 256;
        while (nc < w->len + n + 1) nc *= 2;
        char *nb = realloc(w->buf, nc);
        if (!nb) { w->oom = 1; return; }
        w->buf = nb;
        w->cap = nc;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

static void jw_puts(jw *w, const char *s) { jw_put(w, s, strlen(s)); }

static void jw_putf(jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jw_putf(jw *w, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof b) { w->oom = 1; return; }
    jw_put(w, b, (size_t)n);
}

/* White space asked for (jw_space), written where it was meant to go. */
static void jw_flush(jw *w)
{
    jw_puts(w, w->pending);
    w->pending[0] = 0;
}

/* Before a value: the comma after the one before it, nothing after a key
** (the key wrote its own); then the white space asked for. */
static void jw_next(jw *w)
{
    if (w->after_key) w->after_key = 0;
    else if (w->depth && w->count[w->depth]++) jw_puts(w, ",");
    jw_flush(w);
}

static void jw_open(jw *w, char c)
{
    jw_next(w);
    if (w->depth == JSON_MAXDEPTH) { w->oom = 1; return; }
    w->open[++w->depth] = c;
    w->count[w->depth] = 0;
    jw_put(w, &c, 1);
}

void jw_obj(jw *w) { jw_open(w, '{'); }
void jw_arr(jw *w) { jw_open(w, '['); }

void jw_end(jw *w)
{
    if (!w->depth) { w->oom = 1; return; }
    jw_flush(w);
    jw_puts(w, w->open[w->depth--] == '{' ? "}" : "]");
}

/* s as a string literal: UTF-8 kept, quotes, backslashes and control bytes
** escaped, a byte that is not well-formed UTF-8 written as \u00XX (Latin-1). */
static void jw_quote(jw *w, const char *s)
{
    jw_puts(w, "\"");
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        int n = utf8_len(p);
        if (c == '"' || c == '\\') jw_putf(w, "\\%c", c);
        else if (c == '\n') jw_puts(w, "\\n");
        else if (c == '\t') jw_puts(w, "\\t");
        else if (c < 0x20 || c == 0x7f) jw_putf(w, "\\u%04x", c);
        else if (n) { jw_put(w, (const char *)p, (size_t)n); p += n; continue; }
        else jw_putf(w, "\\u%04x", c);
        p++;
    }
    jw_puts(w, "\"");
}

void jw_key(jw *w, const char *key)
{
    jw_next(w);
    jw_quote(w, key ? key : "");
    jw_puts(w, ":");
    w->after_key = 1;
}

void jw_str(jw *w, const char *s)
{
    jw_next(w);
    if (s) jw_quote(w, s);
    else jw_puts(w, "null");
}

void jw_num(jw *w, double v, int decimals)
{
    jw_next(w);
    if (v != v || v > 1.7e308 || v < -1.7e308) jw_puts(w, "null");
    else jw_putf(w, "%.*f", decimals, v);
}

void jw_real(jw *w, double v)
{
    jw_next(w);
    if (v != v || v > 1.7e308 || v < -1.7e308) jw_puts(w, "null");
    else jw_putf(w, "%.17g", v);
}

void jw_int(jw *w, long long v)
{
    jw_next(w);
    jw_putf(w, "%lld", v);
}

void jw_bool(jw *w, int b)
{
    jw_next(w);
    jw_puts(w, b ? "true" : "false");
}

void jw_null(jw *w)
{
    jw_next(w);
    jw_puts(w, "null");
}

void jw_raw(jw *w, const char *json)
{
    if (json && json_valid(json)) {
        jw_next(w);
        jw_puts(w, json);
    } else {
        jw_str(w, json);
    }
}

void jw_space(jw *w, const char *ws)
{
    size_t n = strlen(w->pending);
    snprintf(w->pending + n, sizeof w->pending - n, "%s", ws);
}

const char *jw_text(jw *w)
{
    jw_flush(w);
    return w->buf ? w->buf : "";
}

void jw_free(jw *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}
