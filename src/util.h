/* util.h: what every module of the aitune tool shares: error reporting in
** git's style, checked allocation, a growable string, hashing, files, time.
** Not part of libaitune. */
#ifndef UTIL_H
#define UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

/* Exit codes (ARCHITECTURE.md): 0 ok, 1 failure, 2 usage, 3 bad input. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INPUT = 3 };

/* Print "aitune: error: <msg>" on stderr; returns -1 so callers can
** `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the message and exit with code. */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable, always NUL-terminated byte string. */
typedef struct strbuf { char *buf; size_t len, cap; } strbuf;
#define STRBUF_INIT { NULL, 0, 0 }
void sb_add(strbuf *sb, const void *data, size_t n);
void sb_puts(strbuf *sb, const char *s);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(strbuf *sb, const char *fmt, va_list ap);
/* Append s as a JSON string literal, quotes included. */
void sb_json_str(strbuf *sb, const char *s);
void sb_reset(strbuf *sb);
void sb_free(strbuf *sb);
/* The contents ("" when empty); stays owned by sb. */
const char *sb_str(const strbuf *sb);

/* 64-bit FNV-1a, chainable: pass the previous hash as h (start with HASH_INIT). */
#define HASH_INIT 0xcbf29ce484222325ULL
uint64_t hash_bytes(uint64_t h, const void *data, size_t n);
uint64_t hash_str(uint64_t h, const char *s);
/* 16 hex digits. */
void hash_hex(uint64_t h, char out[17]);

/* Read a whole file; NULL and errno on failure. *len may be NULL. */
char *read_file(const char *path, size_t *len);
int mkdir_p(const char *path);
int file_exists(const char *path);

double now_s(void);              /* monotonic seconds */
void iso_time(char out[32]);     /* UTC "2026-11-22T03:44:45Z" */

/* Parse "90s", "10m", "2h", "1h30m", "45": seconds, or -1. */
double parse_duration(const char *s);
/* Format n as "2^26" when n is a power of two, else as a number. */
void fmt_size(char *out, size_t cap, long long n);

/* The registry's arch key: "sm_90a" -> "sm_90" (one trailing 'a' or 'f'
** after the digits dropped), as libaitune normalizes lookups. */
void arch_base(const char *arch, char out[16]);

#endif
