/* search.c: see search.h. The space and the strategy object live in the Lua
** registry (referenced by s->space and s->strategy). */
#include "search.h"
#include "registry_measure.h"
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

/* The n configs in the Lua list at the stack top as canonical JSON (*out:
** n malloc'd strings and the array; caller frees). Pops nothing; 0 or -1. */
static int list_json(tmpl *T, int n, char ***out)
{
    lua_State *L = tmpl_lua(T);
    char **v = xcalloc((size_t)n + 1, sizeof *v);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        strbuf sb = STRBUF_INIT;
        if (tmpl_config_json(T, -1, &sb)) {
            sb_free(&sb);
            lua_pop(L, 1);
            for (int j = 0; j < i; j++) free(v[j]);
            free(v);
            return -1;
        }
        v[i] = sb.buf;
        lua_pop(L, 1);
    }
    *out = v;
    return 0;
}

/* Push Space.new(template tname, shape, dtype, dev) (the space module at mod). */
static int push_space(tmpl *T, int mod, const char *tname, const op_task *task, const device *dev)
{
    lua_State *L = tmpl_lua(T);
    lua_getfield(L, mod, "new");
    if (tmpl_push_template(T, tname)) return -1;
    tmpl_push_shape(T, task);
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    return tmpl_pcall(T, 4, 1, "space");
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

int search_for_spec(tmpl *T, const char *strategy)
{
    if (strcmp(strategy, SEARCH_POLISH)) return search_exists(T, strategy);
    tmpl_seterr(T, "search strategy '%s' is not a search: it polishes one config (split_polish)", strategy);
    return 0;
}

/* With the space at the top of the stack and the space module at mod:
** create the strategy, pop the space, return the search. */
static search *start(tmpl *T, const char *strategy, int mod, unsigned long long seed, int max_evals,
                     char *const *warm, int nwarm)
{
    lua_State *L = tmpl_lua(T);
    int space = lua_gettop(L);
    char rel[128];
    snprintf(rel, sizeof rel, "search/%s.lua", strategy);
    if (push_module(T, rel)) return NULL;
    lua_getfield(L, -1, "new");
    lua_pushvalue(L, space);
    lua_createtable(L, 0, 4);
    lua_getfield(L, mod, "rng");
    lua_pushinteger(L, (lua_Integer)seed);
    if (tmpl_pcall(T, 1, 1, "rng")) return NULL;
    lua_setfield(L, -2, "rng");
    if (max_evals > 0) {
        lua_pushinteger(L, max_evals);
        lua_setfield(L, -2, "max_evals");
    }
    lua_pushinteger(L, (lua_Integer)seed);
    lua_setfield(L, -2, "seed");
    if (nwarm > 0) {
        lua_createtable(L, nwarm, 0);
        for (int i = 0; i < nwarm; i++) {
            if (tmpl_push_config(T, warm[i])) return NULL;
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "warm");
    }
    if (tmpl_pcall(T, 2, 1, rel)) return NULL;
    search *s = xcalloc(1, sizeof *s);
    s->T = T;
    s->strategy = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, space);
    s->space = luaL_ref(L, LUA_REGISTRYINDEX);
    return s;
}

search *search_new(tmpl *T, const char *strategy, const char *tname, const op_task *task,
                   const device *dev, unsigned long long seed, int max_evals)
{
    return search_new_warm(T, strategy, tname, task, dev, seed, max_evals, NULL, 0);
}

search *search_new_warm(tmpl *T, const char *strategy, const char *tname, const op_task *task,
                        const device *dev, unsigned long long seed, int max_evals, char *const *warm, int nwarm)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    if (!search_exists(T, strategy)) return NULL;
    if (push_module(T, "search/space.lua")) goto bad;
    int mod = lua_gettop(L);
    if (push_space(T, mod, tname, task, dev)) goto bad;
    search *s = start(T, strategy, mod, seed, max_evals, warm, nwarm);
    lua_settop(L, top);
    return s;
bad:
    lua_settop(L, top);
    return NULL;
}

search *search_of_configs(tmpl *T, const char *strategy, char *const *configs, int n, unsigned long long seed,
                          int max_evals, char *const *warm, int nwarm)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    if (!search_exists(T, strategy)) return NULL;
    if (push_module(T, "search/space.lua")) goto bad;
    int mod = lua_gettop(L);
    lua_getfield(L, mod, "from_list");
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        if (tmpl_push_config(T, configs[i])) goto bad;
        lua_rawseti(L, -2, i + 1);
    }
    if (tmpl_pcall(T, 1, 1, "space")) goto bad;
    search *s = start(T, strategy, mod, seed, max_evals, warm, nwarm);
    lua_settop(L, top);
    return s;
bad:
    lua_settop(L, top);
    return NULL;
}

search *search_new_bucket(tmpl *T, const char *strategy, char *const *tnames, int n, const op_task *task,
                          const device *dev, unsigned long long seed, int max_evals, char *const *warm, int nwarm)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    if (!search_exists(T, strategy)) return NULL;
    if (push_module(T, "search/space.lua")) goto bad;
    int mod = lua_gettop(L);
    lua_getfield(L, mod, "union");
    lua_createtable(L, n, 0);
    lua_createtable(L, n, 0);
    int spaces = lua_gettop(L) - 1, names = spaces + 1;
    for (int i = 0; i < n; i++) {
        if (push_space(T, mod, tnames[i], task, dev)) goto bad;
        lua_rawseti(L, spaces, i + 1);
        lua_pushstring(L, tnames[i]);
        lua_rawseti(L, names, i + 1);
    }
    if (tmpl_pcall(T, 2, 1, "space union")) goto bad;
    search *s = start(T, strategy, mod, seed, max_evals, warm, nwarm);
    lua_settop(L, top);
    return s;
bad:
    lua_settop(L, top);
    return NULL;
}

int search_split(tmpl *T, const char *joined, char *tname, int cap, char **config)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    *config = NULL;
    if (push_module(T, "search/space.lua")) return -1;
    lua_getfield(L, -1, "split");
    if (tmpl_push_config(T, joined) || tmpl_pcall(T, 1, 2, "space split")) { lua_settop(L, top); return -1; }
    if (!lua_isstring(L, -2)) {
        tmpl_seterr(T, "config %s names no template", joined);
        lua_settop(L, top);
        return -1;
    }
    snprintf(tname, (size_t)cap, "%s", lua_tostring(L, -2));
    strbuf sb = STRBUF_INIT;
    int rc = tmpl_config_json(T, -1, &sb);
    lua_settop(L, top);
    if (rc) { sb_free(&sb); return -1; }
    *config = sb.buf;
    return 0;
}

int search_join(tmpl *T, char *const *tnames, char *const *configs, int n, char ***joined)
{
    lua_State *L = tmpl_lua(T);
    int top = lua_gettop(L);
    *joined = NULL;
    if (push_module(T, "search/space.lua")) return -1;
    lua_getfield(L, -1, "joined");
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        lua_pushstring(L, tnames[i]);
        lua_setfield(L, -2, "template");
        if (tmpl_push_config(T, configs[i])) { lua_settop(L, top); return -1; }
        lua_setfield(L, -2, "config");
        lua_rawseti(L, -2, i + 1);
    }
    int rc = tmpl_pcall(T, 1, 1, "space joined") || list_json(T, n, joined) ? -1 : 0;
    lua_settop(L, top);
    return rc;
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

/* space:method() as a count; -1 with tmpl_errmsg when it fails. */
static long long space_call(search *s, const char *method, const char *what)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->space);
    lua_getfield(L, -1, method);
    lua_pushvalue(L, -2);
    long long n = tmpl_pcall(s->T, 1, 1, what) ? -1 : (long long)lua_tointeger(L, -1);
    lua_settop(L, top);
    return n;
}

int search_count(search *s) { return (int)space_call(s, "count", "space count()"); }
long long search_tally(search *s) { return space_call(s, "tally", "space tally()"); }
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
    int rc = list_json(s->T, k, configs);
    lua_settop(L, top);
    if (rc) return -1;
    *got = k;
    return 0;
}

/* Call strategy:tell(config, result) with the result table on the stack top. */
static int tell(search *s, const char *config)
{
    lua_State *L = tmpl_lua(s->T);
    int res = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->strategy);
    lua_getfield(L, -1, "tell");
    lua_pushvalue(L, -2);
    if (tmpl_push_config(s->T, config)) return -1;
    lua_pushvalue(L, res);
    return tmpl_pcall(s->T, 3, 0, "strategy tell()");
}

int search_tell(search *s, const char *config, const char *status, double time_us)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, status);
    lua_setfield(L, -2, "status");
    if (!strcmp(status, "ok")) {
        lua_pushnumber(L, time_us);
        lua_setfield(L, -2, "time");
    }
    int rc = tell(s, config);
    lua_settop(L, top);
    return rc;
}

static void set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

int search_tell_measured(search *s, const char *config, const measurement *m)
{
    lua_State *L = tmpl_lua(s->T);
    int top = lua_gettop(L);
    int ok = !strcmp(m->status, "ok");
    lua_createtable(L, 0, 10);
    lua_pushstring(L, m->status);
    lua_setfield(L, -2, "status");
    if (ok) {
        set_num(L, "time", m->median_us);
        if (m->min_us > 0) set_num(L, "min", m->min_us);
        if (m->max_us > 0) set_num(L, "max", m->max_us);
        set_num(L, "spread", m->spread);
    }
    /* The ptxas report is known for anything that compiled. */
    if (m->registers > 0) {
        lua_pushinteger(L, m->registers);
        lua_setfield(L, -2, "registers");
        lua_pushinteger(L, m->spills);
        lua_setfield(L, -2, "spills");
        lua_pushinteger(L, m->smem);
        lua_setfield(L, -2, "smem");
    }
    if (m->compile_ms > 0) set_num(L, "compile_ms", m->compile_ms);
    int rc = tell(s, config);
    lua_settop(L, top);
    return rc;
}
