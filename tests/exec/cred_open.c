/* SPDX-License-Identifier: MIT */
/*
 * Opens files with libc's syscall() (so that no open interposer of the
 * preload judges them: under `ucmd exec` ucmd-supervise makes them), after
 * taking on another user, as a root service that drops privileges does.
 *
 *   cred_open [-u UID | -t UID] [-c] PATH...
 *
 * -u UID: setgroups(0), setresgid and setresuid to UID (the whole process).
 * -t UID: a second thread takes on UID alone (the raw calls: Linux's
 * credentials are a thread's; libc's would change every thread's) and
 * opens each PATH, its lines prefixed "thread "; then the main thread,
 * whose ids are unchanged, opens each again ("main ").
 * Each PATH is opened read-only and its first line printed ("PATH: line"),
 * or with -c created (O_CREAT | O_EXCL, mode 0666) and its owner and mode
 * printed ("PATH: uid U mode 0M"); "PATH: <strerror>" when that fails.
 * Exit 0 (1 on bad usage or when the user cannot be taken on).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool create;

static void open_each(const char *who, char **paths, int n)
{
	for (int i = 0; i < n; i++) {
		int flags = create ? O_WRONLY | O_CREAT | O_EXCL : O_RDONLY;
		long fd = syscall(SYS_openat, AT_FDCWD, paths[i], flags | O_CLOEXEC, 0666);
		char line[256] = "";
		struct stat st;
		ssize_t r;

		if (fd < 0) {
			printf("%s%s: %s\n", who, paths[i], strerror(errno));
			continue;
		}
		if (create) {
			if (fstat((int)fd, &st))
				printf("%s%s: fstat: %s\n", who, paths[i], strerror(errno));
			else
				printf("%s%s: uid %u mode 0%o\n", who, paths[i], (unsigned)st.st_uid,
				       (unsigned)(st.st_mode & 07777));
		} else {
			r = read((int)fd, line, sizeof(line) - 1);
			line[r > 0 ? r : 0] = '\0';
			line[strcspn(line, "\n")] = '\0';
			printf("%s%s: %s\n", who, paths[i], r < 0 ? strerror(errno) : line);
		}
		close((int)fd);
	}
}

struct job {
	unsigned id;
	char **paths;
	int n;
	int err;
};

static void *thread_main(void *arg)
{
	struct job *j = arg;

	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, j->id, j->id, j->id) ||
	    syscall(SYS_setresuid, j->id, j->id, j->id)) {
		j->err = errno;
		return NULL;
	}
	open_each("thread ", j->paths, j->n);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	struct job j = { 0 };
	bool thread = false;
	pthread_t t;
	int opt;

	while ((opt = getopt(argc, argv, "u:t:c")) != -1) {
		if (opt == 'u') {
			unsigned id = (unsigned)strtoul(optarg, NULL, 10);

			if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id)) {
				perror("cred_open: taking on the user");
				return 1;
			}
		} else if (opt == 't') {
			j.id = (unsigned)strtoul(optarg, NULL, 10);
			thread = true;
		} else if (opt == 'c') {
			create = true;
		} else {
			fprintf(stderr, "usage: cred_open [-u UID | -t UID] [-c] PATH...\n");
			return 1;
		}
	}
	if (thread) {
		j.paths = argv + optind;
		j.n = argc - optind;
		if (pthread_create(&t, NULL, thread_main, &j) || pthread_join(t, NULL)) {
			fprintf(stderr, "cred_open: the thread\n");
			return 1;
		}
		if (j.err) {
			fprintf(stderr, "cred_open: the thread taking on the user: %s\n",
				strerror(j.err));
			return 1;
		}
		open_each("main ", argv + optind, argc - optind);
		return 0;
	}
	open_each("", argv + optind, argc - optind);
	return 0;
}
