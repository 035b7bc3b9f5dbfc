/* SPDX-License-Identifier: MIT */
/*
 * The cost of one user memory copy by each backend of src/uaccess: plain
 * memcpy, the in-process fault guard, and the remote backend (the mapping's
 * protection asked, then a pwrite to /proc/PID/mem) on our own pid
 * (docs/performance.md, "User memory"). Usage: uaccess_cost [bytes] [iters]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uaccess/uaccess.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 1000000;
	unsigned char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len);
	struct user_mm remote;
	double t0, t;
	size_t bad = 0;

	if (!src || !dst)
		return 1;
	memset(src, 1, len);
	memset(dst, 0, len);
	if (user_mm_init_remote(&remote, getpid()))
		return 1;
	ucmd_uaccess_init();
	t0 = now();
	for (long i = 0; i < iters; i++) {
		memcpy(dst, src, len);
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	t = now() - t0;
	printf("memcpy        %8.1f ns/copy\n", t / (double)iters * 1e9);
	t0 = now();
	for (long i = 0; i < iters; i++)
		bad += raw_copy_to_user(dst, src, len);
	t = now() - t0;
	printf("guard         %8.1f ns/copy\n", t / (double)iters * 1e9);
	t0 = now();
	for (long i = 0; i < iters; i++)
		bad += raw_fault_in_writeable(dst, len);
	t = now() - t0;
	printf("fault_in (w)  %8.1f ns/probe\n", t / (double)iters * 1e9);
	t0 = now();
	for (long i = 0; i < iters; i++)
		bad += remote.ops->copy_to(&remote, (uintptr_t)dst, src, len);
	t = now() - t0;
	printf("remote        %8.1f ns/copy\n", t / (double)iters * 1e9);
	free(src);
	free(dst);
	return bad != 0;
}
