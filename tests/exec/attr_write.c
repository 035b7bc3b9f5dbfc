/* SPDX-License-Identifier: MIT */
/*
 * Writes to a sysfs attribute, built statically by
 * tests/system/exec_attr_write.sh (ucmd-supervise's answers, sv_attrw.c):
 * for each VALUE, the attribute opened O_WRONLY and VALUE written with
 * write, with writev in two pieces, with pwrite at offset 1 and with
 * pwritev2; then through fopen + fprintf. Each prints one line:
 *
 *   attr_write PATH VALUE...   "<call> ok <bytes>" or "<call> <strerror>"
 *
 * "open <strerror>" when the open fails. Exit 0 unless the usage is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static void said(const char *call, ssize_t r)
{
	if (r < 0)
		printf("%s %s\n", call, strerror(errno));
	else
		printf("%s ok %zd\n", call, r);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: attr_write PATH VALUE...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *v = argv[i];
		size_t n = strlen(v), h = n / 2;
		struct iovec iov[2] = { { (void *)v, h }, { (void *)(v + h), n - h } };
		int fd = open(argv[1], O_WRONLY);
		FILE *f;

		if (fd < 0) {
			printf("open %s\n", strerror(errno));
			continue;
		}
		said("write", write(fd, v, n));
		said("writev", writev(fd, iov, 2));
		said("pwrite", pwrite(fd, v, n, 1));
		said("pwritev2", pwritev2(fd, iov, 2, 0, 0));
		close(fd);
		f = fopen(argv[1], "w");
		if (!f) {
			printf("fopen %s\n", strerror(errno));
			continue;
		}
		fputs(v, f);
		errno = 0;
		said("fprintf", fflush(f) ? -1 : (ssize_t)n);
		fclose(f);
	}
	return 0;
}
