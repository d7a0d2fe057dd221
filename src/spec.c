/* spec.c: see spec.h. */
#define _GNU_SOURCE
#include "spec.h"
#include "align.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct ctx {
    yaml_document_t doc;
    const char *path;
    char *err;
    int errcap;
} ctx;

static int fail(ctx *c, const yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) snprintf(c->err, (size_t)c->errcap, "spec '%s' line %zu: %s", c->path, n->start_mark.line + 1, msg);
    else snprintf(c->err, (size_t)c->errcap, "spec '%s': %s", c->path, msg);
    printable_inplace(c->err, (size_t)c->errcap);   /* one line, whatever the file holds */
    return -1;
}

static yaml_node_t *node(ctx *c, int id) { return yaml_document_get_node(&c->doc, id); }

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int want_map(ctx *c, yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_MAPPING_NODE) return fail(c, n, "%s must be a mapping", what);
    return 0;
}

/* Every key of map n must be in known (NULL-terminated), and appear once:
** YAML forbids duplicate keys, and libyaml would let the first one win
** silently. */
static int known_keys(ctx *c, yaml_node_t *n, const char *what, const char *const *known)
{
    int seen[32] = { 0 };
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(c, p->key);
        const char *key = scalar(k);
        int ok = 0;
        for (const char *const *q = known; *q && key; q++) {
            if (strcmp(*q, key)) continue;
            ok = 1;
            int i = (int)(q - known);
            if (i < 32 && seen[i]++) return fail(c, k, "field '%s' appears twice in %s", key, what);
        }
        if (!ok) {
            strbuf list = STRBUF_INIT;
            for (const char *const *q = known; *q; q++) sb_printf(&list, "%s%s", q == known ? "" : ", ", *q);
            fail(c, k, "unknown field '%s' in %s (known: %s)", key ? key : "?", what, sb_str(&list));
            sb_free(&list);
            return -1;
        }
    }
    return 0;
}

static yaml_node_t *get(ctx *c, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && !strcmp(k, key)) return node(c, p->value);
    }
    return NULL;
}

static int get_str(ctx *c, yaml_node_t *map, const char *key, char *dst, size_t cap, const char *dflt)
{
    yaml_node_t *n = get(c, map, key);
    if (!n) { snprintf(dst, cap, "%s", dflt); return 0; }
    const char *s = scalar(n);
    if (!s || !*s) return fail(c, n, "'%s' must be a non-empty string", key);
    if (strlen(s) >= cap) return fail(c, n, "'%s' is too long", key);
    snprintf(dst, cap, "%s", s);
    return 0;
}

/* timing: flush (0) or stream (1), names.h; dflt when absent. */
static int get_timing(ctx *c, yaml_node_t *map, int dflt, int *out)
{
    yaml_node_t *n = get(c, map, "timing");
    if (!n) { *out = dflt; return 0; }
    const char *s = scalar(n);
    if ((*out = timing_find(s)) < 0)
        return fail(c, n, "timing must be " TIMING_NAMES ", not '%s'", s ? s : "(not a scalar)");
    return 0;
}

/* A true/false field; dflt when absent. */
static int get_bool(ctx *c, yaml_node_t *map, const char *key, int dflt, int *out)
{
    yaml_node_t *n = get(c, map, key);
    if (!n) { *out = dflt; return 0; }
    const char *s = scalar(n);
    if (s && !strcmp(s, "true")) *out = 1;
    else if (s && !strcmp(s, "false")) *out = 0;
    else return fail(c, n, "'%s' must be true or false", key);
    return 0;
}

/* A fraction in [0, 1] (split_at: 0.05 is 5%); dflt when absent. */
static int get_fraction(ctx *c, yaml_node_t *map, const char *key, double dflt, double *out)
{
    yaml_node_t *n = get(c, map, key);
    if (!n) { *out = dflt; return 0; }
    const char *s = scalar(n);
    char *end = NULL;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || errno || !isfinite(v) || v < 0 || v > 1)
        return fail(c, n, "'%s' must be a fraction in [0, 1] (0.05: 5%%; 0: never), not '%s'", key, s ? s : "(not a scalar)");
    *out = v;
    return 0;
}

static int parse_int(ctx *c, yaml_node_t *n, const char *what, long long lo, long long hi, long long *out)
{
    const char *s = scalar(n);
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 0) : 0;
    if (!s || !*s || *end || errno) return fail(c, n, "%s must be an integer, not '%s'", what, s ? s : "(not a scalar)");
    if (v < lo || v > hi) return fail(c, n, "%s = %lld is out of range [%lld, %lld]", what, v, lo, hi);
    *out = v;
    return 0;
}

static int get_int(ctx *c, yaml_node_t *map, const char *key, long long lo, long long hi, long long dflt, long long *out)
{
    yaml_node_t *n = get(c, map, key);
    if (!n) { *out = dflt; return 0; }
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    return parse_int(c, n, what, lo, hi, out);
}

static int is_name(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '_') return 0;
    return 1;
}

/* {range: [lo, hi], align: [8, 1]} into d (spec.h: spec_dim.range). */
static int parse_range(ctx *c, yaml_node_t *v, spec_dim *d)
{
    yaml_node_t *r = get(c, v, "range"), *al = get(c, v, "align");
    const char *name = d->name;
    if (r->type != YAML_SEQUENCE_NODE || r->data.sequence.items.top - r->data.sequence.items.start != 2)
        return fail(c, r, "dim '%s': range takes [lo, hi], the smallest and largest size served", name);
    long long e[2];
    for (int i = 0; i < 2; i++)
        if (parse_int(c, node(c, r->data.sequence.items.start[i]), "a range's size", 1, 1LL << 40, &e[i])) return -1;
    if (e[1] < e[0]) return fail(c, r, "dim '%s': range [%lld, %lld] is empty", name, e[0], e[1]);
    unsigned mask = ALIGN_FULL | 1;
    if (al) {
        if (al->type != YAML_SEQUENCE_NODE || al->data.sequence.items.top == al->data.sequence.items.start)
            return fail(c, al, "dim '%s': align takes a list of classes out of 1, 2, 4 and 8", name);
        mask = 0;
        for (yaml_node_item_t *i = al->data.sequence.items.start; i < al->data.sequence.items.top; i++) {
            yaml_node_t *n = node(c, *i);
            long long cls;
            if (parse_int(c, n, "an alignment class", 1, ALIGN_FULL, &cls)) return -1;
            if (cls & (cls - 1)) return fail(c, n, "dim '%s': alignment class %lld is not 1, 2, 4 or 8", name, cls);
            if (mask & (unsigned)cls) return fail(c, n, "dim '%s': alignment class %lld is listed twice", name, cls);
            mask |= (unsigned)cls;
        }
    }
    d->range = 1;
    d->range_lo = e[0];
    d->range_hi = e[1];
    d->range_align = mask;
    d->nvalues = spec_range_reps(e[0], e[1], mask, d->values, SPEC_MAXVALUES);
    if (d->nvalues < 0)
        return fail(c, r, "dim '%s': range [%lld, %lld] makes more than %d buckets (narrow it, or fewer classes in "
                    "align)", name, e[0], e[1], SPEC_MAXVALUES);
    return 0;
}

static int parse_dim(ctx *c, yaml_node_t *k, yaml_node_t *v, spec_dim *d)
{
    const char *name = scalar(k);
    if (!is_name(name) || strlen(name) >= sizeof d->name) return fail(c, k, "bad dim name '%s'", name ? name : "?");
    snprintf(d->name, sizeof d->name, "%s", name);
    d->line = (int)k->start_mark.line + 1;
    static const char *const fields[] = { "log2", "values", "range", "align", "exact", NULL };
    if (want_map(c, v, "a dim ({log2: [lo, hi]}, {values: [...]} or {range: [lo, hi]})") ||
        known_keys(c, v, "a dim", fields))
        return -1;
    yaml_node_t *l = get(c, v, "log2"), *vals = get(c, v, "values"), *r = get(c, v, "range");
    if (!!l + !!vals + !!r != 1) return fail(c, v, "dim '%s' needs exactly one of log2, values or range", name);
    if (get(c, v, "align") && !r) return fail(c, get(c, v, "align"), "dim '%s': align goes with range", name);
    /* exact: each size is a bucket of its own (spec.h: spec_dim.exact). A
    ** range promises the sizes between its ends, which an exact bucket
    ** never serves. */
    yaml_node_t *ex = get(c, v, "exact");
    const char *exs = scalar(ex);
    if (ex && (!exs || (strcmp(exs, "true") && strcmp(exs, "false"))))
        return fail(c, ex, "dim '%s': exact must be true or false", name);
    d->exact = exs && !strcmp(exs, "true");
    if (d->exact && r)
        return fail(c, get(c, v, "exact"), "dim '%s': exact goes with values or log2, not range (a range is served "
                    "by log2 buckets; list the sizes to tune exactly with values)", name);
    if (r) return parse_range(c, v, d);
    yaml_node_t *seq = l ? l : vals;
    if (seq->type != YAML_SEQUENCE_NODE) return fail(c, seq, "dim '%s': %s must be a list", name, l ? "log2" : "values");
    int n = (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (l) {
        if (n != 2 && n != 3) return fail(c, seq, "dim '%s': log2 takes [lo, hi] or [lo, hi, step]", name);
        long long e[3] = { 0, 0, 1 };
        for (int i = 0; i < n; i++)
            if (parse_int(c, node(c, seq->data.sequence.items.start[i]), "a log2 exponent", 0, 40, &e[i])) return -1;
        if (e[1] < e[0]) return fail(c, seq, "dim '%s': log2 [%lld, %lld] is empty", name, e[0], e[1]);
        if (e[2] < 1) return fail(c, seq, "dim '%s': log2 step must be >= 1", name);
        for (long long k2 = e[0]; k2 <= e[1]; k2 += e[2]) {
            if (d->nvalues == SPEC_MAXVALUES) return fail(c, seq, "dim '%s': at most %d sizes", name, SPEC_MAXVALUES);
            d->values[d->nvalues++] = 1LL << k2;
        }
    } else {
        if (n < 1 || n > SPEC_MAXVALUES) return fail(c, seq, "dim '%s': 1 to %d values", name, SPEC_MAXVALUES);
        for (int i = 0; i < n; i++) {
            yaml_node_t *item = node(c, seq->data.sequence.items.start[i]);
            if (parse_int(c, item, "a size", 1, 1LL << 40, &d->values[d->nvalues++])) return -1;
            /* Buckets are keyed by their log2 edges and alignment class: two
            ** sizes of one bucket and class would share a key, and the
            ** second would resume the first. Sizes of different classes
            ** (4096 and 4097) get buckets of their own. */
            long long v = d->values[d->nvalues - 1], lo, hi;
            bucket_of(v, &lo, &hi);
            for (int j = 0; j < d->nvalues - 1 && d->exact; j++)
                if (d->values[j] == v) return fail(c, item, "dim '%s': size %lld is listed twice", name, v);
            for (int j = 0; j < d->nvalues - 1 && !d->exact; j++)
                if (d->values[j] >= lo && d->values[j] < hi && align_class(d->values[j]) == align_class(v))
                    return fail(c, item,
                                "dim '%s': sizes %lld and %lld fall in the same bucket [%lld, %lld) and alignment "
                                "class %d (a bucket holds one size per class: 1, 2, 4 or 8)",
                                name, d->values[j], v, lo, hi, align_class(v));
        }
    }
    return 0;
}

/* One dim of a bucket key, "name=2^k" and ":alignC" where the size tuned
** names a class (align_key_class), or an exact dim's "name=SIZE" (names.h),
** into out (snprintf's rules: the length it needs whatever cap is). */
static int key_piece(char *out, size_t cap, const char *name, long long lo, long long rep, int exact)
{
    if (exact) return snprintf(out, cap, "%s=%lld", name, rep);
    char sz[32], cls[24] = "";
    fmt_size(sz, sizeof sz, lo);
    int c = align_key_class(rep, lo);
    if (c) snprintf(cls, sizeof cls, ":align%d", c);
    return snprintf(out, cap, "%s=%s%s", name, sz, cls);
}

/* The length of the task's longest bucket key (bucket_key): per dim its
** longest piece (key_piece), commas between. */
static int key_room(const spec_task *t)
{
    int n = t->ndims - 1;
    for (int d = 0; d < t->ndims; d++) {
        int most = 0;
        for (int i = 0; i < t->dims[d].nvalues; i++) {
            long long v = t->dims[d].values[i], lo, hi;
            bucket_of(v, &lo, &hi);
            int len = key_piece(NULL, 0, t->dims[d].name, lo, v, t->dims[d].exact);
            most = len > most ? len : most;
        }
        n += most;
    }
    return n;
}

static int parse_task(ctx *c, yaml_node_t *t, spec_task *task, const spec *s)
{
    static const char *const fields[] = { "op", "dtypes", "shapes", "search", "max_evals", "joint", "hold", "split_at",
                                          "split_evals", "split_polish", "split_depth", "templates", "timing", NULL };
    if (want_map(c, t, "a task") || known_keys(c, t, "a task", fields)) return -1;
    task->line = (int)t->start_mark.line + 1;
    yaml_node_t *op = get(c, t, "op");
    if (!op) return fail(c, t, "a task needs 'op'");
    if (!is_name(scalar(op)) || strlen(scalar(op)) >= sizeof task->op) return fail(c, op, "bad op name");
    snprintf(task->op, sizeof task->op, "%s", scalar(op));
    if (get_str(c, t, "search", task->search, sizeof task->search, s->search)) return -1;
    long long me;
    if (get_int(c, t, "max_evals", 0, 1000000, s->max_evals, &me)) return -1;
    task->max_evals = (int)me;
    if (get_bool(c, t, "joint", s->joint, &task->joint) || get_bool(c, t, "hold", s->hold, &task->hold) ||
        get_fraction(c, t, "split_at", s->split_at, &task->split_at) ||
        get_int(c, t, "split_evals", 0, 1000000, s->split_evals, &me))
        return -1;
    task->split_evals = (int)me;
    if (get_int(c, t, "split_polish", 0, 1000000, s->split_polish, &me)) return -1;
    task->split_polish = (int)me;
    if (get_int(c, t, "split_depth", 1, SPEC_MAXSPLITDEPTH, s->split_depth, &me)) return -1;
    task->split_depth = (int)me;
    if (get_timing(c, t, s->stream, &task->stream)) return -1;
    yaml_node_t *tl = get(c, t, "templates");
    if (tl) {
        if (tl->type != YAML_SEQUENCE_NODE) return fail(c, tl, "task '%s': templates must be a list of names", task->op);
        task->templates_line = (int)tl->start_mark.line + 1;
        for (yaml_node_item_t *i = tl->data.sequence.items.start; i < tl->data.sequence.items.top; i++) {
            yaml_node_t *n = node(c, *i);
            const char *v = scalar(n);
            if (!is_name(v) || strlen(v) >= sizeof task->templates[0])
                return fail(c, n, "task '%s': bad template name '%s'", task->op, v ? v : "(not a scalar)");
            if (task->ntemplates == SPEC_MAXTEMPLATES) return fail(c, n, "at most %d templates", SPEC_MAXTEMPLATES);
            for (int j = 0; j < task->ntemplates; j++)
                if (!strcmp(task->templates[j], v)) return fail(c, n, "task '%s': template '%s' is listed twice", task->op, v);
            snprintf(task->templates[task->ntemplates++], sizeof task->templates[0], "%s", v);
        }
        if (!task->ntemplates) return fail(c, tl, "task '%s': templates is empty (leave it out to tune all)", task->op);
    }
    yaml_node_t *dt = get(c, t, "dtypes");
    if (!dt || dt->type != YAML_SEQUENCE_NODE) return fail(c, dt ? dt : t, "task '%s' needs 'dtypes', a list", task->op);
    for (yaml_node_item_t *i = dt->data.sequence.items.start; i < dt->data.sequence.items.top; i++) {
        yaml_node_t *n = node(c, *i);
        const char *v = scalar(n);
        if (!v || !*v || strlen(v) >= 16) return fail(c, n, "bad dtype");
        if (task->ndtypes == 16) return fail(c, n, "at most 16 dtypes");
        snprintf(task->dtypes[task->ndtypes++], 16, "%s", v);
    }
    if (!task->ndtypes) return fail(c, dt, "task '%s' has no dtypes", task->op);
    yaml_node_t *sh = get(c, t, "shapes");
    if (!sh) return fail(c, t, "task '%s' needs 'shapes'", task->op);
    if (want_map(c, sh, "shapes")) return -1;
    /* The largest shape's element count must stay far from overflowing
    ** (buffer sizes are products of dims, times element sizes). */
    long double elems = 1;
    for (yaml_node_pair_t *p = sh->data.mapping.pairs.start; p < sh->data.mapping.pairs.top; p++) {
        if (task->ndims == SPEC_MAXDIMS) return fail(c, node(c, p->key), "at most %d dims", SPEC_MAXDIMS);
        spec_dim *d = &task->dims[task->ndims];
        if (parse_dim(c, node(c, p->key), node(c, p->value), d)) return -1;
        for (int j = 0; j < task->ndims; j++)
            if (!strcmp(task->dims[j].name, d->name))
                return fail(c, node(c, p->key), "task '%s': dim '%s' appears twice", task->op, d->name);
        task->ndims++;
        if (key_room(task) >= (int)sizeof(((bucket *)0)->key))
            return fail(c, node(c, p->key), "task '%s': its bucket keys would be longer than %d characters "
                        "(shorter dim names)", task->op, (int)sizeof(((bucket *)0)->key) - 1);
        long long most = 0;
        for (int j = 0; j < d->nvalues; j++) most = d->values[j] > most ? d->values[j] : most;
        elems *= (long double)most;
        if (elems > (long double)SPEC_MAXELEMS)
            return fail(c, node(c, p->key), "task '%s': the largest shape has more than 2^%d elements", task->op,
                        SPEC_MAXELEMS_LOG2);
    }
    if (!task->ndims) return fail(c, sh, "task '%s' has no shapes", task->op);
    return 0;
}

int spec_task_uses(const spec_task *t, const char *tname)
{
    if (!t->ntemplates) return 1;
    const char *slash = strchr(tname, '/');
    const char *impl = slash ? slash + 1 : tname;
    for (int i = 0; i < t->ntemplates; i++)
        if (!strcmp(t->templates[i], impl)) return 1;
    return 0;
}

int spec_load(const char *path, spec *s, char *err, int errcap)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    ctx c = { .path = path, .err = err, .errcap = errcap };
    size_t len;
    char *text = read_regular_file(path, SPEC_MAXBYTES, &len);
    if (!text) {
        if (errno == EINVAL) return fail(&c, NULL, "not a regular file");
        if (errno == EFBIG) return fail(&c, NULL, "larger than %d KiB; a spec is a short file", SPEC_MAXBYTES >> 10);
        return fail(&c, NULL, "cannot read: %s", strerror(errno));
    }
    int rc = spec_load_text(path, text, len, s, err, errcap);
    free(text);
    return rc;
}

/* Nesting deeper than a spec ever needs is refused before libyaml builds a
** document (whose cost grows fast with depth), and so are documents with
** too many nodes. */
static int prescan(ctx *c, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int depth = 0, events = 0, rc = 0;
    for (;;) {
        if (!yaml_parser_parse(&parser, &ev)) break;   /* the load reports it, with its line */
        yaml_event_type_t t = ev.type;
        size_t line = ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT) break;
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) depth++;
        if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) depth--;
        if (depth > SPEC_MAXDEPTH) {
            snprintf(c->err, (size_t)c->errcap, "spec '%s' line %zu: nested more than %d levels deep", c->path, line,
                     SPEC_MAXDEPTH);
            rc = -1;
            break;
        }
        if (++events > SPEC_MAXEVENTS) {
            snprintf(c->err, (size_t)c->errcap, "spec '%s' line %zu: more than %d YAML nodes", c->path, line,
                     SPEC_MAXEVENTS);
            rc = -1;
            break;
        }
    }
    yaml_parser_delete(&parser);
    if (rc) printable_inplace(c->err, (size_t)c->errcap);
    return rc;
}

int spec_load_text(const char *path, const char *text, size_t len, spec *s, char *err, int errcap)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    ctx c = { .path = path, .err = err, .errcap = errcap };
    hash_hex(hash_bytes(HASH_INIT, text, len), s->hash);
    if (prescan(&c, text, len)) return -1;
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int ok = yaml_parser_load(&parser, &c.doc);
    if (!ok) {
        snprintf(err, (size_t)errcap, "spec '%s' line %zu: %s", path, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not valid YAML");
        printable_inplace(err, (size_t)errcap);
        yaml_parser_delete(&parser);
        return -1;
    }
    /* A second document would be ignored: refuse it instead. */
    yaml_document_t next;
    int more = 0;
    if (yaml_parser_load(&parser, &next)) {
        more = yaml_document_get_root_node(&next) != NULL;
        yaml_document_delete(&next);
    }
    yaml_parser_delete(&parser);
    int rc = -1;
    if (more) { fail(&c, NULL, "more than one YAML document"); goto out; }
    yaml_node_t *root = yaml_document_get_root_node(&c.doc);
    static const char *const fields[] = { "name", "arch", "seed", "search", "max_evals", "joint", "hold", "split_at",
                                          "split_evals", "split_polish", "split_depth", "budget", "top_k", "timing",
                                          "warm", "tasks", NULL };
    if (!root) { fail(&c, NULL, "empty file"); goto out; }
    if (want_map(&c, root, "the spec") || known_keys(&c, root, "the spec", fields)) goto out;
    long long v;
    if (get_str(&c, root, "name", s->name, sizeof s->name, "unnamed") ||
        get_str(&c, root, "arch", s->arch, sizeof s->arch, "sm_90a") ||
        get_str(&c, root, "search", s->search, sizeof s->search, "exhaustive"))
        goto out;
    /* The arch becomes an NVRTC option: only a known target, spelled as
    ** one, ever gets there. */
    if (!arch_known(s->arch)) {
        fail(&c, get(&c, root, "arch"), "unknown arch '%s' (known: %s)", s->arch, arch_list());
        goto out;
    }
    if (get_int(&c, root, "seed", 0, 0x7fffffffffffffffLL, 1, &v)) goto out;
    s->seed = (unsigned long long)v;
    if (get_int(&c, root, "max_evals", 0, 1000000, 0, &v)) goto out;
    s->max_evals = (int)v;
    if (get_int(&c, root, "top_k", 1, 16, 5, &v)) goto out;
    if (get_bool(&c, root, "joint", 0, &s->joint) || get_bool(&c, root, "hold", 0, &s->hold) ||
        get_fraction(&c, root, "split_at", 0.05, &s->split_at))
        goto out;
    s->top_k = (int)v;
    if (get_int(&c, root, "split_evals", 0, 1000000, -1, &v)) goto out;
    s->split_evals = (int)v;
    if (get_int(&c, root, "split_polish", 0, 1000000, SPEC_SPLIT_POLISH, &v)) goto out;
    s->split_polish = (int)v;
    if (get_int(&c, root, "split_depth", 1, SPEC_MAXSPLITDEPTH, 2, &v)) goto out;
    s->split_depth = (int)v;
    if (get_int(&c, root, "warm", 0, SPEC_MAXWARM, -1, &v)) goto out;
    s->warm = (int)v;
    if (get_timing(&c, root, 0, &s->stream)) goto out;
    yaml_node_t *b = get(&c, root, "budget");
    if (b) {
        s->budget_s = scalar(b) ? parse_duration(scalar(b)) : -1;
        if (s->budget_s <= 0) { fail(&c, b, "budget '%s' is not a duration like 90s, 30m or 2h", scalar(b) ? scalar(b) : "?"); goto out; }
    }
    yaml_node_t *tasks = get(&c, root, "tasks");
    if (!tasks || tasks->type != YAML_SEQUENCE_NODE) { fail(&c, tasks ? tasks : root, "'tasks' must be a list"); goto out; }
    int n = (int)(tasks->data.sequence.items.top - tasks->data.sequence.items.start);
    if (!n) { fail(&c, tasks, "'tasks' is empty"); goto out; }
    s->tasks = xcalloc((size_t)n, sizeof *s->tasks);
    for (int i = 0; i < n; i++, s->ntasks++)
        if (parse_task(&c, node(&c, tasks->data.sequence.items.start[i]), &s->tasks[i], s)) goto out;
    rc = 0;
out:
    yaml_document_delete(&c.doc);
    if (rc) spec_free(s);
    return rc;
}

void spec_free(spec *s)
{
    free(s->tasks);
    s->tasks = NULL;
    s->ntasks = 0;
}

void bucket_of(long long v, long long *lo, long long *hi)
{
    long long p = 1;
    while (p * 2 <= v) p *= 2;
    *lo = p;
    *hi = p * 2;
}

int spec_range_reps(long long lo, long long hi, unsigned align, long long *out, int cap)
{
    int n = 0;
    for (long long blo = 0, bhi = 0, at = lo; at <= hi; at = bhi) {
        bucket_of(at, &blo, &bhi);
        long long a = at, z = hi < bhi - 1 ? hi : bhi - 1;
        int first = n;
        /* Each class a key can name in this bucket (align_key_class: 0 for
        ** 8, and for a class at or above the lower edge's below 8), its
        ** largest size: within 8 sizes of the top, as the classes repeat
        ** every 8. Sizes found once (two classes keyed alike) count once. */
        for (int cls = ALIGN_FULL; cls >= 1; cls /= 2) {
            if (!(align & (unsigned)cls)) continue;
            int top = blo >= ALIGN_FULL ? ALIGN_FULL : (int)blo, want = cls >= top ? 0 : cls;
            for (long long s = z; s >= a && s > z - 2 * ALIGN_FULL; s--) {
                if (align_key_class(s, blo) != want) continue;
                int dup = 0;
                for (int j = first; j < n; j++) dup |= out[j] == s;
                if (dup) break;
                if (n == cap) return -1;
                out[n++] = s;
                break;
            }
        }
        /* Every size must be served by a bucket of its class or a lower
        ** one: when the classes asked for leave the bucket's least aligned
        ** sizes out (align [8] over odd sizes; align [1] where the range
        ** holds only 256), it is tuned at its largest size of that class
        ** too. Classes as numbers: key class 0 is the bucket's top. */
        int top = blo >= ALIGN_FULL ? ALIGN_FULL : (int)blo, least = top, covered = 0;
        for (long long s = a; s <= z && s < a + 2 * ALIGN_FULL; s++) {
            int k = align_key_class(s, blo);
            if ((k ? k : top) < least) least = k ? k : top;
        }
        for (int j = first; j < n; j++) {
            int k = align_key_class(out[j], blo);
            covered |= (k ? k : top) <= least;
        }
        for (long long s = z; !covered && s >= a; s--)
            if (align_key_class(s, blo) == (least == top ? 0 : least)) {
                if (n == cap) return -1;
                out[n++] = s;
                covered = 1;
            }
        /* In increasing order within the bucket (few: an insertion sort). */
        for (int i = first + 1; i < n; i++)
            for (int j = i; j > first && out[j - 1] > out[j]; j--) {
                long long t = out[j];
                out[j] = out[j - 1];
                out[j - 1] = t;
            }
    }
    return n;
}

int bucket_key_exact(int ndims, char names[][16], const long long *lo, const long long *rep, unsigned exact, char *out,
                     int cap)
{
    int at = 0;
    out[0] = 0;
    for (int d = 0; d < ndims && at < cap; d++) {
        if (d) at += snprintf(out + at, (size_t)(cap - at), ",");
        if (at < cap) at += key_piece(out + at, (size_t)(cap - at), names[d], lo[d], rep[d], exact >> d & 1);
    }
    return at < cap ? 0 : -1;
}

int bucket_key(int ndims, char names[][16], const long long *lo, const long long *rep, char *out, int cap)
{
    return bucket_key_exact(ndims, names, lo, rep, 0, out, cap);
}

int spec_buckets(const spec_task *t, bucket **out)
{
    int total = 1;
    for (int d = 0; d < t->ndims; d++) total *= t->dims[d].nvalues;
    bucket *b = xcalloc((size_t)total, sizeof *b);
    char names[SPEC_MAXDIMS][16];
    for (int d = 0; d < t->ndims; d++) snprintf(names[d], 16, "%s", t->dims[d].name);
    for (int i = 0; i < total; i++) {
        int rest = i;
        b[i].ndims = t->ndims;
        for (int d = t->ndims - 1; d >= 0; d--) {
            long long v = t->dims[d].values[rest % t->dims[d].nvalues];
            rest /= t->dims[d].nvalues;
            b[i].rep[d] = v;
            b[i].align[d] = align_class(v);
            bucket_of(v, &b[i].lo[d], &b[i].hi[d]);
            if (t->dims[d].exact) {
                b[i].exact |= 1u << d;
                b[i].lo[d] = v;
                b[i].hi[d] = v + 1;
            }
            b[i].slo[d] = b[i].lo[d];
            b[i].shi[d] = b[i].hi[d];
            if (t->dims[d].range) {
                b[i].ranged |= 1u << d;
                b[i].salign[d] = (unsigned char)t->dims[d].range_align;
                if (t->dims[d].range_lo > b[i].slo[d]) b[i].slo[d] = t->dims[d].range_lo;
                if (t->dims[d].range_hi + 1 < b[i].shi[d]) b[i].shi[d] = t->dims[d].range_hi + 1;
            }
        }
        bucket_key_exact(t->ndims, names, b[i].lo, b[i].rep, b[i].exact, b[i].key, sizeof b[i].key);   /* fits: key_room */
    }
    *out = b;
    return total;
}

int bucket_align(const bucket *b, int d)
{
    int c = b->align[d];
    return c == 1 || c == 2 || c == 4 || c == ALIGN_FULL ? c : align_class(b->rep[d] > 0 ? b->rep[d] : 1);
}

int bucket_split_point(long long lo, long long hi, long long *at)
{
    /* The geometric middle, rounded down, else up, to a multiple of 64,
    ** else of 8, else not rounded (down only: [2, 4) stays whole). A part's
    ** sizes (its lower edge, and its upper edge rounded to 64, where it is
    ** tuned and raced) then keep the bucket's alignment as far as the range
    ** allows: a cut at 1086 in [1024, 1152) would tune a part at rows that
    ** are not 16-byte aligned, where the configs fast at 1088 cannot run. */
    double mid = sqrt((double)(lo > 1 ? lo : 1) * (double)hi);
    static const long long q[] = { 64, 8, 1 };
    for (int i = 0; i < 3; i++) {
        long long v = (long long)mid / q[i] * q[i];
        if (v <= lo && q[i] > 1) v += q[i];
        if (v > lo && v < hi) {
            *at = v;
            return 1;
        }
    }
    return 0;
}

/* A range dim's part [a, z) of bucket b is tuned, as the bucket is, at
** its largest size: the largest of [a, z) of the bucket's key class
** (align_key_class against the bucket's own lower edge), else z - 1. */
static long long range_part_rep(const bucket *b, int d, long long a, long long z)
{
    int want = align_key_class(b->rep[d], b->lo[d]);
    for (long long s = z - 1; s >= a && s > z - 1 - 2 * ALIGN_FULL; s--)
        if (align_key_class(s, b->lo[d]) == want) return s;
    return z - 1;
}

int bucket_split(const bucket *b, unsigned mask, bucket *parts)
{
    return bucket_split_at(b, mask, NULL, parts);
}

int bucket_split_at(const bucket *b, unsigned mask, const long long *cut, bucket *parts)
{
    long long at[SPEC_MAXDIMS];
    int dims[SPEC_MAXDIMS], k = 0;
    for (int d = 0; d < b->ndims; d++) {
        int can = (mask >> d & 1) && !(b->exact >> d & 1);
        if (can && cut && cut[d] > b->lo[d] && cut[d] < b->hi[d]) at[d] = cut[d];
        else can = can && bucket_split_point(b->lo[d], b->hi[d], &at[d]);
        if (can && (!(b->ranged >> d & 1) || (at[d] > b->slo[d] && at[d] < b->shi[d])))   /* sizes of the range each side */
            dims[k++] = d;
    }
    int n = 1 << k;
    char home[96];
    bucket_home(b->key, home, sizeof home);
    for (int i = 0; i < n; i++) {
        bucket *p = &parts[i];
        *p = *b;
        for (int d = 0; d < b->ndims; d++) p->align[d] = bucket_align(b, d);   /* the parts of parts too */
        for (int j = 0; j < k; j++) {
            int d = dims[j], upper = i >> (k - 1 - j) & 1;   /* dim 0 varies slowest */
            if (upper) p->lo[d] = p->slo[d] = at[d];
            else p->hi[d] = p->shi[d] = at[d];
            if (b->ranged >> d & 1) {
                p->rep[d] = range_part_rep(b, d, p->slo[d], p->shi[d]);
                continue;
            }
            /* Elsewhere the first size of the bucket's class from the
            ** lower edge: a part of an odd bucket is tuned at an odd size. */
            long long first = align_up(p->lo[d], p->align[d]);
            p->rep[d] = b->rep[d] >= p->lo[d] && b->rep[d] < p->hi[d] ? b->rep[d] : first < p->hi[d] ? first : p->lo[d];
        }
        int len = snprintf(p->key, sizeof p->key, "%s%c", home, BUCKET_PART);
        for (int d = 0; d < b->ndims && len < (int)sizeof p->key; d++) {
            char sz[32];
            fmt_size(sz, sizeof sz, p->lo[d]);
            len += snprintf(p->key + len, sizeof p->key - (size_t)len, "%s%s", d ? "," : "", sz);
        }
        if (len >= (int)sizeof p->key) return -1;
    }
    return n;
}

/* One size as fmt_size writes it ("2^12" or "5760"), ending at a byte of
** stop: the value and the end, or NULL. */
static const char *read_size(const char *p, const char *stop, long long *v)
{
    int pow2 = !strncmp(p, "2^", 2);
    if (pow2) p += 2;
    long long x;
    size_t n = strcspn(p, stop);
    if (!n || (p[0] == '0' && n > 1) || parse_size(p, n, pow2 ? 0 : 1, pow2 ? 62 : SPEC_MAXELEMS, &x)) return NULL;
    if (pow2) x = 1LL << x;
    else if ((x & (x - 1)) == 0) return NULL;       /* fmt_size writes a power of two as 2^k */
    *v = x;
    return p + n;
}

int bucket_key_parse(const char *key, bucket_parsed *out, char *why, int cap)
{
    memset(out, 0, sizeof *out);
    const char *p = key;
    for (;;) {
        if (out->ndims == SPEC_MAXDIMS) return snprintf(why, (size_t)cap, "more than %d dims", SPEC_MAXDIMS), -1;
        int d = out->ndims;
        size_t n = strcspn(p, "=");
        if (!p[n] || n >= sizeof out->names[d]) return snprintf(why, (size_t)cap, "a dim without '=size'"), -1;
        snprintf(out->names[d], sizeof out->names[d], "%.*s", (int)n, p);
        if (!is_name(out->names[d])) return snprintf(why, (size_t)cap, "dim '%s' is no name", out->names[d]), -1;
        p += n + 1;
        if (strncmp(p, BUCKET_LOG2, 2)) {
            /* An exact dim (names.h): its size in digits, no class. */
            size_t len = strcspn(p, (char[]){ ',', BUCKET_PART, 0 });
            if (!len || p[0] == '0' || parse_size(p, len, 1, SPEC_MAXELEMS, &out->lo[d]))
                return snprintf(why, (size_t)cap, "dim '%s': its bucket is neither 2^k nor an exact size",
                                out->names[d]), -1;
            out->exact |= 1u << d;
            p += len;
        } else if (!(p = read_size(p, ":,/", &out->lo[d]))) {
            return snprintf(why, (size_t)cap, "dim '%s': its lower edge is not 2^k", out->names[d]), -1;
        } else if (!strncmp(p, ":align", 6)) {
            p += 6;
            if ((*p != '1' && *p != '2' && *p != '4') || (p[1] && !strchr(",/", p[1])))
                return snprintf(why, (size_t)cap, "dim '%s': the class is not 1, 2 or 4", out->names[d]), -1;
            out->cls[d] = *p++ - '0';
        }
        out->ndims++;
        if (*p != ',') break;
        p++;
    }
    if (*p == BUCKET_PART) {
        out->part = 1;
        p++;
        for (int d = 0; d < out->ndims; d++) {
            if (d && *p++ != ',') return snprintf(why, (size_t)cap, "the part's corner has too few sizes"), -1;
            if (!(p = read_size(p, ",", &out->corner[d])))
                return snprintf(why, (size_t)cap, "the part's corner is not %d sizes", out->ndims), -1;
            if ((out->exact >> d & 1) && out->corner[d] != out->lo[d])   /* an exact dim is never cut */
                return snprintf(why, (size_t)cap, "the part's corner in exact dim '%s' is not its size",
                                out->names[d]), -1;
        }
    }
    if (*p) return snprintf(why, (size_t)cap, "trailing text '%.20s'", p), -1;
    return 0;
}

long long bucket_parsed_hi(const bucket_parsed *k, int d)
{
    return k->exact >> d & 1 ? k->lo[d] + 1 : 2 * k->lo[d];
}

void bucket_home(const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "%.*s", (int)strcspn(key, (char[]){ BUCKET_PART, 0 }), key);
}

int bucket_in_home(const char *key, const char *home)
{
    size_t n = strlen(home);
    return !strncmp(key, home, n) && (key[n] == 0 || key[n] == BUCKET_PART);
}
