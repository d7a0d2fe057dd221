/* worker.h: the GPU worker process. aitune itself never initializes CUDA:
** the worker (this binary, exec'd as `aitune __worker`) owns the GPU, and
** the parent talks to it over pipes (wire.h: the typed requests below). A
** candidate that faults, traps or corrupts the context only kills the
** worker; a hung one is cut by the parent's deadline (SIGKILL). Either way the parent starts a fresh
** worker on the next request and replays what it had set up (the engine's
** kernels and the current task), so a sweep goes on.
**
** The worker is put in its own process group, so Ctrl-C reaches only the
** parent, which decides what to do with the candidate in flight; and it dies
** with the parent (PR_SET_PDEATHSIG): child.h starts and ends it.
**
** AITUNE_WORKER, when set, is a command run instead (by /bin/sh -c): tests use
** it to put a fake worker that crashes, hangs or lies in the GPU's place. */
#ifndef WORKER_H
#define WORKER_H
#include "device.h"
#include "wire.h"

typedef struct worker worker;

/* What a request came to: the worker answered ok; it is gone (killed, in
** the timeout case), worker_errmsg says how; or it answered with an error
** (WORKER_ERROR) or, verifying, that the kernel's answer is wrong
** (WORKER_WRONG), worker_errmsg giving its text. */
enum { WORKER_OK = 0, WORKER_DIED = -1, WORKER_TIMEOUT = -2, WORKER_ERROR = -3, WORKER_WRONG = -4 };

/* Counters for the sweep's summary. */
typedef struct worker_stats {
    int starts;             /* processes started, the first included */
    int crashes;            /* exits and signals while a request was in flight */
    int timeouts;           /* requests cut by the deadline */
    int sticky;             /* restarts after a CUDA error that kills a context */
} worker_stats;

worker *worker_new(int ordinal);
void worker_free(worker *w);              /* asks it to quit, then kills it */
const char *worker_errmsg(worker *w);
worker_stats worker_counts(worker *w);

/* Start it (if not running) and read the device facts. On failure (no GPU,
** no driver) returns -1 and worker_errmsg says why. */
int worker_hello(worker *w, device *dev, strbuf *env_json);

/* Requests the worker replays after a restart: the engine's kernels
** (support) and the task with its reference's cubin. The blob is copied.
** 0, or -1 with worker_errmsg. */
int worker_set_support(worker *w, const void *cubin, size_t len);
int worker_task(worker *w, const wire_task *t, const void *cubin, size_t len);

/* Typed requests, each waiting up to timeout_s: a candidate's cubin into
** a slot, the kernel in a slot verified against the reference, slots timed
** (out[i] for q->slots[i]; a time missing or not parsing is all zeros, and
** worker_errmsg then says which), the copy ceiling measured. */
int worker_load(worker *w, const wire_load *l, const void *cubin, size_t len, double timeout_s);
int worker_verify(worker *w, int slot, double timeout_s);
int worker_time(worker *w, const wire_time *q, stats *out, double timeout_s);
int worker_copy(worker *w, long long bytes, double *gbps, double timeout_s);
/* The vendor's product for the task into a slot (wire.h: wire_vendor);
** library and algo (when not NULL) get the reply's, at most cap bytes each.
** worker_unload empties a slot. */
int worker_vendor(worker *w, const wire_vendor *v, char *library, char *algo, int cap, double timeout_s);
int worker_unload(worker *w, int slot, double timeout_s);

/* The path under them, for what they do not cover (a test's unknown
** command): send one request and wait up to timeout_s for the reply.
** WORKER_OK means a reply arrived (its status may still be an error);
** WORKER_DIED and WORKER_TIMEOUT mean the process is gone and reply holds
** nothing. A reply with sticky=1 also ends the process. */
int worker_request(worker *w, const strbuf *header, const void *blob, size_t len, msg *reply, double timeout_s);

/* The worker process's main loop (`aitune __worker [ordinal]`). */
int worker_main(int argc, char **argv);

#endif
