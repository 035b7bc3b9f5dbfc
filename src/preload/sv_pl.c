/* SPDX-License-Identifier: MIT */
/*
 * What the preload's tree code (where.c, devinfo.c, sysfs.c,
 * sysfs_mpath.c, zoned.c, dirs_merge.c) needs of its session, given in
 * ucmd-supervise, so that the supervisor answers a static program's path
 * calls, and a dynamic one's own (--dirs), from the very tree the preload
 * answers libc's from, built by
 * the same code (one generator): the tree's root is UCMD_EXEC_ROOT (`ucmd
 * exec` sets it for the supervisor and the program alike), built here if
 * the program has not built it yet (sysfs.c's lock and .ready make the two
 * builders one); the daemon is a connection of our own, acting in our
 * memory (the identify data the tree is written from), apart from the one
 * acting in the program's (sv_common.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

bool sv_pl_trace;

/* The preload's calls that its own filter lets through: ours are under no filter. */
long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long ret = syscall(nr, a0, a1, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

/* The preload's open of a path it judged (its trampoline's stub): ours are under no filter. */
long pl_open_judged(int dirfd, const char *path, int flags, mode_t mode)
{
	long ret = openat(dirfd, path, flags, mode);

	return ret < 0 ? -errno : ret;
}

void *pl_next(const char *sym)
{
	void *p = dlsym(RTLD_NEXT, sym);

	if (!p)
		p = dlsym(RTLD_DEFAULT, sym);
	if (!p) {
		fprintf(stderr, "ucmd-supervise: a libc symbol is missing: %s\n", sym);
		abort();
	}
	return p;
}

void pl_trace(const char *fmt, ...)
{
	va_list ap;

	if (!sv_pl_trace)
		return;
	fputs("ucmd exec[supervisor]: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool pl_tracing(void)
{
	return sv_pl_trace;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct ucmd_engine *pl_engine(void)
{
	static struct ucmd_engine *e;
	const char *path = getenv(PL_ENV_DAEMON);
	struct ucmd_engine *r;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (!e && path && *path)
		ret = ucmd_engine_connect(path, &e);
	r = e;
	pthread_mutex_unlock(&lock);
	if (!r)
		errno = ret ? -ret : ENOTCONN;
	return r;
}

const char *pl_root(void)
{
	static char root[PATH_MAX];
	static bool ready;
	const char *r = getenv(PL_ENV_ROOT);
	int ret;

	if (ready)
		return root;
	if (!r || !*r || !getenv(PL_ENV_DAEMON) || strlen(r) >= sizeof(root)) {
		errno = ENOTCONN;
		return NULL;
	}
	ret = pl_sysfs_build(r);	/* nothing to do when the program's preload made it */
	if (ret) {
		pl_trace("cannot build the device tree in %s: %s", r, strerror(-ret));
		errno = -ret;
		return NULL;
	}
	strcpy(root, r);
	ready = true;
	return root;
}
