/*
** aitune.h: the runtime library (libaitune). Link with -laitune (see
** aitune.pc); it depends on SQLite only.
**
** An application opens a registry written by `aitune sweep` and asks which
** tuned configuration to use for a problem:
**
**     aitune *h;
**     if (aitune_open("registry.db", &h) != AITUNE_OK) {
**         fprintf(stderr, "%s\n", aitune_errmsg(h));   // safe even here
**         aitune_close(h);
**         return;
**     }
**     long long shape[] = { 50000000 };
**     aitune_choice c;
**     if (aitune_lookup(h, "axpy", "sm_90", "bf16", shape, 1, &c) == AITUNE_OK)
**         printf("%s %s (%s)\n", c.template_name, c.config, aitune_level_name(c.level));
**     aitune_close(h);
**
** Rules that hold for every call:
** - Every function returns an int status (AITUNE_OK on success) except the
**   two that return strings. On failure the handle's message says why:
**   aitune_errmsg(h). The library never prints and never exits.
** - aitune_open reads every winner into memory and closes the database at
**   once: lookups allocate nothing and run no SQL, so they are cheap enough
**   for a launch path, and safe from several threads at once (only the
**   error message is shared: when lookups fail in several threads at once,
**   it may be garbled; the status codes are always right).
** - Strings in an aitune_choice belong to the handle and live until
**   aitune_close. aitune_close(NULL) is a no-op.
*/
#ifndef AITUNE_H
#define AITUNE_H

#ifdef __cplusplus
extern "C" {
#endif

#define AITUNE_VERSION "0.1.0"

/* Status codes. */
#define AITUNE_OK        0
#define AITUNE_ERROR     1  /* generic failure; see aitune_errmsg */
#define AITUNE_NOTFOUND  2  /* no winner, no nearby bucket and no default */
#define AITUNE_CANTOPEN  3  /* the registry file is missing or unreadable */
#define AITUNE_CORRUPT   4  /* the file is not an aitune registry, or damaged */
#define AITUNE_MISUSE    5  /* a NULL or out-of-range argument */
#define AITUNE_NOMEM     6

/* Which level of the fallback answered a lookup. */
#define AITUNE_EXACT     0  /* the shape falls in a tuned bucket */
#define AITUNE_NEAREST   1  /* the nearest tuned bucket of the same op/arch/dtype */
#define AITUNE_DEFAULT   2  /* the template's default configuration */

typedef struct aitune aitune;

typedef struct aitune_choice {
    int level;                 /* AITUNE_EXACT, AITUNE_NEAREST or AITUNE_DEFAULT */
    const char *template_name; /* "axpy/vec" */
    const char *config;        /* canonical JSON: {"block":256,"ilp":4,...} */
    const char *bucket;        /* "n=2^26"; NULL at AITUNE_DEFAULT */
    double median_us;          /* measured median at the tuned shape; 0 at AITUNE_DEFAULT */
    double distance;           /* log2 distance from the shape to that bucket; 0 if exact */
} aitune_choice;

/* Open a registry read-only. *out is always set: to a handle that carries the
** error message when the call fails, or to NULL when not even the handle could
** be allocated (AITUNE_NOMEM; aitune_errmsg(NULL) says "out of memory" and
** aitune_close(NULL) is a no-op). Close it either way. */
int aitune_open(const char *path, aitune **out);

/* The configuration for (op, arch, dtype, shape). arch is "sm_90" (a
** trailing 'a' or 'f', as in "sm_90a" or "sm_100f", is ignored); shape holds
** ndims sizes (each >= 1) in the op's dim order. Exact bucket, else the
** nearest tuned bucket with as many dims, else the template default;
** out->level says which. */
int aitune_lookup(aitune *h, const char *op, const char *arch, const char *dtype,
                  const long long *shape, int ndims, aitune_choice *out);

/* The number of winners loaded. */
int aitune_count(aitune *h, int *out);

/* The last error message on h ("not an error" when there was none; a
** successful call does not clear it). Never NULL. */
const char *aitune_errmsg(aitune *h);

/* "exact", "nearest", "default". */
const char *aitune_level_name(int level);

/* Free the handle. NULL is a no-op. */
int aitune_close(aitune *h);

#ifdef __cplusplus
}
#endif
#endif
