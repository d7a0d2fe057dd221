/* wire.c: see wire.h. */
#define _GNU_SOURCE
#include "wire.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cmds[] = { "", "hello", "support", "task", "load", "unload", "verify", "time", "copy", "quit",
                                    "vendor" };
static const char *const statuses[] = { "ok", "wrong", "error" };

int wire_cmd(const msg *m)
{
    const char *c = wire_cmd_text(m);
    for (int i = 1; i < (int)(sizeof cmds / sizeof *cmds); i++)
        if (!strcmp(c, cmds[i])) return i;
    return WIRE_UNKNOWN;
}

const char *wire_cmd_text(const msg *m) { return msg_get(m, "cmd") ? msg_get(m, "cmd") : ""; }

void wire_put_cmd(strbuf *h, int cmd) { msg_kv(h, "cmd", "%s", cmds[cmd]); }

void wire_put_reply(strbuf *h, int status, const char *error, int sticky)
{
    msg_kv(h, "status", "%s", statuses[status]);
    if (error) msg_kv(h, "error", "%s", error);
    if (sticky) msg_kv(h, "sticky", "1");
}

void wire_get_reply(const msg *m, wire_reply *r)
{
    r->text = msg_get(m, "status") ? msg_get(m, "status") : "error";
    r->status = !strcmp(r->text, "ok") ? WIRE_OK : !strcmp(r->text, "wrong") ? WIRE_WRONG : WIRE_ERROR;
    r->error = msg_get(m, "error");
    r->sticky = msg_int(m, "sticky", 0) != 0;
}

void wire_put_hello(strbuf *h, int gpu)
{
    wire_put_cmd(h, WIRE_HELLO);
    msg_kv(h, "gpu", "%d", gpu);
}

int wire_get_hello(const msg *m) { return (int)msg_int(m, "gpu", 0); }

void wire_put_device(strbuf *h, const device *d, const char *env_json)
{
    wire_put_reply(h, WIRE_OK, NULL, 0);
    msg_kv(h, "name", "%s", d->name);
    msg_kv(h, "uuid", "%s", d->uuid);
    msg_kv(h, "cc", "%d", d->cc);
    msg_kv(h, "sms", "%d", d->sms);
    msg_kv(h, "mem", "%lld", d->mem);
    msg_kv(h, "l2", "%lld", d->l2);
    msg_kv(h, "smem_optin", "%d", d->smem_optin);
    msg_kv(h, "smem_per_sm", "%d", d->smem_per_sm);
    msg_kv(h, "regs_per_sm", "%d", d->regs_per_sm);
    msg_kv(h, "max_threads_per_sm", "%d", d->max_threads_per_sm);
    msg_kv(h, "clock_khz", "%d", d->clock_khz);
    msg_kv(h, "mem_clock_khz", "%d", d->mem_clock_khz);
    msg_kv(h, "driver", "%s", d->driver);
    msg_kv(h, "cuda_driver", "%d", d->cuda_driver);
    msg_kv(h, "nvrtc", "%s", d->nvrtc);
    msg_kv(h, "count", "%d", d->count);
    msg_kv(h, "env", "%s", env_json);
}

static void copy_text(char *dst, size_t cap, const msg *m, const char *key)
{
    snprintf(dst, cap, "%s", msg_get(m, key) ? msg_get(m, key) : "");
}

void wire_get_device(const msg *m, device *d, strbuf *env_json)
{
    memset(d, 0, sizeof *d);
    copy_text(d->name, sizeof d->name, m, "name");
    copy_text(d->uuid, sizeof d->uuid, m, "uuid");
    copy_text(d->driver, sizeof d->driver, m, "driver");
    copy_text(d->nvrtc, sizeof d->nvrtc, m, "nvrtc");
    d->cc = (int)msg_int(m, "cc", 0);
    d->sms = (int)msg_int(m, "sms", 0);
    d->mem = msg_int(m, "mem", 0);
    d->l2 = msg_int(m, "l2", 0);
    d->smem_optin = (int)msg_int(m, "smem_optin", 0);
    d->smem_per_sm = (int)msg_int(m, "smem_per_sm", 0);
    d->regs_per_sm = (int)msg_int(m, "regs_per_sm", 0);
    d->max_threads_per_sm = (int)msg_int(m, "max_threads_per_sm", 0);
    d->clock_khz = (int)msg_int(m, "clock_khz", 0);
    d->mem_clock_khz = (int)msg_int(m, "mem_clock_khz", 0);
    d->cuda_driver = (int)msg_int(m, "cuda_driver", 0);
    d->real = 1;
    d->count = (int)msg_int(m, "count", 1);
    if (env_json) sb_puts(env_json, msg_get(m, "env") ? msg_get(m, "env") : "{}");
}

/* The key of list item i: "arg3", "t0". */
static const char *item(char *key, size_t cap, const char *prefix, int i)
{
    snprintf(key, cap, "%s%d", prefix, i);
    return key;
}

void wire_put_task(strbuf *h, const wire_task *t)
{
    char key[16];
    wire_put_cmd(h, WIRE_TASK);
    msg_kv(h, "seed", "%llu", t->seed);
    msg_kv(h, "nargs", "%d", t->nargs);
    /* arg<i>=name role dtype esize count init value ("-": no dtype) */
    for (int i = 0; i < t->nargs; i++) {
        const op_arg *a = &t->args[i];
        msg_kv(h, item(key, sizeof key, "arg", i), "%s %s %s %d %lld %s %.17g", a->name, role_name(a->role),
               a->dtype[0] ? a->dtype : "-", a->esize, a->count, init_name(a->init == INIT_UNIFORM), a->value);
    }
    msg_kv(h, "rtol", "%.9g", t->rtol);
    msg_kv(h, "atol", "%.9g", t->atol);
    msg_kv(h, "name", "%s", t->name);
    strbuf shape = STRBUF_INIT;
    for (int d = 0; d < t->ndims; d++) sb_printf(&shape, "%s%lld", d ? "," : "", t->shape[d]);
    msg_kv(h, "shape", "%s", sb_str(&shape));
    sb_free(&shape);
    if (t->plan) msg_kv(h, "plan", "%s", t->plan);
    if (t->stream) msg_kv(h, "timing", "%s", timing_name(t->stream));
}

static int get_arg(const char *s, op_arg *a)
{
    char role[16], init[16];
    memset(a, 0, sizeof *a);
    if (!s || sscanf(s, "%31s %15s %7s %d %lld %15s %lf", a->name, role, a->dtype, &a->esize, &a->count, init,
                     &a->value) != 7)
        return -1;
    if (!strcmp(a->dtype, "-")) a->dtype[0] = 0;
    a->role = role_find(role);
    a->init = init_find(init) == INIT_UNIFORM ? INIT_UNIFORM : INIT_NORMAL;
    return a->role < 0 ? -1 : 0;
}

int wire_get_task(const msg *m, wire_task *t, char *err, int errcap)
{
    memset(t, 0, sizeof *t);
    t->nargs = (int)msg_int(m, "nargs", 0);
    if (t->nargs < 1 || t->nargs > TMPL_MAXARGS) return snprintf(err, (size_t)errcap, "task: bad nargs"), -1;
    t->seed = strtoull(msg_get(m, "seed") ? msg_get(m, "seed") : "1", NULL, 10);
    t->rtol = msg_num(m, "rtol", 0);
    t->atol = msg_num(m, "atol", 0);
    const char *timing = msg_get(m, "timing");
    int stream = timing ? timing_find(timing) : 0;
    if (stream < 0) return snprintf(err, (size_t)errcap, "task: bad timing"), -1;
    t->stream = stream;
    /* shape=4096,1024: the dims' sizes in the op's order. */
    for (const char *s = msg_get(m, "shape"); s && *s && t->ndims < TMPL_MAXDIMS;) {
        char *end;
        t->shape[t->ndims++] = strtoll(s, &end, 10);
        if (end == s) return snprintf(err, (size_t)errcap, "task: bad shape"), -1;
        s = *end == ',' ? end + 1 : end;
    }
    if (t->ndims < 1) return snprintf(err, (size_t)errcap, "task: no shape"), -1;
    char key[16];
    for (int i = 0; i < t->nargs; i++)
        if (get_arg(msg_get(m, item(key, sizeof key, "arg", i)), &t->args[i]))
            return snprintf(err, (size_t)errcap, "task: bad %s", key), -1;
    copy_text(t->name, sizeof t->name, m, "name");
    t->plan = msg_get(m, "plan");
    return 0;
}

void wire_put_load(strbuf *h, const wire_load *l)
{
    wire_put_cmd(h, WIRE_LOAD);
    msg_kv(h, "slot", "%d", l->slot);
    msg_kv(h, "name", "%s", l->name);
    msg_kv(h, "plan", "%s", l->plan);
}

void wire_get_load(const msg *m, wire_load *l)
{
    l->slot = wire_get_slot(m);
    l->name = msg_get(m, "name");
    l->plan = msg_get(m, "plan");
}

void wire_put_slot(strbuf *h, int cmd, int slot)
{
    wire_put_cmd(h, cmd);
    msg_kv(h, "slot", "%d", slot);
}

int wire_get_slot(const msg *m) { return (int)msg_int(m, "slot", -1); }

void wire_time_init(wire_time *q)
{
    memset(q, 0, sizeof *q);
    q->warmup = 3;
    q->min_samples = 10;
    q->max_samples = 200;
    q->max_seconds = 2;
    q->settle = 0.005;
}

void wire_race_init(wire_time *q)
{
    wire_time_init(q);
    q->rounds = WIRE_RACE_ROUNDS;
    q->min_samples = WIRE_RACE_MIN;
    q->max_seconds = WIRE_RACE_SECONDS;
}

void wire_put_time(strbuf *h, const wire_time *q)
{
    wire_put_cmd(h, WIRE_TIME);
    strbuf slots = STRBUF_INIT;
    for (int i = 0; i < q->nslots; i++) sb_printf(&slots, "%s%d", i ? "," : "", q->slots[i]);
    msg_kv(h, "slots", "%s", sb_str(&slots));
    sb_free(&slots);
    msg_kv(h, "warmup", "%d", q->warmup);
    msg_kv(h, "min", "%d", q->min_samples);
    msg_kv(h, "max", "%d", q->max_samples);
    msg_kv(h, "max_s", "%.17g", q->max_seconds);
    msg_kv(h, "settle", "%.17g", q->settle);
    msg_kv(h, "rounds", "%d", q->rounds);
}

void wire_get_time(const msg *m, wire_time *q)
{
    wire_time_init(q);
    for (const char *s = msg_get(m, "slots"); s && *s && q->nslots < WIRE_SLOTS;) {
        q->slots[q->nslots++] = atoi(s);
        s = strchr(s, ',');
        if (s) s++;
    }
    q->warmup = (int)msg_int(m, "warmup", q->warmup);
    q->min_samples = (int)msg_int(m, "min", q->min_samples);
    q->max_samples = (int)msg_int(m, "max", q->max_samples);
    q->max_seconds = msg_num(m, "max_s", q->max_seconds);
    q->settle = msg_num(m, "settle", q->settle);
    q->rounds = (int)msg_int(m, "rounds", q->rounds);
}

void wire_put_times(strbuf *h, const stats *s, int n)
{
    char key[16];
    wire_put_reply(h, WIRE_OK, NULL, 0);
    for (int i = 0; i < n; i++)
        msg_kv(h, item(key, sizeof key, "t", i), "%.4f %.4f %.4f %.5f %d", s[i].median, s[i].min, s[i].max, s[i].spread,
               s[i].n);
}

int wire_get_times(const msg *m, int i, stats *s)
{
    char key[16];
    const char *v = msg_get(m, item(key, sizeof key, "t", i));
    if (v && sscanf(v, "%lf %lf %lf %lf %d", &s->median, &s->min, &s->max, &s->spread, &s->n) == 5 && s->median > 0 &&
        isfinite(s->median))
        return 0;
    memset(s, 0, sizeof *s);
    return -1;
}

void wire_put_copy(strbuf *h, long long bytes)
{
    wire_put_cmd(h, WIRE_COPY);
    msg_kv(h, "bytes", "%lld", bytes);
}

long long wire_get_copy(const msg *m) { return msg_int(m, "bytes", 1LL << 30); }

void wire_put_gbps(strbuf *h, double gbps)
{
    wire_put_reply(h, WIRE_OK, NULL, 0);
    msg_kv(h, "gbps", "%.1f", gbps);
}

double wire_get_gbps(const msg *m) { return msg_num(m, "gbps", 0); }

void wire_put_vendor(strbuf *h, const wire_vendor *v)
{
    wire_put_slot(h, WIRE_VENDOR, v->slot);
    msg_kv(h, "op", "%s", v->op);
    msg_kv(h, "dtype", "%s", v->dtype);
}

void wire_get_vendor(const msg *m, wire_vendor *v)
{
    v->slot = wire_get_slot(m);
    v->op = msg_get(m, "op");
    v->dtype = msg_get(m, "dtype");
}

void wire_put_vendor_ok(strbuf *h, const char *library, const char *algo)
{
    wire_put_reply(h, WIRE_OK, NULL, 0);
    msg_kv(h, "library", "%s", library ? library : "");
    msg_kv(h, "algo", "%s", algo ? algo : "");
}

void wire_get_vendor_ok(const msg *m, const char **library, const char **algo)
{
    *library = msg_get(m, "library") ? msg_get(m, "library") : "";
    *algo = msg_get(m, "algo") ? msg_get(m, "algo") : "";
}
