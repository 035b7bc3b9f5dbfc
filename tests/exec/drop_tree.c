/* SPDX-License-Identifier: MIT */
/*
 * A root program that drops to another user, as a service does, then looks
 * at /dev and /sys through libc (the preload's interposers in a dynamic
 * program, ucmd-supervise's answers in a static one): what it sees must be
 * what Linux shows that user (tests/system/exec_tree_drop.sh).
 *
 *   drop_tree [-w] [-u UID] < OPS
 *
 * -w first looks as root (a stat of a /sys attribute, an open and close of
 * /dev/ng0n1: the preload then has its daemon connection and its tree), -u
 * takes on UID (setgroups(0), setresgid, setresuid: the whole process).
 * Then each line of standard input, "OP PATH [r|w]", prints one line:
 *
 *   stat|lstat|statx PATH      "OP PATH: TYPE MODE UID:GID" (d, f, l, c, b; octal)
 *   fstat PATH                 open(O_RDONLY) + fstat, the same
 *   access|eaccess PATH r|w    access / faccessat(AT_EACCESS): "ok" or the error
 *   open PATH r|w              open(O_RDONLY or O_WRONLY): "ok" or the error
 *   cat PATH                   open + read: its first line
 *   realpath PATH              realpath(3): the canonical name
 *   ls PATH                    opendir + readdir: the names, sorted, space-separated
 *                              (in /dev and /sys/block only nvme* and ng*: the
 *                              host's other entries are not ucmd's)
 *
 * An error prints "err <strerror>". Exit 0 unless the usage is wrong or the
 * user cannot be taken on.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ftype.h"

static void show(const char *op, const char *path, int r, unsigned mode, unsigned uid,
		 unsigned gid)
{
	if (r < 0)
		printf("%s %s: err %s\n", op, path, strerror(errno));
	else
		printf("%s %s: %c %04o %u:%u\n", op, path, type_of(mode), mode & 07777, uid, gid);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void ls(const char *path)
{
	bool only_nvme = !strcmp(path, "/dev") || !strcmp(path, "/sys/block");
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(path);

	printf("ls %s:", path);
	if (!d) {
		printf(" err %s\n", strerror(errno));
		return;
	}
	while ((e = readdir(d)) && n < 512) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (only_nvme && strncmp(e->d_name, "nvme", 4) && strncmp(e->d_name, "ng", 2))
			continue;
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp);
	for (size_t i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

static void one(const char *op, const char *path, const char *m)
{
	int wr = m && m[0] == 'w';
	struct stat st;
	int r, fd;

	if (!strcmp(op, "stat")) {
		r = stat(path, &st);
		show(op, path, r, st.st_mode, st.st_uid, st.st_gid);
	} else if (!strcmp(op, "lstat")) {
		r = lstat(path, &st);
		show(op, path, r, st.st_mode, st.st_uid, st.st_gid);
	} else if (!strcmp(op, "statx")) {
		struct statx sx;

		r = statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx);
		show(op, path, r, sx.stx_mode, sx.stx_uid, sx.stx_gid);
	} else if (!strcmp(op, "fstat")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -1 : fstat(fd, &st);
		show(op, path, r, st.st_mode, st.st_uid, st.st_gid);
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "access") || !strcmp(op, "eaccess")) {
		int mode = wr ? W_OK : R_OK;

		r = op[0] == 'a' ? access(path, mode) : faccessat(AT_FDCWD, path, mode, AT_EACCESS);
		printf("%s %s %s: %s%s\n", op, path, wr ? "w" : "r", r ? "err " : "ok",
		       r ? strerror(errno) : "");
	} else if (!strcmp(op, "open")) {
		fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
		printf("open %s %s: %s%s\n", path, wr ? "w" : "r", fd < 0 ? "err " : "ok",
		       fd < 0 ? strerror(errno) : "");
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "cat")) {
		char buf[4096] = "";
		FILE *f = fopen(path, "re");

		if (!f) {
			printf("cat %s: err %s\n", path, strerror(errno));
			return;
		}
		if (!fgets(buf, sizeof(buf), f))
			snprintf(buf, sizeof(buf), "(empty)\n");
		fclose(f);
		printf("cat %s: %s%s", path, buf, strchr(buf, '\n') ? "" : "\n");
	} else if (!strcmp(op, "realpath")) {
		char buf[PATH_MAX];

		if (realpath(path, buf))
			printf("realpath %s: %s\n", path, buf);
		else
			printf("realpath %s: err %s\n", path, strerror(errno));
	} else if (!strcmp(op, "ls")) {
		ls(path);
	} else {
		printf("%s %s: unknown op\n", op, path);
	}
}

int main(int argc, char **argv)
{
	char line[4096];
	int c;

	while ((c = getopt(argc, argv, "wu:")) != -1) {
		switch (c) {
		case 'w': {
			struct stat st;
			int fd;

			/* as root, first: the preload connects and finds its tree */
			if (stat("/sys/class/nvme/nvme0/model", &st))
				return perror("drop_tree: stat as root"), 1;
			fd = open("/dev/ng0n1", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return perror("drop_tree: open as root"), 1;
			close(fd);
			break;
		}
		case 'u': {
			unsigned id = (unsigned)strtoul(optarg, NULL, 10);

			if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
				return perror("drop_tree: taking on the user"), 1;
			break;
		}
		default:
			return fprintf(stderr, "usage: drop_tree [-w] [-u UID] < OPS\n"), 2;
		}
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *op = strtok(line, " \n"), *path = strtok(NULL, " \n"), *m = strtok(NULL, " \n");

		if (op && path)
			one(op, path, m);
		fflush(stdout);
	}
	return 0;
}
