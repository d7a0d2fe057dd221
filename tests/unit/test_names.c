/* test_names: the names the tool, libaitune and the registry share
** (names.h): each table read both ways, unknown names refused, the arch
** rule, and the SQL spellings agreeing with the C ones. */
#define _GNU_SOURCE
#include "check.h"
#include "names.h"
#include <sqlite3.h>
#include <cuda.h>

int main(void)
{
    const dtype_info *d = dtype_find("bf16");
    CHECK(d && d->size == 2 && d->tmap == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && !strcmp(d->ctype, "unsigned short") &&
              !strcmp(d->tmap_name, "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"), "bf16: 2 bytes, its tensor-map type and C type");
    d = dtype_find("f32");
    CHECK(d && d->size == 4 && d->tmap == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 && !strcmp(d->ctype, "float"), "f32");
    CHECK(dtype_size("f16") == 2 && dtype_size("f64") == 0 && dtype_size("") == 0 && dtype_size(NULL) == 0 && !dtype_find("F32"),
          "unknown dtypes have no size (f64, empty, NULL, F32)");

    int ok = 1;
    for (int r = 0; r < ROLE_COUNT; r++) ok &= role_find(role_name(r)) == r;
    CHECK(ok && !strcmp(role_name(ROLE_INOUT), "inout") && !strcmp(role_name(ROLE_DIM), "dim"), "roles read back both ways");
    CHECK(role_find("input") == -1 && role_find(NULL) == -1 && role_name(ROLE_COUNT) == NULL && role_name(-1) == NULL,
          "an unknown role is -1, a role out of range has no name");
    ok = 1;
    for (int k = 0; k < PLAN_KINDS; k++) ok &= plan_kind_find(plan_kind_name(k)) == k;
    CHECK(ok && plan_kind_find("tmap") == PLAN_TMAP && plan_kind_find("f64") == -1, "plan kinds read back both ways");
    CHECK(init_find("uniform") == INIT_UNIFORM && init_find("normal") == INIT_NORMAL && init_find("gauss") == -1 &&
              !strcmp(init_name(INIT_UNIFORM), "uniform"), "init names");
    CHECK(!strcmp(timing_name(0), "flush") && !strcmp(timing_name(1), "stream") && timing_find("stream") == 1 &&
              timing_find("flush") == 0 && timing_find("warm") == -1 && timing_find(NULL) == -1, "timing names");
    CHECK(!strcmp(timing_name(TIMING_NEIGHBOUR_ID), "neighbour") && timing_find("neighbour") == TIMING_NEIGHBOUR_ID &&
              !strcmp(timing_name(7), "flush") && !strcmp(timing_name(-1), "flush"), "neighbour, and ids out of range");
    CHECK(timing_of("stream") == 1 && timing_of("neighbour") == 2 && timing_of(NULL) == 0 && timing_of("warm") == 0,
          "a stored name's id: unknown and NULL are flush");
    /* The SQL that reads a stored timing gives the ids timing_of gives. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int same = sqlite3_open(":memory:", &db) == SQLITE_OK &&
               sqlite3_prepare_v2(db, "WITH t(x) AS (VALUES ('flush'), ('stream'), ('neighbour'), (NULL), ('warm')) "
                                      "SELECT x, " TIMING_ID_SQL("x") " FROM t", -1, &st, NULL) == SQLITE_OK;
    int rows = 0;
    while (same && sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        same &= sqlite3_column_int(st, 1) == timing_of((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    CHECK(same && rows == 5, "TIMING_ID_SQL reads each stored timing as timing_of does");

    char b[16];
    struct { const char *in, *out; } archs[] = {
        { "sm_90a", "sm_90" }, { "sm_100f", "sm_100" }, { "sm_90", "sm_90" }, { "sm_121a", "sm_121" },
        { "mega", "mega" }, { "sm_a", "sm_a" }, { "x1a", "x1a" }, { "", "" },
    };
    ok = 1;
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
        arch_base(archs[i].in, b);
        if (strcmp(b, archs[i].out) || arch_base_len(archs[i].in) != strlen(archs[i].out)) {
            printf("     %s -> %s (want %s)\n", archs[i].in, b, archs[i].out);
            ok = 0;
        }
    }
    CHECK(ok, "arch_base drops one 'a' or 'f' after the digits of a name longer than 4");
    arch_base("sm_90aaaaaaaaaaaaaaaaaaaaa", b);
    CHECK(strlen(b) <= 15, "arch_base keeps at most 15 characters (%s)", b);
    CHECK(!strcmp(ARCH_IN_SQL("arch", "?2"), "arch IN (?2, ?2 || 'a', ?2 || 'f')"), "ARCH_IN_SQL: %s", ARCH_IN_SQL("arch", "?2"));
    CHECK(arch_known("sm_90a") && arch_known("sm_80") && !arch_known("sm_90x") && !arch_known(NULL), "arch_known");
    CHECK(strstr(arch_list(), "sm_80, ") != NULL, "arch_list: %.40s...", arch_list());
    CHECK(BUCKET_PART_SQL[0] == '\'' && BUCKET_PART_SQL[1] == BUCKET_PART && BUCKET_PART_SQL[2] == '\'' && !BUCKET_PART_SQL[3],
          "the SQL literal of the part separator is BUCKET_PART");
    CHECK_DONE();
}
