/*
 * What the C benchmarks share (issue 14): wall-clock times, medians, the
 * peak memory of the process, running a command, and the generated git
 * repositories (bench/genrepo.py), which are cached between runs in
 * $STATBISECT_BENCH_CACHE when it is set and otherwise made in a temporary
 * directory that bench_tmp_cleanup() removes.  The benchmarks are run from
 * the top of the tree (`make bench`), where bench/genrepo.py is.
 *
 * Static functions of a header: the Makefile links each benchmark with
 * lib/ only.
 */
#ifndef STATBISECT_BENCH_UTIL_H
#define STATBISECT_BENCH_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_PATH_MAX 4096

static inline void bench_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static inline void bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static inline double bench_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline int bench_compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of `n` values (sorted in place). */
static inline double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* CPU time (user and system) the process has used so far, in ms: on a
 * shared machine it wanders less than the wall-clock time. */
static inline double bench_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* The process's peak resident set so far, in MB (VmHWM). */
static inline double bench_peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* Runs `argv` (argv[0] looked up in PATH) with its output to /dev/null
 * unless `quiet` is 0; returns its exit status, -1 when it did not exit. */
static inline int bench_spawn(char *const *argv, int quiet)
{
	pid_t pid;
	int status;

	fflush(NULL); /* or the child's exit writes our buffers again */
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (quiet && freopen("/dev/null", "w", stdout) == NULL)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		bench_die("waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The temporary directory of this run, made on first use. */
static char bench_tmp_dir[BENCH_PATH_MAX];

/* Removes the temporary directory, when one was made. */
static inline void bench_tmp_cleanup(void)
{
	char dir[BENCH_PATH_MAX];
	char *argv[] = {"rm", "-rf", dir, NULL};

	if (bench_tmp_dir[0] == '\0')
		return;
	/* Forgotten first: this runs at exit, maybe from bench_die(). */
	memcpy(dir, bench_tmp_dir, sizeof(dir));
	bench_tmp_dir[0] = '\0';
	if (bench_spawn(argv, 1) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static inline const char *bench_tmp(void)
{
	const char *base = getenv("TMPDIR");

	if (bench_tmp_dir[0] != '\0')
		return bench_tmp_dir;
	snprintf(bench_tmp_dir, sizeof(bench_tmp_dir),
		 "%s/statbisect-bench.XXXXXX",
		 base != NULL && base[0] != '\0' ? base : "/tmp");
	if (mkdtemp(bench_tmp_dir) == NULL)
		bench_die("mkdtemp %s: %s", bench_tmp_dir, strerror(errno));
	/* Removed however the benchmark ends, bench_die() included. */
	atexit(bench_tmp_cleanup);
	return bench_tmp_dir;
}

/*
 * Fills `path` with the bare repository bench/genrepo.py makes for `kind`
 * ("tree" or "dag"), generating it when the cache does not hold it yet.
 * Prints how long the generation took.
 */
static inline void bench_repo(char *path, size_t size, const char *kind)
{
	const char *cache = getenv("STATBISECT_BENCH_CACHE");
	struct stat st;
	double t0;

	if (cache != NULL && cache[0] != '\0') {
		if (mkdir(cache, 0755) < 0 && errno != EEXIST)
			bench_die("cannot create %s: %s", cache,
				  strerror(errno));
		/* The generator's version is in the name: a changed
		 * generator makes a new repository. */
		if (snprintf(path, size, "%s/genrepo-%s-v1.git", cache,
			     kind) >= (int)size)
			bench_die("STATBISECT_BENCH_CACHE is too long");
		if (stat(path, &st) == 0) {
			printf("repository: %s (cached)\n", path);
			return;
		}
	} else {
		if (snprintf(path, size, "%s/%s.git", bench_tmp(), kind) >=
		    (int)size)
			bench_die("TMPDIR is too long");
	}
	{
		char *argv[] = {"/usr/bin/python3", "bench/genrepo.py",
				(char *)kind, path, NULL};

		t0 = bench_now_ms();
		if (bench_spawn(argv, 0) != 0)
			bench_die("bench/genrepo.py %s %s failed (run the "
				  "benchmarks from the top of the tree)",
				  kind, path);
		printf("repository: %s generated in %.1f s\n", path,
		       (bench_now_ms() - t0) / 1e3);
	}
}

#endif
