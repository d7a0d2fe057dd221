/* json.c: see json.h. A recursive-descent parser into a small tree. */
#include "json.h"
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
