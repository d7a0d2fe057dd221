/* identity.c: see identity.h. */
#define _GNU_SOURCE
#include "identity.h"
#include "cu.h"
#include "registry_winner.h"
#include "spec.h"
#include "util.h"
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void identity_hw(const device *d, char *out, int cap)
{
    snprintf(out, (size_t)cap, CU_HW_FORMAT, d->name, d->cc, d->sms, d->mem, d->l2);
}

void identity_toolchain(const device *d, char *out, int cap)
{
    snprintf(out, (size_t)cap, "driver %s|cuda %d|nvrtc %s", d->driver, d->cuda_driver, d->nvrtc);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fold every regular file of dir into h, in name order; the name goes in
** too, so a renamed or removed file changes the hash. */
static int hash_dir(const char *dir, uint64_t *h)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = xrealloc(names, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_name);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len = 0;
        char *text = read_file(path, &len);
        if (text) {     /* a sub-folder does not read: it is not a source */
            *h = hash_str(*h, names[i]);
            *h = hash_bytes(*h, text, len);
            free(text);
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

int identity_sources(const char *root, const char *op, char out[17])
{
    out[0] = 0;
    char dir[4096];
    uint64_t h = HASH_INIT;
    snprintf(dir, sizeof dir, "%s/templates/%s", root, op);
    if (hash_dir(dir, &h)) return -1;
    snprintf(dir, sizeof dir, "%s/templates/lib", root);
    hash_dir(dir, &h);
    hash_hex(h, out);
    return 0;
}

static void add_reason(char *out, int cap, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_reason(char *out, int cap, int *n, const char *fmt, ...)
{
    size_t len = strlen(out);
    if (len) len += (size_t)snprintf(out + len, (size_t)cap - len, "; ");
    if (len >= (size_t)cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, (size_t)cap - len, fmt, ap);
    va_end(ap);
    (*n)++;
}

/* The value of "op" in a run's sources object: a flat object of hex hashes
** that aitune wrote, so a plain search is enough. */
static int source_of(const char *sources, const char *op, char out[17])
{
    char key[96];
    snprintf(key, sizeof key, "\"%s\":\"", op);
    const char *p = strstr(sources, key);
    out[0] = 0;
    if (!p) return -1;
    p += strlen(key);
    int i = 0;
    while (i < 16 && p[i] && p[i] != '"') { out[i] = p[i]; i++; }
    out[i] = 0;
    return 0;
}

int identity_stale(const reg_winner_identity *w, const device *dev, const char *nvrtc, const char *root, char *out,
                   int cap)
{
    int n = 0;
    out[0] = 0;
    if (dev) {
        char hw[256];
        identity_hw(dev, hw, sizeof hw);
        if (strcmp(w->hw, hw)) add_reason(out, cap, &n, "GPU differs (measured on %s)", *w->hw ? w->hw : "an unknown GPU");
        if (strcmp(w->driver, dev->driver))
            add_reason(out, cap, &n, "driver changed (%s -> %s)", *w->driver ? w->driver : "?", dev->driver);
        if (w->cuda_driver != dev->cuda_driver)
            add_reason(out, cap, &n, "CUDA driver API changed (%d -> %d)", w->cuda_driver, dev->cuda_driver);
    }
    if (strcmp(w->nvrtc, nvrtc)) add_reason(out, cap, &n, "NVRTC changed (%s -> %s)", *w->nvrtc ? w->nvrtc : "?", nvrtc);
    if (strcmp(w->version, AITUNE_TOOL_VERSION))
        add_reason(out, cap, &n, "aitune changed (%s -> %s)", *w->version ? w->version : "?", AITUNE_TOOL_VERSION);
    char then[17], now[17];
    if (identity_sources(root, w->op, now)) add_reason(out, cap, &n, "no templates for op '%s' here", w->op);
    else if (!*w->sources || source_of(w->sources, w->op, then))
        add_reason(out, cap, &n, "template sources not recorded (measured by aitune 0.1)");
    else if (strcmp(then, now)) add_reason(out, cap, &n, "template sources changed (%s -> %s)", then, now);
    return n;
}

int winner_stamps_add(const reg_winner_identity *w, void *ctx)
{
    winner_stamps *c = ctx;
    if (c->n == c->cap) c->w = xrealloc(c->w, (size_t)(c->cap = c->cap ? 2 * c->cap : 32) * sizeof *c->w);
    winner_stamp *s = &c->w[c->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->op, sizeof s->op, "%s", w->op);
    snprintf(s->arch, sizeof s->arch, "%s", w->arch);
    snprintf(s->dtype, sizeof s->dtype, "%s", w->dtype);
    snprintf(s->bucket, sizeof s->bucket, "%s", w->bucket);
    snprintf(s->hw, sizeof s->hw, "%s", w->hw);
    snprintf(s->driver, sizeof s->driver, "%s", w->driver);
    snprintf(s->nvrtc, sizeof s->nvrtc, "%s", w->nvrtc);
    snprintf(s->version, sizeof s->version, "%s", w->version);
    s->sources = xstrdup(w->sources);
    s->cuda_driver = w->cuda_driver;
    s->exhaustive = w->exhaustive;
    return 0;
}

void winner_stamps_free(winner_stamps *s)
{
    for (int i = 0; i < s->n; i++) free(s->w[i].sources);
    free(s->w);
    memset(s, 0, sizeof *s);
}

int winner_stamps_find(const winner_stamps *s, const char *op, const char *arch, const char *dtype,
                       const char *bucket, const char *hw, int *any)
{
    int mine = -1;
    *any = 0;
    for (int i = 0; i < s->n; i++) {
        const winner_stamp *w = &s->w[i];
        if (strcmp(w->op, op) || strcmp(w->arch, arch) || strcmp(w->dtype, dtype) || !bucket_in_home(w->bucket, bucket))
            continue;
        *any = 1;
        if (!strcmp(w->hw, hw)) mine = i;
    }
    return mine;
}

int winner_stamp_stale(const winner_stamp *s, const device *dev, const char *root)
{
    reg_winner_identity w = { .op = s->op, .arch = s->arch, .dtype = s->dtype, .bucket = s->bucket, .hw = s->hw,
                              .driver = s->driver, .nvrtc = s->nvrtc, .version = s->version, .sources = s->sources,
                              .cuda_driver = s->cuda_driver, .tmpl = "", .config = "", .when = "" };
    char why[512];
    return identity_stale(&w, dev, dev->nvrtc, root, why, sizeof why) > 0;
}
