// SPDX-License-Identifier: MIT
/*
 * The merged listing of a directory the host and the tree both have
 * (preload.h, dirs.c says what it shows): the preload's readdir family
 * (dirs.c) and getdents64 (dirs_raw.c) serve it, and so does
 * ucmd-supervise --dirs for the program's own getdents64 (sv_dirs.c): one
 * listing, whoever asks.
 */
#undef _FILE_OFFSET_BITS

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

/* merge() reads the host's directory: its getdents64 calls are the host's (dirs_raw.c) */
static __thread bool merging;

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
	/* the host's link (the trampoline's call), never ucmd-supervise's answer from the tree */
	n = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)path, (long)target, sizeof(target) - 1,
			   0, 0);
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

static int add(struct pl_dirent **e, unsigned *n, unsigned *cap, const char *name, unsigned char type,
	       ino_t ino)
{
	if (*n == *cap) {
		unsigned nc = *cap ? *cap * 2 : 64;
		struct pl_dirent *ne = realloc(*e, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		*e = ne;
		*cap = nc;
	}
	snprintf((*e)[*n].name, sizeof((*e)[*n].name), "%s", name);
	(*e)[*n].type = type;
	(*e)[*n].ino = ino;
	(*n)++;
	return 0;
}

/* A look at the tree's file: from the trampoline, no notification (sv_filter.c). 0 or -errno. */
static long tree_lstat(const char *path, struct stat *st)
{
	return pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)path, (long)st, AT_SYMLINK_NOFOLLOW,
			      0, 0);
}

int pl_dir_merge(DIR *d, const char *dir, struct pl_dirent **out, unsigned *nout)
{
	struct dirent64 *(*real_readdir)(DIR *) = pl_next("readdir64");
	DIR *(*real_opendir)(const char *) = pl_next("opendir");
	int (*real_closedir)(DIR *) = pl_next("closedir");
	char tdir[PATH_MAX], path[PATH_MAX];
	const char *root;
	struct dirent64 *de;
	struct pl_dirent *e = NULL;
	struct stat st;
	unsigned cap = 0, n = 0;
	DIR *td;

	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return -ENOENT;
	root = pl_root();
	if (!root || snprintf(tdir, sizeof(tdir), "%s%s", root, dir) >= (int)sizeof(tdir))
		return -ENOENT;
	if (tree_lstat(tdir, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	td = real_opendir(tdir);
	if (!td)
		return -ENOENT;
	merging = true;
	while ((de = real_readdir(d))) {
		if (host_hidden(dir, de->d_name))
			continue;
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    snprintf(path, sizeof(path), "%s/%s", tdir, de->d_name) < (int)sizeof(path) &&
		    !tree_lstat(path, &st))
			continue;	/* the tree's, below */
		if (add(&e, &n, &cap, de->d_name, de->d_type, de->d_ino))
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
		if (add(&e, &n, &cap, de->d_name, type, de->d_ino))
			goto fail;
	}
	merging = false;
	real_closedir(td);
	*out = e;
	*nout = n;
	return 0;
fail:
	merging = false;
	real_closedir(td);
	free(e);
	return -ENOMEM;
}

bool pl_dir_merging(void)
{
	return merging;
}

int pl_dir_listing(const char *dir, struct pl_dirent **out, unsigned *n)
{
	DIR *(*real_opendir)(const char *) = pl_next("opendir");
	int (*real_closedir)(DIR *) = pl_next("closedir");
	DIR *d;
	int ret;

	if (merging)
		return -ENOENT;	/* merge()'s own read of the host's directory */
	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return -ENOENT;
	merging = true;		/* opendir's own getdents64 calls, if any */
	d = real_opendir(dir);
	merging = false;
	if (!d)
		return -errno;
	ret = pl_dir_merge(d, dir, out, n);
	real_closedir(d);
	return ret;
}
