/* identity.c: see identity.h. */
#define _GNU_SOURCE
#include "identity.h"
#include "util.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void identity_hw(const device *d, char *out, int cap)
{
    snprintf(out, (size_t)cap, "%s|sm_%d|%d SMs|%lld B|L2 %lld B", d->name, d->cc, d->sms, d->mem, d->l2);
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
