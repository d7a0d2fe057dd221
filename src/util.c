/* util.c: see util.h. */
#define _GNU_SOURCE
#include "util.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void report(const char *prefix, const char *fmt, va_list ap)
{
    fprintf(stderr, "aitune: %s", prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error: ", fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("warning: ", fmt, ap);
    va_end(ap);
}

void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error: ", fmt, ap);
    va_end(ap);
    exit(code);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die(EXIT_FAIL, "out of memory (%zu bytes)", n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die(EXIT_FAIL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) die(EXIT_FAIL, "out of memory (%zu bytes)", n);
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

char *xstrfmt(const char *fmt, ...)
{
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    if (!sb.buf) return xstrdup("");
    return sb.buf;
}

static void sb_grow(strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) cap *= 2;
    sb->buf = xrealloc(sb->buf, cap);
    sb->cap = cap;
}

void sb_add(strbuf *sb, const void *data, size_t n)
{
    sb_grow(sb, n);
    memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = 0;
}

void sb_puts(strbuf *sb, const char *s) { sb_add(sb, s, strlen(s)); }

void sb_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) return;
    sb_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void sb_json_str(strbuf *sb, const char *s)
{
    sb_puts(sb, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') sb_printf(sb, "\\%c", c);
        else if (c == '\n') sb_puts(sb, "\\n");
        else if (c == '\t') sb_puts(sb, "\\t");
        else if (c < 0x20) sb_printf(sb, "\\u%04x", c);
        else sb_add(sb, s, 1);
    }
    sb_puts(sb, "\"");
}

void sb_reset(strbuf *sb)
{
    sb->len = 0;
    if (sb->buf) sb->buf[0] = 0;
}

void sb_free(strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

const char *sb_str(const strbuf *sb) { return sb->buf ? sb->buf : ""; }

uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t hash_str(uint64_t h, const char *s)
{
    /* The terminator goes in too, so ("ab","c") and ("a","bc") differ. */
    return hash_bytes(h, s, strlen(s) + 1);
}

void hash_hex(uint64_t h, char out[17]) { snprintf(out, 17, "%016llx", (unsigned long long)h); }

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf sb = STRBUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_add(&sb, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sb_free(&sb);
        errno = EIO;
        return NULL;
    }
    if (!sb.buf) sb_add(&sb, "", 0);
    if (len) *len = sb.len;
    return sb.buf;
}

int mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST) { free(p); return -1; }
        *s = '/';
    }
    int rc = mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void iso_time(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double parse_duration(const char *s)
{
    double total = 0;
    int any = 0;
    while (*s) {
        char *end;
        /* Digits first: strtod alone also takes "nan", "inf", "-5", " 5", "0x10". */
        if (!isdigit((unsigned char)*s) && *s != '.') return -1;
        double v = strtod(s, &end);
        if (end == s || v < 0) return -1;
        double unit = 1;
        switch (*end) {
        case 's': unit = 1; end++; break;
        case 'm': unit = 60; end++; break;
        case 'h': unit = 3600; end++; break;
        case 0: break;
        default: return -1;
        }
        total += v * unit;
        any = 1;
        s = end;
    }
    return any ? total : -1;
}

void fmt_size(char *out, size_t cap, long long n)
{
    if (n > 0 && (n & (n - 1)) == 0) {
        int k = 0;
        while ((1LL << k) < n) k++;
        snprintf(out, cap, "2^%d", k);
    } else {
        snprintf(out, cap, "%lld", n);
    }
}

void arch_base(const char *arch, char out[16])
{
    snprintf(out, 16, "%.15s", arch);
    size_t n = strlen(out);
    if (n > 4 && (out[n - 1] == 'a' || out[n - 1] == 'f') && out[n - 2] >= '0' && out[n - 2] <= '9') out[n - 1] = 0;
}
