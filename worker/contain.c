#include "contain.h"
#include "cause.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long contain_end() waits for what it killed to die. */
#define CONTAIN_REAP_S 1.0
/* Bytes of a process's environment searched for the tag. */
#define ENVIRON_READ_MAX 65536
#define WORKER_CGROUP_PREFIX "statbisect-worker-"

struct contain_run {
	unsigned long long seq;
	pid_t shell;	       /* 0 until contain_fork() */
	char env[64];	       /* CONTAIN_TAG_NAME=PID-SEQ */
	char cgroup[PATH_MAX]; /* the run's cgroup directory, or "" */
	int procs_fd;
	struct contain_run *next; /* in the registry of runs going on */
};

/* One process as /proc shows it. */
struct proc_entry {
	pid_t pid, ppid;
	bool zombie;
	bool victim;
};

/*
 * The registry of runs going on: held across each fork and each sweep,
 * so a sweep sees every run's shell and tag.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct contain_run *registry;
static unsigned long long registry_seq;
static enum contain_mode mode_chosen;
/* The worker's cgroup directory in cgroup mode. */
static char worker_cgroup[PATH_MAX];

static void kill_orphaned_runs(void);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *contain_mode_name(enum contain_mode mode)
{
	return mode == CONTAIN_CGROUP  ? "cgroup"
	       : mode == CONTAIN_SWEEP ? "sweep"
				       : "none";
}

enum contain_mode contain_mode(void)
{
	return mode_chosen;
}

/* Writes `text` into the file `path`; 0 or -errno. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

/* Reads at most size - 1 bytes of `path`, NUL-terminated; length or -1. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len + 1 < size &&
	       ((n = read(fd, buf + len, size - 1 - len)) > 0 ||
		(n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The mount point of the cgroup2 hierarchy, from /proc/self/mountinfo. */
static int cgroup2_mount(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], *dash;
	int found = -ENOENT;

	if (f == NULL)
		return -errno;
	while (found < 0 && fgets(line, sizeof(line), f) != NULL) {
		dash = strstr(line, " - ");
		if (dash == NULL || strncmp(dash, " - cgroup2 ", 11) != 0)
			continue;
		/* id parent major:minor root mountpoint ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 &&
		    strlen(point) < size) {
			strcpy(out, point);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* This process's cgroup2 path ("0::/a/b" in /proc/self/cgroup). */
static int own_cgroup(char *out, size_t size)
{
	char buf[8192], *line, *save = NULL;

	if (read_file("/proc/self/cgroup", buf, sizeof(buf)) < 0)
		return -errno;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::/", 4) != 0 || strlen(line + 3) >= size)
			continue;
		strcpy(out, line + 3);
		if (strcmp(out, "/") == 0)
			out[0] = '\0';
		return 0;
	}
	return -ENOENT;
}

/*
 * Kills what is left in the cgroup `dir` and below (a worker killed with
 * SIGKILL leaves its run going), removes its run-* cgroups, then `dir`.
 */
static void remove_cgroup_tree(const char *dir)
{
	double until = now_s() + CONTAIN_REAP_S;
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 300], events[256];

	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	write_file(path, "1");
	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	while (read_file(path, events, sizeof(events)) > 0 &&
	       strstr(events, "populated 1") != NULL && now_s() < until)
		poll(NULL, 0, 5);
	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "run-", 4) != 0 &&
			    strcmp(e->d_name, "probe") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			rmdir(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Removes what workers that are gone left in `parent`. */
static void remove_stale_cgroups(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	char path[PATH_MAX + 300], *end;
	long pid;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, WORKER_CGROUP_PREFIX,
			    strlen(WORKER_CGROUP_PREFIX)) != 0)
			continue;
		pid =
		    strtol(e->d_name + strlen(WORKER_CGROUP_PREFIX), &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent,
				     e->d_name) < sizeof(path))
			remove_cgroup_tree(path);
	}
	closedir(d);
}

/* Whether a child can join a cgroup below `dir` and be killed there. */
static int cgroup_probe(const char *dir, char **cause)
{
	char probe[PATH_MAX + 16], procs[PATH_MAX + 32];
	int fd, status = 0, err = 0;
	pid_t pid;

	snprintf(probe, sizeof(probe), "%s/probe", dir);
	snprintf(procs, sizeof(procs), "%s/cgroup.kill", probe);
	if (mkdir(probe, 0755) != 0 && errno != EEXIST)
		return cause_set(cause, "cannot make a cgroup in %s: %s", dir,
				 strerror(errno)),
		       -errno;
	if (access(procs, W_OK) != 0) {
		err = -errno;
		cause_set(cause, "no cgroup.kill in %s (Linux < 5.14?)", dir);
		goto out;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", probe);
	if ((fd = open(procs, O_WRONLY | O_CLOEXEC)) < 0) {
		err = -errno;
		cause_set(cause, "cannot open %s: %s", procs, strerror(errno));
		goto out;
	}
	if ((pid = fork()) == 0)
		_exit(write(fd, "0", 1) == 1 ? 0 : 1);
	close(fd);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		err = -EPERM;
		cause_set(cause, "a process cannot join a cgroup in %s", dir);
	}
out:
	rmdir(probe);
	return err;
}

static int cgroup_setup(char **cause)
{
	char mount[PATH_MAX], own[PATH_MAX], parent[PATH_MAX * 2];
	int err;

	if ((err = cgroup2_mount(mount, sizeof(mount))) < 0)
		return cause_set(cause, "no cgroup2 hierarchy is mounted"),
		       err;
	if ((err = own_cgroup(own, sizeof(own))) < 0)
		return cause_set(cause, "this process is in no cgroup2 "
					"group"),
		       err;
	snprintf(parent, sizeof(parent), "%s%s", mount, own);
	remove_stale_cgroups(parent);
	if ((size_t)snprintf(worker_cgroup, sizeof(worker_cgroup),
			     "%s/" WORKER_CGROUP_PREFIX "%ld", parent,
			     (long)getpid()) >= sizeof(worker_cgroup))
		return cause_set(cause, "cgroup path too long"), -ENAMETOOLONG;
	if (mkdir(worker_cgroup, 0755) != 0 && errno != EEXIST) {
		err = -errno;
		cause_set(cause, "cannot make the cgroup %s: %s",
			  worker_cgroup, strerror(errno));
		worker_cgroup[0] = '\0';
		return err;
	}
	if ((err = cgroup_probe(worker_cgroup, cause)) < 0) {
		rmdir(worker_cgroup);
		worker_cgroup[0] = '\0';
	}
	return err;
}

int contain_setup(const char *mode, char **note, char **cause)
{
	char *why = NULL;
	int err;

	if (cause != NULL)
		*cause = NULL;
	if (note != NULL)
		*note = NULL;
	if (mode == NULL || mode[0] == '\0')
		mode = "auto";
	if (strcmp(mode, "auto") != 0 && strcmp(mode, "cgroup") != 0 &&
	    strcmp(mode, "sweep") != 0) {
		cause_set(cause,
			  "unknown containment '%s': use auto, cgroup or "
			  "sweep",
			  mode);
		return -EINVAL;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		err = -errno;
		cause_set(cause, "cannot become a child subreaper: %s",
			  strerror(errno));
		return err;
	}
	contain_shutdown();
	kill_orphaned_runs();
	mode_chosen = CONTAIN_SWEEP;
	if (strcmp(mode, "sweep") == 0)
		return 0;
	if ((err = cgroup_setup(&why)) < 0) {
		if (strcmp(mode, "cgroup") == 0) {
			if (cause != NULL)
				*cause = why;
			else
				free(why);
			return err;
		}
		if (note != NULL)
			*note = why;
		else
			free(why);
		return 0;
	}
	mode_chosen = CONTAIN_CGROUP;
	return 0;
}

void contain_shutdown(void)
{
	if (worker_cgroup[0] != '\0')
		remove_cgroup_tree(worker_cgroup);
	worker_cgroup[0] = '\0';
	mode_chosen = CONTAIN_NONE;
}

int contain_begin(struct contain_run **out, char **cause)
{
	struct contain_run *run = calloc(1, sizeof(*run));
	char procs[PATH_MAX + 32];
	int err;

	*out = NULL;
	if (run == NULL)
		return cause_set(cause, "out of memory"), -ENOMEM;
	run->procs_fd = -1;
	pthread_mutex_lock(&registry_lock);
	run->seq = ++registry_seq;
	pthread_mutex_unlock(&registry_lock);
	snprintf(run->env, sizeof(run->env), CONTAIN_TAG_NAME "=%ld-%llu",
		 (long)getpid(), run->seq);
	if (mode_chosen == CONTAIN_CGROUP) {
		if ((size_t)snprintf(run->cgroup, sizeof(run->cgroup),
				     "%s/run-%llu", worker_cgroup,
				     run->seq) >= sizeof(run->cgroup))
			run->cgroup[0] = '\0';
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", run->cgroup);
		if (mkdir(run->cgroup, 0755) != 0 ||
		    (run->procs_fd = open(procs, O_WRONLY | O_CLOEXEC)) < 0) {
			err = -errno;
			cause_set(cause, "cannot make the run's cgroup %s: %s",
				  run->cgroup, strerror(errno));
			rmdir(run->cgroup);
			free(run);
			return err;
		}
	}
	*out = run;
	return 0;
}

const char *contain_env(const struct contain_run *run)
{
	return run != NULL && mode_chosen != CONTAIN_NONE ? run->env : NULL;
}

int contain_procs_fd(const struct contain_run *run)
{
	return run != NULL ? run->procs_fd : -1;
}

pid_t contain_fork(struct contain_run *run)
{
	pid_t pid;
	int saved;

	pthread_mutex_lock(&registry_lock);
	pid = fork();
	if (pid == 0)
		return 0;
	saved = errno;
	if (pid > 0) {
		run->shell = pid;
		run->next = registry;
		registry = run;
	}
	pthread_mutex_unlock(&registry_lock);
	errno = saved;
	return pid;
}

static struct proc_entry *proc_list(size_t *count);

/*
 * The tag `pid` carries: the worker that ran it (0 for none or
 * unreadable), and the run's seq in *seq.
 */
static long process_tag_owner(pid_t pid, unsigned long long *seq)
{
	static const char name[] = CONTAIN_TAG_NAME "=";
	char path[64], *buf, *p, *end;
	ssize_t len;
	long owner = 0, value;

	*seq = 0;
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	if ((buf = malloc(ENVIRON_READ_MAX)) == NULL)
		return 0;
	len = read_file(path, buf, ENVIRON_READ_MAX);
	for (p = buf; len > 0 && p < buf + len; p += strlen(p) + 1) {
		if (strncmp(p, name, sizeof(name) - 1) != 0)
			continue;
		value = strtol(p + sizeof(name) - 1, &end, 10);
		if (value > 0 && *end == '-') {
			owner = value;
			*seq = strtoull(end + 1, NULL, 10);
		}
	}
	free(buf);
	return owner;
}

/* The seq of this worker's run whose tag `pid` carries, or 0. */
static unsigned long long process_tag(pid_t pid)
{
	unsigned long long seq;

	return process_tag_owner(pid, &seq) == (long)getpid() ? seq : 0;
}

/*
 * Kills what runs of workers that are gone left behind (a worker killed
 * with SIGKILL cannot end its runs): processes tagged by a worker whose
 * pid no longer exists.
 */
static void kill_orphaned_runs(void)
{
	struct proc_entry *list;
	unsigned long long seq;
	size_t n;
	long owner;

	list = proc_list(&n);
	for (size_t i = 0; i < n; i++) {
		if (list[i].zombie || list[i].pid == getpid())
			continue;
		owner = process_tag_owner(list[i].pid, &seq);
		if (owner > 0 && owner != (long)getpid() &&
		    kill((pid_t)owner, 0) != 0 && errno == ESRCH)
			kill(list[i].pid, SIGKILL);
	}
	free(list);
}

/* The processes of the system; *count of them, or NULL. */
static struct proc_entry *proc_list(size_t *count)
{
	DIR *d = opendir("/proc");
	struct proc_entry *list = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *e;
	char path[300], stat[512], *close_paren, state;
	long ppid;

	*count = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (read_file(path, stat, sizeof(stat)) <= 0 ||
		    (close_paren = strrchr(stat, ')')) == NULL ||
		    sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((grown = realloc(list, cap * sizeof(*list))) ==
			    NULL)
				break;
			list = grown;
		}
		list[n++] =
		    (struct proc_entry){(pid_t)atol(e->d_name), (pid_t)ppid,
					state == 'Z' || state == 'X', false};
	}
	closedir(d);
	*count = n;
	return list;
}

/* Whether `pid` is the shell of a run going on (registry held). */
static bool is_shell(pid_t pid)
{
	for (struct contain_run *r = registry; r != NULL; r = r->next)
		if (r->shell == pid)
			return true;
	return false;
}

/* Whether `seq` is a run going on other than `self` (registry held). */
static bool is_other_run(unsigned long long seq,
			 const struct contain_run *self)
{
	for (struct contain_run *r = registry; r != NULL; r = r->next)
		if (r->seq == seq && r != self)
			return true;
	return false;
}

/*
 * Marks the sweep's victims in `list`: the worker's inherited processes
 * (not a run's shell, not tagged by another run going on), the processes
 * tagged by `run`, and all their descendants.  Registry held.
 */
static void mark_victims(struct proc_entry *list, size_t n,
			 const struct contain_run *run)
{
	pid_t self = getpid();
	unsigned long long tag;
	bool grew = true;

	for (size_t i = 0; i < n; i++) {
		if (list[i].pid == self || is_shell(list[i].pid))
			continue;
		tag = list[i].zombie ? 0 : process_tag(list[i].pid);
		if (list[i].ppid == self)
			list[i].victim = !is_other_run(tag, run);
		else
			list[i].victim = tag != 0 && tag == run->seq;
	}
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (list[i].victim)
				continue;
			for (size_t j = 0; j < n; j++) {
				if (list[j].victim &&
				    list[j].pid == list[i].ppid) {
					list[i].victim = grew = true;
					break;
				}
			}
		}
	}
}

/*
 * Kills and reaps until nothing of `run` nor any inherited process is
 * left, or `until` passes.
 */
static void sweep(const struct contain_run *run, double until)
{
	struct proc_entry *list;
	size_t n;
	bool left;

	pthread_mutex_lock(&registry_lock);
	for (;;) {
		list = proc_list(&n);
		mark_victims(list, n, run);
		left = false;
		for (size_t i = 0; i < n; i++) {
			if (!list[i].victim)
				continue;
			left = true;
			if (!list[i].zombie)
				kill(list[i].pid, SIGKILL);
			if (list[i].ppid == getpid())
				waitpid(list[i].pid, NULL, WNOHANG);
		}
		free(list);
		if (!left || now_s() >= until)
			break;
		pthread_mutex_unlock(&registry_lock);
		poll(NULL, 0, 5);
		pthread_mutex_lock(&registry_lock);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* Signals every process of the run's cgroup. */
static void cgroup_signal(const struct contain_run *run, int sig)
{
	char path[PATH_MAX + 32], *buf, *line, *save = NULL;

	if (sig == SIGKILL) {
		snprintf(path, sizeof(path), "%s/cgroup.kill", run->cgroup);
		write_file(path, "1");
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", run->cgroup);
	if ((buf = malloc(ENVIRON_READ_MAX)) == NULL)
		return;
	if (read_file(path, buf, ENVIRON_READ_MAX) > 0)
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save))
			kill((pid_t)atol(line), sig);
	free(buf);
}

/* Waits until the run's cgroup is empty, or `until` passes. */
static void cgroup_wait_empty(const struct contain_run *run, double until)
{
	char path[PATH_MAX + 32], events[256];

	snprintf(path, sizeof(path), "%s/cgroup.events", run->cgroup);
	while (read_file(path, events, sizeof(events)) > 0 &&
	       strstr(events, "populated 1") != NULL && now_s() < until)
		poll(NULL, 0, 5);
}

void contain_signal(struct contain_run *run, pid_t pgid, int sig)
{
	kill(-pgid, sig);
	if (run == NULL)
		return;
	if (run->cgroup[0] != '\0')
		cgroup_signal(run, sig);
	else if (sig == SIGKILL && mode_chosen == CONTAIN_SWEEP)
		sweep(run, now_s() + CONTAIN_REAP_S);
}

void contain_end(struct contain_run *run)
{
	double until = now_s() + CONTAIN_REAP_S;
	struct contain_run **link;

	if (run == NULL)
		return;
	if (run->cgroup[0] != '\0') {
		cgroup_signal(run, SIGKILL);
		cgroup_wait_empty(run, until);
	}
	pthread_mutex_lock(&registry_lock);
	for (link = &registry; *link != NULL; link = &(*link)->next) {
		if (*link == run) {
			*link = run->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	/* In cgroup mode too: it reaps the killed processes inherited. */
	if (mode_chosen != CONTAIN_NONE)
		sweep(run, until);
	if (run->procs_fd >= 0)
		close(run->procs_fd);
	if (run->cgroup[0] != '\0')
		while (rmdir(run->cgroup) != 0 && errno == EBUSY &&
		       now_s() < until)
			poll(NULL, 0, 5);
	free(run);
}
