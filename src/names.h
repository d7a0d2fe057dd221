/* names.h: the small facts that the tool, libaitune and the registry spell
** alike, each written here once: element types (dtypes), an argument's
** role, a launch plan's parameter kinds, how inputs are drawn, how a task
** is timed, architecture names, the separator of a split part's bucket key,
** and the registry's schema version. Text and numbers only: linked by the
** tool and by libaitune (mk/rt.mk), it needs nothing but the C library
** (and cuda.h's enumerators, inside names.c). A lookup by name returns -1 (NULL for a dtype) for a name
** it does not know; a name by number returns NULL out of range. */
#ifndef NAMES_H
#define NAMES_H
#include <stddef.h>

/* ---- an op's dims ----
** The most dims an op has (op.lua's `dims`; attn_decode has five: batch,
** heads, kv heads, keys, head dim). Specs, plans, templates, the CLI's
** --shape and the peers all hold shapes of up to this many sizes. */
#define MAXDIMS 6

/* ---- element types ---- */
typedef struct dtype_info {
    const char *name;           /* "f32", "f16", "bf16" */
    int size;                   /* bytes per element */
    const char *ctype;          /* one element as kernels and emitted code hold it */
    int tmap;                   /* its tensor-map element type (CUtensorMapDataType) */
    const char *tmap_name;      /* that enumerator's name, for emitted code */
} dtype_info;
const dtype_info *dtype_find(const char *name);
/* Bytes per element of dtype name; 0 when it is not one. */
int dtype_size(const char *name);

/* ---- an argument's role (op.lua's `role`, a plan's args, the worker's task) ---- */
enum arg_role { ROLE_IN, ROLE_OUT, ROLE_INOUT, ROLE_SCALAR, ROLE_DIM, ROLE_COUNT };
const char *role_name(int role);
int role_find(const char *name);

/* ---- a launch plan's parameter kinds (plan.h) ---- */
enum plan_kind { PLAN_PTR, PLAN_DIM, PLAN_I32, PLAN_F32, PLAN_WORKSPACE, PLAN_TMAP, PLAN_KINDS };
const char *plan_kind_name(int kind);
int plan_kind_find(const char *name);

/* ---- how an input is drawn (op.lua's `init`): normal unless "uniform" ---- */
enum arg_init { INIT_NORMAL, INIT_UNIFORM, INIT_COUNT };
const char *init_name(int init);
int init_find(const char *name);

/* ---- how a task is timed (a spec's `timing`, bench.h) ----
** A task's `stream` field holds one of these ids: 0 flush (one cold launch
** a sample), nonzero a chain of launches: 1 stream (the kernel follows
** itself back to back), 2 neighbour (each launch between two launches of
** another kernel, as a model's graph runs it). */
enum timing_id { TIMING_FLUSH_ID, TIMING_STREAM_ID, TIMING_NEIGHBOUR_ID, TIMING_COUNT };
#define TIMING_FLUSH "flush"
#define TIMING_STREAM "stream"
#define TIMING_NEIGHBOUR "neighbour"
#define TIMING_NAMES TIMING_FLUSH ", " TIMING_STREAM " or " TIMING_NEIGHBOUR
/* SQL: the timing id of a measurements.timing column (NULL and unknown: flush). */
#define TIMING_ID_SQL(col) \
    "(CASE " col " WHEN '" TIMING_STREAM "' THEN 1 WHEN '" TIMING_NEIGHBOUR "' THEN 2 ELSE 0 END)"
/* An id as its name (an id out of range: flush), and back (-1: none);
** timing_of: a stored name's id, flush for NULL or an unknown name. */
const char *timing_name(int id);
int timing_find(const char *name);
int timing_of(const char *name);

/* ---- architectures ---- */
/* An arch-specific ('a': sm_90a) or family ('f': sm_100f) target runs what
** was tuned for its base arch (sm_90), and the registry keys winners by the
** base. Only a letter right after the digits of a name longer than 4
** characters counts, so a name that merely ends in 'a' is left alone.
** arch_base_len: the length of arch's base; arch_base: the base itself
** (at most 15 characters). ARCH_IN_SQL(col, p): SQL true where col is the
** base arch bound at p or one of its suffixed targets. */
size_t arch_base_len(const char *arch);
void arch_base(const char *arch, char out[16]);
#define ARCH_IN_SQL(col, p) col " IN (" p ", " p " || 'a', " p " || 'f')"
/* Whether arch is one NVRTC target this aitune knows ("sm_80", "sm_90a",
** "sm_100a", ...): the only spellings that ever reach compiler options.
** arch_list: them all, comma separated, for messages. */
int arch_known(const char *arch);
const char *arch_list(void);

/* ---- buckets ---- */
/* A split part's bucket key is its bucket's, BUCKET_PART, and its lower
** corner (spec.h: bucket_split); BUCKET_PART_SQL is the same in SQL. */
#define BUCKET_PART '/'
#define BUCKET_PART_SQL "'/'"
/* A bucket key names each dim's bucket as "dim=" and BUCKET_LOG2 k (the
** log2 bucket [2^k, 2^(k+1)), ":alignC" after it for a class: spec.h,
** bucket_key) or as "dim=" and a size in decimal digits alone: an exact
** dim (a spec's `exact: true`), whose bucket is that one size, edges
** [size, size + 1). "m=2^4,n=6144,k=4096" is a bucket of m in [16, 32)
** at n = 6144 and k = 4096 exactly. */
#define BUCKET_LOG2 "2^"
/* The dims that bucket key names exactly, as bits (bit d: dim d), each
** one's size into size[d] when size is not NULL (the others are left as
** they are). Read from the key's home (up to BUCKET_PART): its ndims
** pieces must be named as dims says ("m,n,k"), in that order; a size of
** digits only (no leading zero, below 2^62) is exact. A key of any other
** form names none (0): what else it holds is its reader's to check
** (spec.h: bucket_key_parse). ndims above 16 names none. libaitune ranks
** a bucket that names a shape's sizes exactly before one that spans them
** (align.h: bucket_score). */
unsigned bucket_exact_dims(const char *key, const char *dims, int ndims, long long *size);

/* ---- the registry ---- */
/* The schema version this aitune writes and reads up to (db/schema.sql,
** db/migrations/): libaitune refuses a newer registry with the same number.
** REG_SCHEMA_VERSION_SQL reads the version a registry holds. */
#define REG_SCHEMA_VERSION 8
#define REG_SCHEMA_VERSION_SQL "SELECT value FROM meta WHERE key = 'schema_version'"
/* The winners table's columns as the tool (registry_winner.c) and
** libaitune (rt.c) read them, each named after prefix t ("" or "s."): a
** winner's lookup part (REG_WINNER_LOOKUP: its bucket, edges, shape and
** config; all libaitune reads, with rowid and hw), in the order of the
** whole row (REG_WINNER_COLS: the key, the lookup part, what the race and
** the kernel need, then device and run). The hardware column hw is apart:
** a registry older than schema 3 has none. REG_WINNERS_OF(cols): the
** winners of op ?1, base arch ?2 (its suffixed targets' too) and dtype ?3. */
#define REG_WINNER_LOOKUP(t) t "bucket, " t "dims, " t "lo, " t "hi, " t "shape, " t "template, " t "config, " \
                             t "median_us"
#define REG_WINNER_DATA(t) t "op, " t "arch, " t "dtype, " REG_WINNER_LOOKUP(t) ", " t "gbps, " t "tflops, " \
                           t "default_us, " t "margin, " t "exhaustive, " t "runners_up, " t "cubin, " t "launch"
#define REG_WINNER_COLS(t) REG_WINNER_DATA(t) ", " t "device, " t "run"
#define REG_WINNERS_OF(cols) "SELECT " cols " FROM winners WHERE op = ?1 AND " ARCH_IN_SQL("arch", "?2") " AND dtype = ?3"

#endif
