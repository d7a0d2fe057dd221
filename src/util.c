/* util.c: see util.h. */
#define _GNU_SOURCE
#include "util.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One line, whatever the message carries (names from specs and registries
** may hold newlines or terminal escapes). */
static void report(const char *prefix, const char *fmt, va_list ap)
{
    strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
    sb_vprintf(&msg, fmt, ap);
    sb_printable(&line, sb_str(&msg));
    fprintf(stderr, "aitune: %s%s\n", prefix, sb_str(&line));
    sb_free(&msg);
    sb_free(&line);
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

void sb_printable(strbuf *sb, const char *s)
{
    if (!s) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n') sb_puts(sb, "\\n");
        else if (*p == '\t') sb_puts(sb, "\\t");
        else if (*p < 0x20 || *p == 0x7f) sb_printf(sb, "\\x%02x", *p);
        else sb_add(sb, p, 1);
    }
}

void printable_inplace(char *msg, size_t cap)
{
    if (!cap) return;
    int clean = 1;
    for (const unsigned char *p = (const unsigned char *)msg; *p && clean; p++)
        clean = *p >= 0x20 && *p != 0x7f;
    if (clean) return;
    strbuf sb = STRBUF_INIT;
    sb_printable(&sb, msg);
    snprintf(msg, cap, "%s", sb_str(&sb));
    sb_free(&sb);
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

int parse_size(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    if (!s || !len) return -1;
    unsigned long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (0x7fffffffffffffffULL - d) / 10) return -1;   /* overflow */
        v = v * 10 + d;
    }
    if ((long long)v < lo || (long long)v > hi) return -2;
    *out = (long long)v;
    return 0;
}

char *read_regular_file(const char *path, size_t max, size_t *len)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then
    ** refuses it. */
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st)) { int e = errno; close(fd); errno = e; return NULL; }
    if (!S_ISREG(st.st_mode)) { close(fd); errno = EINVAL; return NULL; }
    if ((unsigned long long)st.st_size > max) { close(fd); errno = EFBIG; return NULL; }
    strbuf sb = STRBUF_INIT;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { int e = errno; close(fd); sb_free(&sb); errno = e; return NULL; }
        if (n == 0) break;
        /* The file may grow after fstat. */
        if (sb.len + (size_t)n > max) { close(fd); sb_free(&sb); errno = EFBIG; return NULL; }
        sb_add(&sb, chunk, (size_t)n);
    }
    close(fd);
    if (!sb.buf) sb_add(&sb, "", 0);
    if (len) *len = sb.len;
    return sb.buf;
}

const char *read_errstr(int err, size_t max)
{
    static __thread char msg[64];
    if (err == EINVAL) return "not a regular file";
    if (err == EFBIG) {
        snprintf(msg, sizeof msg, "larger than the %zu MB an input may be", max >> 20);
        return msg;
    }
    return strerror(err);
}

int check_regular_path(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return errno == ENOENT ? 0 : -1;
    if (!S_ISREG(st.st_mode)) { errno = EINVAL; return -1; }
    return 0;
}

/* A name beside path that nobody else chose, created exclusively and never
** through a link: the temporary an output is written to. */
static int open_temp_beside(const char *path, char **tmp)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    int fd = -1;
    *tmp = NULL;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        free(*tmp);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        pid_t pid = getpid();
        uint64_t r = hash_bytes(hash_bytes(hash_bytes(HASH_INIT, &ts, sizeof ts), &pid, sizeof pid), &attempt,
                                sizeof attempt);
        r = hash_str(r, path);
        *tmp = xstrfmt("%.*s.%s.%016llx.tmp", dirlen, path, slash ? slash + 1 : path, (unsigned long long)r);
        fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return fd;
}

/* Whether what is at path may be replaced: absent or a regular file (not
** followed: a link there is refused). *mode: the mode the new file gets. */
static int replaceable(const char *path, mode_t *mode, const char **why)
{
    struct stat st;
    if (lstat(path, &st)) {
        if (errno != ENOENT) { *why = strerror(errno); return -1; }
        mode_t um = umask(0);
        umask(um);
        *mode = 0666 & ~um;
        return 0;
    }
    if (S_ISLNK(st.st_mode)) { *why = "a symbolic link (not followed, not replaced)"; errno = EINVAL; return -1; }
    if (!S_ISREG(st.st_mode)) { *why = "not a regular file"; errno = EINVAL; return -1; }
    *mode = st.st_mode & 0777;
    return 0;
}

int out_open(outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) { o->f = stdout; return 0; }
    o->path = xstrdup(path);
    mode_t mode;
    if (replaceable(path, &mode, &o->why)) return -1;
    o->mode = mode;
    int fd = open_temp_beside(path, &o->tmp);
    if (fd < 0) { o->why = strerror(errno); return -1; }
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        errno = e;
        o->why = strerror(e);
        return -1;
    }
    return 0;
}

int out_close(outfile *o, int keep)
{
    int rc = 0, e = 0;
    if (o->f == stdout) {
        if (fflush(stdout) || ferror(stdout)) { rc = -1; e = errno; o->why = strerror(e); }
    } else if (o->f) {
        int fd = fileno(o->f);
        if (fflush(o->f) || ferror(o->f)) { rc = -1; e = errno ? errno : EIO; }
        if (!rc && keep && fchmod(fd, (mode_t)o->mode)) { rc = -1; e = errno; }
        if (!rc && keep && fsync(fd)) { rc = -1; e = errno; }
        if (fclose(o->f) && !rc) { rc = -1; e = errno; }
        if (rc) o->why = strerror(e);
        /* The path may have been swapped for something else meanwhile: a
        ** special file or a link there now is not replaced. */
        mode_t mode;
        const char *why;
        if (!rc && keep && replaceable(o->path, &mode, &why)) { rc = -1; e = errno; o->why = why; }
        if (!rc && keep && rename(o->tmp, o->path)) { rc = -1; e = errno; o->why = strerror(e); }
        if (rc || !keep) unlink(o->tmp);
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    o->f = NULL;
    errno = e;
    return rc;
}

int write_regular_file(const char *path, const void *data, size_t len)
{
    outfile o;
    if (out_open(&o, path)) {
        int e = errno;
        out_close(&o, 0);
        errno = e;
        return -1;
    }
    int bad = len && fwrite(data, 1, len, o.f) != len;
    int e = errno;
    if (out_close(&o, !bad) || bad) {
        if (bad) errno = e ? e : EIO;
        return -1;
    }
    return 0;
}
