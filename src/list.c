/* list.c: `aitune list`: the ops, their template families (dtypes, archs,
** parameters) and the search strategies this aitune can use, read from the
** templates/ and search/ it found (cli_root). */
#define _GNU_SOURCE
#include "cli.h"
#include "tmpl.h"
#include <dirent.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char list_summary[] =
    "List the ops, template families and search strategies. For each op: its dims and dtypes; for\n"
    "each template: the dtypes and archs it supports and its parameters with their values (the\n"
    "space before constraints); then the strategies a spec's `search:` may name.\n\n"
    "  --json       one JSON object: {root, ops: [{name, dims, dtypes, templates: [...]}], strategies}\n\n"
    "Exit: 0, 2 for an unknown op, 3 when a template does not load.";
const char list_usage[] = "aitune list [OP] [--json]";

/* Strategies: the .lua files of search/ but the space helper, sorted. */
static int strategies(const char *root, char names[][32], int max)
{
    char *dir = xstrfmt("%s/search", root);
    DIR *d = opendir(dir);
    free(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len < 5 || len - 4 >= 32 || strcmp(e->d_name + len - 4, ".lua") || !strcmp(e->d_name, "space.lua")) continue;
        snprintf(names[n++], 32, "%.*s", (int)(len - 4), e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    return n;
}

/* A Lua value as text: numbers, strings, booleans. */
static void lua_text(lua_State *L, int idx, strbuf *out, int json)
{
    size_t len;
    int t = lua_type(L, idx);
    const char *s = luaL_tolstring(L, idx, &len);
    if (json && t != LUA_TNUMBER && t != LUA_TBOOLEAN) sb_json_str(out, s);
    else sb_add(out, s, len);
    lua_pop(L, 1);
}

/* One template, the table on top of the stack: dtypes, archs, params. */
static void describe(lua_State *L, const char *tname, char op_dtypes[][16], int nodt, strbuf *out, int json)
{
    int top = lua_gettop(L);
    strbuf dt = STRBUF_INIT, arch = STRBUF_INIT, params = STRBUF_INIT;
    if (lua_getfield(L, top, "dtypes") == LUA_TTABLE) {
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            if (json) sb_puts(&dt, i > 1 ? "," : "");
            else sb_puts(&dt, i > 1 ? " " : "");
            lua_text(L, -1, &dt, json);
            lua_pop(L, 1);
        }
    } else {
        for (int i = 0; i < nodt; i++) {
            sb_puts(&dt, i ? (json ? "," : " ") : "");
            if (json) sb_json_str(&dt, op_dtypes[i]);
            else sb_puts(&dt, op_dtypes[i]);
        }
    }
    lua_settop(L, top);
    lua_getfield(L, top, "min_cc");
    lua_getfield(L, top, "max_cc");
    int lo = lua_isinteger(L, -2) ? (int)lua_tointeger(L, -2) : 0, hi = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_settop(L, top);
    if (json) sb_printf(&arch, "\"min_cc\":%d,\"max_cc\":%s%.0d", lo, hi ? "" : "null", hi);
    else if (lo && hi) sb_printf(&arch, "sm_%d..sm_%d", lo, hi);
    else if (lo) sb_printf(&arch, "sm_%d+", lo);
    else if (hi) sb_printf(&arch, "..sm_%d", hi);
    else sb_puts(&arch, "any");
    double configs = 1;
    lua_getfield(L, top, "params");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);          /* {name, {values}} */
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        lua_Integer nv = (lua_Integer)lua_rawlen(L, -1);
        configs *= (double)nv;
        if (json) {
            sb_puts(&params, i > 1 ? "," : "");
            lua_text(L, -2, &params, 1);
            sb_puts(&params, ":[");
        } else {
            sb_puts(&params, i > 1 ? " " : "");
            lua_text(L, -2, &params, 0);
            sb_puts(&params, "=");
        }
        for (lua_Integer v = 1; v <= nv; v++) {
            lua_rawgeti(L, -1, v);
            sb_puts(&params, v > 1 ? "," : "");
            lua_text(L, -1, &params, json);
            lua_pop(L, 1);
        }
        if (json) sb_puts(&params, "]");
        lua_pop(L, 3);
    }
    lua_settop(L, top);
    if (json) {
        sb_puts(out, "{\"name\":");
        sb_json_str(out, tname);
        sb_printf(out, ",\"dtypes\":[%s],%s,\"params\":{%s},\"configs\":%.0f}", sb_str(&dt), sb_str(&arch),
                  sb_str(&params), configs);
    } else {
        sb_printf(out, "  %-22s %-16s %-8s %7.0f  %s\n", tname, sb_str(&dt), sb_str(&arch), configs, sb_str(&params));
    }
    sb_free(&dt);
    sb_free(&arch);
    sb_free(&params);
}

int cmd_list(int argc, char **argv)
{
    opt opts[] = { { "--json", 0, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("list", list_usage, list_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    int json = opts[0].set;
    const char *root = cli_root();
    tmpl *T = tmpl_open(root);
    char **ops = NULL;
    int nops = 0;
    if (tmpl_ops(T, &ops, &nops)) {
        error("%s", tmpl_errmsg(T));
        tmpl_close(T);
        return EXIT_INPUT;
    }
    if (np) {
        int found = 0;
        strbuf have = STRBUF_INIT;
        for (int i = 0; i < nops; i++) {
            found |= !strcmp(ops[i], pos[0]);
            sb_printf(&have, "%s%s", i ? ", " : "", ops[i]);
        }
        if (!found) rc = cli_usage_error("list", list_usage, "unknown op '%s' (ops: %s)", pos[0], sb_str(&have));
        sb_free(&have);
    }
    strbuf out = STRBUF_INIT;
    if (json) {
        sb_puts(&out, "{\"root\":");
        sb_json_str(&out, root);
        sb_puts(&out, ",\"ops\":[");
    } else {
        sb_printf(&out, "templates and strategies from %s\n\nops:\n", root);
    }
    strbuf tbl = STRBUF_INIT;   /* the text form lists templates after the ops */
    int shown = 0;
    for (int i = 0; i < nops && !rc; i++) {
        if (np && strcmp(ops[i], pos[0])) continue;
        int nd, ndt;
        char dims[TMPL_MAXDIMS][16], dts[32][16];
        char **tn = NULL;
        int ntn = 0;
        if (tmpl_op_info(T, ops[i], &nd, dims, &ndt, dts, 32) || tmpl_templates(T, ops[i], &tn, &ntn)) {
            rc = error("%s", tmpl_errmsg(T)) ? EXIT_INPUT : 0;
            break;
        }
        strbuf d = STRBUF_INIT, t = STRBUF_INIT;
        for (int k = 0; k < nd; k++) {
            if (json) { sb_puts(&d, k ? "," : ""); sb_json_str(&d, dims[k]); }
            else sb_printf(&d, "%s%s", k ? "," : "", dims[k]);
        }
        for (int k = 0; k < ndt; k++) {
            if (json) { sb_puts(&t, k ? "," : ""); sb_json_str(&t, dts[k]); }
            else sb_printf(&t, "%s%s", k ? " " : "", dts[k]);
        }
        if (json) {
            sb_puts(&out, shown++ ? "," : "");
            sb_puts(&out, "{\"name\":");
            sb_json_str(&out, ops[i]);
            sb_printf(&out, ",\"dims\":[%s],\"dtypes\":[%s],\"templates\":[", sb_str(&d), sb_str(&t));
        } else {
            sb_printf(&out, "  %-16s dims %-12s dtypes %-16s %d template%s\n", ops[i], sb_str(&d), sb_str(&t), ntn,
                      ntn == 1 ? "" : "s");
        }
        for (int k = 0; k < ntn && !rc; k++) {
            if (tmpl_push_template(T, tn[k])) {
                rc = error("%s", tmpl_errmsg(T)) ? EXIT_INPUT : 0;
                break;
            }
            if (json) sb_puts(&out, k ? "," : "");
            describe(tmpl_lua(T), tn[k], dts, ndt, json ? &out : &tbl, json);
            lua_pop(tmpl_lua(T), 1);
        }
        if (json) sb_puts(&out, "]}");
        sb_free(&d);
        sb_free(&t);
        for (int k = 0; k < ntn; k++) free(tn[k]);
        free(tn);
    }
    char st[64][32];
    int nst = strategies(root, st, 64);
    if (json) {
        sb_puts(&out, "],\"strategies\":[");
        for (int i = 0; i < nst; i++) {
            sb_puts(&out, i ? "," : "");
            sb_json_str(&out, st[i]);
        }
        sb_puts(&out, "]}\n");
    } else {
        sb_printf(&out, "\ntemplates:\n  %-22s %-16s %-8s %7s  %s\n%s\nstrategies (a spec's search:):\n ", "name", "dtypes",
                  "archs", "configs", "params", sb_str(&tbl));
        for (int i = 0; i < nst; i++) sb_printf(&out, " %s", st[i]);
        sb_puts(&out, "\n");
    }
    if (!rc) fputs(sb_str(&out), stdout);
    sb_free(&out);
    sb_free(&tbl);
    for (int i = 0; i < nops; i++) free(ops[i]);
    free(ops);
    tmpl_close(T);
    return rc;
}
