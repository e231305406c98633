/*
 * contain: keeps every process a build or benchmark run starts inside
 * that run, so that none outlives it (issue 11: a benchmark that called
 * setsid escaped the process-group kill and its sleeps outlived the job).
 *
 * Two ways, chosen once per process by contain_setup():
 *
 * - cgroup: each run gets a cgroup (v2) of its own below the worker's,
 *   "statbisect-worker-PID/run-N"; the child joins it before it execs the
 *   command, so everything the command starts is in it whatever it does
 *   with sessions and groups, and the end of the run kills the cgroup
 *   (cgroup.kill) and removes it.  Needs a writable cgroup2 hierarchy
 *   with cgroup.kill (Linux 5.14): root on a host, or a container that
 *   delegates its cgroup.
 * - sweep: otherwise.  The worker is a child subreaper
 *   (PR_SET_CHILD_SUBREAPER), so a process that left the run's group and
 *   whose parent died becomes the worker's child.  The end of the run
 *   kills every such inherited process, every process that carries the
 *   run's tag (CONTAIN_TAG_NAME in its environment: it survives setsid
 *   and an exiting parent, though not a command that clears its
 *   environment), and all of their descendants, then reaps the worker's
 *   inherited zombies.  Inherited processes that carry the tag of another
 *   run still going on in another thread are left to that run.
 *
 * In both ways the run's process group is signalled as before.  All
 * functions are thread-safe; runs in several threads at once are kept
 * apart by their cgroup or their tag.
 */
#ifndef STATBISECT_CONTAIN_H
#define STATBISECT_CONTAIN_H

#include <stdbool.h>
#include <sys/types.h>

/* The environment variable that tags a run's processes. */
#define CONTAIN_TAG_NAME "STATBISECT_CONTAIN_TAG"

enum contain_mode {
	CONTAIN_NONE = 0, /* contain_setup() not called: the group only */
	CONTAIN_SWEEP,
	CONTAIN_CGROUP,
};

/*
 * Chooses how runs are contained: `mode` is "cgroup" (fail when the
 * machine does not allow it), "sweep", or "auto" or NULL (cgroup when the
 * machine allows it, else sweep).  Makes this process a child subreaper
 * in every mode, and in cgroup mode the worker's cgroup directory.  What
 * workers that died (SIGKILL, a crash) left running is killed: their
 * cgroups (then removed), and the processes carrying the tag of a worker
 * whose pid is gone.  May be called again (the
 * unit tests try both ways), but not while a run is going on.  Returns 0,
 * or a negative errno value with *cause (the caller frees it) saying why;
 * when "auto" finds no usable cgroup it returns 0 in sweep mode and, when
 * `note` is not NULL, sets *note to why (the caller frees it).
 */
int contain_setup(const char *mode, char **note, char **cause);

/* The mode chosen; CONTAIN_NONE before contain_setup(). */
enum contain_mode contain_mode(void);

/* "cgroup", "sweep" or "none". */
const char *contain_mode_name(enum contain_mode mode);

/* Removes the worker's cgroup directory, for the end of the program. */
void contain_shutdown(void);

/* One run's containment, between contain_begin() and contain_end(). */
struct contain_run;

/*
 * Prepares a run before its fork: its tag, and in cgroup mode its cgroup.
 * Returns 0 and *out, or a negative errno value with *cause set.
 */
int contain_begin(struct contain_run **out, char **cause);

/* "STATBISECT_CONTAIN_TAG=..." for the child's environment. */
const char *contain_env(const struct contain_run *run);

/*
 * The descriptor of the run's cgroup.procs (close-on-exec), or -1: the
 * child writes "0" into it before it execs, which moves it into the
 * cgroup (an async-signal-safe write).
 */
int contain_procs_fd(const struct contain_run *run);

/*
 * Forks with the run's registry lock held, so that a sweep in another
 * thread never takes the new child, not yet tagged, for an escapee;
 * records the child as the run's shell.  The child returns 0 as from
 * fork() and must exec or _exit.  Returns the pid, or -1 with errno set.
 */
pid_t contain_fork(struct contain_run *run);

/*
 * Sends `sig` to the run's process group and, in cgroup mode, to every
 * process of its cgroup.  SIGKILL also ends what escaped: the cgroup is
 * killed, or the sweep runs.
 */
void contain_signal(struct contain_run *run, pid_t pgid, int sig);

/*
 * Ends the run once its shell has been reaped (its process group, whose
 * id may be reused from then on, is not signalled again): kills whatever
 * is left of it in its cgroup or, in either mode, by the sweep, waits up
 * to a second for it to die, reaps the worker's inherited zombies,
 * removes the cgroup and frees `run`.  contain_end(NULL) does nothing.
 */
void contain_end(struct contain_run *run);

#endif
