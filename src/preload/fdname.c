/* SPDX-License-Identifier: MIT */
/*
 * The descriptor number a path names as Linux's magic links do, for the
 * process pid that walks it: /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/<pid or one of its threads>/fd/N, the same
 * with task/<its thread>, /dev/stdin, stdout, stderr (0, 1, 2), in any
 * spelling the kernel walks to the same components ("//", "/./"). Only the
 * reading of the path: the preload asks it of its own process (fdpath.c),
 * ucmd-supervise of the program's (sv_stat.c).
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

/*
 * The next component of the path at *p, which is left at its start: its
 * length, 0 at the end. Empty components and "." (the kernel's "//" and
 * "/./") are passed over as the kernel's walk passes them: /dev//fd/3 and
 * /proc/self/fd/./3 name what /dev/fd/3 names. ".." is a component like
 * any other here: it matches no name below, so such a path is not taken
 * for a descriptor's (docs/compat.md).
 */
static size_t next_comp(const char **p)
{
	for (;;) {
		while (**p == '/')
			(*p)++;
		if ((*p)[0] != '.' || ((*p)[1] && (*p)[1] != '/'))
			return strcspn(*p, "/");
		(*p)++;
	}
}

/* Does the next component of *p spell word? Then *p is past it. */
static bool comp_is(const char **p, const char *word)
{
	const char *q = *p;
	size_t n = next_comp(&q);

	if (n != strlen(word) || strncmp(q, word, n))
		return false;
	*p = q + n;
	return true;
}

/*
 * The next component as /proc writes a number (name_to_int: digits, no
 * leading zero but "0" itself), at most max; then *p is past it. -1 if not.
 */
static long comp_num(const char **p, long max)
{
	const char *q = *p;
	size_t n = next_comp(&q);
	long v = 0;

	if (!n || n > 10 || (q[0] == '0' && n > 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (q[i] < '0' || q[i] > '9')
			return -1;
		v = v * 10 + (q[i] - '0');
	}
	if (v > max)
		return -1;
	*p = q + n;
	return v;
}

/* Is n a thread of process pid (/proc/<n> and /proc/<pid>/task/<n> are its own)? */
static bool own_thread(pid_t pid, long n)
{
	return n == pid || (n > 0 && !syscall(SYS_tgkill, pid, (pid_t)n, 0));
}

int pl_fd_named(const char *path, pid_t pid, const char **rest)
{
	static const char *const std[] = { "stdin", "stdout", "stderr" };
	const char *p = path;
	long n;

	if (*p != '/')
		return -1;
	if (comp_is(&p, "dev")) {
		for (int i = 0; i < 3; i++) {
			if (comp_is(&p, std[i])) {
				*rest = p;
				return i;
			}
		}
		if (!comp_is(&p, "fd"))
			return -1;
	} else if (comp_is(&p, "proc")) {
		/* thread-self (a task's own), or self or one of our ids, then task/<ours> */
		if (!comp_is(&p, "thread-self")) {
			if (!comp_is(&p, "self")) {
				n = comp_num(&p, INT_MAX);
				if (n < 0 || !own_thread(pid, n))
					return -1;
			}
			if (comp_is(&p, "task")) {
				n = comp_num(&p, INT_MAX);
				if (n < 0 || !own_thread(pid, n))
					return -1;
			}
		}
		if (!comp_is(&p, "fd"))
			return -1;
	} else {
		return -1;
	}
	n = comp_num(&p, INT_MAX);
	if (n < 0)
		return -1;
	*rest = p;
	return (int)n;
}

