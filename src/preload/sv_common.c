/* SPDX-License-Identifier: MIT */
/*
 * What every call family of ucmd-supervise needs (sv.h): the program's
 * memory, read and written with process_vm_readv/writev as the kernel's
 * copy_from_user/copy_to_user would (a bad address is EFAULT); which
 * process a notification comes from; the daemon's connection acting in the
 * program's memory; the table of descriptors we gave the program.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

int sv_mem_in(pid_t pid, void *dst, uint64_t src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int sv_mem_out(pid_t pid, uint64_t dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { (void *)(uintptr_t)dst, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of at most max - 1 bytes, read a page at a time (never past one). */
int sv_str_in(pid_t pid, char *dst, uint64_t src, size_t max)
{
	size_t got = 0;

	while (got < max) {
		size_t n = 4096 - ((src + got) & 4095);

		if (n > max - got)
			n = max - got;
		if (sv_mem_in(pid, dst + got, src + got, n))
			return -EFAULT;
		if (memchr(dst + got, 0, n))
			return 0;
		got += n;
	}
	return -ENAMETOOLONG;
}

/* The thread group of thread tid (a notification names the thread). */
int sv_base_of(pid_t tid, int dirfd, char *base, size_t len)
{
	char link[64];
	ssize_t n;

	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	n = readlink(link, base, len - 1);
	if (n <= 0)
		return -EBADF;
	base[n] = '\0';
	return 0;
}

pid_t sv_tgid_of(struct sv *s, pid_t tid)
{
	char path[64], line[128];
	pid_t tg = -1;
	FILE *f;
	int v;

	if (tid == s->pid)
		return tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &v) == 1) {
			tg = v;
			break;
		}
	fclose(f);
	return tg;
}

/*
 * A connection of its own for the program, made when it first needs one:
 * the daemon closes a connection that held nothing for its idle timeout
 * (60 s), which the one that listed the devices may have outlived.
 */
int sv_adopt(struct sv *s)
{
	struct ucmd_engine *e;
	int ret;

	if (s->adopted)
		return 0;
	ret = ucmd_engine_connect(s->sock, &e);
	if (ret) {
		sv_trace(s, "cannot reach ucmdd at %s: %s", s->sock, strerror(-ret));
		return ret;
	}
	ucmd_engine_free(s->e);
	s->e = e;
	ret = dc_adopt(s->e, s->pidfd);
	if (ret) {
		sv_trace(s, "the daemon will not act in the program's memory: %s", strerror(-ret));
		return ret;
	}
	s->adopted = true;
	/* what a forked child inherited: the same numbers on its own connection */
	for (unsigned i = 0; i < SV_FD_NR; i++)
		if (s->fds[i].kind == SV_DEV && s->fds[i].attach)
			sv_attach(s, &s->fds[i]);
	return 0;
}

struct sv_fd *sv_slot_of(struct sv *s, uint64_t fd)
{
	if ((uint32_t)fd < SV_FD_BASE || (uint32_t)fd >= SV_FD_BASE + SV_FD_NR)
		return NULL;
	return &s->fds[(uint32_t)fd - SV_FD_BASE];
}

/*
 * A number the program holds already (a dynamic program's own, a dup2
 * onto it) is not free: SECCOMP_ADDFD_FLAG_SETFD would close its file.
 */
static bool program_holds(struct sv *s, unsigned fd)
{
	char path[64], target[8];

	snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)s->pid, fd);
	return readlink(path, target, sizeof(target)) >= 0;
}

int sv_slot_free(struct sv *s)
{
	for (unsigned i = 0; i < SV_FD_NR; i++)
		if (s->fds[i].kind == SV_FREE && !program_holds(s, SV_FD_BASE + i))
			return (int)i;
	return -1;
}

/* Install our fd src in the program as its answer: at number at (SETFD) or the lowest free. */
void sv_addfd_send(struct sv *s, const struct seccomp_notif *req, int src, int at,
		       bool cloexec, struct sv_ans *a)
{
	struct seccomp_notif_addfd af = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND | (at >= 0 ? SECCOMP_ADDFD_FLAG_SETFD : 0),
		.srcfd = (uint32_t)src,
		.newfd = at >= 0 ? (uint32_t)at : 0,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int ret = ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &af);

	if (ret < 0) {
		a->error = -errno;
		sv_trace(s, "installing a descriptor in the program: %s", strerror(errno));
		return;
	}
	a->val = ret;
	a->sent = true;
}
