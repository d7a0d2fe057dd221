/* child.h: a helper process on two pipes, started from this binary: the GPU
** worker (worker.h) and the NVRTC helpers of the compile pool (jit.h). One
** owner for how such a process starts and ends.
**
** The child is exec'd right after fork, calling nothing but async-signal-
** safe functions in between, so a parent with threads may start one. It is
** put in its own process group, so Ctrl-C reaches only the parent, which
** decides what becomes of the work in flight; and it is killed when the
** thread that started it ends (PR_SET_PDEATHSIG: the "parent" is that
** thread, not the process), so it never outlives an aitune that died. Its
** stdin and stdout are the pipes (proto.h messages); stderr is shared. */
#ifndef CHILD_H
#define CHILD_H
#include "proto.h"
#include <sys/types.h>

typedef struct child {
    pid_t pid;              /* -1: none */
    int to;                 /* its stdin; -1: closed */
    conn from;              /* its stdout */
} child;

#define CHILD_INIT { -1, -1, { -1, STRBUF_INIT } }

/* Start path with argv (argv[0] is the name it sees, as in execv). 0, or
** -1 with the reason in err. SIGPIPE must be ignored by the caller's
** process, so a child that dies while being written to costs only EPIPE. */
int child_spawn(child *c, const char *path, char *const argv[], char *err, size_t cap);

/* Whether it has ended without being reaped (a poll: never waits). */
int child_ended(child *c);

/* Wait up to grace_s for it to end (0: not at all), then kill its process
** group (what is left of it); or, grace_s < 0, wait for ever and kill
** nothing. Then reap it and close both pipes. Returns its wait status
** (sys/wait.h: one that ended in time keeps its own), or -1 if there was
** none to reap. c is then as CHILD_INIT left it, ready for child_spawn. */
int child_reap(child *c, double grace_s);

/* A wait status in words: "killed by signal 11 (Segmentation fault)",
** "exited with code 1", or "ended" (-1). */
void child_describe(int status, char *out, size_t cap);
/* "SIGSEGV" for 11, ...; "" for a signal it does not name. */
const char *child_signame(int sig);

#endif
