/* SPDX-License-Identifier: MIT */
/*
 * Opens DEV, then PREFIX/<its fd> (/dev/fd, /proc/self/fd) for writing and
 * writes 4 KiB of BYTE at offset 8 KiB through it; a path below it must be
 * ENOTDIR. Prints "ok" (tests/system/exec_static_fdpath.sh runs it linked
 * statically under ucmd-supervise and dynamically under the preload).
 *   static_fdopen DEV PREFIX BYTE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[128], buf[4096];
	int fd, g;

	if (argc != 4)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		printf("open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%d", argv[2], fd);
	g = open(path, O_WRONLY);
	if (g < 0) {
		printf("open %s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(buf, argv[3][0], sizeof(buf));
	if (pwrite(g, buf, sizeof(buf), 8192) != (ssize_t)sizeof(buf)) {
		printf("pwrite %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (fsync(g)) {
		printf("fsync %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%d/x", argv[2], fd);
	if (open(path, O_RDONLY) >= 0 || errno != ENOTDIR) {
		printf("open %s: %s, want ENOTDIR\n", path, strerror(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}
