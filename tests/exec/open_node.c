/* SPDX-License-Identifier: MIT */
/*
 * Opens a file as a program would, and says what came of it:
 *
 *   open_node PATH [fopen]
 *
 * open(PATH, O_RDONLY), or with "fopen" fopen(PATH, "r"); prints "open ok"
 * or "open: <strerror>", exit 0 either way (1 on bad usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int ok;

	if (argc < 2) {
		fprintf(stderr, "usage: open_node PATH [fopen]\n");
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "fopen")) {
		FILE *f = fopen(argv[1], "r");

		ok = f != NULL;
		if (f)
			fclose(f);
	} else {
		int fd = open(argv[1], O_RDONLY);

		ok = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	if (ok)
		printf("open ok\n");
	else
		printf("open: %s\n", strerror(errno));
	return 0;
}
