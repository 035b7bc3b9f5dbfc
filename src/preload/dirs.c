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
/* merge() reads the host's directory: its getdents64 calls are the host's (dirs_raw.c) */
static __thread bool merging;
static struct mdir *tab[MAX_MERGED];
static atomic_uint nr_merged;	/* readdir's fast path: nothing merged is open */

/* Is the host's PCI function dir/name an NVMe controller (its class file)? */
static bool host_pci_nvme(const char *dir, const char *name)
{
	int (*real_open)(const char *, int, ...) = pl_next("open");
	char path[PATH_MAX], class_text[32];
	ssize_t n;
	int fd;

	if (name[0] == '.' ||
	    snprintf(path, sizeof(path), "%s/%s/class", dir, name) >= (int)sizeof(path))
		return false;
	fd = real_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, class_text, sizeof(class_text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	class_text[n] = '\0';
	return pl_pci_class_nvme(class_text);
}

/*
 * A host entry that ucmd's view leaves out: the host's NVMe devices, their
 * class entries, and the PCI functions that are NVMe controllers where the
 * tree puts its own (a function behind a host bridge the tree does not
 * have stays in that bridge's host listing).
 */
static bool host_hidden(const char *dir, const char *name)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t (*real_readlink)(const char *, char *, size_t) = pl_next("readlink");
	ssize_t n;

	if (!strcmp(dir, "/dev"))
		return pl_path_dev_name(name);
	if (!strcmp(dir, "/sys/block") || !strcmp(dir, "/sys/class/block") ||
	    !strcmp(dir, "/sys/class/nvme") || !strcmp(dir, "/sys/class/nvme-generic") ||
	    !strcmp(dir, "/sys/class/nvme-subsystem"))
		return !strncmp(name, "nvme", 4) || !strncmp(name, "ng", 2);
	if (!strncmp(dir, "/sys/devices/pci", 16) || !strcmp(dir, "/sys/bus/pci/devices"))
		return host_pci_nvme(dir, name);
	if (!strcmp(dir, "/sys/bus/pci/drivers/nvme"))
		return strchr(name, ':') != NULL;	/* the host's bindings: 0000:01:00.0 */
	if (strcmp(dir, "/sys/dev/block") && strcmp(dir, "/sys/dev/char"))
		return false;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	n = real_readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strstr(target, "/nvme/") || strstr(target, "/nvme-generic/");
}

/* A file sysfs.c is writing (<name>.tmp<pid>, renamed into place): not an entry yet. */
static bool transient(const char *name)
{
	const char *t = strstr(name, ".tmp");

	if (!t)
		return false;
	t += 4;
	if (!*t)
		return false;
	while (*t >= '0' && *t <= '9')
		t++;
	return !*t;
}

static int add(struct mdir *m, unsigned *cap, const char *name, unsigned char type, ino_t ino)
{
	if (m->n == *cap) {
		unsigned nc = *cap ? *cap * 2 : 64;
		struct pl_dirent *e = realloc(m->e, nc * sizeof(*e));

		if (!e)
			return -ENOMEM;
		m->e = e;
		*cap = nc;
	}
	snprintf(m->e[m->n].name, sizeof(m->e[m->n].name), "%s", name);
	m->e[m->n].type = type;
	m->e[m->n].ino = ino;
	m->n++;
	return 0;
}

/*
 * The merged listing of host directory dir (absolute, folded), read
 * through d (consumed), if the tree has a directory there too. NULL if
 * not (d untouched) or on failure.
 */
static struct mdir *merge(DIR *d, const char *dir)
{
	struct dirent64 *(*real_readdir)(DIR *) = pl_next("readdir64");
	DIR *(*real_opendir)(const char *) = pl_next("opendir");
	int (*real_closedir)(DIR *) = pl_next("closedir");
	int (*real_lstat)(const char *, struct stat *) = pl_next("lstat");
	char tdir[PATH_MAX], path[PATH_MAX];
	const char *root;
	struct dirent64 *de;
	struct mdir *m;
	struct stat st;
	unsigned cap = 0;
	DIR *td;

	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return NULL;
	root = pl_root();
	if (!root || snprintf(tdir, sizeof(tdir), "%s%s", root, dir) >= (int)sizeof(tdir))
		return NULL;
	if (real_lstat(tdir, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	td = real_opendir(tdir);
	if (!td)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		real_closedir(td);
		return NULL;
	}
	m->d = d;
	merging = true;
	while ((de = real_readdir(d))) {
		if (host_hidden(dir, de->d_name))
			continue;
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    snprintf(path, sizeof(path), "%s/%s", tdir, de->d_name) < (int)sizeof(path) &&
		    !real_lstat(path, &st))
			continue;	/* the tree's, below */
		if (add(m, &cap, de->d_name, de->d_type, de->d_ino))
			goto fail;
	}
	while ((de = real_readdir(td))) {
		unsigned char type = de->d_type;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || transient(de->d_name))
			continue;
		if (!strcmp(dir, "/dev")) {
			const struct pl_devinfo *dev = pl_devinfo(de->d_name);

			if (!dev)
				continue;	/* a namespace gone since */
			type = dev->kind == PL_DEV_NS_BLK ? DT_BLK : DT_CHR;
		}
		if (add(m, &cap, de->d_name, type, de->d_ino))
			goto fail;
	}
	merging = false;
	real_closedir(td);
	return m;
fail:
	merging = false;
	real_closedir(td);
	free(m->e);
	free(m);
	return NULL;
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
	ssize_t (*real_readlink)(const char *, char *, size_t) = pl_next("readlink");
	char proc[64], dir[PATH_MAX];
	DIR *d = real(fd);
	ssize_t n;

	if (!d)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = real_readlink(proc, dir, sizeof(dir) - 1);
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

bool pl_dir_merging(void)
{
	return merging;
}

int pl_dir_listing(const char *dir, struct pl_dirent **out, unsigned *n)
{
	DIR *(*real_opendir)(const char *) = pl_next("opendir");
	int (*real_closedir)(DIR *) = pl_next("closedir");
	struct mdir *m;
	DIR *d;

	if (merging)
		return -ENOENT;	/* merge()'s own read of the host's directory */
	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return -ENOENT;
	merging = true;		/* opendir's own getdents64 calls, if any */
	d = real_opendir(dir);
	merging = false;
	if (!d)
		return -errno;
	m = merge(d, dir);
	real_closedir(d);
	if (!m)
		return -ENOENT;
	*out = m->e;
	*n = m->n;
	free(m);
	return 0;
}
