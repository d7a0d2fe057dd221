/* dbguard.c: see dbguard.h. */
#define _GNU_SOURCE
#include "dbguard.h"
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *dbguard_name(const char *path)
{
    size_t n = strlen(path);
    int rel = path[0] != '/';
    char *out = malloc(n + 3);
    if (!out) return NULL;
    snprintf(out, n + 3, "%s%s", rel ? "./" : "", path);
    return out;
}

char *dbguard_immutable_uri(const char *path)
{
    char *abs = realpath(path, NULL);
    if (!abs) return NULL;
    static const char tail[] = "?immutable=1";
    size_t n = strlen(abs);
    char *uri = malloc(sizeof "file:" + 3 * n + sizeof tail), *q = uri;
    if (!uri) {
        free(abs);
        errno = ENOMEM;
        return NULL;
    }
    q += sprintf(q, "file:");
    /* Percent-encode all but unreserved characters, so '?', '#' and '%' in
    ** a file name cannot be read as URI syntax. */
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
            *q++ = (char)*p;
        else
            q += sprintf(q, "%%%02X", *p);
    }
    strcpy(q, tail);
    free(abs);
    return uri;
}

static const char *const tables[] = {
    "meta", "devices", "runs", "measurements", "winners", "defaults", "cubins", "misses", "vendor_times", "scans", "decided",
    "sqlite_sequence", "sqlite_stat1", "sqlite_stat4", NULL,
};

/* Each trigger of db/schema.sql and the table it is on. */
const char *const dbguard_trigger_names[] = { "devices_identity", "winners_hw_fill", NULL };
static const char *const trigger_tables[] = { "devices", "winners", NULL };

/* Whether name is one of the schema's triggers, on its table. */
static int schema_trigger(const char *name, const char *tbl)
{
    for (int i = 0; dbguard_trigger_names[i]; i++)
        if (!strcmp(dbguard_trigger_names[i], name)) return tbl && !strcmp(trigger_tables[i], tbl);
    return 0;
}

static int listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (!strcmp(*list, name)) return 1;
    return 0;
}

/* Names from the file are shown cut and with control bytes replaced, so the
** message stays one line. */
static void shown(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s && *s && i + 1 < cap && i < 64; s++, i++) out[i] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    out[i] = 0;
}

static int refuse(char *why, size_t cap, const char *type, const char *name, const char *what)
{
    char n[80];
    shown(name, n, sizeof n);
    snprintf(why, cap, "%s '%s' %s: not an aitune registry (or one altered to run code when read)", type, n, what);
    return -1;
}

/* Whether table holds a generated column (PRAGMA table_xinfo: hidden 2 or
** 3): its expression would run on every read. */
static int generated(sqlite3 *db, const char *table, int *out)
{
    sqlite3_stmt *st;
    char *sql = sqlite3_mprintf("PRAGMA main.table_xinfo(%Q)", table);
    if (!sql) return -1;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return -1;
    *out = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (sqlite3_column_int(st, 6) >= 2) *out = 1;   /* cid, name, type, notnull, dflt, pk, hidden */
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Whether ref holds a trigger of this name with this text. */
static int ref_trigger(sqlite3 *ref, const char *name, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ref, "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?1 AND sql = ?2", -1,
                           &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sql, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

int dbguard_check(sqlite3 *db, sqlite3 *ref, char *why, size_t cap)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, rootpage, sql FROM main.sqlite_master", -1, &st,
                                NULL);
    if (rc != SQLITE_OK) {
        snprintf(why, cap, "cannot read its schema: %s", sqlite3_errmsg(db));
        return -1;
    }
    int bad = 0;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *tbl = (const char *)sqlite3_column_text(st, 2);
        const char *sql = (const char *)sqlite3_column_text(st, 4);
        int root = sqlite3_column_int(st, 3), gen = 0;
        if (!type || !name) {
            bad = refuse(why, cap, "an object", "", "without a type or name");
        } else if (!strcmp(type, "table")) {
            if (!listed(tables, name)) bad = refuse(why, cap, "table", name, "is not one of the schema's");
            else if (root == 0 || (sql && !strncmp(sql, "CREATE VIRTUAL", 14)))
                bad = refuse(why, cap, "table", name, "is a virtual table");
            else if (generated(db, name, &gen)) bad = refuse(why, cap, "table", name, "cannot be read");
            else if (gen) bad = refuse(why, cap, "table", name, "has a generated column");
        } else if (!strcmp(type, "index")) {
            if (!tbl || !listed(tables, tbl)) bad = refuse(why, cap, "index", name, "is on a table not of the schema");
        } else if (!strcmp(type, "trigger")) {
            int known = ref ? sql && ref_trigger(ref, name, sql) : schema_trigger(name, tbl);
            if (!known) bad = refuse(why, cap, "trigger", name, "is not one of the schema's");
        } else if (!strcmp(type, "view")) {
            bad = refuse(why, cap, "view", name, "is a view, not a table");
        } else {
            bad = refuse(why, cap, type, name, "is of an unknown kind");
        }
    }
    sqlite3_finalize(st);
    if (!bad && rc != SQLITE_DONE) {
        snprintf(why, cap, "cannot read its schema: %s", sqlite3_errmsg(db));
        return -1;
    }
    return bad;
}

static int tick(void *ctx)
{
    dbguard_budget *b = ctx;
    if (--b->left >= 0) return 0;
    b->hit = 1;
    return 1;
}

/* A statement begins running (or a trigger's subprogram does): its own
** budget. */
static int arm(unsigned type, void *ctx, void *p, void *x)
{
    (void)type, (void)p, (void)x;
    dbguard_budget *b = ctx;
    b->left = b->ticks;
    b->hit = 0;
    return 0;
}

void dbguard_bound(sqlite3 *db, dbguard_budget *b, long long steps)
{
    b->ticks = steps / DBGUARD_TICK;
    b->left = b->ticks;
    b->hit = 0;
    sqlite3_progress_handler(db, DBGUARD_TICK, tick, b);
    sqlite3_trace_v2(db, SQLITE_TRACE_STMT, arm, b);
}
