/* search.c: see search.h. The space and the strategy object live in the Lua
** registry (referenced by s->space and s->strategy). */
#include "search.h"
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

struct search {
    tmpl *T;
    int space, strategy;    /* luaL_ref in the registry */
};

/* Push module `rel` (a file under search/), cached in the registry. */
static int push_module(tmpl *T, const char *rel)
{
    lua_State *L = tmpl_lua(T);
    char key[160];
    snprintf(key, sizeof key, "aitune.mod.%s", rel);
    if (lua_getfield(L, LUA_REGISTRYINDEX, key) != LUA_TNIL) return 0;
    lua_pop(L, 1);
    if (tmpl_load_file(T, rel, NULL)) return -1;
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
    return 0;
}

int search_exists(tmpl *T, const char *strategy)
{
    char *path = xstrfmt("%s/search/%s.lua", tmpl_root(T), strategy);
    int ok = strspn(strategy, "abcdefghijklmnopqrstuvwxyz_") == strlen(strategy) && strcmp(strategy, "space") &&
             file_exists(path);
    free(path);
    if (!ok) tmpl_seterr(T, "unknown search strategy '%s' (see search/*.lua)", strategy);
    return ok;
}

search *search_new(tmpl *T, const char *strategy, const char *tname, const op_task *task,
                   const device *dev, unsigned long long seed, int max_evals)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    if (!search_exists(T, strategy)) return NULL;
    char rel[128];
    snprintf(rel, sizeof rel, "search/%s.lua", strategy);
    if (push_module(T, "search/space.lua")) goto bad;
    int mod = lua_gettop(L);
    lua_getfield(L, mod, "new");
    if (tmpl_push_template(T, tname)) goto bad;
    tmpl_push_shape(T, task);
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    if (tmpl_pcall(T, 4, 1, "space")) goto bad;
    int space = lua_gettop(L);
    if (push_module(T, rel)) goto bad;
    lua_getfield(L, -1, "new");
    lua_pushvalue(L, space);
    lua_createtable(L, 0, 3);
    lua_getfield(L, mod, "rng");
    lua_pushinteger(L, (lua_Integer)seed);
    if (tmpl_pcall(T, 1, 1, "rng")) goto bad;
    lua_setfield(L, -2, "rng");
    if (max_evals > 0) {
        lua_pushinteger(L, max_evals);
        lua_setfield(L, -2, "max_evals");
    }
    lua_pushinteger(L, (lua_Integer)seed);
    lua_setfield(L, -2, "seed");
    if (tmpl_pcall(T, 2, 1, rel)) goto bad;
    search *s = xcalloc(1, sizeof *s);
    s->T = T;
    s->strategy = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, space);
    s->space = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, top);
    return s;
bad:
    lua_settop(L, top);
    return NULL;
}

void search_free(search *s)
{
    if (!s) return;
    lua_State *L = tmpl_lua(s->T);
    luaL_unref(L, LUA_REGISTRYINDEX, s->space);
    luaL_unref(L, LUA_REGISTRYINDEX, s->strategy);
    free(s);
}

static int space_int(search *s, const char *field)
{
    lua_State *L = tmpl_lua(s->T);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->space);
    lua_getfield(L, -1, field);
    int n = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return n;
}

int search_size(search *s) { return space_int(s, "size"); }
int search_nrejected(search *s) { return space_int(s, "rejected"); }

int search_rejected(search *s, int i, char **config, char *why, int whycap, int *is_error)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->space);
    lua_getfield(L, -1, "rejected");
    lua_rawgeti(L, -1, i + 1);
    lua_rawgeti(L, -1, 1);
    strbuf sb = STRBUF_INIT;
    int rc = tmpl_config_json(s->T, -1, &sb);
    lua_rawgeti(L, -2, 2);
    lua_rawgeti(L, -3, 3);
    snprintf(why, (size_t)whycap, "%s", lua_isstring(L, -2) ? lua_tostring(L, -2) : "constraint");
    *is_error = lua_isstring(L, -1) && !strcmp(lua_tostring(L, -1), "error");
    lua_settop(L, top);
    if (rc) { sb_free(&sb); return -1; }
    *config = sb.buf;
    return 0;
}

int search_ask(search *s, int n, char ***configs, int *got)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    *configs = NULL;
    *got = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->strategy);
    lua_getfield(L, -1, "ask");
    lua_pushvalue(L, -2);
    lua_pushinteger(L, n);
    if (tmpl_pcall(s->T, 2, 1, "strategy ask()")) { lua_settop(L, top); return -1; }
    int k = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
    char **v = xcalloc((size_t)k + 1, sizeof *v);
    for (int i = 0; i < k; i++) {
        lua_rawgeti(L, -1, i + 1);
        strbuf sb = STRBUF_INIT;
        if (tmpl_config_json(s->T, -1, &sb)) {
            sb_free(&sb);
            for (int j = 0; j < i; j++) free(v[j]);
            free(v);
            lua_settop(L, top);
            return -1;
        }
        v[i] = sb.buf;
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    *configs = v;
    *got = k;
    return 0;
}

int search_tell(search *s, const char *config, const char *status, double time_us)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->strategy);
    lua_getfield(L, -1, "tell");
    lua_pushvalue(L, -2);
    if (tmpl_push_config(s->T, config)) { lua_settop(L, top); return -1; }
    lua_createtable(L, 0, 2);
    lua_pushstring(L, status);
    lua_setfield(L, -2, "status");
    if (!strcmp(status, "ok")) {
        lua_pushnumber(L, time_us);
        lua_setfield(L, -2, "time");
    }
    int rc = tmpl_pcall(s->T, 3, 0, "strategy tell()");
    lua_settop(L, top);
    return rc;
}
