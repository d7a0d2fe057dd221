/* fuzz_expr.c: libFuzzer harness for the launch-geometry expression parser
** (expr.c), which reads templates and, through emit and the runtime,
** registries. The first 8 bytes give the dims' values (any 64-bit values,
** negative and huge included); the rest is the expression. Overflow,
** division and nesting must be errors, never undefined behaviour. */
#include "expr.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { "n", "m", "k", "rows", "cols" };
    long long values[5] = { 1, 2, 3, 4, 5 };
    if (size >= 8) {
        /* Two bytes per dim: a shift and a small multiplier, so values
        ** reach every magnitude up to 2^62 and the edges around it. */
        for (int i = 0; i < 4; i++) {
            int shift = data[2 * i] % 63;
            long long v = (long long)(data[2 * i + 1] % 3) - 1;
            values[i] = v * (1LL << shift) + (data[2 * i] & 0x80 ? 1 : 0);
        }
        values[4] = values[0] / 2 + values[1] / 2;
        data += 8;
        size -= 8;
    }
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    long long out;
    char err[256];
    err[0] = 0;
    if (expr_eval(s, 5, names, values, &out, err, sizeof err) != 0 && !err[0]) abort();
    free(s);
    return 0;
}
