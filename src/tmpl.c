/* tmpl.c: see tmpl.h. */
#define _GNU_SOURCE
#include "tmpl.h"
#include "json.h"
#include "expr.h"
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tmpl {
    lua_State *L;
    char *root;
    char err[1024];
    int (*watch)(void *ctx);    /* tmpl_watch */
    void *watch_ctx;
    int stopped;
};

static int fail(tmpl *T, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tmpl *T, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(T->err, sizeof T->err, fmt, ap);
    va_end(ap);
    return -1;
}

int tmpl_seterr(tmpl *T, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(T->err, sizeof T->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *tmpl_errmsg(tmpl *T) { return T->err[0] ? T->err : "not an error"; }
lua_State *tmpl_lua(tmpl *T) { return T->L; }
const char *tmpl_root(tmpl *T) { return T->root; }

/* The count hook of tmpl_watch: once the watch says stop, an error at
** every instruction, so no pcall in a template can swallow it for good. */
static void on_count(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    tmpl *T = *(tmpl **)lua_getextraspace(L);
    if (!T->stopped && T->watch && T->watch(T->watch_ctx)) {
        T->stopped = 1;
        lua_sethook(L, on_count, LUA_MASKCOUNT, 1);
    }
    if (T->stopped) luaL_error(L, "interrupted");
}

void tmpl_watch(tmpl *T, int (*fn)(void *ctx), void *ctx)
{
    T->watch = fn;
    T->watch_ctx = ctx;
    T->stopped = 0;
    lua_sethook(T->L, fn ? on_count : NULL, fn ? LUA_MASKCOUNT : 0, fn ? TMPL_WATCH_STEPS : 0);
}

int tmpl_stopped(tmpl *T) { return T->stopped; }

/* Keep only the error's first line: messages become one line on stderr. */
static int on_error(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    const char *nl = strchr(msg, '\n');
    lua_pushlstring(L, msg, nl ? (size_t)(nl - msg) : strlen(msg));
    return 1;
}

int tmpl_pcall(tmpl *T, int nargs, int nresults, const char *what)
{
    lua_State *L = T->L;
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, on_error);
    lua_insert(L, base);
    int rc = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    if (rc != LUA_OK) {
        fail(T, "%s: %s", what, lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

/* The sandbox's globals: registry["aitune.G"]. Each file gets its own
** environment that reads through to it, so files cannot pollute each other. */
static void push_env(tmpl *T)
{
    lua_State *L = T->L;
    lua_newtable(L);
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.G");
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
}

int tmpl_load_file(tmpl *T, const char *rel, const char *op)
{
    lua_State *L = T->L;
    char *path = xstrfmt("%s/%s", T->root, rel);
    size_t len;
    char *text = read_file(path, &len);
    free(path);
    if (!text) return fail(T, "cannot read '%s'", rel);
    char *chunk = xstrfmt("@%s", rel);
    int rc = luaL_loadbufferx(L, text, len, chunk, "t");
    free(chunk);
    free(text);
    if (rc != LUA_OK) {
        fail(T, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    push_env(T);
    if (op) {
        lua_getfield(L, LUA_REGISTRYINDEX, "aitune.ops");
        lua_getfield(L, -1, op);
        lua_setfield(L, -3, "OP");
        lua_pop(L, 1);
    }
    lua_setupvalue(L, -2, 1);
    return tmpl_pcall(T, 0, 1, rel);
}

static int lib_load(lua_State *L)
{
    tmpl *T = lua_touserdata(L, lua_upvalueindex(1));
    const char *name = luaL_checkstring(L, 1);
    for (const char *p = name; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
            return luaL_error(L, "lib('%s'): names are lowercase letters, digits and _", name);
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.libs");
    if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    char rel[256];
    snprintf(rel, sizeof rel, "templates/lib/%s.lua", name);
    if (tmpl_load_file(T, rel, NULL)) return luaL_error(L, "%s", T->err);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

tmpl *tmpl_open(const char *root)
{
    tmpl *T = xcalloc(1, sizeof *T);
    T->root = xstrdup(root);
    lua_State *L = T->L = luaL_newstate();
    if (!L) die(EXIT_FAIL, "out of memory creating the Lua state");
    *(tmpl **)lua_getextraspace(L) = T;     /* the watch's hook finds T there */
    static const luaL_Reg libs[] = {
        { LUA_GNAME, luaopen_base }, { LUA_STRLIBNAME, luaopen_string },
        { LUA_TABLIBNAME, luaopen_table }, { LUA_MATHLIBNAME, luaopen_math }, { NULL, NULL },
    };
    for (const luaL_Reg *l = libs; l->name; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    /* The sandbox: base minus whatever reaches files or compiles text. */
    lua_newtable(L);
    static const char *keep[] = { "assert", "error", "ipairs", "pairs", "next", "pcall", "xpcall",
        "select", "tonumber", "tostring", "type", "rawget", "rawset", "rawequal", "rawlen",
        "setmetatable", "getmetatable", "_VERSION", "string", "table", "math", NULL };
    for (const char **k = keep; *k; k++) {
        lua_getglobal(L, *k);
        lua_setfield(L, -2, *k);
    }
    lua_pushlightuserdata(L, T);
    lua_pushcclosure(L, lib_load, 1);
    lua_setfield(L, -2, "lib");
    lua_setfield(L, LUA_REGISTRYINDEX, "aitune.G");
    static const char *caches[] = { "aitune.libs", "aitune.ops", "aitune.tmpls", NULL };
    for (const char **c = caches; *c; c++) {
        lua_newtable(L);
        lua_setfield(L, LUA_REGISTRYINDEX, *c);
    }
    return T;
}

void tmpl_close(tmpl *T)
{
    if (!T) return;
    lua_close(T->L);
    free(T->root);
    free(T);
}

static int name_ok(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names in dir for which keep() holds, sorted. */
static int list_dir(tmpl *T, const char *dir, int (*keep)(tmpl *, const char *, const char *),
                    char ***names, int *n)
{
    char *path = xstrfmt("%s/%s", T->root, dir);
    DIR *d = opendir(path);
    free(path);
    if (!d) return fail(T, "cannot read folder '%s'", dir);
    char **v = NULL;
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !keep(T, dir, e->d_name)) continue;
        v = xrealloc(v, sizeof *v * (size_t)(k + 1));
        v[k++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(v, (size_t)k, sizeof *v, cmp_str);
    *names = v;
    *n = k;
    return 0;
}

static int is_op_dir(tmpl *T, const char *dir, const char *name)
{
    if (!name_ok(name) || !strcmp(name, "lib")) return 0;
    char *p = xstrfmt("%s/%s/%s/op.lua", T->root, dir, name);
    int ok = file_exists(p);
    free(p);
    return ok;
}

int tmpl_ops(tmpl *T, char ***names, int *n) { return list_dir(T, "templates", is_op_dir, names, n); }

/* Check a field of the table at the top of the stack. */
static int need(tmpl *T, const char *file, const char *field, int type)
{
    int t = lua_getfield(T->L, -1, field);
    lua_pop(T->L, 1);
    if (t != type) return fail(T, "%s: field '%s' must be a %s, not %s", file, field,
                               lua_typename(T->L, type), lua_typename(T->L, t));
    return 0;
}

/* Push the op table, loading and checking it on first use. */
static int push_op(tmpl *T, const char *op)
{
    lua_State *L = T->L;
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.ops");
    if (lua_getfield(L, -1, op) != LUA_TNIL) {
        lua_remove(L, -2);
        return 0;
    }
    lua_pop(L, 1);
    char rel[256];
    snprintf(rel, sizeof rel, "templates/%s/op.lua", op);
    if (!name_ok(op) || !is_op_dir(T, "templates", op)) {
        lua_pop(L, 1);
        char **ops;
        int n;
        strbuf known = STRBUF_INIT;
        if (!tmpl_ops(T, &ops, &n)) {
            for (int i = 0; i < n; i++) { sb_printf(&known, "%s%s", i ? ", " : "", ops[i]); free(ops[i]); }
            free(ops);
        }
        fail(T, "unknown op '%s' (known: %s)", op, sb_str(&known));
        sb_free(&known);
        return -1;
    }
    if (tmpl_load_file(T, rel, NULL)) { lua_pop(L, 1); return -1; }
    if (!lua_istable(L, -1)) { lua_pop(L, 2); return fail(T, "%s: must return a table", rel); }
    if (need(T, rel, "name", LUA_TSTRING) || need(T, rel, "dims", LUA_TTABLE) ||
        need(T, rel, "dtypes", LUA_TTABLE) || need(T, rel, "args", LUA_TTABLE) ||
        need(T, rel, "reference", LUA_TTABLE) || need(T, rel, "tolerance", LUA_TTABLE) ||
        need(T, rel, "metrics", LUA_TFUNCTION)) {
        lua_pop(L, 2);
        return -1;
    }
    lua_getfield(L, -1, "name");
    int same = !strcmp(lua_tostring(L, -1), op);
    lua_pop(L, 1);
    if (!same) { lua_pop(L, 2); return fail(T, "%s: name must be '%s'", rel, op); }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, op);
    lua_remove(L, -2);
    return 0;
}

int tmpl_op_info(tmpl *T, const char *op, int *ndims, char dims[][16],
                 int *ndtypes, char dtypes[][16], int maxdtypes)
{
    lua_State *L = T->L;
    if (push_op(T, op)) return -1;
    lua_getfield(L, -1, "dims");
    int n = (int)lua_rawlen(L, -1);
    if (n < 1 || n > TMPL_MAXDIMS) { lua_pop(L, 2); return fail(T, "op '%s': 1 to %d dims", op, TMPL_MAXDIMS); }
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        snprintf(dims[i], 16, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
    }
    *ndims = n;
    lua_pop(L, 1);
    lua_getfield(L, -1, "dtypes");
    n = (int)lua_rawlen(L, -1);
    if (n > maxdtypes) n = maxdtypes;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        snprintf(dtypes[i], 16, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
    }
    *ndtypes = n;
    lua_pop(L, 2);
    return 0;
}

static int is_impl(tmpl *T, const char *dir, const char *name)
{
    (void)T; (void)dir;
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".lua") && strcmp(name, "op.lua") != 0;
}

int tmpl_templates(tmpl *T, const char *op, char ***names, int *n)
{
    if (push_op(T, op)) return -1;
    lua_pop(T->L, 1);
    char dir[128];
    snprintf(dir, sizeof dir, "templates/%s", op);
    if (list_dir(T, dir, is_impl, names, n)) return -1;
    for (int i = 0; i < *n; i++) {
        char *s = (*names)[i];
        s[strlen(s) - 4] = 0;
        (*names)[i] = xstrfmt("%s/%s", op, s);
        free(s);
    }
    return 0;
}

int tmpl_push_template(tmpl *T, const char *tname)
{
    lua_State *L = T->L;
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.tmpls");
    if (lua_getfield(L, -1, tname) != LUA_TNIL) {
        lua_remove(L, -2);
        return 0;
    }
    lua_pop(L, 1);
    char op[64], rel[256];
    const char *slash = strchr(tname, '/');
    if (!slash || slash - tname >= (long)sizeof op) { lua_pop(L, 1); return fail(T, "template names are op/impl, not '%s'", tname); }
    snprintf(op, sizeof op, "%.*s", (int)(slash - tname), tname);
    if (push_op(T, op)) { lua_pop(L, 1); return -1; }
    lua_pop(L, 1);
    snprintf(rel, sizeof rel, "templates/%s.lua", tname);
    if (!name_ok(slash + 1)) { lua_pop(L, 1); return fail(T, "bad template name '%s'", tname); }
    char *path = xstrfmt("%s/%s", T->root, rel);
    int exists = file_exists(path);
    free(path);
    if (!exists) { lua_pop(L, 1); return fail(T, "unknown template '%s'", tname); }
    if (tmpl_load_file(T, rel, op)) { lua_pop(L, 1); return -1; }
    if (!lua_istable(L, -1)) { lua_pop(L, 2); return fail(T, "%s: must return a table", rel); }
    if (need(T, rel, "op", LUA_TSTRING) || need(T, rel, "params", LUA_TTABLE) ||
        need(T, rel, "constraints", LUA_TFUNCTION) || need(T, rel, "supports", LUA_TFUNCTION) ||
        need(T, rel, "launch", LUA_TFUNCTION) || need(T, rel, "source", LUA_TFUNCTION) ||
        need(T, rel, "default", LUA_TFUNCTION)) {
        lua_pop(L, 2);
        return -1;
    }
    lua_getfield(L, -1, "params");
    int np = (int)lua_rawlen(L, -1);
    for (int i = 1; i <= np; i++) {
        lua_rawgeti(L, -1, i);
        int ok = lua_istable(L, -1) && lua_rawgeti(L, -1, 1) == LUA_TSTRING;
        if (ok) ok = lua_rawgeti(L, -2, 2) == LUA_TTABLE && lua_rawlen(L, -1) > 0;
        else lua_pushnil(L);
        lua_pop(L, 3);
        if (!ok) { lua_pop(L, 3); return fail(T, "%s: params[%d] must be {name, {values...}}", rel, i); }
    }
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, tname);
    lua_remove(L, -2);
    return 0;
}

void tmpl_push_shape(tmpl *T, const op_task *task)
{
    lua_createtable(T->L, 0, task->ndims);
    for (int i = 0; i < task->ndims; i++) {
        lua_pushinteger(T->L, task->shape[i]);
        lua_setfield(T->L, -2, task->dims[i]);
    }
}

void tmpl_push_dev(tmpl *T, const device *d)
{
    lua_State *L = T->L;
    lua_createtable(L, 0, 12);
#define SETI(f, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, f))
    SETI("cc", d->cc);
    SETI("sms", d->sms);
    SETI("smem_optin", d->smem_optin);
    SETI("smem_per_sm", d->smem_per_sm);
    SETI("l2", d->l2);
    SETI("regs_per_sm", d->regs_per_sm);
    SETI("max_threads_per_sm", d->max_threads_per_sm);
    SETI("mem", d->mem);
    SETI("warp", 32);
#undef SETI
    lua_pushstring(L, d->name);
    lua_setfield(L, -2, "name");
}

/* ---- configs: flat JSON objects <-> Lua tables ---- */

static const char *json_ws(const char *p) { while (isspace((unsigned char)*p)) p++; return p; }

static const char *json_string(const char *p, strbuf *out)
{
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\') {
            p++;
            char c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
            if (!c) return NULL;
            sb_add(out, &c, 1);
        } else {
            sb_add(out, p, 1);
        }
    }
    return *p == '"' ? p + 1 : NULL;
}

int tmpl_push_config(tmpl *T, const char *json)
{
    lua_State *L = T->L;
    const char *p = json_ws(json);
    if (*p++ != '{') return fail(T, "config '%s' is not a JSON object", json);
    lua_newtable(L);
    strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    p = json_ws(p);
    while (*p && *p != '}') {
        sb_reset(&key);
        if (!(p = json_string(p, &key))) break;
        p = json_ws(p);
        if (*p++ != ':') { p = NULL; break; }
        p = json_ws(p);
        if (*p == '"') {
            sb_reset(&val);
            if (!(p = json_string(p, &val))) break;
            lua_pushstring(L, sb_str(&val));
        } else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
            lua_pushboolean(L, *p == 't');
            p += *p == 't' ? 4 : 5;
        } else {
            char *end;
            long long i = strtoll(p, &end, 10);
            if (end != p && *end != '.' && *end != 'e' && *end != 'E') {
                lua_pushinteger(L, i);
            } else {
                double d = strtod(p, &end);
                if (end == p) { p = NULL; break; }
                lua_pushnumber(L, d);
            }
            p = end;
        }
        lua_setfield(L, -2, sb_str(&key));
        p = json_ws(p);
        if (*p == ',') p = json_ws(p + 1);
    }
    sb_free(&key);
    sb_free(&val);
    if (!p || *p != '}') {
        lua_pop(L, 1);
        return fail(T, "config '%s' is not a flat JSON object", json);
    }
    return 0;
}

int tmpl_config_json(tmpl *T, int idx, strbuf *out)
{
    lua_State *L = T->L;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) return fail(T, "a config must be a table, not %s", luaL_typename(L, idx));
    char *keys[64];
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || n == 64) {
            for (int i = 0; i < n; i++) free(keys[i]);
            lua_pop(L, 1);
            return fail(T, "config keys must be strings (at most 64)");
        }
        keys[n++] = xstrdup(lua_tostring(L, -1));
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_str);
    jw w = { 0 };
    jw_obj(&w);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        jw_key(&w, keys[i]);
        lua_getfield(L, idx, keys[i]);
        if (lua_isinteger(L, -1)) jw_int(&w, (long long)lua_tointeger(L, -1));
        else if (lua_type(L, -1) == LUA_TNUMBER) jw_real(&w, lua_tonumber(L, -1));
        else if (lua_type(L, -1) == LUA_TBOOLEAN) jw_bool(&w, lua_toboolean(L, -1));
        else if (lua_type(L, -1) == LUA_TSTRING) jw_str(&w, lua_tostring(L, -1));
        else rc = fail(T, "config value '%s' must be a number, string or boolean", keys[i]);
        lua_pop(L, 1);
        free(keys[i]);
    }
    jw_end(&w);
    sb_puts(out, jw_text(&w));
    jw_free(&w);
    return rc;
}

/* ---- tasks ---- */

/* size(shape) of buffer a, the function on top of the stack (popped).
** Lua integers wrap silently, so it runs twice: with integer dims, and
** with the same dims as floats, which do not wrap; the two must agree and
** the count, and its bytes, must fit far from overflow. */
static int buffer_count(tmpl *T, const op_task *t, const char *rel, op_arg *a)
{
    lua_State *L = T->L;
    lua_pushvalue(L, -1);
    tmpl_push_shape(T, t);
    if (tmpl_pcall(T, 1, 1, rel)) { lua_pop(L, 1); return -1; }
    int isnum;
    lua_Integer n = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum) {
        lua_pop(L, 1);
        return fail(T, "%s: buffer '%s': size() is not an integer", rel, a->name);
    }
    lua_createtable(L, 0, t->ndims);
    for (int i = 0; i < t->ndims; i++) {
        lua_pushnumber(L, (lua_Number)t->shape[i]);
        lua_setfield(L, -2, t->dims[i]);
    }
    double f = (double)n;
    /* A size function that needs integer dims (bit operations) cannot
    ** run on floats; then the integer result stands, checked below. */
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isnumber(L, -1)) f = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    const double limit = 4611686018427387904.0;    /* 2^62 */
    if (!(f < limit) || f - (double)n > 1 + 1e-9 * f || (double)n - f > 1 + 1e-9 * f)
        return fail(T, "%s: buffer '%s' overflows at this shape (more than 2^62 elements)", rel, a->name);
    if (n < 1) return fail(T, "%s: buffer '%s' has %lld elements", rel, a->name, (long long)n);
    long long bytes;
    if (__builtin_mul_overflow((long long)n, (long long)a->esize, &bytes) || bytes > (1LL << 62))
        return fail(T, "%s: buffer '%s' overflows at this shape (%lld elements of %d bytes)", rel, a->name,
                    (long long)n, a->esize);
    a->count = (long long)n;
    return 0;
}

long long tmpl_task_bytes(const op_task *t)
{
    long long total = 0;
    for (int i = 0; i < t->nargs; i++) {
        const op_arg *a = &t->args[i];
        if (a->role != ROLE_IN && a->role != ROLE_OUT && a->role != ROLE_INOUT) continue;
        long long b;
        if (__builtin_mul_overflow(a->count, (long long)a->esize, &b) || __builtin_add_overflow(total, b, &total))
            return LLONG_MAX;
    }
    return total;
}

int tmpl_task(tmpl *T, const char *op, const char *dtype, const long long *shape, op_task *t)
{
    lua_State *L = T->L;
    memset(t, 0, sizeof *t);
    char dts[32][16];
    int ndt;
    if (tmpl_op_info(T, op, &t->ndims, t->dims, &ndt, dts, 32)) return -1;
    snprintf(t->op, sizeof t->op, "%s", op);
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    int known = 0;
    strbuf list = STRBUF_INIT;
    for (int i = 0; i < ndt; i++) {
        known |= !strcmp(dts[i], dtype);
        sb_printf(&list, "%s%s", i ? ", " : "", dts[i]);
    }
    if (!known) {
        fail(T, "op '%s' has no dtype '%s' (it has %s)", op, dtype, sb_str(&list));
        sb_free(&list);
        return -1;
    }
    sb_free(&list);
    for (int i = 0; i < t->ndims; i++) {
        if (shape[i] < 1) return fail(T, "shape %s=%lld: sizes must be >= 1", t->dims[i], shape[i]);
        t->shape[i] = shape[i];
    }
    char rel[128];
    snprintf(rel, sizeof rel, "templates/%s/op.lua", op);
    if (push_op(T, op)) return -1;
    int top = lua_gettop(L);
    /* types(dtype) maps the args' symbolic types. */
    if (lua_getfield(L, top, "types") == LUA_TFUNCTION) {
        lua_pushstring(L, dtype);
        if (tmpl_pcall(T, 1, 1, "op.types")) goto bad;
    } else {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushstring(L, dtype);
        lua_setfield(L, -2, "T");
    }
    int types = lua_gettop(L);
    lua_getfield(L, top, "args");
    int nargs = (int)lua_rawlen(L, -1);
    if (nargs > TMPL_MAXARGS) { fail(T, "%s: at most %d args", rel, TMPL_MAXARGS); goto bad; }
    for (int i = 0; i < nargs; i++) {
        op_arg *a = &t->args[i];
        lua_rawgeti(L, types + 1, i + 1);
        int arg = lua_gettop(L);
        if (!lua_istable(L, arg)) { fail(T, "%s: args[%d] must be a table", rel, i + 1); goto bad; }
        lua_getfield(L, arg, "name");
        lua_getfield(L, arg, "role");
        if (!lua_isstring(L, -2) || !lua_isstring(L, -1) || (a->role = role_find(lua_tostring(L, -1))) < 0) {
            fail(T, "%s: args[%d] needs a name and a role (in, out, inout, scalar, dim)", rel, i + 1);
            goto bad;
        }
        snprintf(a->name, sizeof a->name, "%s", lua_tostring(L, -2));
        lua_pop(L, 2);
        if (a->role == ROLE_DIM) {
            int d = -1;
            for (int k = 0; k < t->ndims; k++)
                if (!strcmp(t->dims[k], a->name)) d = k;
            if (d < 0) { fail(T, "%s: dim arg '%s' is not one of the op's dims", rel, a->name); goto bad; }
            a->value = (double)t->shape[d];
        } else if (a->role == ROLE_SCALAR) {
            lua_getfield(L, arg, "value");
            a->value = lua_tonumber(L, -1);
            lua_pop(L, 1);
        } else {
            lua_getfield(L, arg, "type");
            const char *ty = lua_tostring(L, -1);
            if (ty && lua_getfield(L, types, ty) == LUA_TSTRING) ty = lua_tostring(L, -1);
            else if (ty) lua_pushnil(L);
            if (!ty || !(a->esize = dtype_size(ty))) {
                fail(T, "%s: arg '%s' has no element type for dtype '%s'", rel, a->name, dtype);
                goto bad;
            }
            snprintf(a->dtype, sizeof a->dtype, "%s", ty);
            lua_pop(L, 2);
            if (lua_getfield(L, arg, "size") != LUA_TFUNCTION) { fail(T, "%s: buffer '%s' needs size = function(shape)", rel, a->name); goto bad; }
            if (buffer_count(T, t, rel, a)) goto bad;
            lua_getfield(L, arg, "init");
            a->init = lua_isstring(L, -1) && init_find(lua_tostring(L, -1)) == INIT_UNIFORM ? INIT_UNIFORM : INIT_NORMAL;
            lua_pop(L, 1);
        }
        lua_settop(L, types + 1);
    }
    t->nargs = nargs;
    lua_settop(L, top);
    /* tolerance[dtype] */
    lua_getfield(L, top, "tolerance");
    /* A tolerance is a table {rtol=, atol=} or a function(shape) returning
    ** one (products over k terms scale it with k). */
    int tt = lua_getfield(L, -1, dtype);
    if (tt == LUA_TFUNCTION) {
        tmpl_push_shape(T, t);
        if (tmpl_pcall(T, 1, 1, rel)) goto bad;
        tt = lua_type(L, -1);
    }
    if (tt != LUA_TTABLE) { fail(T, "%s: no tolerance for dtype '%s'", rel, dtype); goto bad; }
    lua_getfield(L, -1, "rtol");
    lua_getfield(L, -2, "atol");
    t->rtol = lua_tonumber(L, -2);
    t->atol = lua_tonumber(L, -1);
    lua_settop(L, top);
    lua_getfield(L, top, "metrics");
    tmpl_push_shape(T, t);
    lua_pushstring(L, dtype);
    if (tmpl_pcall(T, 2, 1, "op.metrics")) goto bad;
    if (!lua_istable(L, -1)) { fail(T, "%s: metrics() must return {flops=, bytes=}", rel); goto bad; }
    lua_getfield(L, -1, "bytes");
    lua_getfield(L, -2, "flops");
    t->bytes = lua_tonumber(L, -2);
    t->flops = lua_tonumber(L, -1);
    lua_settop(L, top - 1);
    return 0;
bad:
    lua_settop(L, top - 1);
    return -1;
}

/* Call template function `fn` with (config, shape, dtype, dev); leaves
** nres results on the stack. */
static int call_tmpl(tmpl *T, const char *tname, const char *fn, const char *config,
                     const op_task *task, const device *dev, int nres)
{
    lua_State *L = T->L;
    if (tmpl_push_template(T, tname)) return -1;
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    int n = 0;
    if (config) {
        if (tmpl_push_config(T, config)) { lua_pop(L, 1); return -1; }
        n++;
    }
    tmpl_push_shape(T, task);
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    char what[160];
    snprintf(what, sizeof what, "template '%s' %s()", tname, fn);
    return tmpl_pcall(T, n + 3, nres, what);
}

int tmpl_supports(tmpl *T, const char *tname, const op_task *task, const device *dev,
                  int *ok, char *why, int whycap)
{
    if (call_tmpl(T, tname, "supports", NULL, task, dev, 2)) return -1;
    *ok = lua_toboolean(T->L, -2);
    snprintf(why, (size_t)whycap, "%s", lua_isstring(T->L, -1) ? lua_tostring(T->L, -1) : "not supported");
    lua_pop(T->L, 2);
    return 0;
}

int tmpl_valid(tmpl *T, const char *tname, const char *config, const op_task *task,
               const device *dev, int *ok, char *why, int whycap)
{
    if (tmpl_config_known(T, tname, config, ok, why, whycap)) return -1;
    if (!*ok) return 0;
    lua_State *L = T->L;
    if (call_tmpl(T, tname, "constraints", config, task, dev, 2)) return -1;
    *ok = lua_toboolean(L, -2);
    snprintf(why, (size_t)whycap, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "constraint");
    lua_pop(L, 2);
    return 0;
}

/* The config table at stack index cfg against the template on the stack
** top's params: each one present and, when values, one of its values; the
** first that is not goes to why. Leaves the stack as it found it. */
static void check_params(lua_State *L, int cfg, int values, int *ok, char *why, int whycap)
{
    lua_getfield(L, -1, "params");
    int top = lua_gettop(L), np = (int)lua_rawlen(L, -1);
    *ok = 1;
    for (int i = 1; i <= np && *ok; i++) {
        lua_rawgeti(L, top, i);
        lua_rawgeti(L, -1, 1);
        const char *name = lua_tostring(L, -1);
        lua_rawgeti(L, -2, 2);
        lua_getfield(L, cfg, name ? name : "");
        int found = !lua_isnil(L, -1);
        if (!found) {
            *ok = 0;
            snprintf(why, (size_t)whycap, "%s=(missing) is not one of the template's values", name ? name : "?");
        } else if (values) {
            found = 0;
            for (int k = 1; k <= (int)lua_rawlen(L, -2) && !found; k++) {
                lua_rawgeti(L, -2, k);
                found = lua_compare(L, -1, -2, LUA_OPEQ);
                lua_pop(L, 1);
            }
            if (!found) {
                *ok = 0;
                snprintf(why, (size_t)whycap, "%s=%s is not one of the template's values", name, luaL_tolstring(L, -1, NULL));
            }
        }
        lua_settop(L, top);
    }
    lua_settop(L, top - 1);
}

int tmpl_config_known(tmpl *T, const char *tname, const char *config, int *ok, char *why, int whycap)
{
    lua_State *L = T->L;
    if (tmpl_push_template(T, tname)) return -1;
    if (tmpl_push_config(T, config)) { lua_pop(L, 1); return -1; }
    int cfg = lua_gettop(L), nkeys = 0;
    lua_pushnil(L);
    while (lua_next(L, cfg)) { nkeys++; lua_pop(L, 1); }
    lua_pushvalue(L, cfg - 1);           /* the template on top */
    check_params(L, cfg, 1, ok, why, whycap);
    lua_getfield(L, -1, "params");
    int np = (int)lua_rawlen(L, -1);
    if (*ok && nkeys != np) { *ok = 0; snprintf(why, (size_t)whycap, "config has keys the template does not know"); }
    lua_settop(L, cfg - 2);
    return 0;
}

/* The template's hook (carry or span) over config, given shapes a and b:
** the config it gives, or config itself where the template has none, config
** is not one of its space, or the hook gives nil. -1 when the hook fails or
** gives what is not a config of the template's space. */
static int remap(tmpl *T, const char *tname, const char *hook, const char *config, const op_task *a, const op_task *b,
                 const device *dev, char **out)
{
    *out = NULL;
    lua_State *L = T->L;
    int known = 0;
    char why[160];
    if (tmpl_config_known(T, tname, config, &known, why, (int)sizeof why)) return -1;
    if (tmpl_push_template(T, tname)) return -1;
    lua_getfield(L, -1, hook);
    lua_remove(L, -2);
    if (!lua_isfunction(L, -1) || !known) {
        lua_pop(L, 1);
        *out = xstrdup(config);
        return 0;
    }
    if (tmpl_push_config(T, config)) { lua_pop(L, 1); return -1; }
    tmpl_push_shape(T, a);
    tmpl_push_shape(T, b);
    lua_pushstring(L, b->dtype);
    tmpl_push_dev(T, dev);
    char what[160];
    snprintf(what, sizeof what, "template '%s' %s()", tname, hook);
    if (tmpl_pcall(T, 5, 1, what)) return -1;
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        *out = xstrdup(config);
        return 0;
    }
    if (!lua_istable(L, -1)) {
        const char *type = luaL_typename(L, -1);
        lua_pop(L, 1);
        return fail(T, "template '%s' %s(): gave a %s, not a config or nil", tname, hook, type);
    }
    strbuf sb = STRBUF_INIT;
    int rc = tmpl_config_json(T, -1, &sb);
    lua_pop(L, 1);
    if (rc) { sb_free(&sb); return -1; }
    if (tmpl_config_known(T, tname, sb.buf, &known, why, (int)sizeof why)) { sb_free(&sb); return -1; }
    if (!known) {
        sb_free(&sb);
        return fail(T, "template '%s' %s(): gave a config outside its space (%s)", tname, hook, why);
    }
    *out = sb.buf;
    return 0;
}

int tmpl_carry(tmpl *T, const char *tname, const char *config, const op_task *from, const op_task *task,
               const device *dev, char **out)
{
    return remap(T, tname, "carry", config, from, task, dev, out);
}

int tmpl_span(tmpl *T, const char *tname, const char *config, const op_task *lo, const op_task *hi,
              const device *dev, char **out)
{
    return remap(T, tname, "span", config, lo, hi, dev, out);
}

int tmpl_default(tmpl *T, const char *tname, const op_task *task, const device *dev, char **config)
{
    if (call_tmpl(T, tname, "default", NULL, task, dev, 1)) return -1;
    /* A default without one of the params would fail only when a lookup
    ** falls back to it, in an application: say so now. (Its values may lie
    ** outside a space narrowed by hand: only presence is checked.) */
    lua_State *L = T->L;
    if (lua_istable(L, -1)) {
        int cfg = lua_gettop(L), ok;
        char why[160];
        if (tmpl_push_template(T, tname)) { lua_pop(L, 1); return -1; }
        check_params(L, cfg, 0, &ok, why, (int)sizeof why);
        lua_settop(L, cfg);
        if (!ok) {
            lua_pop(L, 1);
            return fail(T, "template '%s' default(): the config has no '%.*s'", tname, (int)strcspn(why, "="), why);
        }
    }
    strbuf sb = STRBUF_INIT;
    int rc = tmpl_config_json(T, -1, &sb);
    lua_pop(T->L, 1);
    if (rc) { sb_free(&sb); return -1; }
    *config = sb.buf;
    return 0;
}

/* One launch entry (an integer or an expression string) at the top of the
** stack into *slot; nil gives dflt. */
static int launch_expr(tmpl *T, const char *what, const char *field, int i, const char *dflt, char **slot)
{
    lua_State *L = T->L;
    char buf[32];
    const char *s = dflt;
    if (lua_isinteger(L, -1)) {
        snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, -1));
        s = buf;
    } else if (lua_type(L, -1) == LUA_TSTRING) {
        s = lua_tostring(L, -1);
    } else if (!lua_isnil(L, -1) || !dflt) {
        if (i >= 0) return fail(T, "%s: launch %s[%d] must be an integer or an expression", what, field, i + 1);
        return fail(T, "%s: launch %s must be an integer or an expression", what, field);
    }
    if (plan_set(slot, s)) return fail(T, "out of memory");
    return 0;
}

/* A list of n launch entries under field of the table at the top. */
static int launch_list(tmpl *T, const char *what, const char *field, int n, int required, char **slots)
{
    lua_State *L = T->L;
    int ty = lua_getfield(L, -1, field);
    if (ty != LUA_TTABLE && (required || ty != LUA_TNIL)) {
        lua_pop(L, 1);
        return fail(T, "%s: launch %s must be a list of %d entries", what, field, n);
    }
    for (int i = 0; i < n; i++) {
        if (ty == LUA_TTABLE) lua_rawgeti(L, -1, i + 1);
        else lua_pushnil(L);
        int rc = launch_expr(T, what, field, i, "1", &slots[i]);
        lua_pop(L, 1);
        if (rc) { lua_pop(L, 1); return -1; }
    }
    lua_pop(L, 1);
    return 0;
}

/* A string field of the param table at the top; NULL if absent. */
static const char *param_str(lua_State *L, const char *key)
{
    lua_getfield(L, -1, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);   /* the string stays alive: the param table holds it */
    return s;
}

static int param_int(lua_State *L, const char *key, long long dflt, long long *v)
{
    int ty = lua_getfield(L, -1, key);
    int ok = ty == LUA_TNIL || lua_isinteger(L, -1);
    *v = ty == LUA_TNIL ? dflt : (long long)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return ok ? 0 : -1;
}

/* A list of expressions under key of the param table at the top. */
static int param_exprs(tmpl *T, const char *what, int i, const char *key, int n, char **slots)
{
    lua_State *L = T->L;
    if (lua_getfield(L, -1, key) != LUA_TTABLE || (int)lua_rawlen(L, -1) != n) {
        lua_pop(L, 1);
        return fail(T, "%s: params[%d].%s must be a list of %d entries", what, i + 1, key, n);
    }
    for (int d = 0; d < n; d++) {
        lua_rawgeti(L, -1, d + 1);
        int rc = launch_expr(T, what, key, d, NULL, &slots[d]);
        lua_pop(L, 1);
        if (rc) { lua_pop(L, 1); return -1; }
    }
    lua_pop(L, 1);
    return 0;
}

/* launch's `params` list (the table at the top) into the plan. */
static int read_params(tmpl *T, const char *what, plan *P)
{
    lua_State *L = T->L;
    int n = (int)lua_rawlen(L, -1);
    if (n > PLAN_MAXPARAMS) return fail(T, "%s: more than %d params", what, PLAN_MAXPARAMS);
    for (int i = 0; i < n; i++) {
        plan_param *q = &P->params[i];
        P->nparams = i + 1;
        q->arg = -1;
        if (lua_rawgeti(L, -1, i + 1) != LUA_TTABLE) { lua_pop(L, 1); return fail(T, "%s: params[%d] must be a table", what, i + 1); }
        const char *kind = param_str(L, "kind");
        q->kind = plan_kind_find(kind);
        int rc = 0;
        if (q->kind < 0) {
            rc = fail(T, "%s: params[%d].kind must be ptr, dim, i32, f32, workspace or tmap", what, i + 1);
        } else if (q->kind == PLAN_PTR || q->kind == PLAN_F32 || q->kind == PLAN_TMAP) {
            const char *arg = param_str(L, "arg");
            if (!arg || (q->arg = plan_arg_index(P, arg)) < 0)
                rc = fail(T, "%s: params[%d].arg must name an argument of the op", what, i + 1);
        } else {
            lua_getfield(L, -1, q->kind == PLAN_WORKSPACE ? "size" : "expr");
            rc = launch_expr(T, what, q->kind == PLAN_WORKSPACE ? "size" : "expr", -1, NULL, &q->expr);
            lua_pop(L, 1);
            /* workspace: the bytes zeroed before each launch (optional) */
            if (!rc && q->kind == PLAN_WORKSPACE && lua_getfield(L, -1, "zero") != LUA_TNIL)
                rc = launch_expr(T, what, "zero", -1, NULL, &q->zero);
            if (q->kind == PLAN_WORKSPACE) lua_pop(L, 1);
        }
        if (!rc && q->kind == PLAN_TMAP) {
            plan_tmap *t = &q->tm;
            lua_getfield(L, -1, "dims");
            t->rank = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
            lua_pop(L, 1);
            if (t->rank < 1 || t->rank > 5) rc = fail(T, "%s: params[%d].dims must list 1 to 5 sizes", what, i + 1);
            if (!rc) rc = param_exprs(T, what, i, "dims", t->rank, t->dims);
            if (!rc && t->rank > 1) rc = param_exprs(T, what, i, "strides", t->rank - 1, t->strides);
            /* the byte in the workspace the map reads from (optional) */
            if (!rc) {
                if (lua_getfield(L, -1, "at") != LUA_TNIL) rc = launch_expr(T, what, "at", -1, NULL, &q->at);
                lua_pop(L, 1);
            }
            if (!rc) {
                if (lua_getfield(L, -1, "box") != LUA_TTABLE || (int)lua_rawlen(L, -1) != t->rank) {
                    rc = fail(T, "%s: params[%d].box must list %d sizes", what, i + 1, t->rank);
                } else {
                    for (int d = 0; d < t->rank && !rc; d++) {
                        lua_rawgeti(L, -1, d + 1);
                        /* an outer box may follow the shape (plan.h) */
                        if (d > 0 && lua_type(L, -1) == LUA_TSTRING) {
                            rc = launch_expr(T, what, "box", d, NULL, &t->box_expr[d]);
                            lua_pop(L, 1);
                            continue;
                        }
                        long long b = lua_isinteger(L, -1) ? (long long)lua_tointeger(L, -1) : -1;
                        lua_pop(L, 1);
                        if (b < 1 || b > 256)
                            rc = fail(T, "%s: params[%d].box[%d] must be an integer 1 to 256%s", what, i + 1, d + 1,
                                      d ? " or an expression" : "");
                        else t->box[d] = (unsigned)b;
                    }
                }
                lua_pop(L, 1);
            }
            long long sw, l2;
            if (!rc && (param_int(L, "swizzle", 0, &sw) || param_int(L, "l2", 0, &l2)))
                rc = fail(T, "%s: params[%d].swizzle and .l2 must be integers", what, i + 1);
            const char *oob = rc ? NULL : param_str(L, "oob");
            if (!rc && oob && strcmp(oob, "zero") && strcmp(oob, "nan"))
                rc = fail(T, "%s: params[%d].oob must be \"zero\" or \"nan\"", what, i + 1);
            if (!rc) {
                t->swizzle = (int)sw;
                t->l2 = (int)l2;
                t->oob_nan = oob && !strcmp(oob, "nan");
            }
        }
        lua_pop(L, 1);
        if (rc) return -1;
    }
    return 0;
}

/* The plan's signature: the op's dims and arguments from the task. */
static int plan_for_task(tmpl *T, const op_task *task, const char *kname, plan **out)
{
    plan *P = *out = plan_new();
    if (!P) return fail(T, "out of memory");
    snprintf(P->kernel, sizeof P->kernel, "%s", kname);
    P->ndims = task->ndims;
    for (int i = 0; i < task->ndims; i++) snprintf(P->dims[i], sizeof P->dims[i], "%s", task->dims[i]);
    P->nargs = task->nargs;
    for (int i = 0; i < task->nargs; i++) {
        plan_arg *a = &P->args[i];
        snprintf(a->name, sizeof a->name, "%s", task->args[i].name);
        a->role = task->args[i].role;   /* enum arg_role and enum plan_role agree */
        if (a->role <= ROLE_INOUT) {
            snprintf(a->dtype, sizeof a->dtype, "%s", task->args[i].dtype);
            a->esize = task->args[i].esize;
        }
    }
    /* Buffer sizes as expressions: op.lua's size() over a symbolic shape. */
    lua_State *L = T->L;
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.G");
    lua_getfield(L, -1, "lib");
    lua_pushstring(L, "kernel");
    if (tmpl_pcall(T, 1, 1, "lib('kernel')")) { lua_settop(L, top); return -1; }
    lua_getfield(L, -1, "size_exprs");
    if (push_op(T, task->op)) { lua_settop(L, top); return -1; }
    lua_createtable(L, task->ndims, 0);
    for (int i = 0; i < task->ndims; i++) {
        lua_pushstring(L, task->dims[i]);
        lua_rawseti(L, -2, i + 1);
    }
    if (tmpl_pcall(T, 2, 1, "kernel.size_exprs")) { lua_settop(L, top); return -1; }
    for (int i = 0; i < P->nargs; i++) {
        if (P->args[i].role > ROLE_INOUT) continue;
        if (lua_getfield(L, -1, P->args[i].name) == LUA_TSTRING)
            snprintf(P->args[i].size, sizeof P->args[i].size, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    return 0;
}

/* Read {grid=, block=, smem=, cluster=, params=} at the top of the stack
** into k's plan; ws_expr: the workspace size when params are the default. */
static int read_launch(tmpl *T, const char *what, const op_task *task, const char *ws_expr, kernel_src *k)
{
    lua_State *L = T->L;
    if (!lua_istable(L, -1)) return fail(T, "%s: launch must return {grid=, block=, smem=}", what);
    plan *P;
    if (plan_for_task(T, task, k->name, &P)) return -1;
    k->plan = P;
    if (launch_list(T, what, "grid", 3, 1, P->grid) || launch_list(T, what, "block", 3, 1, P->block) ||
        launch_list(T, what, "cluster", 3, 0, P->cluster))
        return -1;
    lua_getfield(L, -1, "smem");
    int rc = launch_expr(T, what, "smem", -1, "0", &P->smem);
    lua_pop(L, 1);
    if (rc) return -1;
    char err[512];
    if (lua_getfield(L, -1, "params") == LUA_TTABLE) {
        rc = read_params(T, what, P);
        lua_pop(L, 1);
        if (rc) return -1;
    } else {
        lua_pop(L, 1);
        if (plan_default_params(P, ws_expr, err, sizeof err)) return fail(T, "%s: %s", what, err);
        /* zero=: the bytes of the default workspace zeroed before a launch. */
        if (lua_getfield(L, -1, "zero") != LUA_TNIL) {
            plan_param *w = P->nparams && P->params[P->nparams - 1].kind == PLAN_WORKSPACE ? &P->params[P->nparams - 1] : NULL;
            rc = w ? launch_expr(T, what, "zero", -1, NULL, &w->zero) : fail(T, "%s: zero without a workspace", what);
        }
        lua_pop(L, 1);
        if (rc) return -1;
    }
    /* pdl=true: launched with programmatic stream serialization (plan.h). */
    int t = lua_getfield(L, -1, "pdl");
    P->pdl = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN) return fail(T, "%s: pdl must be true or false", what);
    /* waves=: the rounds of work the grid runs at a shape (plan.h). */
    if (lua_getfield(L, -1, "waves") != LUA_TNIL) rc = launch_expr(T, what, "waves", -1, NULL, &P->waves);
    lua_pop(L, 1);
    if (rc) return -1;
    if (plan_check(P, err, sizeof err)) return fail(T, "%s: %s", what, err);
    return 0;
}

/* The template's workspace(p, shape, dt, dev) as an expression over the
** dims (kernel.lua's workspace_expr); *out NULL when it has none. */
static int workspace_expr(tmpl *T, int tt, const char *tname, const char *config, const op_task *task, const device *dev,
                          char **out)
{
    lua_State *L = T->L;
    *out = NULL;
    if (lua_getfield(L, tt, "workspace") != LUA_TFUNCTION) { lua_pop(L, 1); return 0; }
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.G");
    lua_getfield(L, -1, "lib");
    lua_remove(L, -2);
    lua_pushstring(L, "kernel");
    if (tmpl_pcall(T, 1, 1, "lib('kernel')")) return -1;
    lua_getfield(L, -1, "workspace_expr");
    lua_remove(L, -2);
    lua_pushvalue(L, tt);
    if (tmpl_push_config(T, config)) { lua_pop(L, 2); return -1; }
    lua_createtable(L, task->ndims, 0);
    for (int i = 0; i < task->ndims; i++) {
        lua_pushstring(L, task->dims[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    char what[160];
    snprintf(what, sizeof what, "template '%s' workspace()", tname);
    if (tmpl_pcall(T, 5, 1, what)) return -1;
    if (lua_type(L, -1) == LUA_TSTRING) *out = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
}

int tmpl_instantiate(tmpl *T, const char *tname, const char *config, const op_task *task,
                     const device *dev, const char *kname, kernel_src *k)
{
    lua_State *L = T->L;
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", kname);
    char what[160];
    if (tmpl_push_template(T, tname)) return -1;
    int tt = lua_gettop(L);
    /* source(p, dtype, dev, name) */
    lua_getfield(L, tt, "source");
    if (tmpl_push_config(T, config)) goto bad;
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    lua_pushstring(L, kname);
    snprintf(what, sizeof what, "template '%s' source()", tname);
    if (tmpl_pcall(T, 4, 1, what)) goto bad;
    if (lua_type(L, -1) != LUA_TSTRING) { fail(T, "%s must return a string", what); goto bad; }
    k->source = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    /* workspace(p, shape, dtype, dev), optional, as an expression */
    char *ws = NULL;
    if (workspace_expr(T, tt, tname, config, task, dev, &ws)) goto bad;
    /* launch(p, dtype, dev) */
    lua_getfield(L, tt, "launch");
    if (tmpl_push_config(T, config)) { free(ws); goto bad; }
    lua_pushstring(L, task->dtype);
    tmpl_push_dev(T, dev);
    snprintf(what, sizeof what, "template '%s' launch()", tname);
    int rc = tmpl_pcall(T, 3, 1, what) || read_launch(T, what, task, ws, k);
    free(ws);
    if (rc) goto bad;
    lua_settop(L, tt - 1);
    return 0;
bad:
    lua_settop(L, tt - 1);
    kernel_src_free(k);
    return -1;
}

int tmpl_reference(tmpl *T, const op_task *task, const char *kname, kernel_src *k)
{
    lua_State *L = T->L;
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", kname);
    if (push_op(T, task->op)) return -1;
    int top = lua_gettop(L);
    char what[96];
    snprintf(what, sizeof what, "op '%s' reference", task->op);
    lua_getfield(L, top, "reference");
    lua_getfield(L, -1, "source");
    lua_pushstring(L, task->dtype);
    lua_pushstring(L, kname);
    if (tmpl_pcall(T, 2, 1, what)) goto bad;
    if (lua_type(L, -1) != LUA_TSTRING) { fail(T, "%s source() must return a string", what); goto bad; }
    k->source = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    lua_getfield(L, -1, "launch");
    lua_pushstring(L, task->dtype);
    if (tmpl_pcall(T, 1, 1, what) || read_launch(T, what, task, NULL, k)) goto bad;
    lua_settop(L, top - 1);
    return 0;
bad:
    lua_settop(L, top - 1);
    kernel_src_free(k);
    return -1;
}

void kernel_src_free(kernel_src *k)
{
    free(k->source);
    k->source = NULL;
    plan_free(k->plan);
    k->plan = NULL;
}

int kernel_geometry(const kernel_src *k, const op_task *task, plan_geom *g, char *err, int errcap)
{
    if (!k->plan) { snprintf(err, (size_t)errcap, "no launch plan"); return -1; }
    return plan_geometry(k->plan, task->shape, g, err, errcap);
}

int tmpl_support(tmpl *T, char **source)
{
    lua_State *L = T->L;
    lua_getfield(L, LUA_REGISTRYINDEX, "aitune.G");
    lua_getfield(L, -1, "lib");
    lua_remove(L, -2);
    lua_pushstring(L, "support");
    if (tmpl_pcall(T, 1, 1, "lib('support')")) return -1;
    lua_getfield(L, -1, "source");
    if (tmpl_pcall(T, 0, 1, "support.source()")) { lua_pop(L, 1); return -1; }
    *source = xstrdup(lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 2);
    return 0;
}

void tmpl_shape_json(const op_task *t, char *out, size_t cap)
{
    jw w = { 0 };
    jw_obj(&w);
    for (int d = 0; d < t->ndims; d++) {
        jw_key(&w, t->dims[d]);
        jw_int(&w, t->shape[d]);
    }
    jw_end(&w);
    snprintf(out, cap, "%s", jw_text(&w));
    jw_free(&w);
}
