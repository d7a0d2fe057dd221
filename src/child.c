/* child.c: see child.h. */
#define _GNU_SOURCE
#include "child.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int child_spawn(child *c, const char *path, char *const argv[], char *err, size_t cap)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC)) {
        snprintf(err, cap, "cannot make pipes: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC)) {
        snprintf(err, cap, "cannot make pipes: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, cap, "cannot fork: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return -1;
    }
    if (pid == 0) {
        /* Async-signal-safe calls only until exec: another thread of the
        ** parent may have held a lock (malloc's) when it forked. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(path, argv);
        _exit(127);
    }
    setpgid(pid, pid);     /* as the child does: no window before it has */
    close(in[0]);
    close(out[1]);
    c->pid = pid;
    c->to = in[1];
    c->from.fd = out[0];
    sb_reset(&c->from.in);
    return 0;
}

int child_ended(child *c)
{
    if (c->pid <= 0) return 0;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: child_reap still gets its status. */
    return waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == c->pid;
}

static int wait_for(pid_t pid, int *status, int flags)
{
    pid_t r;
    do r = waitpid(pid, status, flags);
    while (r < 0 && errno == EINTR);
    return r == pid;
}

int child_reap(child *c, double grace_s)
{
    int status = 0, reaped = 0;
    if (c->pid > 0 && grace_s < 0) {
        reaped = wait_for(c->pid, &status, 0);
    } else if (c->pid > 0) {
        double deadline = now_s() + grace_s;
        while (!child_ended(c) && now_s() < deadline) usleep(10000);
        /* The whole group, ended leader or not (its pid is still held, so
        ** the group's id is this one's): a worker run through /bin/sh -c
        ** (AITUNE_WORKER) is sh's child, and would outlive sh alone. A
        ** leader that has ended keeps the status it ended with. */
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        reaped = wait_for(c->pid, &status, 0);
    }
    if (c->to >= 0) close(c->to);
    if (c->from.fd >= 0) close(c->from.fd);
    sb_free(&c->from.in);
    c->to = c->from.fd = -1;
    c->pid = -1;
    return reaped ? status : -1;
}

void child_describe(int status, char *out, size_t cap)
{
    if (status != -1 && WIFSIGNALED(status))
        snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (status != -1 && WIFEXITED(status))
        snprintf(out, cap, "exited with code %d", WEXITSTATUS(status));
    else
        snprintf(out, cap, "ended");
}

const char *child_signame(int sig)
{
    /* sigabbrev_np is glibc 2.32 and later; the GPU hosts may be older. */
    static const struct { int sig; const char *name; } names[] = {
        { SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },   { SIGABRT, "SIGABRT" }, { SIGILL, "SIGILL" },
        { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" }, { SIGTERM, "SIGTERM" }, { SIGTRAP, "SIGTRAP" },
        { SIGSYS, "SIGSYS" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" }, { SIGHUP, "SIGHUP" },
        { SIGPIPE, "SIGPIPE" }, { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" }, { SIGALRM, "SIGALRM" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return "";
}
