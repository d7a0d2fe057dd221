/* align.c: see align.h. */
#include "align.h"
#include "json.h"
#include <stdio.h>
#include <string.h>

int align_shape(const char *shape, const char *dims, int ndims, unsigned char *lg, char *err, int errcap)
{
    json *o;
    char why[160];
    if (json_parse(shape, &o, why, sizeof why)) {
        snprintf(err, (size_t)errcap, "shape is not valid JSON (%s)", why);
        return -1;
    }
    int rc = 0;
    if (o->type != JSON_OBJ) {
        snprintf(err, (size_t)errcap, "shape is not a JSON object of dim -> size");
        rc = -1;
    }
    const char *p = dims;
    for (int d = 0; d < ndims && !rc; d++) {
        /* The dim's name is p[0, n): matched against the keys in place, so
        ** no name is too long to look up. */
        size_t n = strcspn(p, ",");
        const json *v = NULL;
        for (int i = 0; i < o->n && !v; i++)
            if (strlen(o->keys[i]) == n && !strncmp(o->keys[i], p, n)) v = &o->items[i];
        int shown = n > 32 ? 32 : (int)n;
        if (!v) {
            snprintf(err, (size_t)errcap, "shape has no size for dim '%.*s'", shown, p);
            rc = -1;
        } else if (v->type != JSON_NUM || !v->is_int || v->i < 1) {
            snprintf(err, (size_t)errcap, "shape's size for dim '%.*s' is not an integer >= 1", shown, p);
            rc = -1;
        } else {
            lg[d] = (unsigned char)align_log2(v->i);
        }
        p += n + (p[n] == ',');
    }
    json_free(o);
    return rc;
}
