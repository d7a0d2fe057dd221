/*
** fuzz_plan: libFuzzer over the launch-plan codec (plan_decode, plan_encode,
** plan_bind) and so over the JSON reader and the expression grammar: what a
** registry row can hold. Every plan that decodes must encode, decode again
** to the same encoding, and bind (or refuse to) without a sanitizer report.
**
**     clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -I/usr/local/cuda/include \
**         tests/fuzz/fuzz_plan.c src/plan.c src/expr.c src/json.c -o build/fuzz_plan  (or: make build/fuzz/fuzz_plan)
**     build/fuzz_plan tests/fuzz/corpus/plan
*/
#include "plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static CUresult fake_encode(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                            const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                            CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)dt, (void)addr, (void)strides, (void)es, (void)il, (void)sw, (void)l2, (void)oob;
    memset(m, 0, sizeof *m);
    for (cuuint32_t i = 0; i < rank; i++)
        if (!dims[i] || !box[i]) abort();   /* bind checked these */
    return CUDA_SUCCESS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char err[512];
    plan *p;
    if (!plan_decode(text, &p, err, sizeof err)) {
        char *j = plan_encode(p, err, sizeof err);
        if (!j) abort();
        plan *q;
        if (plan_decode(j, &q, err, sizeof err)) abort();
        char *j2 = plan_encode(q, err, sizeof err);
        if (!j2 || strcmp(j, j2)) abort();
        long long shapes[3][PLAN_MAXDIMS] = { { 1, 1, 1, 1 }, { 4096, 1000, 77, 3 }, { 1LL << 40, 1LL << 40, 5, 5 } };
        plan_value v[PLAN_MAXARGS];
        for (int i = 0; i < PLAN_MAXARGS; i++) v[i].ptr = 0x10000ULL * (unsigned)(i + 1), v[i].f32 = 1;
        plan_launch L;
        for (int s = 0; s < 3; s++) plan_bind(q, shapes[s], v, 0x900000, fake_encode, &L, err, sizeof err);
        free(j);
        free(j2);
        plan_free(q);
        plan_free(p);
    }
    free(text);
    return 0;
}
