/* wire.h: the messages between aitune and its GPU worker, typed. Each
** request and reply has one C form with one writer (wire_put_*) and one
** reader (wire_get_*), and both ends use them: the parent's client
** (worker.h: worker_task, worker_load, worker_verify, worker_time, ...), the
** worker's loop (worker.c, which hands bench.c the decoded forms) and the
** fake worker of the tests (tests/unit/fake_worker.c). The framing (lines of
** key=value, an optional blob) is proto.h's.
**
** Requests, by cmd: hello (the GPU's ordinal), support (blob: the engine's
** cubin), task (wire_task; blob: the reference's cubin), load (wire_load;
** blob: the candidate's cubin), unload and verify (a slot), time
** (wire_time), copy (bytes), quit, vendor (wire_vendor: the vendor
** library's product for the task into a slot, vendor.h). Every reply
** carries a status (wire_reply); hello's adds the device's facts, time's
** each slot's statistics, copy's the bandwidth, vendor's the library and the
** heuristic's choice. */
#ifndef WIRE_H
#define WIRE_H
#include "device.h"
#include "proto.h"
#include "tmpl.h"

#define WIRE_SLOTS 16           /* kernels a worker holds at once */

enum wire_cmd { WIRE_UNKNOWN, WIRE_HELLO, WIRE_SUPPORT, WIRE_TASK, WIRE_LOAD, WIRE_UNLOAD, WIRE_VERIFY, WIRE_TIME,
                WIRE_COPY, WIRE_QUIT, WIRE_VENDOR };
/* A request's command (WIRE_UNKNOWN when it has none or another), and its
** text ("" when none). */
int wire_cmd(const msg *m);
const char *wire_cmd_text(const msg *m);
/* A request with no fields but its command (support, quit). */
void wire_put_cmd(strbuf *h, int cmd);

/* Every reply: ok, wrong (verify: the kernel's answer is not the
** reference's) or error, with the error's text; sticky when the worker's
** CUDA context is lost (it exits after replying). */
enum wire_status { WIRE_OK, WIRE_WRONG, WIRE_ERROR };
typedef struct wire_reply {
    int status;
    const char *error;      /* the reply's error text (in the msg), or NULL */
    const char *text;       /* its status as sent ("error" when it has none) */
    int sticky;
} wire_reply;
void wire_put_reply(strbuf *h, int status, const char *error, int sticky);
void wire_get_reply(const msg *m, wire_reply *r);

/* hello: the GPU's ordinal (the real worker has it in argv too); the reply
** is status ok with the device's facts and the environment (JSON). */
void wire_put_hello(strbuf *h, int gpu);
int wire_get_hello(const msg *m);
void wire_put_device(strbuf *h, const device *d, const char *env_json);
void wire_get_device(const msg *m, device *d, strbuf *env_json);

/* task: the op's arguments at one shape, how to check a result against the
** reference, and how to time (bench.h). Read back, plan points into the
** message; wire_get_task refuses what the worker cannot set up (no
** arguments, a bad shape or argument line, an unknown timing) with a line
** in err. */
typedef struct wire_task {
    unsigned long long seed;    /* of the inputs' generator */
    int nargs;
    op_arg args[TMPL_MAXARGS];
    double rtol, atol;
    char name[64];              /* the reference kernel's entry ("" when not sent) */
    int ndims;
    long long shape[TMPL_MAXDIMS];
    const char *plan;           /* the reference's launch plan (plan.h), or NULL */
    int stream;                 /* stream timing (bench.h), else flush */
} wire_task;
void wire_put_task(strbuf *h, const wire_task *t);
int wire_get_task(const msg *m, wire_task *t, char *err, int errcap);

/* load: a candidate into a slot, with its launch plan (the worker binds it
** at the task's shape). Read back: slot -1, name and plan NULL when absent. */
typedef struct wire_load {
    int slot;
    const char *name;
    const char *plan;
} wire_load;
void wire_put_load(strbuf *h, const wire_load *l);
void wire_get_load(const msg *m, wire_load *l);

/* unload and verify: one slot (-1 when absent). */
void wire_put_slot(strbuf *h, int cmd, int slot);
int wire_get_slot(const msg *m);

/* time: slots timed alone (one slot, adaptive: min to max samples until the
** median settles, or max_seconds) or raced (rounds > 0: interleaved). */
typedef struct wire_time {
    int nslots, slots[WIRE_SLOTS];
    int warmup;             /* launches before the first sample */
    int min_samples, max_samples;
    double max_seconds;     /* per timing call (a race: once each slot has min_samples) */
    double settle;          /* relative tolerance of stats_settled */
    int rounds;             /* > 0: interleaved race, this many rounds */
} wire_time;
/* The defaults: 3 warm-up launches, 10 to 200 samples, 2 s, 0.5%, no race. */
void wire_time_init(wire_time *q);
/* A race's terms (the sweep's races of candidates, and of a candidate
** against the vendor): the defaults, WIRE_RACE_ROUNDS rounds, and an end
** after WIRE_RACE_SECONDS once every slot has WIRE_RACE_MIN samples
** (bench_race_done). A round samples a chain of launches a slot, so with
** kernels of hundreds of microseconds 30 rounds of 16 slots took 1.4 s a
** race, 43% of a range sweep of issue 33's second row (H200, twenty-fifth
** session, bench/results/2026-11-29/s25-row2/call2/time_split.txt); short
** kernels still run all their rounds within the time. */
#define WIRE_RACE_ROUNDS 30
#define WIRE_RACE_MIN 12
#define WIRE_RACE_SECONDS 0.25
void wire_race_init(wire_time *q);
void wire_put_time(strbuf *h, const wire_time *q);
void wire_get_time(const msg *m, wire_time *q);

/* A time: statistics of one slot's samples, in microseconds. */
typedef struct stats {
    double median, min, max;
    double spread;          /* interquartile range / median */
    int n;
} stats;
/* The reply's times: t<i> for slots[i]. wire_get_times: 0, or -1 (and
** *s zeroed) when slot i's time is missing, does not parse, or is not a
** positive finite median. */
void wire_put_times(strbuf *h, const stats *s, int n);
int wire_get_times(const msg *m, int i, stats *s);

/* vendor: the vendor library's product (vendor.h: cuBLASLt) for the task
** set up (op and dtype: a GEMM op the vendor serves) into a slot, then
** verified and timed as any slot. Read back: slot -1, op and dtype NULL when
** absent. The reply, when ok: the library ("cuBLASLt 130100") and the
** heuristic's choice (vendor_describe), both "" when absent. */
typedef struct wire_vendor {
    int slot;
    const char *op, *dtype;
} wire_vendor;
void wire_put_vendor(strbuf *h, const wire_vendor *v);
void wire_get_vendor(const msg *m, wire_vendor *v);
void wire_put_vendor_ok(strbuf *h, const char *library, const char *algo);
void wire_get_vendor_ok(const msg *m, const char **library, const char **algo);

/* copy: the bytes of the copy-ceiling measurement; the reply's GB/s. */
void wire_put_copy(strbuf *h, long long bytes);
long long wire_get_copy(const msg *m);
void wire_put_gbps(strbuf *h, double gbps);
double wire_get_gbps(const msg *m);

#endif
