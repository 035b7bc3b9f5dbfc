// SPDX-License-Identifier: MIT
/*
 * Directory listings (preload.h, dirs.c). A directory that the host and
 * the tree both have (/dev, /sys/block, /sys/class, /sys/devices/pci0000:00,
 * /sys/bus/pci/devices...) stays the host's for every path call (paths.c),
 * and is listed as Linux would list it with ucmd's devices present: the
 * host's entries, less its NVMe devices and the names the tree has, then
 * the tree's (a /dev placeholder as the character or block device it
 * stands for). The listing is made when the directory is opened
 * (opendir, fdopendir) and served by readdir and its family from then on;
 * the other directories go to libc untouched.
 *
 * The getdents64 call a program makes through libc (getdents64(),
 * syscall()) is served from the same listing by dirs_raw.c; the system
 * call made with its own instruction lists the host's (docs/compat.md).
 */
#undef _FILE_OFFSET_BITS

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "one layout on 64-bit Linux");

#define MAX_MERGED 64

struct mdir {
	DIR *d;
	unsigned n, pos;
	struct pl_dirent *e;
	struct dirent64 out;	/* what readdir returns: the next call overwrites it */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mdir *tab[MAX_MERGED];
static atomic_uint nr_merged;	/* readdir's fast path: nothing merged is open */

/*
 * The merged listing of host directory dir (absolute, folded), read
 * through d (consumed), if the tree has a directory there too
 * (dirs_merge.c). NULL if not (d untouched) or on failure.
 */
static struct mdir *merge(DIR *d, const char *dir)
{
	struct mdir *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (pl_dir_merge(d, dir, &m->e, &m->n)) {
		free(m);
		return NULL;
	}
	m->d = d;
	return m;
}

static void track(DIR *d, const char *dir)
{
	struct mdir *m = merge(d, dir);

	if (!m)
		return;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_MERGED; i++) {
		if (!tab[i]) {
			tab[i] = m;
			atomic_fetch_add(&nr_merged, 1);
			m = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (m) {	/* too many open at once: this one lists the host's alone */
		pl_trace("dirs: more than %d merged directories open: %s is the host's", MAX_MERGED,
			 dir);
		free(m->e);
		free(m);
	}
}

/* path as opendir(3) was given it, absolute and folded, no trailing slash. */
static bool absolute(const char *path, char *out)
{
	char abs[PATH_MAX];
	size_t n;

	if (path[0] == '/') {
		if (strlen(path) >= sizeof(abs))
			return false;
		strcpy(abs, path);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= (int)sizeof(abs))
			return false;
	}
	pl_path_fold(out, abs);
	n = strlen(out);
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return true;
}

void pl_dir_opened(DIR *d, const char *path)
{
	char dir[PATH_MAX + 2];

	if (d && path && *path && absolute(path, dir))
		track(d, dir);
}

PL_EXPORT DIR *fdopendir(int fd)
{
	DIR *(*real)(int) = pl_next("fdopendir");
	char proc[64], dir[PATH_MAX];
	DIR *d = real(fd);
	ssize_t n;

	if (!d)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	/* from the trampoline: no notification for a look of our own (sv_filter.c) */
	n = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)proc, (long)dir, sizeof(dir) - 1, 0, 0);
	if (n > 0 && dir[0] == '/') {
		dir[n] = '\0';
		track(d, dir);
	}
	return d;
}

/* The merged listing behind d, under the lock; NULL if d is not one (lock dropped). */
static struct mdir *find_locked(DIR *d)
{
	if (!atomic_load(&nr_merged))
		return NULL;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_MERGED; i++)
		if (tab[i] && tab[i]->d == d)
			return tab[i];
	pthread_mutex_unlock(&lock);
	return NULL;
}

static struct dirent64 *next_locked(struct mdir *m)
{
	struct pl_dirent *e;

	if (m->pos >= m->n)
		return NULL;
	e = &m->e[m->pos++];
	memset(&m->out, 0, sizeof(m->out));
	m->out.d_ino = e->ino;
	m->out.d_off = m->pos;
	m->out.d_reclen = sizeof(m->out);
	m->out.d_type = e->type;
	snprintf(m->out.d_name, sizeof(m->out.d_name), "%s", e->name);
	return &m->out;
}

PL_EXPORT struct dirent64 *readdir64(DIR *d)
{
	struct mdir *m = find_locked(d);
	struct dirent64 *r;

	if (!m) {
		struct dirent64 *(*real)(DIR *) = pl_next("readdir64");

		return real(d);
	}
	r = next_locked(m);
	pthread_mutex_unlock(&lock);
	return r;
}

PL_EXPORT struct dirent *readdir(DIR *d)
{
	struct mdir *m = find_locked(d);
	struct dirent *r;

	if (!m) {
		struct dirent *(*real)(DIR *) = pl_next("readdir");

		return real(d);
	}
	r = (struct dirent *)next_locked(m);
	pthread_mutex_unlock(&lock);
	return r;
}

static int readdir_r_common(DIR *d, void *entry, void **result, const char *sym)
{
	struct mdir *m = find_locked(d);
	struct dirent64 *r;

	if (!m) {
		int (*real)(DIR *, void *, void **) = pl_next(sym);

		return real(d, entry, result);
	}
	r = next_locked(m);
	if (r)
		memcpy(entry, r, sizeof(*r));
	*result = r ? entry : NULL;
	pthread_mutex_unlock(&lock);
	return 0;
}

PL_EXPORT int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	return readdir_r_common(d, entry, (void **)result, "readdir_r");
}

PL_EXPORT int readdir64_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	return readdir_r_common(d, entry, (void **)result, "readdir64_r");
}

PL_EXPORT void rewinddir(DIR *d)
{
	struct mdir *m = find_locked(d);

	if (m) {
		m->pos = 0;
		pthread_mutex_unlock(&lock);
		return;
	}
	void (*real)(DIR *) = pl_next("rewinddir");

	real(d);
}

PL_EXPORT long telldir(DIR *d)
{
	struct mdir *m = find_locked(d);
	long pos;

	if (!m) {
		long (*real)(DIR *) = pl_next("telldir");

		return real(d);
	}
	pos = m->pos;
	pthread_mutex_unlock(&lock);
	return pos;
}

PL_EXPORT void seekdir(DIR *d, long loc)
{
	struct mdir *m = find_locked(d);

	if (m) {
		m->pos = loc < 0 ? 0 : loc > (long)m->n ? m->n : (unsigned)loc;
		pthread_mutex_unlock(&lock);
		return;
	}
	void (*real)(DIR *, long) = pl_next("seekdir");

	real(d, loc);
}

PL_EXPORT int closedir(DIR *d)
{
	int (*real)(DIR *) = pl_next("closedir");
	struct mdir *m = find_locked(d);

	if (m) {
		for (unsigned i = 0; i < MAX_MERGED; i++)
			if (tab[i] == m)
				tab[i] = NULL;
		atomic_fetch_sub(&nr_merged, 1);
		pthread_mutex_unlock(&lock);
		free(m->e);
		free(m);
	}
	return real(d);
}

/*
 * scandir(3) of a merged directory, made here on the listing (glibc's
 * own would read the host's alone): -2 if path is not one.
 */
int pl_dir_scandir(const char *path, struct dirent64 ***list,
		   int (*filter)(const struct dirent64 *),
		   int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	DIR *(*real_opendir)(const char *) = pl_next("opendir");
	char dir[PATH_MAX + 2];
	struct dirent64 **v = NULL, *de;
	size_t n = 0, cap = 0;
	struct mdir *m;
	DIR *d;

	if (!path || !*path || !absolute(path, dir))
		return -2;
	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return -2;
	d = real_opendir(path);
	if (!d)
		return -2;	/* libc's then says why */
	track(d, dir);
	m = find_locked(d);
	if (!m) {
		closedir(d);
		return -2;
	}
	pthread_mutex_unlock(&lock);
	while ((de = readdir64(d))) {
		struct dirent64 *c;

		if (filter && !filter(de))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct dirent64 **nv = realloc(v, nc * sizeof(*nv));

			if (!nv)
				goto nomem;
			v = nv;
			cap = nc;
		}
		c = malloc(sizeof(*c));
		if (!c)
			goto nomem;
		memcpy(c, de, sizeof(*c));
		v[n++] = c;
	}
	closedir(d);
	if (compar && n > 1)
		qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))compar);
	*list = v;
	return (int)n;
nomem:
	closedir(d);
	while (n)
		free(v[--n]);
	free(v);
	errno = ENOMEM;
	return -1;
}
