/* list.c: `aitune list`: the ops, their template families (dtypes, archs,
** parameters) and the search strategies this aitune can use, read from the
** templates/ and search/ it found (cli_root). */
#define _GNU_SOURCE
#include "cli.h"
#include "json.h"
#include "search.h"
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

/* Strategies: the .lua files of search/ but the space helper and the
** polish (search.h: SEARCH_POLISH), sorted. */
static int strategies(const char *root, char names[][32], int max)
{
    char *dir = xstrfmt("%s/search", root);
    DIR *d = opendir(dir);
    free(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len < 5 || len - 4 >= 32 || strcmp(e->d_name + len - 4, ".lua") || !strcmp(e->d_name, "space.lua") ||
            !strcmp(e->d_name, SEARCH_POLISH ".lua"))
            continue;
        snprintf(names[n++], 32, "%.*s", (int)(len - 4), e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    return n;
}

/* A Lua value as text: numbers, strings, booleans. */
static void lua_text(lua_State *L, int idx, strbuf *out)
{
    size_t len;
    const char *s = luaL_tolstring(L, idx, &len);
    sb_add(out, s, len);
    lua_pop(L, 1);
}

/* The same as a JSON value: numbers and booleans as they are, strings
** quoted. */
static void lua_json(lua_State *L, int idx, jw *w)
{
    int t = lua_type(L, idx);
    const char *s = luaL_tolstring(L, idx, NULL);
    if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) jw_raw(w, s);
    else jw_str(w, s);
    lua_pop(L, 1);
}

/* One template, the table on top of the stack: its dtypes (the op's when
** it names none), min_cc and max_cc (0: none), and its space's size. */
static double template_facts(lua_State *L, int *lo, int *hi)
{
    int top = lua_gettop(L);
    lua_getfield(L, top, "min_cc");
    lua_getfield(L, top, "max_cc");
    *lo = lua_isinteger(L, -2) ? (int)lua_tointeger(L, -2) : 0;
    *hi = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_settop(L, top);
    double configs = 1;
    lua_getfield(L, top, "params");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);          /* {name, {values}} */
        lua_rawgeti(L, -1, 2);
        configs *= (double)lua_rawlen(L, -1);
        lua_pop(L, 2);
    }
    lua_settop(L, top);
    return configs;
}

/* One template's row of the table. */
static void describe(lua_State *L, const char *tname, char op_dtypes[][16], int nodt, strbuf *out)
{
    int top = lua_gettop(L), lo, hi;
    double configs = template_facts(L, &lo, &hi);
    strbuf dt = STRBUF_INIT, arch = STRBUF_INIT, params = STRBUF_INIT;
    if (lua_getfield(L, top, "dtypes") == LUA_TTABLE) {
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            sb_puts(&dt, i > 1 ? " " : "");
            lua_text(L, -1, &dt);
            lua_pop(L, 1);
        }
    } else {
        for (int i = 0; i < nodt; i++) sb_printf(&dt, "%s%s", i ? " " : "", op_dtypes[i]);
    }
    lua_settop(L, top);
    if (lo && hi) sb_printf(&arch, "sm_%d..sm_%d", lo, hi);
    else if (lo) sb_printf(&arch, "sm_%d+", lo);
    else if (hi) sb_printf(&arch, "..sm_%d", hi);
    else sb_puts(&arch, "any");
    lua_getfield(L, top, "params");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        sb_puts(&params, i > 1 ? " " : "");
        lua_text(L, -2, &params);
        sb_puts(&params, "=");
        for (lua_Integer v = 1; v <= (lua_Integer)lua_rawlen(L, -1); v++) {
            lua_rawgeti(L, -1, v);
            sb_puts(&params, v > 1 ? "," : "");
            lua_text(L, -1, &params);
            lua_pop(L, 1);
        }
        lua_pop(L, 3);
    }
    lua_settop(L, top);
    sb_printf(out, "  %-22s %-16s %-8s %7.0f  %s\n", tname, sb_str(&dt), sb_str(&arch), configs, sb_str(&params));
    sb_free(&dt);
    sb_free(&arch);
    sb_free(&params);
}

/* The same template as a JSON object. */
static void describe_json(lua_State *L, const char *tname, char op_dtypes[][16], int nodt, jw *w)
{
    int top = lua_gettop(L), lo, hi;
    double configs = template_facts(L, &lo, &hi);
    jw_obj(w);
    jw_key(w, "name");
    jw_str(w, tname);
    jw_key(w, "dtypes");
    jw_arr(w);
    if (lua_getfield(L, top, "dtypes") == LUA_TTABLE) {
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            lua_json(L, -1, w);
            lua_pop(L, 1);
        }
    } else {
        for (int i = 0; i < nodt; i++) jw_str(w, op_dtypes[i]);
    }
    lua_settop(L, top);
    jw_end(w);
    jw_key(w, "min_cc");
    jw_int(w, lo);
    jw_key(w, "max_cc");
    if (hi) jw_int(w, hi);
    else jw_null(w);
    jw_key(w, "params");
    jw_obj(w);
    lua_getfield(L, top, "params");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        jw_key(w, luaL_tolstring(L, -2, NULL));
        lua_pop(L, 1);
        jw_arr(w);
        for (lua_Integer v = 1; v <= (lua_Integer)lua_rawlen(L, -1); v++) {
            lua_rawgeti(L, -1, v);
            lua_json(L, -1, w);
            lua_pop(L, 1);
        }
        jw_end(w);
        lua_pop(L, 3);
    }
    lua_settop(L, top);
    jw_end(w);
    jw_key(w, "configs");
    jw_num(w, configs, 0);
    jw_end(w);
}

/* One op: its line (and its templates' rows into tbl), or its JSON object. */
static int list_op(tmpl *T, const char *op, strbuf *out, strbuf *tbl, jw *w)
{
    int nd, ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    char **tn = NULL;
    int ntn = 0, rc = 0;
    if (tmpl_op_info(T, op, &nd, dims, &ndt, dts, 32) || tmpl_templates(T, op, &tn, &ntn))
        return error("%s", tmpl_errmsg(T)) ? EXIT_INPUT : 0;
    if (w) {
        jw_obj(w);
        jw_key(w, "name");
        jw_str(w, op);
        jw_key(w, "dims");
        jw_arr(w);
        for (int k = 0; k < nd; k++) jw_str(w, dims[k]);
        jw_end(w);
        jw_key(w, "dtypes");
        jw_arr(w);
        for (int k = 0; k < ndt; k++) jw_str(w, dts[k]);
        jw_end(w);
        jw_key(w, "templates");
        jw_arr(w);
    } else {
        strbuf d = STRBUF_INIT, t = STRBUF_INIT;
        for (int k = 0; k < nd; k++) sb_printf(&d, "%s%s", k ? "," : "", dims[k]);
        for (int k = 0; k < ndt; k++) sb_printf(&t, "%s%s", k ? " " : "", dts[k]);
        sb_printf(out, "  %-16s dims %-12s dtypes %-16s %d template%s\n", op, sb_str(&d), sb_str(&t), ntn, ntn == 1 ? "" : "s");
        sb_free(&d);
        sb_free(&t);
    }
    for (int k = 0; k < ntn && !rc; k++) {
        if (tmpl_push_template(T, tn[k])) {
            rc = error("%s", tmpl_errmsg(T)) ? EXIT_INPUT : 0;
            break;
        }
        if (w) describe_json(tmpl_lua(T), tn[k], dts, ndt, w);
        else describe(tmpl_lua(T), tn[k], dts, ndt, tbl);
        lua_pop(tmpl_lua(T), 1);
    }
    if (w) {
        jw_end(w);
        jw_end(w);
    }
    for (int k = 0; k < ntn; k++) free(tn[k]);
    free(tn);
    return rc;
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
    strbuf tbl = STRBUF_INIT;   /* the text form lists templates after the ops */
    jw w = { 0 };
    if (json) {
        jw_obj(&w);
        jw_key(&w, "root");
        jw_str(&w, root);
        jw_key(&w, "ops");
        jw_arr(&w);
    } else {
        sb_printf(&out, "templates and strategies from %s\n\nops:\n", root);
    }
    for (int i = 0; i < nops && !rc; i++)
        if (!np || !strcmp(ops[i], pos[0])) rc = list_op(T, ops[i], &out, &tbl, json ? &w : NULL);
    char st[64][32];
    int nst = strategies(root, st, 64);
    if (json) {
        jw_end(&w);
        jw_key(&w, "strategies");
        jw_arr(&w);
        for (int i = 0; i < nst; i++) jw_str(&w, st[i]);
        jw_end(&w);
        jw_end(&w);
        if (!rc) printf("%s\n", jw_text(&w));
    } else {
        sb_printf(&out, "\ntemplates:\n  %-22s %-16s %-8s %7s  %s\n%s\nstrategies (a spec's search:):\n ", "name", "dtypes",
                  "archs", "configs", "params", sb_str(&tbl));
        for (int i = 0; i < nst; i++) sb_printf(&out, " %s", st[i]);
        sb_puts(&out, "\n");
        if (!rc) fputs(sb_str(&out), stdout);
    }
    jw_free(&w);
    sb_free(&out);
    sb_free(&tbl);
    for (int i = 0; i < nops; i++) free(ops[i]);
    free(ops);
    tmpl_close(T);
    return rc;
}
