/* util.h: what every module of the aitune tool shares: error reporting in
** git's style, checked allocation, a growable string, hashing, files, time;
** and, through names.h, the names every module spells alike. Not part of
** libaitune. */
#ifndef UTIL_H
#define UTIL_H
#include "names.h"
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

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

/* ---- untrusted input and output (issue 14) ---- */

/* Parse a decimal size: digits only (no sign, space, '.', 0x or exponent),
** value in [lo, hi]. 0 ok, -1 not a number (or overflow), -2 out of range. */
int parse_size(const char *s, size_t len, long long lo, long long hi, long long *out);

/* Append s with every control byte (< 0x20, 0x7f) escaped as \n, \t or
** \xNN, and backslashes doubled, so it prints on one line and carries no
** terminal escapes. s may be NULL ("(null)" is never printed: "" is). */
void sb_printable(strbuf *sb, const char *s);
/* Escape msg in place the same way, truncated to cap bytes (NUL included). */
void printable_inplace(char *msg, size_t cap);

/* Files from and to untrusted paths.
**
** read_regular_file: the whole of path, which must be a regular file (after
** following symlinks; not a FIFO, device or directory) of at most max bytes.
** NULL on failure, with errno: EINVAL not a regular file, EFBIG over max,
** else what open/read said. *len may be NULL. The text is NUL-terminated.
**
** write_regular_file: replace path with data, atomically, or write to
** stdout when path is "-". path must be absent or a regular file (lstat:
** a symlink, FIFO, device, socket or directory there is refused with
** EINVAL). The data goes to a new temporary file in path's folder, created
** with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file, never through a
** link), mode 0666 & ~umask (or path's old mode), flushed with fsync and
** renamed over path. On failure nothing at path has changed, the temporary
** is removed, and -1 is returned with errno set; 0 on success.
**
** check_regular_path: for paths another library opens (SQLite): 0 if path
** is absent or a regular file (after following symlinks); -1 with errno
** EINVAL if it is something else, or stat's errno. */
char *read_regular_file(const char *path, size_t max, size_t *len);
/* What any input file (import's T4, replay's landscapes, peers) may weigh. */
#define INPUT_MAXBYTES ((size_t)256 << 20)
int write_regular_file(const char *path, const void *data, size_t len);

/* Every command's -o: an output written as it is made and kept whole or
** not at all. out_open(o, path): path NULL or "-" is standard output;
** otherwise path must be absent or a regular file (a link there is neither
** followed nor replaced; a FIFO, device or folder is refused), and o->f is
** a new temporary in path's folder (write_regular_file's rules: exclusive,
** never through a link). out_close(o, keep): with keep, the temporary gets
** the mode (0666 & ~umask, or the old file's), is flushed to disk and
** renamed over path; without, or on any failure, it is removed and path is
** untouched. Both return 0, or -1 with errno and o->why saying what was
** wrong ("a symbolic link (not followed, not replaced)", "not a regular
** file", strerror's text). out_close is safe after a failed out_open. */
typedef struct outfile {
    FILE *f;
    const char *why;
    char *path, *tmp;
    unsigned mode;
} outfile;
int out_open(outfile *o, const char *path);
int out_close(outfile *o, int keep);

/* Why read_regular_file failed, for messages: "not a regular file" (EINVAL),
** "larger than the N MB an input may be" (EFBIG, from max), else strerror. */
const char *read_errstr(int err, size_t max);
int check_regular_path(const char *path);

#endif
