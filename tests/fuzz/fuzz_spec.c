/* fuzz_spec.c: libFuzzer harness for the spec loader (spec.c over libyaml).
** Any input must give 0 or -1 with one line of message: no crash, no leak,
** no undefined behaviour, no message with a control character in it. */
#include "spec.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spec s;
    char err[768];
    err[0] = 0;
    if (spec_load_text("fuzz.yaml", (const char *)data, size, &s, err, sizeof err) == 0) {
        for (int i = 0; i < s.ntasks; i++) {
            bucket *b;
            int n = spec_buckets(&s.tasks[i], &b);
            if (n < 1) abort();
            for (int k = 0; k < n; k++)
                if (!b[k].key[0]) abort();
            free(b);
        }
        spec_free(&s);
    } else {
        if (!err[0]) abort();                       /* a failure always says why */
        for (const unsigned char *p = (const unsigned char *)err; *p; p++)
            if (*p < 0x20 || *p == 0x7f) abort();   /* one line, no escapes */
    }
    return 0;
}
