/* names.c: see names.h. */
#include "names.h"
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static const dtype_info dtypes[] = {
    { "f32", 4, "float", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32" },
    { "f16", 2, "unsigned short", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "CU_TENSOR_MAP_DATA_TYPE_FLOAT16" },
    { "bf16", 2, "unsigned short", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" },
};

const dtype_info *dtype_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof dtypes / sizeof *dtypes; i++)
        if (!strcmp(dtypes[i].name, name)) return &dtypes[i];
    return NULL;
}

int dtype_size(const char *name)
{
    const dtype_info *d = dtype_find(name);
    return d ? d->size : 0;
}

static const char *const roles[ROLE_COUNT] = { "in", "out", "inout", "scalar", "dim" };
static const char *const kinds[PLAN_KINDS] = { "ptr", "dim", "i32", "f32", "workspace", "tmap" };
static const char *const inits[INIT_COUNT] = { "normal", "uniform" };
static const char *const timings[TIMING_COUNT] = { TIMING_FLUSH, TIMING_STREAM, TIMING_NEIGHBOUR };

static const char *name_of(const char *const *names, int n, int i) { return i >= 0 && i < n ? names[i] : NULL; }

static int find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

const char *role_name(int role) { return name_of(roles, ROLE_COUNT, role); }
int role_find(const char *name) { return find(roles, ROLE_COUNT, name); }
const char *plan_kind_name(int kind) { return name_of(kinds, PLAN_KINDS, kind); }
int plan_kind_find(const char *name) { return find(kinds, PLAN_KINDS, name); }
const char *init_name(int init) { return name_of(inits, INIT_COUNT, init); }
int init_find(const char *name) { return find(inits, INIT_COUNT, name); }
const char *timing_name(int id) { return timings[id > 0 && id < TIMING_COUNT ? id : 0]; }
int timing_find(const char *name) { return find(timings, TIMING_COUNT, name); }
int timing_of(const char *name)
{
    int id = timing_find(name);
    return id < 0 ? TIMING_FLUSH_ID : id;
}

size_t arch_base_len(const char *arch)
{
    size_t n = strlen(arch);
    if (n > 4 && (arch[n - 1] == 'a' || arch[n - 1] == 'f') && arch[n - 2] >= '0' && arch[n - 2] <= '9') return n - 1;
    return n;
}

void arch_base(const char *arch, char out[16])
{
    snprintf(out, 16, "%.15s", arch);
    out[arch_base_len(out)] = 0;
}

/* NVRTC's real targets (code=sm_XX): what --gpu-architecture may be. */
static const char *const known_archs[] = {
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f",
    "sm_101", "sm_101a", "sm_103", "sm_103a", "sm_110", "sm_110a", "sm_120", "sm_120a", "sm_121", "sm_121a", NULL,
};

int arch_known(const char *arch)
{
    if (!arch) return 0;
    for (const char *const *a = known_archs; *a; a++)
        if (!strcmp(*a, arch)) return 1;
    return 0;
}

const char *arch_list(void)
{
    static char list[256];
    if (!list[0]) {
        size_t at = 0;
        for (const char *const *a = known_archs; *a && at < sizeof list; a++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", a == known_archs ? "" : ", ", *a);
    }
    return list;
}

unsigned bucket_exact_dims(const char *key, const char *dims, int ndims, long long *size)
{
    if (!key || !dims || ndims < 1 || ndims > 16) return 0;
    unsigned mask = 0;
    long long got[16];
    const char *p = key, *q = dims;
    for (int d = 0; d < ndims; d++) {
        size_t n = strcspn(q, ",");
        if (!n || strncmp(p, q, n) || p[n] != '=') return 0;
        p += n + 1;
        q += n + (q[n] == ',');
        size_t len = strspn(p, "0123456789");
        if (len && p[0] != '0' && len <= 18 && (!p[len] || p[len] == ',' || p[len] == BUCKET_PART)) {
            long long v = 0;
            for (size_t i = 0; i < len; i++) v = v * 10 + (p[i] - '0');
            if (v < (1LL << 62)) {
                mask |= 1u << d;
                got[d] = v;
            }
        }
        p += strcspn(p, (char[]){ ',', BUCKET_PART, 0 });
        if ((d + 1 < ndims) != (*p == ',')) return 0;
        if (*p == ',') p++;
    }
    if (*q) return 0;
    for (int d = 0; size && d < ndims; d++)
        if (mask >> d & 1) size[d] = got[d];
    return mask;
}
