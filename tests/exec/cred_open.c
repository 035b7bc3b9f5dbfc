/* SPDX-License-Identifier: MIT */
/*
 * Opens files with libc's syscall() (so that no open interposer of the
 * preload judges them: under `ucmd exec` ucmd-supervise makes them), after
 * taking on another user, as a root service that drops privileges does.
 *
 *   cred_open [-u UID] [-c] PATH...
 *
 * -u UID: setgroups(0), setresgid and setresuid to UID (the whole process).
 * Each PATH is opened read-only and its first line printed ("PATH: line"),
 * or with -c created (O_CREAT | O_EXCL, mode 0666) and its owner and mode
 * printed ("PATH: uid U mode 0M"); "PATH: <strerror>" when that fails.
 * Exit 0 (1 on bad usage or when the user cannot be taken on).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	bool create = false;
	int opt;

	while ((opt = getopt(argc, argv, "u:c")) != -1) {
		if (opt == 'u') {
			unsigned id = (unsigned)strtoul(optarg, NULL, 10);

			if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id)) {
				perror("cred_open: taking on the user");
				return 1;
			}
		} else if (opt == 'c') {
			create = true;
		} else {
			fprintf(stderr, "usage: cred_open [-u UID] [-c] PATH...\n");
			return 1;
		}
	}
	for (int i = optind; i < argc; i++) {
		int flags = create ? O_WRONLY | O_CREAT | O_EXCL : O_RDONLY;
		long fd = syscall(SYS_openat, AT_FDCWD, argv[i], flags | O_CLOEXEC, 0666);
		char line[256] = "";
		struct stat st;
		ssize_t n;

		if (fd < 0) {
			printf("%s: %s\n", argv[i], strerror(errno));
			continue;
		}
		if (create) {
			if (fstat((int)fd, &st))
				printf("%s: fstat: %s\n", argv[i], strerror(errno));
			else
				printf("%s: uid %u mode 0%o\n", argv[i], (unsigned)st.st_uid,
				       (unsigned)(st.st_mode & 07777));
		} else {
			n = read((int)fd, line, sizeof(line) - 1);
			line[n > 0 ? n : 0] = '\0';
			line[strcspn(line, "\n")] = '\0';
			printf("%s: %s\n", argv[i], n < 0 ? strerror(errno) : line);
		}
		close((int)fd);
	}
	return 0;
}
