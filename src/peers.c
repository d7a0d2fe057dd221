/* peers.c: see peers.h. */
#define _GNU_SOURCE
#include "peers.h"
#include "json.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void peers_free(peers *ps)
{
    if (!ps) return;
    free(ps->p);
    ps->p = NULL;
    ps->n = 0;
}

/* "gemm_nt:bf16:4096x14336x4096" into p's op, dtype and shape. */
static int parse_case(const char *s, peer *p)
{
    const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || c1 == s || c2 == c1 + 1 || (size_t)(c1 - s) >= sizeof p->op ||
        (size_t)(c2 - c1 - 1) >= sizeof p->dtype)
        return -1;
    snprintf(p->op, sizeof p->op, "%.*s", (int)(c1 - s), s);
    snprintf(p->dtype, sizeof p->dtype, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    const char *q = c2 + 1;
    p->ndims = 0;
    while (*q) {
        if (p->ndims == PEERS_MAXDIMS) return -1;
        char *end;
        errno = 0;
        long long v = strtoll(q, &end, 10);
        if (end == q || errno || v < 1) return -1;
        p->shape[p->ndims++] = v;
        if (*end == 'x') q = end + 1;
        else if (*end) return -1;
        else q = end;
    }
    return p->ndims ? 0 : -1;
}

int peers_load(const char *path, peers *out, char *err, int errcap)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = read_regular_file(path, PEERS_MAXBYTES, &len);
    if (!text) {
        snprintf(err, (size_t)errcap, "peers '%s': %s", path, read_errstr(errno, PEERS_MAXBYTES));
        return -1;
    }
    if (memchr(text, 0, len)) {
        snprintf(err, (size_t)errcap, "peers '%s': a NUL byte: not JSON lines", path);
        free(text);
        return -1;
    }
    int no = 0, rc = 0, alloc = 0;
    for (char *line = text, *next; !rc && *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next) *next++ = 0;
        no++;
        if (strspn(line, " \t\r\n") == strlen(line)) continue;
        json *doc;
        char jerr[160];
        if (json_parse(line, &doc, jerr, sizeof jerr)) {
            snprintf(err, (size_t)errcap, "peers '%s' line %d: %s", path, no, jerr);
            rc = -1;
            break;
        }
        const json *c = json_get(doc, "case");
        peer base;
        memset(&base, 0, sizeof base);
        if (!c || c->type != JSON_STR || parse_case(c->str, &base)) {
            snprintf(err, (size_t)errcap, "peers '%s' line %d: \"case\" must be \"op:dtype:NxM...\"", path, no);
            rc = -1;
        }
        for (int i = 0; !rc && doc->type == JSON_OBJ && i < doc->n; i++) {
            const char *k = doc->keys[i];
            size_t kl = strlen(k);
            int tf = kl > 7 && !strcmp(k + kl - 7, "_tflops");
            int gb = kl > 5 && !strcmp(k + kl - 5, "_gbps");
            if ((!tf && !gb) || doc->items[i].type != JSON_NUM || !(doc->items[i].num > 0)) continue;
            size_t nl = kl - (tf ? 7 : 5);
            if (nl >= sizeof base.name) continue;
            if (out->n == alloc) {
                alloc = alloc ? 2 * alloc : 16;
                out->p = xrealloc(out->p, sizeof *out->p * (size_t)alloc);
            }
            peer *p = &out->p[out->n++];
            *p = base;
            snprintf(p->name, sizeof p->name, "%.*s", (int)nl, k);
            p->tflops = tf;
            p->value = doc->items[i].num;
        }
        json_free(doc);
    }
    free(text);
    if (rc) peers_free(out);
    return rc;
}

static int parse_edges(const char *s, long long *v, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        char *end;
        v[n++] = strtoll(s, &end, 10);
        if (*end != ',') break;
        s = end + 1;
    }
    return n;
}

const peer *peers_find(const peers *ps, const char *op, const char *dtype, const char *lo, const char *hi, int tflops)
{
    long long l[PEERS_MAXDIMS], h[PEERS_MAXDIMS];
    int nl = parse_edges(lo, l, PEERS_MAXDIMS), nh = parse_edges(hi, h, PEERS_MAXDIMS);
    if (!ps || nl != nh) return NULL;
    for (int i = 0; i < ps->n; i++) {
        const peer *p = &ps->p[i];
        if (p->tflops != tflops || p->ndims != nl || strcmp(p->op, op) || strcmp(p->dtype, dtype)) continue;
        int in = 1;
        for (int d = 0; d < nl && in; d++) in = p->shape[d] >= l[d] && p->shape[d] < h[d];
        if (in) return p;
    }
    return NULL;
}
