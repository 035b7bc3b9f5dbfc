/* SPDX-License-Identifier: MIT */
/*
 * rename_loop DIR: renames DIR/a to DIR/b and back until killed, the load
 * that makes a scoped lookup's ".." (openat2 RESOLVE_BENEATH, the tree's
 * links) fail with EAGAIN: any rename on the machine counts, wherever it is
 * (src/preload/sv_openat2.c). Prints "ready" once the first pair is done.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char a[PATH_MAX], b[PATH_MAX];
	int fd;

	if (argc != 2)
		return fprintf(stderr, "usage: rename_loop DIR\n"), 2;
	snprintf(a, sizeof(a), "%s/a", argv[1]);
	snprintf(b, sizeof(b), "%s/b", argv[1]);
	fd = open(a, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || close(fd))
		return perror(a), 1;
	for (int first = 1;; first = 0) {
		if (rename(a, b) || rename(b, a))
			return perror("rename"), 1;
		if (first && (printf("ready\n") < 0 || fflush(stdout)))
			return 1;
	}
}
