/*
** lookup: ask a registry which configuration to use, as an application would.
**
**     lookup REGISTRY OP ARCH DTYPE SIZE [SIZE...]
**
** prints one line and exits 0:
**
**     axpy sm_90 bf16 [50000000] -> axpy/vec {"block":256} (exact, bucket n=2^25, 123.4 us)
**
** or prints why not on stderr and exits 1 (2 for a usage error).
*/
#include "aitune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXDIMS 8

int main(int argc, char **argv)
{
    int ndims = argc - 5;
    if (ndims < 1 || ndims > MAXDIMS) {
        fprintf(stderr, "usage: lookup REGISTRY OP ARCH DTYPE SIZE [SIZE...]\n");
        return 2;
    }
    long long shape[MAXDIMS];
    for (int i = 0; i < ndims; i++) {
        const char *arg = argv[5 + i];
        char *end;
        errno = 0;
        shape[i] = strtoll(arg, &end, 10);
        if (end == arg || *end || errno) {
            fprintf(stderr, "lookup: error: size '%s' is not an integer\n", arg);
            return 2;
        }
    }

    aitune *h;
    aitune_choice c;
    int rc = aitune_open(argv[1], &h);
    if (rc == AITUNE_OK)
        rc = aitune_lookup(h, argv[2], argv[3], argv[4], shape, ndims, &c);
    if (rc != AITUNE_OK) {
        fprintf(stderr, "lookup: error: %s\n", aitune_errmsg(h));
        aitune_close(h);
        return 1;
    }

    printf("%s %s %s [", argv[2], argv[3], argv[4]);
    for (int i = 0; i < ndims; i++)
        printf("%s%lld", i ? "," : "", shape[i]);
    printf("] -> %s %s (%s", c.template_name, c.config, aitune_level_name(c.level));
    if (c.level != AITUNE_DEFAULT) {
        printf(", bucket %s", c.bucket);
        if (c.level == AITUNE_NEAREST)
            printf(", distance %.2f", c.distance);
        printf(", %.1f us", c.median_us);
    }
    printf(")\n");
    aitune_close(h);
    return 0;
}
