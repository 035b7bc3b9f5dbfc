/* SPDX-License-Identifier: MIT */
/*
 * faccessat with flags on a kernel without faccessat2 (before Linux 5.8),
 * made so here by a seccomp filter of the program's own that answers
 * faccessat2 with ENOSYS: glibc then emulates the flags from a stat. Under
 * ucmd exec the preload's look at a tree path must take the same way
 * (it once called itself for ever). Prints "PATH: ok" or "PATH: err MSG".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_faccessat2
#define __NR_faccessat2 439
#endif

static int no_faccessat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_faccessat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: access_enosys PATH...\n");
		return 2;
	}
	if (no_faccessat2()) {
		perror("seccomp");
		return 1;
	}
	/* the filter works: the system call itself is ENOSYS now */
	if (syscall(__NR_faccessat2, AT_FDCWD, "/", R_OK, AT_EACCESS) != -1 || errno != ENOSYS) {
		fprintf(stderr, "faccessat2 is not ENOSYS\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (faccessat(AT_FDCWD, argv[i], R_OK, AT_EACCESS))
			printf("%s: err %s\n", argv[i], strerror(errno));
		else
			printf("%s: ok\n", argv[i]);
	}
	return 0;
}
