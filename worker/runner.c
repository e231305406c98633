#include "runner.h"
#include "cause.h"
#include "contain.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* How long to wait for killed group members to die before giving up. */
#define REAP_S 1.0
/* How often to look for the shell's exit when there is no pidfd. */
#define EXIT_POLL_MS 10

/* What the child reports on the CLOEXEC pipe when it cannot exec. */
enum child_stage {
	STAGE_SETPGID = 1,
	STAGE_CGROUP,
	STAGE_CHDIR,
	STAGE_DEVNULL,
	STAGE_DESCRIPTORS,
	STAGE_EXEC,
};

struct child_error {
	int stage;
	int err;
};

/* One captured output stream. */
struct stream {
	int fd; /* read end, -1 once closed */
	char *buf;
	size_t len;
	size_t cap; /* bytes allocated: len < cap <= limit + 1 */
	size_t limit;
	bool truncated;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *error_text(int err, char *buf, size_t size)
{
	return strerror_r(err, buf, size);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static size_t env_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool env_same_name(const char *a, const char *b)
{
	size_t len = env_name_len(a);

	return len == env_name_len(b) && strncmp(a, b, len) == 0;
}

/*
 * Builds the child's environment in the parent, since the child of a
 * threaded program must not allocate.  The array points into environ and
 * into `extra`; only the array itself is allocated.
 */
static int env_build(char ***out, const char *const *extra, const char *tag,
		     char **cause)
{
	size_t inherited = 0, added = 0, n = 0, i, j;
	char **env;

	*out = NULL;
	for (i = 0; environ != NULL && environ[i] != NULL; i++)
		inherited++;
	for (i = 0; extra != NULL && extra[i] != NULL; i++) {
		if (strchr(extra[i], '=') == NULL || extra[i][0] == '=') {
			cause_set(cause,
				  "invalid environment entry '%s': expected "
				  "NAME=value",
				  extra[i]);
			return -EINVAL;
		}
		added++;
	}
	if ((env = calloc(inherited + added + 2, sizeof(*env))) == NULL) {
		cause_set(cause, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < inherited; i++) {
		for (j = 0; j < added; j++)
			if (env_same_name(environ[i], extra[j]))
				break;
		if (j == added)
			env[n++] = environ[i];
	}
	for (i = 0; i < added; i++) {
		for (j = i + 1; j < added; j++)
			if (env_same_name(extra[i], extra[j]))
				break;
		if (j == added)
			env[n++] = (char *)extra[i];
	}
	if (tag != NULL)
		env[n++] = (char *)tag;
	*out = env;
	return 0;
}

static int stream_init(struct stream *s, size_t limit)
{
	s->fd = -1;
	s->len = 0;
	s->limit = limit;
	s->truncated = false;
	s->cap = (limit < 4096 ? limit : 4096) + 1;
	s->buf = malloc(s->cap);
	return s->buf ? 0 : -ENOMEM;
}

static bool stream_grow(struct stream *s)
{
	size_t cap = s->cap < READ_CHUNK ? READ_CHUNK : s->cap;
	char *buf;

	cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
	if (cap - 1 > s->limit)
		cap = s->limit + 1;
	if ((buf = realloc(s->buf, cap)) == NULL)
		return false;
	s->buf = buf;
	s->cap = cap;
	return true;
}

/*
 * Reads what the pipe has: keeps it up to the limit and drops the rest.
 * Running out of memory only lowers the limit to what is kept already:
 * the child must be waited for whatever happens.
 */
static void stream_read(struct stream *s)
{
	char scratch[READ_CHUNK], *dst = scratch;
	size_t want = sizeof(scratch);
	ssize_t n;

	if (s->len < s->limit && s->len + 1 == s->cap && !stream_grow(s))
		s->limit = s->len;
	if (s->len < s->limit) {
		dst = s->buf + s->len;
		want = s->cap - 1 - s->len;
	}
	n = read(s->fd, dst, want);
	if (n < 0) {
		if (errno != EINTR && errno != EAGAIN)
			close_fd(&s->fd);
		return;
	}
	if (n == 0) {
		close_fd(&s->fd);
		return;
	}
	if (dst == scratch)
		s->truncated = true;
	else
		s->len += (size_t)n;
}

/* Reads what is already in the pipes without waiting for more. */
static void streams_read_ready(struct stream *streams, size_t count)
{
	struct pollfd pfd;

	for (size_t i = 0; i < count; i++) {
		/* Bounded: a writer outside the group may never stop. */
		for (int round = 0; round < 64 && streams[i].fd >= 0;
		     round++) {
			pfd.fd = streams[i].fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 0) <= 0)
				break;
			stream_read(&streams[i]);
		}
	}
}

/* Moves *fd above the standard descriptors so dup2() cannot clobber it. */
static int move_above_stdio(int *fd)
{
	int moved;

	if (*fd > STDERR_FILENO)
		return 0;
	if ((moved = fcntl(*fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) < 0)
		return -1;
	*fd = moved;
	return 0;
}

static void close_from(int first, int last, long max_fd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, (unsigned)last, 0) == 0)
		return;
#endif
	/* Only for kernels before 5.9; an unlimited RLIMIT_NOFILE gives -1. */
	if (max_fd < 0 || max_fd > 1 << 20)
		max_fd = 1 << 20;
	if ((long)last >= max_fd)
		last = (int)max_fd - 1;
	for (int fd = first; fd <= last; fd++)
		close(fd);
}

static _Noreturn void child_fail(int report, enum child_stage stage)
{
	struct child_error e = {stage, errno};
	ssize_t unused;

	unused = write(report, &e, sizeof(e));
	(void)unused;
	_exit(127);
}

/*
 * The child between fork() and execve(): async-signal-safe calls only,
 * since the parent may have other threads.  Signals are all blocked on
 * entry, so no handler of the parent can run here.
 */
static _Noreturn void child_run(const struct runner_spec *spec,
				char *const argv[], char *const envp[],
				int out_w, int err_w, int report, int cgroup,
				long max_fd)
{
	struct sigaction sa;
	sigset_t none;
	int null;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);

	if (move_above_stdio(&report) != 0)
		_exit(127);
	if (move_above_stdio(&out_w) != 0 || move_above_stdio(&err_w) != 0)
		child_fail(report, STAGE_DESCRIPTORS);
	if (setpgid(0, 0) != 0)
		child_fail(report, STAGE_SETPGID);
	/* Joins the run's cgroup before anything can leave the group. */
	if (cgroup >= 0 && write(cgroup, "0", 1) != 1)
		child_fail(report, STAGE_CGROUP);
	if (spec->cwd != NULL && chdir(spec->cwd) != 0)
		child_fail(report, STAGE_CHDIR);
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		child_fail(report, STAGE_DEVNULL);
	if (move_above_stdio(&null) != 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0)
		child_fail(report, STAGE_DESCRIPTORS);
	if (report > STDERR_FILENO + 1)
		close_from(STDERR_FILENO + 1, report - 1, max_fd);
	close_from(report + 1, INT_MAX, max_fd);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve("/bin/sh", argv, envp);
	child_fail(report, STAGE_EXEC);
}

/* Waits for the child to exec; a report on the pipe means it could not. */
static int child_started(int report, const struct runner_spec *spec,
			 char **cause)
{
	struct child_error e;
	char buf[128];
	ssize_t n;

	do
		n = read(report, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e))
		return 0;

	switch (e.stage) {
	case STAGE_CHDIR:
		cause_set(cause, "cannot change directory to '%s': %s",
			  spec->cwd, error_text(e.err, buf, sizeof(buf)));
		break;
	case STAGE_EXEC:
		cause_set(cause, "cannot run /bin/sh: %s",
			  error_text(e.err, buf, sizeof(buf)));
		break;
	case STAGE_DEVNULL:
		cause_set(cause, "cannot open /dev/null: %s",
			  error_text(e.err, buf, sizeof(buf)));
		break;
	case STAGE_CGROUP:
		cause_set(cause, "cannot join the run's cgroup: %s",
			  error_text(e.err, buf, sizeof(buf)));
		break;
	case STAGE_SETPGID:
		cause_set(cause, "cannot create a process group: %s",
			  error_text(e.err, buf, sizeof(buf)));
		break;
	default:
		cause_set(cause, "cannot set up the command's descriptors: %s",
			  error_text(e.err, buf, sizeof(buf)));
		break;
	}
	return e.err > 0 ? -e.err : -EIO;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Whether the shell has exited, without reaping it. */
static bool shell_exited(pid_t pid)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR; /* ECHILD: someone else reaped it */
	return info.si_pid == pid;
}

static int poll_timeout_ms(double wake, double now)
{
	double ms;

	if (isinf(wake))
		return -1;
	ms = ceil((wake - now) * 1000);
	if (ms <= 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Reaps the members of group `pgid` that are this process's children:
 * with runner_become_subreaper() the orphans of the killed group.
 */
static void reap_group(pid_t pgid)
{
	double until = now_s() + REAP_S;
	pid_t pid;

	for (;;) {
		pid = waitpid(-pgid, NULL, WNOHANG);
		if (pid > 0 || (pid < 0 && errno == EINTR))
			continue;
		if (pid < 0 || now_s() >= until)
			return;
		poll(NULL, 0, 5);
	}
}

static void result_from_status(struct runner_result *out, int status,
			       const struct rusage *ru)
{
	if (WIFEXITED(status)) {
		out->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		out->exit_code = -1;
		out->term_signal = WTERMSIG(status);
	}
	out->user_s =
	    (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
	out->sys_s =
	    (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/*
 * Reads both pipes until the shell has exited and they are closed, and
 * enforces the time limit.  The shell is left unreaped: as a zombie it
 * keeps its pid, so the group id cannot be reused while we signal it.
 */
static void supervise(struct runner_result *out, struct contain_run *run,
		      pid_t pid, struct stream *streams, double start,
		      double timeout_s)
{
	double deadline = timeout_s > 0 ? start + timeout_s : INFINITY;
	double kill_at = INFINITY, drain_until = INFINITY, now, wake;
	bool exited = false, term_sent = false, group_killed = false;
	struct pollfd pfds[3];
	int pidfd = open_pidfd(pid), timeout_ms;

	for (;;) {
		now = now_s();
		if (!exited && shell_exited(pid)) {
			exited = true;
			out->wall_s = now - start;
			drain_until = now + RUNNER_DRAIN_S;
		}
		if (exited) {
			if (streams[0].fd < 0 && streams[1].fd < 0)
				break;
			if (now >= drain_until) {
				if (group_killed)
					break;
				contain_signal(run, pid, SIGKILL);
				group_killed = true;
				drain_until = now + RUNNER_DRAIN_S;
			}
			wake = drain_until;
		} else if (!term_sent && now >= deadline) {
			out->timed_out = true;
			contain_signal(run, pid, SIGTERM);
			contain_signal(run, pid, SIGCONT);
			term_sent = true;
			wake = kill_at = now + RUNNER_TERM_GRACE_S;
		} else if (term_sent && !group_killed && now >= kill_at) {
			contain_signal(run, pid, SIGKILL);
			group_killed = true;
			wake = INFINITY;
		} else {
			wake = term_sent ? (group_killed ? INFINITY : kill_at)
					 : deadline;
		}

		timeout_ms = poll_timeout_ms(wake, now);
		if (!exited && pidfd < 0 &&
		    (timeout_ms < 0 || timeout_ms > EXIT_POLL_MS))
			timeout_ms = EXIT_POLL_MS;
		/* pfds[0] is the pidfd (or -1: ignored), then the pipes. */
		pfds[0].fd = exited ? -1 : pidfd;
		pfds[0].events = POLLIN;
		for (int i = 0; i < 2; i++) {
			pfds[i + 1].fd = streams[i].fd;
			pfds[i + 1].events = POLLIN;
		}
		if (poll(pfds, 3, timeout_ms) < 0) {
			if (errno != EINTR)
				poll(NULL, 0, EXIT_POLL_MS);
			continue;
		}
		for (int i = 0; i < 2; i++)
			if (streams[i].fd >= 0 && pfds[i + 1].revents != 0)
				stream_read(&streams[i]);
	}
	streams_read_ready(streams, 2);
	/* Whatever the command left in its group goes now. */
	if (!group_killed)
		contain_signal(run, pid, SIGKILL);
	close_fd(&pidfd);
}

int runner_run(struct runner_result *out, const struct runner_spec *spec,
	       char **cause)
{
	struct stream streams[2] = {{.fd = -1}, {.fd = -1}};
	struct contain_run *run = NULL;
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	int report_pipe[2] = {-1, -1}, status = 0, error, saved_errno;
	char *argv[4], **envp = NULL, buf[128];
	size_t limit;
	struct rusage ru;
	sigset_t all, saved;
	double start;
	long max_fd;
	pid_t pid, reaped;

	if (cause != NULL)
		*cause = NULL;
	if (out == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	if (spec == NULL || spec->command == NULL) {
		cause_set(cause, "no command to run");
		return -EINVAL;
	}
	limit = spec->output_limit ? spec->output_limit
				   : RUNNER_OUTPUT_LIMIT_DEFAULT;
	if (limit == SIZE_MAX)
		limit--;

	if ((error = contain_begin(&run, cause)) < 0 ||
	    (error = env_build(&envp, spec->env, contain_env(run), cause)) < 0)
		goto out;
	if ((error = stream_init(&streams[0], limit)) < 0 ||
	    (error = stream_init(&streams[1], limit)) < 0) {
		cause_set(cause, "out of memory");
		goto out;
	}
	if (pipe2(out_pipe, O_CLOEXEC) != 0 ||
	    pipe2(err_pipe, O_CLOEXEC) != 0 ||
	    pipe2(report_pipe, O_CLOEXEC) != 0) {
		saved_errno = errno;
		error = -saved_errno;
		cause_set(cause, "cannot create a pipe: %s",
			  error_text(saved_errno, buf, sizeof(buf)));
		goto out;
	}
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = (char *)spec->command;
	argv[3] = NULL;
	max_fd = sysconf(_SC_OPEN_MAX);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	start = now_s();
	pid = contain_fork(run);
	saved_errno = errno;
	if (pid == 0)
		child_run(spec, argv, envp, out_pipe[1], err_pipe[1],
			  report_pipe[1], contain_procs_fd(run), max_fd);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (pid < 0) {
		error = -saved_errno;
		cause_set(cause, "cannot fork: %s",
			  error_text(saved_errno, buf, sizeof(buf)));
		goto out;
	}
	/* Also in the parent, so the group exists whoever runs first. */
	setpgid(pid, pid);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[1]);
	close_fd(&report_pipe[1]);

	if ((error = child_started(report_pipe[0], spec, cause)) < 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		goto out;
	}

	streams[0].fd = out_pipe[0];
	streams[1].fd = err_pipe[0];
	out_pipe[0] = err_pipe[0] = -1;
	fcntl(streams[0].fd, F_SETFL, O_NONBLOCK);
	fcntl(streams[1].fd, F_SETFL, O_NONBLOCK);
	supervise(out, run, pid, streams, start, spec->timeout_s);

	memset(&ru, 0, sizeof(ru));
	do
		reaped = wait4(pid, &status, 0, &ru);
	while (reaped < 0 && errno == EINTR);
	if (reaped == pid)
		result_from_status(out, status, &ru);
	reap_group(pid);

	streams[0].buf[streams[0].len] = '\0';
	streams[1].buf[streams[1].len] = '\0';
	out->out = streams[0].buf;
	out->out_len = streams[0].len;
	out->out_truncated = streams[0].truncated;
	out->err = streams[1].buf;
	out->err_len = streams[1].len;
	out->err_truncated = streams[1].truncated;
	streams[0].buf = streams[1].buf = NULL;
	error = 0;

out:
	for (int i = 0; i < 2; i++) {
		close_fd(&streams[i].fd);
		free(streams[i].buf);
		close_fd(&out_pipe[i]);
		close_fd(&err_pipe[i]);
		close_fd(&report_pipe[i]);
	}
	free(envp);
	contain_end(run);
	return error;
}

void runner_result_clear(struct runner_result *r)
{
	if (r == NULL)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
}

int runner_become_subreaper(char **cause)
{
	char buf[128];
	int err;

	if (cause != NULL)
		*cause = NULL;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		err = errno;
		cause_set(cause, "cannot become a child subreaper: %s",
			  error_text(err, buf, sizeof(buf)));
		return -err;
	}
	return 0;
}
